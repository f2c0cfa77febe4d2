//===- LinearAttention.cpp - float64 causal linear attention --------------===//
//
// The quadratic form, straight from the definition, rather than the
// recurrent state update a chunked kernel uses.
//
//===----------------------------------------------------------------------===//

#include "tegula/Runtime/References.h"

namespace tegula::rt {

void linearAttention(const double *q, const double *k, const double *v,
                     int64_t B, int64_t T, int64_t H, int64_t D, int64_t Dv,
                     double scale, double *o) {
  auto at = [&](int64_t b, int64_t t, int64_t h, int64_t width) {
    return ((b * T + t) * H + h) * width;
  };
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t t = 0; t < T; ++t) {
        double *ot = o + at(b, t, h, Dv);
        for (int64_t j = 0; j < Dv; ++j)
          ot[j] = 0;
        const double *qt = q + at(b, t, h, D);
        for (int64_t s = 0; s <= t; ++s) {
          const double *ks = k + at(b, s, h, D);
          const double *vs = v + at(b, s, h, Dv);
          double dot = 0;
          for (int64_t d = 0; d < D; ++d)
            dot += qt[d] * ks[d];
          for (int64_t j = 0; j < Dv; ++j)
            ot[j] += scale * dot * vs[j];
        }
      }
}

} // namespace tegula::rt
