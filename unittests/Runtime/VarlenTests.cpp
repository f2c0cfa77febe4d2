//===- VarlenTests.cpp - Known answers for the varlen attention references ===//
//
// varlenAttentionForward on a causal sequence with more queries than keys
// worked out by hand (a row that sees no key: o = 0, lse = -inf); one
// sequence of a packing against the dense attentionForwardGqa (bottom-right,
// M != N, GQA); varlenAttentionBackward against central differences of
// sum(o do) + sum(lse dlse) over a packing with an empty sequence of each
// side, len_q > len_k under causal, grouped heads and rows in no sequence.
//
//===----------------------------------------------------------------------===//

#include "UnitTest.h"

#include "tegula/Runtime/References.h"

#include <cmath>
#include <limits>
#include <vector>

using namespace tegula::rt;

namespace tegula::unittest {

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();

void testByHand() {
  // One sequence of 3 queries and 2 keys, H = HKV = D = 1, causal: query i
  // sees keys j <= i - 1. q = [1, 2, 3], k = [0, 1], v = [10, 20],
  // scale = ln(3) / 3. Row 0 sees none; row 1 sees key 0 (score 0);
  // row 2 scores 0 and ln 3: weights 1/4, 3/4, o = 17.5, lse = ln 4.
  VarlenSizes n{3, 2, 1, 1, 1, 1};
  double q[] = {1, 2, 3}, k[] = {0, 1}, v[] = {10, 20};
  int64_t cuQ[] = {0, 3}, cuK[] = {0, 2};
  double o[3], lse[3];
  varlenAttentionForward(n, q, k, v, cuQ, cuK, true, std::log(3.0) / 3, o, lse);
  EXPECT_NEAR(o[0], 0);
  EXPECT(lse[0] == -kInf);
  EXPECT_NEAR(o[1], 10);
  EXPECT_NEAR(lse[1], 0);
  EXPECT_NEAR(o[2], 17.5);
  EXPECT_NEAR(lse[2], std::log(4.0));
  // Not causal: every row sees both keys.
  varlenAttentionForward(n, q, k, v, cuQ, cuK, false, std::log(3.0) / 3, o,
                         lse);
  EXPECT_NEAR(o[0], (10 + 20 * std::pow(3.0, 1.0 / 3)) /
                        (1 + std::pow(3.0, 1.0 / 3)));
  EXPECT_NEAR(o[2], 17.5);

  // The backward of row 2 alone (do = [0, 0, 1]): dv = P^T do = [1/4, 3/4];
  // dP = v = [10, 20], delta = 17.5, dS = P (dP - delta) = [-15/8, 15/8],
  // dq = scale dS . k = scale 15/8, dk = scale dS q = 3 scale [-15/8, 15/8].
  double dout[] = {0, 0, 1}, dq[3], dk[2], dv[2], delta[3];
  double scale = std::log(3.0) / 3;
  varlenAttentionBackward(n, q, k, v, dout, nullptr, cuQ, cuK, true, scale, dq,
                          dk, dv, nullptr, nullptr, delta);
  EXPECT_NEAR(dv[0], 0.25);
  EXPECT_NEAR(dv[1], 0.75);
  EXPECT_NEAR(dq[2], scale * 15 / 8);
  EXPECT_NEAR(dq[0], 0);
  EXPECT_NEAR(dk[0], -3 * scale * 15 / 8);
  EXPECT_NEAR(dk[1], 3 * scale * 15 / 8);
  EXPECT_NEAR(delta[2], 17.5);
  EXPECT_NEAR(delta[0], 0);
}

/// Deterministic values in [-1, 1].
std::vector<double> values(size_t count, uint64_t seed) {
  std::vector<double> out(count);
  for (double &x : out) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    x = double(seed >> 11) / double(1ULL << 53) * 2 - 1;
  }
  return out;
}

void testAgainstDense() {
  // Sequence 1 of a packing (q rows 2..6, k rows 1..3: M = 5, N = 3) against
  // the dense reference on the same rows, H = 4 query heads on HKV = 2.
  VarlenSizes n{8, 5, 4, 2, 3, 2};
  int64_t cuQ[] = {0, 2, 7}, cuK[] = {0, 1, 4};
  std::vector<double> q = values(size_t(n.TQ * n.H * n.D), 1),
                      k = values(size_t(n.TK * n.HKV * n.D), 2),
                      v = values(size_t(n.TK * n.HKV * n.D), 3);
  for (bool causal : {false, true}) {
    std::vector<double> o(q.size()), lse(size_t(n.H * n.TQ));
    varlenAttentionForward(n, q.data(), k.data(), v.data(), cuQ, cuK, causal,
                           0.7, o.data(), lse.data());
    // Gather into [1, H, M, D] and [1, HKV, N, D].
    int64_t M = 5, N = 3;
    std::vector<double> qd(size_t(n.H * M * n.D)), kd(size_t(n.HKV * N * n.D)),
        vd(kd.size()), od(qd.size()), ld(size_t(n.H * M));
    for (int64_t h = 0; h < n.H; ++h)
      for (int64_t i = 0; i < M; ++i)
        for (int64_t d = 0; d < n.D; ++d)
          qd[size_t((h * M + i) * n.D + d)] =
              q[size_t(((2 + i) * n.H + h) * n.D + d)];
    for (int64_t h = 0; h < n.HKV; ++h)
      for (int64_t j = 0; j < N; ++j)
        for (int64_t d = 0; d < n.D; ++d) {
          size_t from = size_t(((1 + j) * n.HKV + h) * n.D + d);
          kd[size_t((h * N + j) * n.D + d)] = k[from];
          vd[size_t((h * N + j) * n.D + d)] = v[from];
        }
    attentionForwardGqa(qd.data(), kd.data(), vd.data(), 1, n.H, n.HKV, M, N,
                        n.D, n.D, causal, true, 0.7, od.data(), ld.data(),
                        false);
    double worst = 0;
    for (int64_t h = 0; h < n.H; ++h)
      for (int64_t i = 0; i < M; ++i) {
        double want = ld[size_t(h * M + i)],
               got = lse[size_t(h * n.TQ + 2 + i)];
        EXPECT(want == got || std::fabs(want - got) < 1e-12);
        for (int64_t d = 0; d < n.D; ++d)
          worst = std::max(worst,
                           std::fabs(od[size_t((h * M + i) * n.D + d)] -
                                     o[size_t(((2 + i) * n.H + h) * n.D + d)]));
      }
    EXPECT(worst < 1e-12);
    // Causal rows 0 and 1 of the sequence (i + N - M < 0) see no key.
    if (causal)
      EXPECT(lse[size_t(2)] == -kInf && lse[size_t(3)] == -kInf);
  }
}

void testCentralDifferences() {
  // Sequences: (q 3, k 2), (q 2, k 0), (q 0, k 3), (q 4, k 6); TQ = 11
  // with rows 9, 10 in no sequence, TK = 12 with row 11 in none.
  VarlenSizes n{11, 12, 4, 2, 3, 4};
  int64_t cuQ[] = {0, 3, 5, 5, 9}, cuK[] = {0, 2, 2, 5, 11};
  std::vector<double> q = values(size_t(n.TQ * n.H * n.D), 11),
                      k = values(size_t(n.TK * n.HKV * n.D), 12),
                      v = values(size_t(n.TK * n.HKV * n.D), 13),
                      dout = values(q.size(), 14),
                      dlse = values(size_t(n.H * n.TQ), 15);
  for (bool causal : {false, true}) {
    double scale = causal ? -0.8 : 0.6;
    auto loss = [&](const std::vector<double> &qx,
                    const std::vector<double> &kx,
                    const std::vector<double> &vx) {
      std::vector<double> o(q.size()), lse(dlse.size());
      varlenAttentionForward(n, qx.data(), kx.data(), vx.data(), cuQ, cuK,
                             causal, scale, o.data(), lse.data());
      double total = 0;
      for (size_t e = 0; e < o.size(); ++e)
        total += std::isnan(o[e]) ? 0 : o[e] * dout[e];
      for (size_t e = 0; e < lse.size(); ++e)
        total += std::isfinite(lse[e]) ? lse[e] * dlse[e] : 0;
      return total;
    };
    std::vector<double> dq(q.size()), dk(k.size()), dv(v.size());
    varlenAttentionBackward(n, q.data(), k.data(), v.data(), dout.data(),
                            dlse.data(), cuQ, cuK, causal, scale, dq.data(),
                            dk.data(), dv.data(), nullptr, nullptr, nullptr);
    // Rows in no sequence are NaN: q rows 9, 10 and k row 11.
    EXPECT(std::isnan(dq[size_t(9 * n.H * n.D)]) && std::isnan(dq.back()) &&
           !std::isnan(dq[size_t(9 * n.H * n.D) - 1]));
    EXPECT(std::isnan(dk[size_t(11 * n.HKV * n.D)]) && std::isnan(dv.back()) &&
           !std::isnan(dk[size_t(11 * n.HKV * n.D) - 1]));
    for (auto *g : {&dq, &dk, &dv})
      for (double &x : *g)
        x = std::isnan(x) ? 0 : x;
    // Queries of sequence 1 (no keys) get 0; keys of sequence 2 (no
    // queries) get 0; causal row 0 of sequence 0 (3 queries, 2 keys) too.
    for (int64_t e = 3 * n.H * n.D; e < 5 * n.H * n.D; ++e)
      EXPECT(dq[size_t(e)] == 0);
    for (int64_t e = 2 * n.HKV * n.D; e < 5 * n.HKV * n.D; ++e)
      EXPECT(dk[size_t(e)] == 0 && dv[size_t(e)] == 0);
    if (causal)
      for (int64_t e = 0; e < n.H * n.D; ++e)
        EXPECT(dq[size_t(e)] == 0);
    double worst = std::max(
        {worstCentralDifference(
             [&](const std::vector<double> &x) { return loss(x, k, v); }, q,
             dq),
         worstCentralDifference(
             [&](const std::vector<double> &x) { return loss(q, x, v); }, k,
             dk),
         worstCentralDifference(
             [&](const std::vector<double> &x) { return loss(q, k, x); }, v,
             dv)});
    EXPECT(worst < 1e-8);
    // delta = rowsum(do o), 0 for rows in no sequence.
    std::vector<double> o(q.size()), delta(dlse.size());
    varlenAttentionBackward(n, q.data(), k.data(), v.data(), dout.data(),
                            nullptr, cuQ, cuK, causal, scale, dq.data(),
                            dk.data(), dv.data(), o.data(), nullptr,
                            delta.data());
    double want = 0;
    for (int64_t d = 0; d < n.D; ++d)
      want += o[size_t((7 * n.H + 3) * n.D + d)] *
              dout[size_t((7 * n.H + 3) * n.D + d)];
    EXPECT_NEAR(delta[size_t(3 * n.TQ + 7)], want);
    EXPECT(delta[size_t(3 * n.TQ + 10)] == 0);
  }
}
} // namespace

void testVarlenAttention() {
  testByHand();
  testAgainstDense();
  testCentralDifferences();
}

} // namespace tegula::unittest
