//===- AttentionTests.cpp - Cross attention in the attention references ---===//
//
// attentionBackwardGqa with M queries over N keys and the bottom-right
// causal mask: a case worked out by hand whose first query sees no key
// (M > N), its forward against attentionForwardGqa, and its gradients
// against central differences of sum(g o) at M < N and M > N, causal and
// not, with grouped K/V heads.
//
//===----------------------------------------------------------------------===//

#include "UnitTest.h"

#include "tegula/Runtime/References.h"

#include <limits>
#include <vector>

using namespace tegula::rt;

namespace tegula::unittest {

namespace {
void testHandWorked() {
  // M = 3 queries over N = 2 keys, D = 1, scale 1, causal: row i sees keys
  // j <= i - 1. Row 0 sees none: o = 0, lse = -inf, no gradient, whatever
  // its q (7) and do (5). Row 1 sees key 0: P = [1], o = 4, lse = 0, and
  // dS = P (dP - delta) = 0. Row 2 sees both keys: scores 0 and ln 3, P =
  // [1/4, 3/4], o = 7, lse = ln 4; with do = 2, dP = [8, 16], delta = 14,
  // dS = [-3/2, 3/2], so dq_2 = 3/2 ln 3; dk = dS^T q = [-3/2, 3/2]; dv =
  // P^T do = [1 + 2/4, 2 * 3/4] = [3/2, 3/2].
  double q[] = {7, 1, 1}, k[] = {0, std::log(3.0)}, v[] = {4, 8},
         g[] = {5, 1, 2};
  double dq[3], dk[2], dv[2], o[3], lse[3], delta[3];
  attentionBackwardGqa(q, k, v, g, 1, 1, 1, 3, 2, 1, true, 1.0, dq, dk, dv, o,
                       lse, delta);
  double inf = std::numeric_limits<double>::infinity();
  EXPECT(o[0] == 0 && lse[0] == -inf && delta[0] == 0 && dq[0] == 0);
  EXPECT_NEAR(o[1], 4);
  EXPECT_NEAR(lse[1], 0);
  EXPECT_NEAR(dq[1], 0);
  EXPECT_NEAR(o[2], 7);
  EXPECT_NEAR(lse[2], std::log(4.0));
  EXPECT_NEAR(delta[2], 14);
  EXPECT_NEAR(dq[2], 1.5 * std::log(3.0));
  EXPECT_NEAR(dk[0], -1.5);
  EXPECT_NEAR(dk[1], 1.5);
  EXPECT_NEAR(dv[0], 1.5);
  EXPECT_NEAR(dv[1], 1.5);
  // The forward reference agrees, bottom-right; top-left would give row 0
  // key 0.
  double fo[3], flse[3];
  attentionForwardGqa(q, k, v, 1, 1, 1, 3, 2, 1, 1, true, true, 1.0, fo, flse,
                      false);
  EXPECT(fo[0] == 0 && flse[0] == -inf);
  EXPECT_NEAR(fo[1], 4);
  EXPECT_NEAR(flse[2], std::log(4.0));
  // M = 1 over N = 2: the one query sees every key, as without the mask.
  double o1[1], l1[1], o2[1], l2[1];
  attentionForwardGqa(q + 2, k, v, 1, 1, 1, 1, 2, 1, 1, true, true, 1.0, o1, l1,
                      false);
  attentionForwardGqa(q + 2, k, v, 1, 1, 1, 1, 2, 1, 1, false, true, 1.0, o2,
                      l2, false);
  EXPECT_NEAR(o1[0], o2[0]);
  EXPECT_NEAR(l1[0], l2[0]);
}

/// Z = 1, H = 4 over HKV = 2, D = 3 at M queries and N keys: o and lse
/// against attentionForwardGqa (bottom-right), dq, dk, dv against central
/// differences of sum(g o), and rows with no key (M > N, causal) silent.
void testAgainstDifferences(int64_t M, int64_t N, bool causal) {
  const int64_t Z = 1, H = 4, HKV = 2, D = 3;
  const double scale = 0.7;
  size_t nq = size_t(Z * H * M * D), nkv = size_t(Z * HKV * N * D),
         rows = size_t(Z * H * M);
  std::vector<double> q(nq), k(nkv), v(nkv), g(nq);
  for (size_t i = 0; i < nq; ++i)
    q[i] = std::sin(0.7 * double(i) + 0.3), g[i] = std::cos(1.3 * double(i));
  for (size_t i = 0; i < nkv; ++i)
    k[i] = std::cos(0.9 * double(i) - 0.2), v[i] = std::sin(1.1 * double(i));
  std::vector<double> dq(nq), dk(nkv), dv(nkv), o(nq), lse(rows), delta(rows);
  attentionBackwardGqa(q.data(), k.data(), v.data(), g.data(), Z, H, HKV, M, N,
                       D, causal, scale, dq.data(), dk.data(), dv.data(),
                       o.data(), lse.data(), delta.data());
  std::vector<double> fo(nq), flse(rows);
  attentionForwardGqa(q.data(), k.data(), v.data(), Z, H, HKV, M, N, D, D,
                      causal, true, scale, fo.data(), flse.data(), false);
  for (size_t i = 0; i < nq; ++i)
    EXPECT_NEAR(o[i], fo[i]);
  for (size_t i = 0; i < rows; ++i) {
    bool empty = causal && int64_t(i) % M < M - N;
    if (empty)
      EXPECT(std::isinf(lse[i]) && lse[i] < 0 && delta[i] == 0);
    else
      EXPECT_NEAR(lse[i], flse[i]);
    for (int64_t d = 0; empty && d < D; ++d)
      EXPECT(dq[i * size_t(D) + size_t(d)] == 0);
  }
  // loss(q, k, v) = sum(g o), each input perturbed in turn.
  auto loss = [&](const std::vector<double> &qq, const std::vector<double> &kk,
                  const std::vector<double> &vv) {
    std::vector<double> out(nq);
    attentionForwardGqa(qq.data(), kk.data(), vv.data(), Z, H, HKV, M, N, D, D,
                        causal, true, scale, out.data(), nullptr, false);
    double sum = 0;
    for (size_t i = 0; i < nq; ++i)
      sum += g[i] * out[i];
    return sum;
  };
  double tol = 1e-7;
  EXPECT(worstCentralDifference(
             [&](const std::vector<double> &x) { return loss(x, k, v); }, q,
             dq) < tol);
  EXPECT(worstCentralDifference(
             [&](const std::vector<double> &x) { return loss(q, x, v); }, k,
             dk) < tol);
  EXPECT(worstCentralDifference(
             [&](const std::vector<double> &x) { return loss(q, k, x); }, v,
             dv) < tol);
}
} // namespace

void testAttentionCross() {
  testHandWorked();
  for (bool causal : {false, true}) {
    testAgainstDifferences(3, 5, causal);
    testAgainstDifferences(5, 3, causal);
  }
}

} // namespace tegula::unittest
