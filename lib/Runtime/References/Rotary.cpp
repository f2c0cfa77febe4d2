//===- Rotary.cpp - float64 rotary position embedding ---------------------===//

#include "tegula/Runtime/References.h"

namespace tegula::rt {

void rotary(const double *x, const double *cos, const double *sin, int64_t B,
            int64_t T, int64_t H, int64_t D, int64_t R, bool interleaved,
            double *out) {
  int64_t half = R / 2;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < T; ++t)
      for (int64_t h = 0; h < H; ++h) {
        const double *xr = x + ((b * T + t) * H + h) * D;
        double *orow = out + ((b * T + t) * H + h) * D;
        // The tail past R is not rotated (partial rotary).
        for (int64_t d = R; d < D; ++d)
          orow[d] = xr[d];
        for (int64_t i = 0; i < half; ++i) {
          double c = cos[t * half + i], s = sin[t * half + i];
          int64_t i1 = interleaved ? 2 * i : i;
          int64_t i2 = interleaved ? 2 * i + 1 : i + half;
          double x1 = xr[i1], x2 = xr[i2];
          orow[i1] = x1 * c - x2 * s;
          orow[i2] = x2 * c + x1 * s;
        }
      }
}

} // namespace tegula::rt
