//===- VarlenAttention.cpp - float64 varlen attention, forward and backward
//===//
//
// "attention_varlen_fwd" and the backward references of
// kernels/attention_varlen_bwd.tile (attention_varlen_bwd_preprocess,
// _dkdv, _dq): attention over packed sequences with their own query and
// key bounds (flash-attn's varlen layout), computed from the definition one
// query row at a time, causal aligned bottom-right per sequence. Nothing is
// shared with the tiled kernels or with the dense references.
//
// The backward kernels read the forward's lse and delta: with --check the
// runner derives them here from q, k, v and do (deriveVarlenInputs) unless
// an --in file gives them, and the reference refuses given ones that do
// not match the forward.
//
//===----------------------------------------------------------------------===//

#include "RefContext.h"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <limits>
#include <tuple>

namespace tegula::rt {

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

/// Visits every query row of every sequence: f(b, i, row, keys) with i the
/// row's index in sequence b, `row` its packed index and `keys` how many of
/// the sequence's keys (from cuK[b]) it sees.
template <typename F>
void forEachRow(const VarlenSizes &n, const int64_t *cuQ, const int64_t *cuK,
                bool causal, F f) {
  for (int64_t b = 0; b < n.B; ++b) {
    int64_t lenQ = cuQ[b + 1] - cuQ[b], lenK = cuK[b + 1] - cuK[b];
    for (int64_t i = 0; i < lenQ; ++i) {
      int64_t keys =
          causal ? std::clamp<int64_t>(i + 1 + lenK - lenQ, 0, lenK) : lenK;
      f(b, i, cuQ[b] + i, keys);
    }
  }
}

/// Marks the rows of a [T, heads, D] tensor that lie in no sequence as NaN.
void poisonOutside(const int64_t *cu, int64_t B, int64_t T, int64_t width,
                   double *x) {
  std::vector<bool> inside(size_t(T), false);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = cu[b]; t < cu[b + 1]; ++t)
      inside[size_t(t)] = true;
  for (int64_t t = 0; t < T; ++t)
    if (!inside[size_t(t)])
      std::fill(x + t * width, x + (t + 1) * width, kNaN);
}

/// Scaled scores of query row `qi` against `keys` keys from `kh` (stride
/// HKV * D), and their logsumexp (-inf when none).
double scoresOf(const double *qi, const double *kh, int64_t keys,
                const VarlenSizes &n, double scale, std::vector<double> &s) {
  double top = -kInf;
  for (int64_t j = 0; j < keys; ++j) {
    double dot = 0;
    for (int64_t d = 0; d < n.D; ++d)
      dot += qi[d] * kh[j * n.HKV * n.D + d];
    s[size_t(j)] = scale * dot;
    top = std::max(top, s[size_t(j)]);
  }
  double sum = 0;
  for (int64_t j = 0; j < keys; ++j)
    sum += std::exp(s[size_t(j)] - top);
  return keys ? top + std::log(sum) : -kInf;
}
} // namespace

void varlenAttentionForward(const VarlenSizes &n, const double *q,
                            const double *k, const double *v,
                            const int64_t *cuQ, const int64_t *cuK, bool causal,
                            double scale, double *o, double *lse) {
  std::fill(o, o + n.TQ * n.H * n.D, kNaN);
  if (lse)
    std::fill(lse, lse + n.H * n.TQ, kNaN);
  std::vector<double> s(size_t(std::max<int64_t>(n.TK, 1)));
  int64_t group = n.H / n.HKV;
  forEachRow(
      n, cuQ, cuK, causal, [&](int64_t b, int64_t, int64_t row, int64_t keys) {
        for (int64_t h = 0; h < n.H; ++h) {
          int64_t hk = h / group;
          const double *qi = q + (row * n.H + h) * n.D;
          const double *kh = k + (cuK[b] * n.HKV + hk) * n.D;
          const double *vh = v + (cuK[b] * n.HKV + hk) * n.D;
          double l = scoresOf(qi, kh, keys, n, scale, s);
          double *oi = o + (row * n.H + h) * n.D;
          for (int64_t d = 0; d < n.D; ++d) {
            double acc = 0;
            for (int64_t j = 0; j < keys; ++j)
              acc += std::exp(s[size_t(j)] - l) * vh[j * n.HKV * n.D + d];
            oi[d] = acc;
          }
          if (lse)
            lse[h * n.TQ + row] = l;
        }
      });
}

void varlenAttentionBackward(const VarlenSizes &n, const double *q,
                             const double *k, const double *v,
                             const double *dout, const double *dlse,
                             const int64_t *cuQ, const int64_t *cuK,
                             bool causal, double scale, double *dq, double *dk,
                             double *dv, double *o, double *lse,
                             double *delta) {
  int64_t nq = n.TQ * n.H * n.D, nk = n.TK * n.HKV * n.D;
  std::fill(dq, dq + nq, 0.0);
  std::fill(dk, dk + nk, 0.0);
  std::fill(dv, dv + nk, 0.0);
  std::vector<double> oAll(static_cast<size_t>(nq)),
      lseAll(static_cast<size_t>(n.H * n.TQ));
  varlenAttentionForward(n, q, k, v, cuQ, cuK, causal, scale, oAll.data(),
                         lseAll.data());
  std::vector<double> s(size_t(std::max<int64_t>(n.TK, 1)));
  std::vector<double> dp(s.size());
  int64_t group = n.H / n.HKV;
  forEachRow(n, cuQ, cuK, causal,
             [&](int64_t b, int64_t, int64_t row, int64_t keys) {
               for (int64_t h = 0; h < n.H; ++h) {
                 int64_t hk = h / group;
                 const double *qi = q + (row * n.H + h) * n.D;
                 const double *gi = dout + (row * n.H + h) * n.D;
                 int64_t kRow0 = cuK[b];
                 const double *kh = k + (kRow0 * n.HKV + hk) * n.D;
                 const double *vh = v + (kRow0 * n.HKV + hk) * n.D;
                 double l = scoresOf(qi, kh, keys, n, scale, s);
                 // dS = P (dP - rowsum(P dP) + dlse): lse's gradient is P too.
                 double di = dlse ? -dlse[h * n.TQ + row] : 0;
                 for (int64_t j = 0; j < keys; ++j) {
                   s[size_t(j)] = std::exp(s[size_t(j)] - l);
                   double g = 0;
                   for (int64_t d = 0; d < n.D; ++d)
                     g += gi[d] * vh[j * n.HKV * n.D + d];
                   dp[size_t(j)] = g;
                   di += s[size_t(j)] * g;
                 }
                 double *dqi = dq + (row * n.H + h) * n.D;
                 for (int64_t j = 0; j < keys; ++j) {
                   double pj = s[size_t(j)], ds = pj * (dp[size_t(j)] - di);
                   int64_t at = ((kRow0 + j) * n.HKV + hk) * n.D;
                   for (int64_t d = 0; d < n.D; ++d) {
                     dqi[d] += scale * ds * kh[j * n.HKV * n.D + d];
                     dk[at + d] += scale * ds * qi[d];
                     dv[at + d] += pj * gi[d];
                   }
                 }
               }
             });
  poisonOutside(cuQ, n.B, n.TQ, n.H * n.D, dq);
  poisonOutside(cuK, n.B, n.TK, n.HKV * n.D, dk);
  poisonOutside(cuK, n.B, n.TK, n.HKV * n.D, dv);
  if (o)
    std::copy(oAll.begin(), oAll.end(), o);
  if (lse)
    std::copy(lseAll.begin(), lseAll.end(), lse);
  if (delta)
    for (int64_t t = 0; t < n.TQ; ++t)
      for (int64_t h = 0; h < n.H; ++h) {
        double acc = 0;
        for (int64_t d = 0; d < n.D; ++d) {
          double od = oAll[size_t((t * n.H + h) * n.D + d)];
          acc += std::isnan(od) ? 0 : dout[(t * n.H + h) * n.D + d] * od;
        }
        delta[h * n.TQ + t] = acc;
      }
}

namespace {

/// The largest error of an lse given to the backward kernels (as
/// AttentionBackward.cpp's: a forward kernel's f32 lse is off by ~1e-6).
constexpr double kLseTolerance = 1e-4;

/// The roles of the varlen references present in a kernel, and its sizes.
struct VarlenTensors {
  int q = -1, o = -1, dout = -1, dq = -1, k = -1, v = -1, dk = -1, dv = -1;
  int lse = -1, delta = -1, cuQ = -1, cuK = -1;
  VarlenSizes n;
  std::vector<int64_t> boundsQ, boundsK;

  /// Binds the roles and checks their shapes: q, o, do, dq [TQ, H, D]; k,
  /// v, dk, dv [TK, HKV, D] with H a multiple of HKV; lse, delta [H, TQ];
  /// cu_seqlens_q and cu_seqlens_k [S].
  bool bind(RefContext &c) {
    int *sides[] = {&q, &o, &dout, &dq, &k, &v, &dk, &dv};
    const char *roles[] = {"q", "o", "do", "dq", "k", "v", "dk", "dv"};
    int first[2] = {-1, -1};
    for (size_t r = 0; r < 8; ++r) {
      int i = *sides[r] = c.index(roles[r]);
      if (i < 0)
        continue;
      if (c.shape(i).size() != 3)
        return c.fail("tensor '" + c.param(i) + "' must have rank 3");
      int &f = first[r / 4];
      if (f < 0)
        f = i;
      else if (c.shape(i) != c.shape(f))
        return c.fail("tensors '" + c.param(f) + "' " +
                      formatShape(c.shape(f)) + " and '" + c.param(i) + "' " +
                      formatShape(c.shape(i)) + " must have the same shape " +
                      (r < 4 ? "[TQ, H, D]" : "[TK, HKV, D]"));
    }
    if (first[0] < 0)
      return c.fail("the kernel has none of the tensors q, o, do, dq");
    const auto &qs = c.shape(first[0]);
    n.TQ = qs[0], n.H = qs[1], n.D = qs[2];
    if (first[1] >= 0) {
      const auto &ks = c.shape(first[1]);
      n.TK = ks[0], n.HKV = ks[1];
      if (ks[2] != n.D || n.HKV == 0 || n.H % n.HKV != 0)
        return c.fail("tensors '" + c.param(first[0]) + "' " + formatShape(qs) +
                      " and '" + c.param(first[1]) + "' " + formatShape(ks) +
                      " must be [TQ, H, D] and [TK, HKV, D] with HKV "
                      "dividing H");
    }
    for (auto [role, slot] : {std::pair{"lse", &lse}, {"delta", &delta}}) {
      *slot = c.index(role);
      if (*slot >= 0 && c.shape(*slot) != std::vector<int64_t>{n.H, n.TQ})
        return c.fail("tensor '" + c.param(*slot) + "' " +
                      formatShape(c.shape(*slot)) +
                      " must be [H, TQ] = " + formatShape({n.H, n.TQ}));
    }
    cuQ = c.index("cu_seqlens_q"), cuK = c.index("cu_seqlens_k");
    return true;
  }

  /// Fails naming the first of `roles` the kernel lacks.
  bool require(RefContext &c, std::initializer_list<const char *> roles) {
    for (const char *role : roles)
      if (c.index(role) < 0)
        return c.fail("the kernel has no tensor parameter '" + c.nameOf(role) +
                      "' (set \"tensors\": {\"" + role + "\": NAME})");
    return true;
  }

  /// Reads one side's bounds: non-decreasing row indices in 0..T, each
  /// sequence at most the scalar `maxName` long where the kernel has it.
  bool readBounds(RefContext &c, int cu, int64_t T, const std::string &maxName,
                  const char *what, std::vector<int64_t> &out) {
    if (c.shape(cu).size() != 1 || c.shape(cu)[0] < 1)
      return c.fail("tensor '" + c.param(cu) + "' must be [S], S >= 1");
    std::optional<double> maxLen = c.scalar(maxName);
    std::vector<double> bounds = c.values(cu);
    out.assign(bounds.begin(), bounds.end());
    for (size_t b = 0; b < bounds.size(); ++b) {
      if (!(bounds[b] >= 0 && bounds[b] <= double(T) &&
            (b == 0 || bounds[b] >= bounds[b - 1])))
        return c.fail("'" + c.param(cu) + "'[" + std::to_string(b) +
                      "] = " + std::to_string(int64_t(bounds[b])) +
                      " is not a non-decreasing row index in 0.." +
                      std::to_string(T));
      if (b > 0 && maxLen && bounds[b] - bounds[b - 1] > *maxLen)
        return c.fail("sequence " + std::to_string(b - 1) + " has " +
                      std::to_string(int64_t(bounds[b] - bounds[b - 1])) + " " +
                      what + ", more than " + maxName + " = " +
                      std::to_string(int64_t(*maxLen)));
    }
    return true;
  }

  bool readBounds(RefContext &c) {
    if (!require(c, {"cu_seqlens_q", "cu_seqlens_k"}) ||
        !c.same(cuQ, 0, cuK, 0) ||
        !readBounds(c, cuQ, n.TQ, "max_seqlen_q", "query rows", boundsQ) ||
        !readBounds(c, cuK, n.TK, "max_seqlen_k", "key rows", boundsK))
      return false;
    n.B = int64_t(boundsQ.size()) - 1;
    return true;
  }
};

bool options(RefContext &c, const VarlenTensors &t, double &scale,
             bool &causal) {
  causal = c.flag("causal", "CAUSAL", false);
  return c.scale(t.n.D, scale);
}

/// The forward and backward of the kernel's q, k, v, do in float64.
struct VarlenExact {
  std::vector<double> dq, dk, dv, o, lse, delta;

  VarlenExact(RefContext &c, const VarlenTensors &t, double scale,
              bool causal) {
    const VarlenSizes &n = t.n;
    size_t nq = size_t(n.TQ * n.H * n.D), nk = size_t(n.TK * n.HKV * n.D);
    dq.resize(nq), dk.resize(nk), dv.resize(nk), o.resize(nq);
    lse.resize(size_t(n.H * n.TQ)), delta.resize(size_t(n.H * n.TQ));
    std::vector<double> qv = c.values(t.q), kv = c.values(t.k),
                        vv = c.values(t.v), gv = c.values(t.dout);
    varlenAttentionBackward(n, qv.data(), kv.data(), vv.data(), gv.data(),
                            nullptr, t.boundsQ.data(), t.boundsK.data(), causal,
                            scale, dq.data(), dk.data(), dv.data(), o.data(),
                            lse.data(), delta.data());
  }
};

/// delta[h, t] = sum_d do[t, h, d] o[t, h, d] over every row (NaN o rows,
/// in no sequence, count as 0).
std::vector<double> headMajorRowDots(const std::vector<double> &o,
                                     const std::vector<double> &g,
                                     const VarlenSizes &n) {
  std::vector<double> out(size_t(n.H * n.TQ), 0.0);
  for (int64_t t = 0; t < n.TQ; ++t)
    for (int64_t h = 0; h < n.H; ++h)
      for (int64_t d = 0; d < n.D; ++d) {
        size_t e = size_t((t * n.H + h) * n.D + d);
        if (!std::isnan(o[e]))
          out[size_t(h * n.TQ + t)] += o[e] * g[e];
      }
  return out;
}

/// Whether row t of the query side lies in a sequence.
std::vector<bool> rowsInside(const VarlenTensors &t) {
  std::vector<bool> inside(size_t(t.n.TQ), false);
  for (int64_t b = 0; b < t.n.B; ++b)
    for (int64_t r = t.boundsQ[size_t(b)]; r < t.boundsQ[size_t(b) + 1]; ++r)
      inside[size_t(r)] = true;
  return inside;
}

/// Refuses a given lse or delta that is not the forward's (rows in a
/// sequence only: the kernels read no other).
bool checkGiven(RefContext &c, const VarlenTensors &t,
                const VarlenExact &exact) {
  std::vector<bool> inside = rowsInside(t);
  for (auto [i, want, what] :
       {std::tuple{t.lse, &exact.lse, "logsumexp"},
        {t.delta, &exact.delta, "delta = rowsum(do o)"}}) {
    if (i < 0 || c.isOutput(i))
      continue;
    std::vector<double> given = c.values(i);
    double worst = 0, err = 0, ref = 0;
    for (int64_t h = 0; h < t.n.H; ++h)
      for (int64_t r = 0; r < t.n.TQ; ++r) {
        size_t e = size_t(h * t.n.TQ + r);
        if (!inside[size_t(r)] || given[e] == (*want)[e])
          continue;
        double gap = std::fabs(given[e] - (*want)[e]);
        worst = std::isnan(gap) ? kInf : std::max(worst, gap);
        err += gap * gap, ref += (*want)[e] * (*want)[e];
      }
    // lse to 1e-4; delta carries o's rounding to its dtype (relative).
    double tol = toleranceFor({c.bundle.params[size_t(t.dout)].dtype});
    bool ok = i == t.lse
                  ? worst <= kLseTolerance
                  : std::sqrt(err) <= tol * std::max(1.0, std::sqrt(ref));
    if (!ok)
      return c.fail("input '" + c.param(i) + "' is not the forward's " + what +
                    " of q, k, v (and do) (leave it out and --check derives "
                    "it)");
  }
  return true;
}
} // namespace

bool varlenForwardRef(RefContext &c,
                      std::map<std::string, std::vector<double>> &outputs) {
  VarlenTensors t;
  double scale;
  bool causal;
  if (!t.bind(c) || !t.require(c, {"q", "k", "v", "o"}) || !t.readBounds(c) ||
      !options(c, t, scale, causal))
    return false;
  std::vector<double> o(size_t(t.n.TQ * t.n.H * t.n.D)),
      lse(size_t(t.n.H * t.n.TQ));
  std::vector<double> qv = c.values(t.q), kv = c.values(t.k),
                      vv = c.values(t.v);
  varlenAttentionForward(t.n, qv.data(), kv.data(), vv.data(), t.boundsQ.data(),
                         t.boundsK.data(), causal, scale, o.data(), lse.data());
  outputs[c.param(t.o)] = std::move(o);
  if (t.lse >= 0)
    outputs[c.param(t.lse)] = std::move(lse);
  return true;
}

bool varlenBackwardRef(RefContext &c,
                       std::map<std::string, std::vector<double>> &outputs) {
  VarlenTensors t;
  double scale;
  bool causal;
  if (!t.bind(c) || !options(c, t, scale, causal))
    return false;
  // The preprocess: delta from the o and do it reads, every row.
  if (c.isOutput(t.delta)) {
    if (!t.require(c, {"o", "do"}))
      return false;
    outputs[c.param(t.delta)] =
        headMajorRowDots(c.values(t.o), c.values(t.dout), t.n);
  }
  if (!(c.isOutput(t.dq) || c.isOutput(t.dk) || c.isOutput(t.dv)))
    return true;
  if (!t.require(c, {"q", "k", "v", "do", "lse", "delta"}) || !t.readBounds(c))
    return false;
  VarlenExact exact(c, t, scale, causal);
  if (!checkGiven(c, t, exact))
    return false;
  for (auto [i, grad] :
       {std::pair{t.dq, &exact.dq}, {t.dk, &exact.dk}, {t.dv, &exact.dv}})
    if (c.isOutput(i))
      outputs[c.param(i)] = std::move(*grad);
  return true;
}

bool deriveVarlenInputs(RefContext &c, std::vector<HostTensor> &host,
                        const std::set<std::string> &fromFiles) {
  VarlenTensors t;
  double scale;
  bool causal;
  auto derived = [&](int i) {
    return i >= 0 && !c.isOutput(i) && !fromFiles.count(c.param(i));
  };
  if (!t.bind(c) || !options(c, t, scale, causal))
    return false;
  if (!(derived(t.lse) || derived(t.delta)) || t.q < 0 || t.k < 0 || t.v < 0 ||
      t.dout < 0)
    return true;
  if (!t.readBounds(c))
    return false;
  VarlenExact exact(c, t, scale, causal);
  // Rows in no sequence are never read: 0 there.
  auto fill = [&](int i, const std::vector<double> &values) {
    for (size_t e = 0; e < values.size(); ++e)
      host[size_t(i)].set(int64_t(e), std::isnan(values[e]) ? 0 : values[e]);
  };
  if (derived(t.lse))
    fill(t.lse, exact.lse);
  if (derived(t.delta)) {
    // As the preprocess computes it: from o rounded to do's dtype.
    HostTensor o(c.bundle.params[size_t(t.dout)].dtype,
                 c.plan.shapes[size_t(t.dout)]);
    for (size_t e = 0; e < exact.o.size(); ++e)
      o.set(int64_t(e), std::isnan(exact.o[e]) ? 0 : exact.o[e]);
    fill(t.delta, headMajorRowDots(o.toDoubles(),
                                   host[size_t(t.dout)].toDoubles(), t.n));
  }
  return true;
}

} // namespace tegula::rt
