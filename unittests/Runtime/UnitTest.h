//===- UnitTest.h - Checks shared by the runtime unit tests -----*- C++ -*-===//
//
// EXPECT and EXPECT_NEAR count every check and print one line per failure;
// main() reports the totals. Shared by the files of tile-run-unittests.
//
//===----------------------------------------------------------------------===//

#ifndef TEGULA_UNITTESTS_RUNTIME_UNITTEST_H
#define TEGULA_UNITTESTS_RUNTIME_UNITTEST_H

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace tegula::unittest {
inline int failures = 0, checks = 0;

inline void expect(bool ok, const std::string &what, int line) {
  ++checks;
  if (ok)
    return;
  ++failures;
  std::printf("FAIL line %d: %s\n", line, what.c_str());
}

inline void expectNear(double got, double want, const std::string &what,
                       int line) {
  bool ok = std::fabs(got - want) <= 1e-12 * std::max(1.0, std::fabs(want));
  expect(ok,
         what + ": got " + std::to_string(got) + ", want " +
             std::to_string(want),
         line);
}

/// The largest gap between `grad` and the central differences (step h) of
/// `loss` at each element of `x`: a gradient check of a backward reference.
template <typename Loss>
double worstCentralDifference(Loss loss, const std::vector<double> &x,
                              const std::vector<double> &grad,
                              double h = 1e-5) {
  double worst = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    std::vector<double> up = x, down = x;
    up[i] += h, down[i] -= h;
    worst =
        std::max(worst, std::fabs((loss(up) - loss(down)) / (2 * h) - grad[i]));
  }
  return worst;
}

/// The two test groups of BundleTests.cpp.
void testBundleRoundTrip();
void testChips();
/// LayerNormTests.cpp.
void testLayerNorm();
/// TrainingTests.cpp: the RMSNorm and cross-entropy training references.
void testTraining();
/// GlaTests.cpp: the GLA forward and backward references.
void testGla();
/// AttentionTests.cpp: the attention references with M queries != N keys.
void testAttentionCross();
/// VarlenTests.cpp: the varlen attention references.
void testVarlenAttention();
} // namespace tegula::unittest

#define EXPECT(cond) ::tegula::unittest::expect((cond), #cond, __LINE__)
#define EXPECT_NEAR(got, want)                                                 \
  ::tegula::unittest::expectNear((got), (want), #got, __LINE__)

#endif // TEGULA_UNITTESTS_RUNTIME_UNITTEST_H
