//===- AttentionBackward.cpp - float64 attention backward reference -------===//
//
// "attention_bwd": the gradients of o = softmax(scale q k^T [+ causal mask]) v
// with respect to q, k and v for an output gradient do, computed from the
// definition one query row at a time: P from the scores and their exact
// logsumexp, dP = do v^T, dS = P (dP - rowsum(P dP)). K/V heads may be
// grouped (GQA, MQA): query head h reads K/V head h / (H / HKV), and a K/V
// head's dk and dv sum the terms of every query head of its group. Queries
// (M) and keys (N) may differ in number; the causal mask is aligned
// bottom-right (query i sees keys j <= i + N - M), and a query that sees no
// key has o = 0, lse = -inf and no gradient. Nothing is shared with the
// tiled kernels, which recompute P from the lse and o they are given.
//
// Those inputs (o, lse, delta = rowsum(do o)) must be what the forward
// computed from the same q, k, v; random ones would check nothing. So with
// --check the runner derives them here (deriveAttentionBackwardInputs)
// unless an --in file gives them, and the reference refuses given ones that
// do not match the forward.
//
//===----------------------------------------------------------------------===//

#include "RefContext.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <tuple>

namespace tegula::rt {

void attentionBackwardGqa(const double *q, const double *k, const double *v,
                          const double *dout, int64_t Z, int64_t H, int64_t HKV,
                          int64_t M, int64_t N, int64_t D, bool causal,
                          double scale, double *dq, double *dk, double *dv,
                          double *o, double *lse, double *delta) {
  std::fill(dq, dq + Z * H * M * D, 0.0);
  std::fill(dk, dk + Z * HKV * N * D, 0.0);
  std::fill(dv, dv + Z * HKV * N * D, 0.0);
  std::vector<double> p(static_cast<size_t>(N)), dp(static_cast<size_t>(N));
  int64_t group = HKV ? H / HKV : 1;
  for (int64_t zh = 0; zh < Z * H; ++zh) {
    // The K/V head of query head zh % H, as an index into [Z, HKV].
    int64_t zkv = (zh / H) * HKV + (zh % H) / group;
    const double *qh = q + zh * M * D, *kh = k + zkv * N * D,
                 *vh = v + zkv * N * D, *gh = dout + zh * M * D;
    for (int64_t i = 0; i < M; ++i) {
      const double *qi = qh + i * D, *gi = gh + i * D;
      // Bottom-right causal: row i sees keys 0..i + N - M, none when that
      // is negative (its sums below are empty: o = 0, delta = 0).
      int64_t keys = causal ? std::clamp<int64_t>(i + 1 + N - M, 0, N) : N;
      double top = -std::numeric_limits<double>::infinity();
      for (int64_t j = 0; j < keys; ++j) {
        double s = 0;
        for (int64_t d = 0; d < D; ++d)
          s += qi[d] * kh[j * D + d];
        p[size_t(j)] = scale * s;
        top = std::max(top, p[size_t(j)]);
      }
      double sum = 0;
      for (int64_t j = 0; j < keys; ++j)
        sum += std::exp(p[size_t(j)] - top);
      double l =
          keys ? top + std::log(sum) : -std::numeric_limits<double>::infinity();
      double di = 0;
      for (int64_t j = 0; j < keys; ++j) {
        p[size_t(j)] = std::exp(p[size_t(j)] - l);
        double g = 0;
        for (int64_t d = 0; d < D; ++d)
          g += gi[d] * vh[j * D + d];
        dp[size_t(j)] = g;
        di += p[size_t(j)] * g;
      }
      double *dqi = dq + (zh * M + i) * D;
      for (int64_t j = 0; j < keys; ++j) {
        double pj = p[size_t(j)], ds = pj * (dp[size_t(j)] - di);
        double *dkj = dk + (zkv * N + j) * D, *dvj = dv + (zkv * N + j) * D;
        for (int64_t d = 0; d < D; ++d) {
          dqi[d] += scale * ds * kh[j * D + d];
          dkj[d] += scale * ds * qi[d];
          dvj[d] += pj * gi[d];
        }
      }
      if (o)
        for (int64_t d = 0; d < D; ++d) {
          double acc = 0;
          for (int64_t j = 0; j < keys; ++j)
            acc += p[size_t(j)] * vh[j * D + d];
          o[(zh * M + i) * D + d] = acc;
        }
      if (lse)
        lse[zh * M + i] = l;
      if (delta)
        delta[zh * M + i] = di;
    }
  }
}

void attentionBackward(const double *q, const double *k, const double *v,
                       const double *dout, int64_t Z, int64_t H, int64_t N,
                       int64_t D, bool causal, double scale, double *dq,
                       double *dk, double *dv, double *o, double *lse,
                       double *delta) {
  attentionBackwardGqa(q, k, v, dout, Z, H, H, N, N, D, causal, scale, dq, dk,
                       dv, o, lse, delta);
}

namespace {

/// Relative L2 distance of a from b (absolute when b is all zero).
double relL2(const std::vector<double> &a, const std::vector<double> &b) {
  double err = 0, ref = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    err += (a[i] - b[i]) * (a[i] - b[i]);
    ref += b[i] * b[i];
  }
  return ref > 0 ? std::sqrt(err / ref) : std::sqrt(err);
}

/// delta[r] = sum_d do[r, d] o[r, d] over rows of D.
std::vector<double> rowDots(const std::vector<double> &a,
                            const std::vector<double> &b, int64_t D) {
  std::vector<double> out(a.size() / size_t(D));
  for (size_t r = 0; r < out.size(); ++r)
    for (int64_t d = 0; d < D; ++d)
      out[r] += a[r * size_t(D) + size_t(d)] * b[r * size_t(D) + size_t(d)];
  return out;
}

/// The largest error of an lse given to the kernels: each row's P is off by
/// the factor exp(error), so 1e-4 keeps it 20x below f16's tolerance (a
/// forward kernel's f32 lse is off by about 1e-6).
constexpr double kLseTolerance = 1e-4;

/// The roles of "attention_bwd" present in a kernel, and its sizes.
struct BwdTensors {
  int q = -1, k = -1, v = -1, dout = -1, o = -1, lse = -1, delta = -1;
  int dq = -1, dk = -1, dv = -1;
  int64_t Z = 0, H = 0, HKV = 0, M = 0, N = 0, D = 0;

  bool isOutput(const RefContext &c, int i) const {
    return i >= 0 && c.bundle.params[size_t(i)].access != Access::Read;
  }
  bool needsForward(const RefContext &c) const {
    return isOutput(c, dq) || isOutput(c, dk) || isOutput(c, dv);
  }

  /// Binds the roles and checks their shapes: q, do, o, dq [Z, H, M, D];
  /// k, v, dk, dv [Z, HKV, N, D] with H a multiple of HKV (HKV = H and
  /// N = M when the kernel has none of them); lse and delta [Z, H, M]. q, k,
  /// v and do are
  /// required when the kernel computes a gradient; o and do when it
  /// computes delta.
  bool bind(RefContext &c) {
    int *fours[] = {&q, &dout, &o, &dq, &k, &v, &dk, &dv};
    const char *fourNames[] = {"q", "do", "o", "dq", "k", "v", "dk", "dv"};
    // The first tensor of each side: query heads (0) and K/V heads (1).
    int first[2] = {-1, -1};
    const char *sideShape[2] = {"[Z, H, M, D]", "[Z, HKV, N, D]"};
    for (size_t r = 0; r < 8; ++r) {
      *fours[r] = c.index(fourNames[r]);
      if (*fours[r] < 0)
        continue;
      if (c.shape(*fours[r]).size() != 4)
        return c.fail("tensor '" + c.nameOf(fourNames[r]) +
                      "' must have rank 4");
      int &f = first[r / 4];
      if (f < 0)
        f = *fours[r];
      else if (c.shape(*fours[r]) != c.shape(f))
        return c.fail("tensors '" + c.param(f) + "' " +
                      formatShape(c.shape(f)) + " and '" + c.param(*fours[r]) +
                      "' " + formatShape(c.shape(*fours[r])) +
                      " must have the same shape " + sideShape[r / 4]);
    }
    if (first[0] < 0 && first[1] < 0)
      return c.fail("the kernel has none of the tensors q, k, v, do, o, dq, "
                    "dk, dv");
    const std::vector<int64_t> &qs = c.shape(first[0] >= 0 ? first[0]
                                                           : first[1]);
    const std::vector<int64_t> &ks = c.shape(first[1] >= 0 ? first[1]
                                                           : first[0]);
    if (qs[0] != ks[0] || qs[3] != ks[3])
      return c.fail("tensors '" + c.param(first[0]) + "' " + formatShape(qs) +
                    " and '" + c.param(first[1]) + "' " + formatShape(ks) +
                    " must have the same Z and D ([Z, H, M, D] and "
                    "[Z, HKV, N, D])");
    Z = qs[0], H = qs[1], HKV = ks[1], M = qs[2], N = ks[2], D = qs[3];
    if (HKV == 0 ? H != 0 : H % HKV != 0)
      return c.fail("'" + c.param(first[0]) + "' has " + std::to_string(H) +
                    " heads, not a multiple of the " + std::to_string(HKV) +
                    " K/V heads of '" + c.param(first[1]) + "'");
    for (auto [role, slot] : {std::pair{"lse", &lse}, {"delta", &delta}}) {
      *slot = c.index(role);
      if (*slot >= 0 && c.shape(*slot) != std::vector<int64_t>{Z, H, M})
        return c.fail("tensor '" + c.nameOf(role) + "' " +
                      formatShape(c.shape(*slot)) +
                      " must be [Z, H, M] = " + formatShape({Z, H, M}));
    }
    if (needsForward(c))
      for (auto [role, i] :
           {std::pair{"q", q}, {"k", k}, {"v", v}, {"do", dout}})
        if (i < 0)
          return c.fail("the kernel has no tensor parameter '" +
                        c.nameOf(role) + "' (set \"tensors\": {\"" + role +
                        "\": NAME})");
    if (isOutput(c, delta) && (o < 0 || dout < 0))
      return c.fail("delta needs the tensors '" + c.nameOf("o") + "' and '" +
                    c.nameOf("do") + "'");
    return true;
  }
};

/// The forward and backward of the kernel's q, k, v, do in float64.
struct Exact {
  std::vector<double> dq, dk, dv, o, lse, delta;

  Exact(RefContext &c, const BwdTensors &t, double scale, bool causal) {
    size_t n = size_t(t.Z * t.H * t.M * t.D), rows = size_t(t.Z * t.H * t.M),
           nkv = size_t(t.Z * t.HKV * t.N * t.D);
    dq.resize(n), dk.resize(nkv), dv.resize(nkv), o.resize(n);
    lse.resize(rows), delta.resize(rows);
    std::vector<double> qv = c.values(t.q), kv = c.values(t.k),
                        vv = c.values(t.v), gv = c.values(t.dout);
    attentionBackwardGqa(qv.data(), kv.data(), vv.data(), gv.data(), t.Z, t.H,
                         t.HKV, t.M, t.N, t.D, causal, scale, dq.data(),
                         dk.data(), dv.data(), o.data(), lse.data(),
                         delta.data());
  }
};

bool options(RefContext &c, const BwdTensors &t, double &scale, bool &causal) {
  causal = c.flag("causal", "CAUSAL", false);
  return c.scale(t.D, scale);
}

} // namespace

bool attentionBackwardRef(RefContext &c,
                          std::map<std::string, std::vector<double>> &outputs) {
  BwdTensors t;
  double scale;
  bool causal;
  if (!t.bind(c) || !options(c, t, scale, causal))
    return false;
  // The preprocess: delta from the o and do the kernel reads.
  if (t.isOutput(c, t.delta))
    outputs[c.param(t.delta)] = rowDots(c.values(t.dout), c.values(t.o), t.D);
  if (!t.needsForward(c))
    return true;
  Exact exact(c, t, scale, causal);
  // Inputs the forward feeds must be the forward's, or the kernel's
  // gradients are of some other function.
  if (t.lse >= 0 && !t.isOutput(c, t.lse)) {
    std::vector<double> given = c.values(t.lse);
    double worst = 0;
    for (size_t i = 0; i < given.size(); ++i) {
      // A row with no visible key has lse -inf, which must match exactly
      // (-inf - -inf would be NaN, and NaN never raises `worst`).
      double err =
          given[i] == exact.lse[i] ? 0 : std::fabs(given[i] - exact.lse[i]);
      worst = std::max(worst, std::isnan(err) ? HUGE_VAL : err);
    }
    if (!(worst <= kLseTolerance))
      return c.fail("input '" + c.param(t.lse) +
                    "' is not the forward's logsumexp of q and k: max "
                    "|error| " +
                    std::to_string(worst) +
                    " > 1e-4 (leave it out and --check derives it)");
  }
  for (auto [role, i, want] :
       {std::tuple{"o", t.o, &exact.o}, {"delta", t.delta, &exact.delta}}) {
    if (i < 0 || t.isOutput(c, i))
      continue;
    // o and delta = rowsum(do o) carry the rounding of o to its dtype.
    double tol = toleranceFor({c.bundle.params[size_t(t.dout)].dtype});
    double err = relL2(c.values(i), *want);
    if (!(err <= tol))
      return c.fail("input '" + c.param(i) + "' is not the forward's " + role +
                    " of q, k, v (and do): rel_l2 " + std::to_string(err) +
                    " > " + std::to_string(tol) +
                    " (leave it out and --check derives it)");
  }
  for (auto [i, grad] :
       {std::pair{t.dq, &exact.dq}, {t.dk, &exact.dk}, {t.dv, &exact.dv}})
    if (t.isOutput(c, i))
      outputs[c.param(i)] = std::move(*grad);
  return true;
}

bool deriveAttentionBackwardInputs(RefContext &c, std::vector<HostTensor> &host,
                                   const std::set<std::string> &fromFiles) {
  const Bundle &bundle = c.bundle;
  const LaunchPlan &plan = c.plan;
  BwdTensors t;
  double scale;
  bool causal;
  auto derived = [&](int i) {
    return i >= 0 && !t.isOutput(c, i) && !fromFiles.count(c.param(i));
  };
  if (!t.bind(c) || !options(c, t, scale, causal))
    return false;
  if (!(derived(t.o) || derived(t.lse) || derived(t.delta)))
    return true;
  // The preprocess reads o and do only: nothing to derive them from.
  if (t.q < 0 || t.k < 0 || t.v < 0 || t.dout < 0)
    return true;
  Exact exact(c, t, scale, causal);
  auto fill = [&](int i, const std::vector<double> &values) {
    HostTensor &h = host[size_t(i)];
    for (size_t e = 0; e < values.size(); ++e)
      h.set(int64_t(e), values[e]);
  };
  if (derived(t.o))
    fill(t.o, exact.o);
  if (derived(t.lse))
    fill(t.lse, exact.lse);
  if (derived(t.delta)) {
    // As the preprocess computes it: from o as the forward stored it, in
    // do's dtype.
    HostTensor o = t.o >= 0 ? host[size_t(t.o)]
                            : HostTensor(bundle.params[size_t(t.dout)].dtype,
                                         plan.shapes[size_t(t.dout)]);
    if (t.o < 0)
      for (size_t e = 0; e < exact.o.size(); ++e)
        o.set(int64_t(e), exact.o[e]);
    fill(t.delta,
         rowDots(host[size_t(t.dout)].toDoubles(), o.toDoubles(), t.D));
  }
  return true;
}

} // namespace tegula::rt
