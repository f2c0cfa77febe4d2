//===- RmsNorm.cpp - float64 RMSNorm forward and backward ------------------===//
//
// "rmsnorm_fwd", "rmsnorm_bwd_dx" and "rmsnorm_bwd_dw": the training
// kernels of kernels/rmsnorm.tile, from the definition one row at a time
// (the inference kernel's "rmsnorm" is in Reference.cpp). The backward's
// gradients are those of y = x rstd w with rstd = 1 / sqrt(mean(x^2) +
// eps) of the row itself; the rstd the kernel reads must be the forward's,
// so with --check the runner derives it here (deriveRmsNormInputs) unless
// an --in file gives it, and the reference refuses a given one that does
// not match.
//
//===----------------------------------------------------------------------===//

#include "RefContext.h"

#include <algorithm>
#include <cmath>

namespace tegula::rt {

namespace {
double rowRstd(const double *x, int64_t C, double eps) {
  double squares = 0;
  for (int64_t c = 0; c < C; ++c)
    squares += x[c] * x[c];
  return 1 / std::sqrt(squares / double(C) + eps);
}
} // namespace

void rmsNormForward(const double *x, const double *w, int64_t R, int64_t C,
                    double eps, double *y, double *rstd) {
  for (int64_t r = 0; r < R; ++r) {
    const double *xr = x + r * C;
    double inv = rowRstd(xr, C, eps);
    for (int64_t c = 0; c < C; ++c)
      y[r * C + c] = xr[c] * inv * w[c];
    if (rstd)
      rstd[r] = inv;
  }
}

void rmsNormBackward(const double *x, const double *w, const double *dy,
                     int64_t R, int64_t C, double eps, int64_t G, double *dx,
                     double *dwPart) {
  std::fill(dwPart, dwPart + G * C, 0.0);
  for (int64_t r = 0; r < R; ++r) {
    const double *xr = x + r * C, *dyr = dy + r * C;
    double inv = rowRstd(xr, C, eps);
    // y_c = x_c rstd w_c and d rstd / d x_j = -rstd^3 x_j / C, so
    // dx_j = rstd w_j dy_j - x_j rstd^3 mean(x w dy).
    double meanXWDy = 0;
    for (int64_t c = 0; c < C; ++c)
      meanXWDy += xr[c] * w[c] * dyr[c];
    meanXWDy /= double(C);
    double *dwRow = dwPart + (r % G) * C;
    for (int64_t c = 0; c < C; ++c) {
      dx[r * C + c] = inv * (w[c] * dyr[c] - xr[c] * inv * inv * meanXWDy);
      dwRow[c] += dyr[c] * xr[c] * inv;
    }
  }
}

namespace {

/// options.eps, else the scalar 'eps', else 1e-6 (the rmsnorm reference's).
double epsOf(const RefContext &c) { return c.eps(1e-6); }

/// The backward's tensors: x, dy [R, C], w [C], rstd [R] (optional), and
/// whichever of dx [R, C] and dw_part [G, C] exist.
struct BwdTensors {
  int x = -1, dy = -1, w = -1, rstd = -1, dx = -1, dwPart = -1;
  int64_t R = 0, C = 0, G = 1;

  bool bind(RefContext &c) {
    x = c.tensor("x", 2), dy = c.tensor("dy", 2), w = c.tensor("w", 1);
    if (x < 0 || dy < 0 || w < 0 || !c.same(x, 0, dy, 0) ||
        !c.same(x, 1, dy, 1) || !c.same(x, 1, w, 0))
      return false;
    R = c.shape(x)[0], C = c.shape(x)[1];
    rstd = c.index("rstd");
    if (rstd >= 0 && !(c.shape(rstd).size() == 1 && c.same(rstd, 0, x, 0)))
      return c.fail("tensor '" + c.nameOf("rstd") + "' must be [R]");
    dx = c.index("dx");
    if (dx >= 0 && c.shape(dx) != c.shape(x))
      return c.fail("tensor '" + c.nameOf("dx") + "' must have x's shape");
    dwPart = c.index("dw_part");
    if (dwPart >= 0) {
      if (c.shape(dwPart).size() != 2 || !c.same(dwPart, 1, x, 1))
        return c.fail("tensor '" + c.param(dwPart) + "' must be [G, C]");
      G = c.shape(dwPart)[0];
      if (G < 1)
        return c.fail("the partial sums need G >= 1 rows");
    }
    return true;
  }
};

std::vector<double> exactRstd(const std::vector<double> &x, int64_t R,
                              int64_t C, double eps) {
  std::vector<double> rstd(size_t(R), 0.0);
  for (int64_t r = 0; r < R; ++r)
    rstd[size_t(r)] = rowRstd(x.data() + r * C, C, eps);
  return rstd;
}

} // namespace

bool rmsNormForwardRef(RefContext &c,
                       std::map<std::string, std::vector<double>> &outputs) {
  int x = c.tensor("x", 2), w = c.tensor("w", 1), y = c.tensor("y", 2);
  if (x < 0 || w < 0 || y < 0 || !c.same(x, 1, w, 0))
    return false;
  if (c.shape(y) != c.shape(x))
    return c.fail("tensor '" + c.param(y) + "' must have x's shape");
  int64_t R = c.shape(x)[0], C = c.shape(x)[1];
  int rstd = c.index("rstd");
  if (rstd >= 0 && c.shape(rstd) != std::vector<int64_t>{R})
    return c.fail("tensor '" + c.nameOf("rstd") + "' must be [R]");
  std::vector<double> yv(size_t(R * C)), rv(static_cast<size_t>(R));
  std::vector<double> xv = c.values(x), wv = c.values(w);
  rmsNormForward(xv.data(), wv.data(), R, C, epsOf(c), yv.data(), rv.data());
  outputs[c.param(y)] = std::move(yv);
  if (c.isOutput(rstd))
    outputs[c.param(rstd)] = std::move(rv);
  return true;
}

bool rmsNormBackwardRef(RefContext &c,
                        std::map<std::string, std::vector<double>> &outputs) {
  BwdTensors t;
  if (!t.bind(c))
    return false;
  double eps = epsOf(c);
  std::vector<double> xv = c.values(t.x);
  if (!c.checkForwardInput(t.rstd, exactRstd(xv, t.R, t.C, eps),
                           "rstd of x"))
    return false;
  std::vector<double> dx(size_t(t.R * t.C)), dw(size_t(t.G * t.C));
  std::vector<double> wv = c.values(t.w), dyv = c.values(t.dy);
  rmsNormBackward(xv.data(), wv.data(), dyv.data(), t.R, t.C, eps, t.G,
                  dx.data(), dw.data());
  for (auto [i, values] : {std::pair{t.dx, &dx}, {t.dwPart, &dw}})
    if (c.isOutput(i))
      outputs[c.param(i)] = std::move(*values);
  return true;
}

bool rmsNormDwRef(RefContext &c,
                  std::map<std::string, std::vector<double>> &outputs) {
  int dwPart = c.tensor("dw_part", 2), dw = c.tensor("dw", 1);
  if (dwPart < 0 || dw < 0 || !c.same(dwPart, 1, dw, 0))
    return false;
  outputs[c.param(dw)] =
      sumPartialRows(c.values(dwPart), c.shape(dwPart)[0], c.shape(dwPart)[1]);
  return true;
}

bool deriveRmsNormInputs(RefContext &c, std::vector<HostTensor> &host,
                         const std::set<std::string> &fromFiles) {
  BwdTensors t;
  if (!t.bind(c))
    return false;
  c.derive(t.rstd, exactRstd(c.values(t.x), t.R, t.C, epsOf(c)), host,
           fromFiles);
  return true;
}

} // namespace tegula::rt
