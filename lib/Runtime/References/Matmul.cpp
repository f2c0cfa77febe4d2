//===- Matmul.cpp - float64 matrix product and RMSNorm --------------------===//

#include "tegula/Runtime/References.h"

#include <cmath>

namespace tegula::rt {

void matmul(const double *a, const double *b, int64_t M, int64_t N, int64_t K,
            double *c) {
  for (int64_t i = 0; i < M; ++i) {
    double *row = c + i * N;
    for (int64_t j = 0; j < N; ++j)
      row[j] = 0;
    // i-k-j order: the inner loop runs along rows of b and c.
    for (int64_t k = 0; k < K; ++k) {
      double aik = a[i * K + k];
      const double *brow = b + k * N;
      for (int64_t j = 0; j < N; ++j)
        row[j] += aik * brow[j];
    }
  }
}

void rmsNorm(const double *x, const double *w, int64_t R, int64_t C,
             double eps, double *y) {
  for (int64_t r = 0; r < R; ++r) {
    const double *xr = x + r * C;
    double squares = 0;
    for (int64_t c = 0; c < C; ++c)
      squares += xr[c] * xr[c];
    double rstd = 1 / std::sqrt(squares / double(C) + eps);
    for (int64_t c = 0; c < C; ++c)
      y[r * C + c] = xr[c] * rstd * w[c];
  }
}

} // namespace tegula::rt
