//===- Matmul.cpp - float64 matrix products, RMSNorm, cross-entropy -------===//

#include "tegula/Runtime/References.h"

#include <algorithm>
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

void matmulBiasGelu(const double *a, const double *b, const double *bias,
                    int64_t M, int64_t N, int64_t K, double *c) {
  matmul(a, b, M, N, K, c);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double x = c[i * N + j] + bias[j];
      c[i * N + j] = 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
    }
}

void crossEntropy(const double *logits, const int64_t *target, int64_t R,
                  int64_t V, double *loss, double *lse) {
  for (int64_t r = 0; r < R; ++r) {
    const double *x = logits + r * V;
    double top = x[0];
    for (int64_t v = 1; v < V; ++v)
      top = std::max(top, x[v]);
    double total = 0;
    for (int64_t v = 0; v < V; ++v)
      total += std::exp(x[v] - top);
    lse[r] = top + std::log(total);
    int64_t t = target[r];
    loss[r] = t < 0 ? 0 : lse[r] - (t < V ? x[t] : 0);
  }
}

void rmsNorm(const double *x, const double *w, int64_t R, int64_t C, double eps,
             double *y) {
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
