//===- LayerNormTests.cpp - Known answers for the LayerNorm references ----===//
//
// layerNorm on rows worked out by hand; layerNormBackward against the two
// directions its gradient must ignore (a shift and a scaling of y's
// normalized part), against central differences of sum(dy y), and its
// partial dw/db rows against the rows that fall in each group.
//
//===----------------------------------------------------------------------===//

#include "UnitTest.h"

#include "tegula/Runtime/References.h"

#include <vector>

using namespace tegula::rt;

namespace tegula::unittest {

namespace {
void testForward() {
  // x = [1, 2, 3, 4]: mean 2.5, biased variance 1.25; eps = 0.
  double x[] = {1, 2, 3, 4}, one[] = {1, 1, 1, 1}, zero[] = {0, 0, 0, 0};
  double y[4], mean, rstd;
  layerNorm(x, one, zero, 1, 4, 0, y, &mean, &rstd);
  EXPECT_NEAR(mean, 2.5);
  EXPECT_NEAR(rstd, 1 / std::sqrt(1.25));
  EXPECT_NEAR(y[0], -1.5 / std::sqrt(1.25));
  EXPECT_NEAR(y[3], 1.5 / std::sqrt(1.25));
  // y = xhat w + b per column; eps = 0.75 makes var + eps = 2.
  double w[] = {2, 0, 1, -1}, b[] = {1, 5, 0, 0};
  layerNorm(x, w, b, 1, 4, 0.75, y, nullptr, &rstd);
  EXPECT_NEAR(rstd, 1 / std::sqrt(2.0));
  EXPECT_NEAR(y[0], 2 * -1.5 / std::sqrt(2.0) + 1);
  EXPECT_NEAR(y[1], 5);
  EXPECT_NEAR(y[2], 0.5 / std::sqrt(2.0));
  EXPECT_NEAR(y[3], -1.5 / std::sqrt(2.0));
  // Rows are independent: [10, 10] has variance 0, rstd 1/sqrt(eps).
  double x2[] = {10, 10, 0, 4}, y2[4], m2[2], r2[2];
  layerNorm(x2, one, zero, 2, 2, 0.25, y2, m2, r2);
  EXPECT_NEAR(m2[0], 10);
  EXPECT_NEAR(r2[0], 2);
  EXPECT_NEAR(y2[0], 0);
  EXPECT_NEAR(m2[1], 2);
  EXPECT_NEAR(r2[1], 1 / std::sqrt(4.25));
}

void testBackward() {
  // With w = 1 and eps = 0, dy = 1 (a shift of y) and dy = xhat (a scaling)
  // change nothing that x can change: dx = 0. db = sum dy, dw = sum dy xhat.
  double x[] = {1, 2, 3, 4}, one[] = {1, 1, 1, 1}, dx[4], dw[4], db[4];
  layerNormBackward(x, one, one, 1, 4, 0, 1, dx, dw, db);
  for (int i = 0; i < 4; ++i)
    EXPECT(std::fabs(dx[i]) < 1e-12);
  EXPECT_NEAR(db[2], 1);
  EXPECT_NEAR(dw[0], -1.5 / std::sqrt(1.25));
  double s = 1 / std::sqrt(1.25);
  double xhat[] = {-1.5 * s, -0.5 * s, 0.5 * s, 1.5 * s};
  layerNormBackward(x, one, xhat, 1, 4, 0, 1, dx, dw, db);
  for (int i = 0; i < 4; ++i)
    EXPECT(std::fabs(dx[i]) < 1e-12);
  EXPECT_NEAR(dw[1], 0.25 / 1.25);
}

/// dx against central differences of L(x) = sum(dy y(x)); the partial sums
/// of three rows in two groups against one-row calls.
void testBackwardNumerically() {
  const int64_t M = 3, N = 5;
  double eps = 0.1;
  std::vector<double> x = {0.3, -1.2, 2.0,  0.7,  0.1, 1.5, 1.4, -0.3,
                           0.0, 2.2,  -0.5, -0.4, 0.9, 3.1, 0.2};
  std::vector<double> w = {1.5, -0.7, 0.2, 1.0, 2.5}, b(N, 0.0);
  std::vector<double> dy = {0.4, -1.0, 0.3,  0.8, -0.2, 1.1,  0.5, -0.6,
                            0.2, 0.9,  -0.3, 0.7, 0.6,  -1.4, 0.05};
  std::vector<double> dx(M * N), dw(2 * N), db(2 * N), y(M * N);
  layerNormBackward(x.data(), w.data(), dy.data(), M, N, eps, 2, dx.data(),
                    dw.data(), db.data());
  auto loss = [&](const std::vector<double> &at) {
    layerNorm(at.data(), w.data(), b.data(), M, N, eps, y.data(), nullptr,
              nullptr);
    double total = 0;
    for (int64_t i = 0; i < M * N; ++i)
      total += dy[size_t(i)] * y[size_t(i)];
    return total;
  };
  EXPECT(worstCentralDifference(loss, x, dx) < 1e-8);
  // Group 0 holds rows 0 and 2, group 1 row 1.
  std::vector<double> rdx(N), rdw(N), rdb(N);
  for (int64_t r = 0; r < M; ++r) {
    layerNormBackward(x.data() + r * N, w.data(), dy.data() + r * N, 1, N, eps,
                      1, rdx.data(), rdw.data(), rdb.data());
    for (int64_t n = 0; n < N; ++n) {
      dw[size_t((r % 2) * N + n)] -= rdw[size_t(n)];
      db[size_t((r % 2) * N + n)] -= rdb[size_t(n)];
    }
  }
  for (size_t i = 0; i < dw.size(); ++i) {
    EXPECT(std::fabs(dw[i]) < 1e-12);
    EXPECT(std::fabs(db[i]) < 1e-12);
  }
}
} // namespace

void testLayerNorm() {
  testForward();
  testBackward();
  testBackwardNumerically();
}

} // namespace tegula::unittest
