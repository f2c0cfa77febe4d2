//===- Attention.cpp - float64 softmax attention forward ------------------===//
//
// The textbook two-pass form (max, then exp-sum), one query row at a time:
// nothing shared with how a tiled kernel computes it.
//
//===----------------------------------------------------------------------===//

#include "tegula/Runtime/References.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace tegula::rt {

void attentionForward(const double *q, const double *k, const double *v,
                      int64_t Z, int64_t H, int64_t M, int64_t N, int64_t D,
                      int64_t Dv, bool causal, double scale, double *o,
                      double *lse, bool lseBase2) {
  std::vector<double> scores(size_t(std::max<int64_t>(N, 1)));
  for (int64_t zh = 0; zh < Z * H; ++zh) {
    const double *kh = k + zh * N * D;
    const double *vh = v + zh * N * Dv;
    for (int64_t t = 0; t < M; ++t) {
      const double *qt = q + (zh * M + t) * D;
      double *ot = o + (zh * M + t) * Dv;
      // Keys 0..keys-1 are visible; a causal row t sees s <= t.
      int64_t keys = causal ? std::min(t + 1, N) : N;
      double maxScore = -std::numeric_limits<double>::infinity();
      for (int64_t s = 0; s < keys; ++s) {
        double dot = 0;
        for (int64_t d = 0; d < D; ++d)
          dot += qt[d] * kh[s * D + d];
        scores[size_t(s)] = scale * dot;
        maxScore = std::max(maxScore, scores[size_t(s)]);
      }
      double sum = 0;
      for (int64_t s = 0; s < keys; ++s) {
        scores[size_t(s)] = std::exp(scores[size_t(s)] - maxScore);
        sum += scores[size_t(s)];
      }
      for (int64_t j = 0; j < Dv; ++j) {
        double acc = 0;
        for (int64_t s = 0; s < keys; ++s)
          acc += scores[size_t(s)] * vh[s * Dv + j];
        ot[j] = keys ? acc / sum : 0;
      }
      if (lse) {
        double l = keys ? maxScore + std::log(sum)
                        : -std::numeric_limits<double>::infinity();
        lse[zh * M + t] = lseBase2 ? l / std::log(2.0) : l;
      }
    }
  }
}

} // namespace tegula::rt
