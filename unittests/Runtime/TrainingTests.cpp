//===- TrainingTests.cpp - Known answers for the training references ------===//
//
// rmsNormForward on a row worked out by hand; rmsNormBackward against
// central differences of sum(dy y), against the direction its gradient
// must ignore (a scaling of x), and its partial dw rows against one-row
// calls; crossEntropyBackward against central differences of
// sum(dloss loss), on a row worked out by hand, and on ignored rows.
//
//===----------------------------------------------------------------------===//

#include "UnitTest.h"

#include "tegula/Runtime/References.h"

#include <vector>

using namespace tegula::rt;

namespace tegula::unittest {

namespace {
void testRmsNormForward() {
  // x = [1, 2, 2, 4]: mean(x^2) = 25 / 4; eps = 0.0 gives rstd = 0.4.
  double x[] = {1, 2, 2, 4}, w[] = {1, -1, 0.5, 2}, y[4], rstd;
  rmsNormForward(x, w, 1, 4, 0, y, &rstd);
  EXPECT_NEAR(rstd, 0.4);
  EXPECT_NEAR(y[0], 0.4);
  EXPECT_NEAR(y[1], -0.8);
  EXPECT_NEAR(y[2], 0.4);
  EXPECT_NEAR(y[3], 3.2);
  // eps = 3.75 makes mean + eps = 10; the same y as rmsNorm.
  double y2[4];
  rmsNormForward(x, w, 1, 4, 3.75, y, &rstd);
  rmsNorm(x, w, 1, 4, 3.75, y2);
  EXPECT_NEAR(rstd, 1 / std::sqrt(10.0));
  for (int i = 0; i < 4; ++i)
    EXPECT_NEAR(y[i], y2[i]);
}

void testRmsNormBackward() {
  const int64_t R = 3, C = 5;
  double eps = 0.1;
  std::vector<double> x = {0.3, -1.2, 2.0,  0.7,  0.1, 1.5, 1.4, -0.3,
                           0.0, 2.2,  -0.5, -0.4, 0.9, 3.1, 0.2};
  std::vector<double> w = {1.5, -0.7, 0.2, 1.0, 2.5};
  std::vector<double> dy = {0.4, -1.0, 0.3,  0.8, -0.2, 1.1,  0.5, -0.6,
                            0.2, 0.9,  -0.3, 0.7, 0.6,  -1.4, 0.05};
  std::vector<double> dx(R * C), dw(2 * C), y(R * C);
  rmsNormBackward(x.data(), w.data(), dy.data(), R, C, eps, 2, dx.data(),
                  dw.data());
  auto loss = [&](const std::vector<double> &at) {
    rmsNormForward(at.data(), w.data(), R, C, eps, y.data(), nullptr);
    double total = 0;
    for (int64_t i = 0; i < R * C; ++i)
      total += dy[size_t(i)] * y[size_t(i)];
    return total;
  };
  double h = 1e-5;
  EXPECT(worstCentralDifference(loss, x, dx, h) < 1e-8);
  // dw against central differences in w: d/dw_c sum(dy y) = sum_r dy x rstd.
  double worstW = 0;
  for (int64_t c = 0; c < C; ++c) {
    double saved = w[size_t(c)];
    w[size_t(c)] = saved + h;
    double up = loss(x);
    w[size_t(c)] = saved - h;
    double down = loss(x);
    w[size_t(c)] = saved;
    worstW = std::max(worstW, std::fabs((up - down) / (2 * h) -
                                        dw[size_t(c)] - dw[size_t(C + c)]));
  }
  EXPECT(worstW < 1e-8);
  // With eps = 0, y does not change when a row of x is scaled, so each
  // row of dx is orthogonal to that row of x, whatever dy.
  std::vector<double> dx0(R * C), dw0(C);
  rmsNormBackward(x.data(), w.data(), dy.data(), R, C, 0, 1, dx0.data(),
                  dw0.data());
  for (int64_t r = 0; r < R; ++r) {
    double along = 0;
    for (int64_t c = 0; c < C; ++c)
      along += dx0[size_t(r * C + c)] * x[size_t(r * C + c)];
    EXPECT(std::fabs(along) < 1e-12);
  }
  // Group 0 holds rows 0 and 2, group 1 row 1.
  std::vector<double> rdx(C), rdw(C);
  for (int64_t r = 0; r < R; ++r) {
    rmsNormBackward(x.data() + r * C, w.data(), dy.data() + r * C, 1, C, eps,
                    1, rdx.data(), rdw.data());
    for (int64_t c = 0; c < C; ++c) {
      dw[size_t((r % 2) * C + c)] -= rdw[size_t(c)];
      EXPECT_NEAR(rdx[size_t(c)], dx[size_t(r * C + c)]);
    }
  }
  for (double left : dw)
    EXPECT(std::fabs(left) < 1e-12);
}

void testCrossEntropyBackward() {
  // logits [0, ln 3] with target 1: softmax [1/4, 3/4], so the gradient of
  // the loss is [1/4, -1/4], times dloss = 2.
  double x[] = {0, std::log(3.0)}, dloss[] = {2}, d[2];
  int64_t t[] = {1};
  crossEntropyBackward(x, t, dloss, 1, 2, d);
  EXPECT_NEAR(d[0], 0.5);
  EXPECT_NEAR(d[1], -0.5);
  // Central differences of sum_r dloss[r] loss[r]; row 1 ignored (all 0).
  const int64_t R = 3, V = 4;
  std::vector<double> logits = {0.5, -1.0, 2.0, 0.3, 1.0, 1.0,
                                -2.0, 0.0, 3.0, -0.5, 0.25, 1.5};
  std::vector<int64_t> target = {2, -100, 0};
  std::vector<double> g(size_t(R * V));
  double ds[] = {0.7, 5.0, -1.3};
  crossEntropyBackward(logits.data(), target.data(), ds, R, V, g.data());
  auto loss = [&](const std::vector<double> &at) {
    std::vector<double> l(R), lse(R);
    crossEntropy(at.data(), target.data(), R, V, l.data(), lse.data());
    return ds[0] * l[0] + ds[1] * l[1] + ds[2] * l[2];
  };
  EXPECT(worstCentralDifference(loss, logits, g) < 1e-8);
  for (int64_t v = 0; v < V; ++v)
    EXPECT(g[size_t(V + v)] == 0);
  // Each counted row's gradient sums to 0 (softmax sums to 1).
  EXPECT(std::fabs(g[0] + g[1] + g[2] + g[3]) < 1e-12);
}
} // namespace

void testTraining() {
  testRmsNormForward();
  testRmsNormBackward();
  testCrossEntropyBackward();
}

} // namespace tegula::unittest
