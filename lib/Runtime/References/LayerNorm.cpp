//===- LayerNorm.cpp - float64 LayerNorm forward and backward -------------===//
//
// "layer_norm_fwd", "layer_norm_bwd_dx" and "layer_norm_bwd_dwdb": the
// three kernels of kernels/layer_norm.tile, from the definition one row at
// a time. The backward's gradients are those of y = (x - mean) rstd w + b
// with the row's own statistics; the mean and rstd the kernel reads must
// be the forward's, so with --check the runner derives them here
// (deriveLayerNormInputs) unless an --in file gives them, and the
// reference refuses given ones that do not match.
//
//===----------------------------------------------------------------------===//

#include "RefContext.h"

#include <algorithm>
#include <cmath>

namespace tegula::rt {

namespace {
/// The row's mean and 1 / sqrt(biased variance + eps).
void rowStats(const double *x, int64_t N, double eps, double &mean,
              double &rstd) {
  double total = 0;
  for (int64_t n = 0; n < N; ++n)
    total += x[n];
  mean = total / double(N);
  double squares = 0;
  for (int64_t n = 0; n < N; ++n)
    squares += (x[n] - mean) * (x[n] - mean);
  rstd = 1 / std::sqrt(squares / double(N) + eps);
}
} // namespace

void layerNorm(const double *x, const double *w, const double *b, int64_t M,
               int64_t N, double eps, double *y, double *mean, double *rstd) {
  for (int64_t r = 0; r < M; ++r) {
    const double *xr = x + r * N;
    double mu, inv;
    rowStats(xr, N, eps, mu, inv);
    for (int64_t n = 0; n < N; ++n)
      y[r * N + n] = (xr[n] - mu) * inv * w[n] + b[n];
    if (mean)
      mean[r] = mu;
    if (rstd)
      rstd[r] = inv;
  }
}

void layerNormBackward(const double *x, const double *w, const double *dy,
                       int64_t M, int64_t N, double eps, int64_t G, double *dx,
                       double *dwPart, double *dbPart) {
  std::fill(dwPart, dwPart + G * N, 0.0);
  std::fill(dbPart, dbPart + G * N, 0.0);
  std::vector<double> xhat(static_cast<size_t>(N));
  for (int64_t r = 0; r < M; ++r) {
    const double *xr = x + r * N, *dyr = dy + r * N;
    double mu, inv;
    rowStats(xr, N, eps, mu, inv);
    // dL/dxhat = dy w; dx = rstd (dxhat - mean(dxhat) - xhat mean(dxhat xhat)).
    double meanG = 0, meanGX = 0;
    for (int64_t n = 0; n < N; ++n) {
      xhat[size_t(n)] = (xr[n] - mu) * inv;
      meanG += dyr[n] * w[n];
      meanGX += dyr[n] * w[n] * xhat[size_t(n)];
    }
    meanG /= double(N);
    meanGX /= double(N);
    double *dwRow = dwPart + (r % G) * N, *dbRow = dbPart + (r % G) * N;
    for (int64_t n = 0; n < N; ++n) {
      double xh = xhat[size_t(n)];
      dx[r * N + n] = inv * (dyr[n] * w[n] - meanG - xh * meanGX);
      dwRow[n] += dyr[n] * xh;
      dbRow[n] += dyr[n];
    }
  }
}

namespace {

/// options.eps, else the scalar 'eps', else 1e-5 (torch's default).
double epsOf(const RefContext &c) { return c.eps(1e-5); }

/// The backward's tensors: x, dy [M, N], w [N], mean, rstd [M] (each
/// optional but x, dy, w), and whichever of dx [M, N], dw_part, db_part
/// [G, N] exist.
struct BwdTensors {
  int x = -1, dy = -1, w = -1, mean = -1, rstd = -1;
  int dx = -1, dwPart = -1, dbPart = -1;
  int64_t M = 0, N = 0, G = 1;

  bool bind(RefContext &c) {
    x = c.tensor("x", 2), dy = c.tensor("dy", 2), w = c.tensor("w", 1);
    if (x < 0 || dy < 0 || w < 0 || !c.same(x, 0, dy, 0) ||
        !c.same(x, 1, dy, 1) || !c.same(x, 1, w, 0))
      return false;
    M = c.shape(x)[0], N = c.shape(x)[1];
    for (auto [role, slot] : {std::pair{"mean", &mean}, {"rstd", &rstd}}) {
      *slot = c.index(role);
      if (*slot >= 0 && !(c.shape(*slot).size() == 1 && c.same(*slot, 0, x, 0)))
        return c.fail("tensor '" + c.nameOf(role) + "' must be [M]");
    }
    dx = c.index("dx");
    if (dx >= 0 && c.shape(dx) != c.shape(x))
      return c.fail("tensor '" + c.nameOf("dx") + "' must have x's shape");
    dwPart = c.index("dw_part"), dbPart = c.index("db_part");
    if (dwPart >= 0 && dbPart >= 0 && c.shape(dwPart) != c.shape(dbPart))
      return c.fail("tensors '" + c.param(dwPart) + "' and '" +
                    c.param(dbPart) + "' must have the same shape [G, N]");
    for (int part : {dwPart, dbPart}) {
      if (part < 0)
        continue;
      if (c.shape(part).size() != 2 || !c.same(part, 1, x, 1))
        return c.fail("tensor '" + c.param(part) + "' must be [G, N]");
      G = c.shape(part)[0];
    }
    if (G < 1)
      return c.fail("the partial sums need G >= 1 rows");
    return true;
  }
};

/// Each row's exact mean and rstd.
void exactStats(const std::vector<double> &x, int64_t M, int64_t N, double eps,
                std::vector<double> &mean, std::vector<double> &rstd) {
  mean.resize(size_t(M)), rstd.resize(size_t(M));
  for (int64_t r = 0; r < M; ++r)
    rowStats(x.data() + r * N, N, eps, mean[size_t(r)], rstd[size_t(r)]);
}

} // namespace

bool layerNormForwardRef(RefContext &c,
                         std::map<std::string, std::vector<double>> &outputs) {
  int x = c.tensor("x", 2), w = c.tensor("w", 1), b = c.tensor("b", 1),
      y = c.tensor("y", 2);
  if (x < 0 || w < 0 || b < 0 || y < 0)
    return false;
  if (!c.same(x, 1, w, 0) || !c.same(x, 1, b, 0))
    return false;
  if (c.shape(y) != c.shape(x))
    return c.fail("tensor '" + c.param(y) + "' must have x's shape");
  int64_t M = c.shape(x)[0], N = c.shape(x)[1];
  std::vector<double> yv(static_cast<size_t>(M * N)),
      mean(static_cast<size_t>(M)), rstd(static_cast<size_t>(M));
  std::vector<double> xv = c.values(x), wv = c.values(w), bv = c.values(b);
  layerNorm(xv.data(), wv.data(), bv.data(), M, N, epsOf(c), yv.data(),
            mean.data(), rstd.data());
  outputs[c.param(y)] = std::move(yv);
  for (auto [role, values] : {std::pair{"mean", &mean}, {"rstd", &rstd}}) {
    int i = c.index(role);
    if (i < 0)
      continue;
    if (c.shape(i) != std::vector<int64_t>{M})
      return c.fail("tensor '" + c.nameOf(role) + "' must be [M]");
    if (c.isOutput(i))
      outputs[c.param(i)] = std::move(*values);
  }
  return true;
}

bool layerNormBackwardRef(RefContext &c,
                          std::map<std::string, std::vector<double>> &outputs) {
  BwdTensors t;
  if (!t.bind(c))
    return false;
  double eps = epsOf(c);
  std::vector<double> xv = c.values(t.x), mean, rstd;
  exactStats(xv, t.M, t.N, eps, mean, rstd);
  if (!c.checkForwardInput(t.mean, mean, "mean of x") ||
      !c.checkForwardInput(t.rstd, rstd, "rstd of x"))
    return false;
  std::vector<double> dx(size_t(t.M * t.N)), dw(size_t(t.G * t.N)),
      db(size_t(t.G * t.N));
  std::vector<double> wv = c.values(t.w), dyv = c.values(t.dy);
  layerNormBackward(xv.data(), wv.data(), dyv.data(), t.M, t.N, eps, t.G,
                    dx.data(), dw.data(), db.data());
  for (auto [i, values] :
       {std::pair{t.dx, &dx}, {t.dwPart, &dw}, {t.dbPart, &db}})
    if (c.isOutput(i))
      outputs[c.param(i)] = std::move(*values);
  return true;
}

bool layerNormDwDbRef(RefContext &c,
                      std::map<std::string, std::vector<double>> &outputs) {
  int dwPart = c.tensor("dw_part", 2), dbPart = c.tensor("db_part", 2),
      dw = c.tensor("dw", 1), db = c.tensor("db", 1);
  if (dwPart < 0 || dbPart < 0 || dw < 0 || db < 0)
    return false;
  if (c.shape(dwPart) != c.shape(dbPart))
    return c.fail("tensors '" + c.param(dwPart) + "' and '" + c.param(dbPart) +
                  "' must have the same shape [G, N]");
  if (!c.same(dwPart, 1, dw, 0) || !c.same(dwPart, 1, db, 0))
    return false;
  int64_t G = c.shape(dwPart)[0], N = c.shape(dwPart)[1];
  for (auto [part, out] : {std::pair{dwPart, dw}, {dbPart, db}})
    outputs[c.param(out)] = sumPartialRows(c.values(part), G, N);
  return true;
}

bool deriveLayerNormInputs(RefContext &c, std::vector<HostTensor> &host,
                           const std::set<std::string> &fromFiles) {
  BwdTensors t;
  if (!t.bind(c))
    return false;
  std::vector<double> mean, rstd;
  exactStats(c.values(t.x), t.M, t.N, epsOf(c), mean, rstd);
  c.derive(t.mean, mean, host, fromFiles);
  c.derive(t.rstd, rstd, host, fromFiles);
  return true;
}

} // namespace tegula::rt
