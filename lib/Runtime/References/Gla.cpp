//===- Gla.cpp - float64 gated linear attention, forward and backward -----===//
//
// The references of kernels/gla.tile and kernels/gla_bwd.tile: fla's
// chunk_gla ([B, T, H, K] layout) by its step recurrence per (b, h), one
// position at a time, never the chunked algorithm of the kernels:
//   S_0 = h0 (or 0),  S_t = diag(exp(g_t)) S_{t-1} + k_t^T v_t,
//   o_t = scale q_t S_t,  ht = S_T,  hs[c] = S before position c * CHUNK,
// and its adjoint, as test/Kernels/Inputs/gla_check.py's reference and
// reference_bwd.
//
// Kernels that read per-chunk states (chunk_gla_output hs; in
// GlaBackward.cpp chunk_gla_bwd_dqkg hs and dhs, chunk_gla_bwd_dv dhs) are
// checked on the states they are given: the recurrence restarts from hs[c]
// at each chunk's first position and the adjoint from dhs[c] at its last
// (glaForward's hsIn, glaBackward's hsIn and dhsIn), which gives each
// chunk's outputs exactly, for any hs and dhs. Random states check those
// kernels as well as the forward's own would, so only the gates (and
// chunk_gla_bwd_dqkg's intra-chunk terms) are derived.
//
// The gates: tile-run's random inputs are uniform in [-1, 1], and states
// grow as exp of g's running sums: to |S| ~ 3e5 at T = 37 and 1e8 at
// T = 130 with K = 64, past f16's range, where the kernels' DT-rounded
// states must stay. With --check the runner makes g = logsigmoid(4 + 4u)
// of those u instead (deriveGlaInputs), unless an --in file gives it:
// fla's kind of forget gate (its tests draw logsigmoid of normal values)
// with exp(g) in [0.5, 0.9997], about 0.9 on average, so that states carry
// across chunks and a wrong h0 or hs shows.
//
//===----------------------------------------------------------------------===//

#include "RefContext.h"

#include <algorithm>
#include <cmath>

namespace tegula::rt {

namespace {
/// Offsets of one (b, t, h) row or (b, h) state in GLA's tensors.
struct GlaIndex {
  const GlaSizes &n;
  int64_t NT;

  size_t row(int64_t b, int64_t t, int64_t h, int64_t width) const {
    return size_t(((b * n.T + t) * n.H + h) * width);
  }
  size_t state(int64_t b, int64_t h) const {
    return size_t((b * n.H + h) * n.K * n.V);
  }
  size_t chunk(int64_t b, int64_t c, int64_t h) const {
    return size_t(((b * NT + c) * n.H + h) * n.K * n.V);
  }
};

int64_t chunkCount(const GlaSizes &n) { return (n.T + n.chunk - 1) / n.chunk; }

/// One position: to = diag(exp(g)) from + k^T v ([K, V], row-major).
void step(const double *from, const double *k, const double *v, const double *g,
          int64_t K, int64_t V, double *to) {
  for (int64_t d = 0; d < K; ++d) {
    double decay = std::exp(g[d]);
    for (int64_t j = 0; j < V; ++j)
      to[d * V + j] = decay * from[d * V + j] + k[d] * v[j];
  }
}
} // namespace

void glaForward(const GlaSizes &n, const double *q, const double *k,
                const double *v, const double *g, const double *h0,
                const double *hsIn, double scale, double *o, double *ht,
                double *hs) {
  GlaIndex at{n, chunkCount(n)};
  size_t kv = size_t(n.K * n.V);
  std::vector<double> s(kv);
  for (int64_t b = 0; b < n.B; ++b)
    for (int64_t h = 0; h < n.H; ++h) {
      if (h0)
        std::copy(h0 + at.state(b, h), h0 + at.state(b, h) + kv, s.begin());
      else
        std::fill(s.begin(), s.end(), 0.0);
      for (int64_t t = 0; t < n.T; ++t) {
        if (t % n.chunk == 0) {
          size_t c = at.chunk(b, t / n.chunk, h);
          if (hsIn)
            std::copy(hsIn + c, hsIn + c + kv, s.begin());
          if (hs)
            std::copy(s.begin(), s.end(), hs + c);
        }
        size_t rk = at.row(b, t, h, n.K), rv = at.row(b, t, h, n.V);
        step(s.data(), k + rk, v + rv, g + rk, n.K, n.V, s.data());
        if (!o)
          continue;
        for (int64_t j = 0; j < n.V; ++j) {
          double acc = 0;
          for (int64_t d = 0; d < n.K; ++d)
            acc += q[rk + size_t(d)] * s[size_t(d * n.V + j)];
          o[rv + size_t(j)] = scale * acc;
        }
      }
      if (ht)
        std::copy(s.begin(), s.end(), ht + at.state(b, h));
    }
}

void glaChunkCumsum(const GlaSizes &n, const double *g, double *gc) {
  GlaIndex at{n, chunkCount(n)};
  for (int64_t b = 0; b < n.B; ++b)
    for (int64_t h = 0; h < n.H; ++h)
      for (int64_t t = 0; t < n.T; ++t) {
        size_t row = at.row(b, t, h, n.K), prev = at.row(b, t - 1, h, n.K);
        for (int64_t d = 0; d < n.K; ++d)
          gc[row + size_t(d)] =
              g[row + size_t(d)] + (t % n.chunk ? gc[prev + size_t(d)] : 0.0);
      }
}

void glaIntraScores(const GlaSizes &n, const double *q, const double *k,
                    const double *gc, double *a) {
  GlaIndex at{n, chunkCount(n)};
  for (int64_t b = 0; b < n.B; ++b)
    for (int64_t h = 0; h < n.H; ++h)
      for (int64_t t = 0; t < n.T; ++t) {
        int64_t c0 = t - t % n.chunk;
        double *out = a + at.row(b, t, h, n.chunk);
        std::fill(out, out + n.chunk, 0.0);
        size_t rt = at.row(b, t, h, n.K);
        for (int64_t j = c0; j <= t; ++j) {
          size_t rj = at.row(b, j, h, n.K);
          double acc = 0;
          for (int64_t d = 0; d < n.K; ++d)
            acc += q[rt + size_t(d)] * k[rj + size_t(d)] *
                   std::exp(gc[rt + size_t(d)] - gc[rj + size_t(d)]);
          out[j - c0] = acc;
        }
      }
}

void glaBackward(const GlaSizes &n, const double *q, const double *k,
                 const double *v, const double *g, const double *dout,
                 const double *h0, const double *hsIn, const double *dht,
                 const double *dhsIn, double scale, double *dq, double *dk,
                 double *dv, double *dg, double *dh0, double *dhs) {
  GlaIndex at{n, chunkCount(n)};
  size_t kv = size_t(n.K * n.V);
  // The state before each chunk, given or from the forward; each chunk's
  // states are formed again from it (one chunk's worth held at a time).
  std::vector<double> starts(size_t(n.B * at.NT * n.H) * kv);
  if (hsIn)
    std::copy(hsIn, hsIn + starts.size(), starts.begin());
  else
    glaForward(n, nullptr, k, v, g, h0, nullptr, scale, nullptr, nullptr,
               starts.data());
  // states[i] = S_{t0 + i - 1} in chunk [t0, t1); ga = Ga_t, gt = G_t.
  std::vector<double> states(size_t(n.chunk + 1) * kv), ga(kv), gt(kv);
  for (int64_t b = 0; b < n.B; ++b)
    for (int64_t h = 0; h < n.H; ++h) {
      if (dht)
        std::copy(dht + at.state(b, h), dht + at.state(b, h) + kv, ga.begin());
      else
        std::fill(ga.begin(), ga.end(), 0.0);
      for (int64_t c = at.NT - 1; c >= 0; --c) {
        int64_t t0 = c * n.chunk, t1 = std::min(n.T, t0 + n.chunk);
        size_t sc = at.chunk(b, c, h);
        std::copy(starts.begin() + ptrdiff_t(sc),
                  starts.begin() + ptrdiff_t(sc + kv), states.begin());
        for (int64_t t = t0; t < t1; ++t) {
          size_t rk = at.row(b, t, h, n.K), rv = at.row(b, t, h, n.V);
          double *from = states.data() + size_t(t - t0) * kv;
          step(from, k + rk, v + rv, g + rk, n.K, n.V, from + kv);
        }
        if (dhsIn)
          std::copy(dhsIn + sc, dhsIn + sc + kv, ga.begin());
        if (dhs)
          std::copy(ga.begin(), ga.end(), dhs + sc);
        for (int64_t t = t1 - 1; t >= t0; --t) {
          size_t rk = at.row(b, t, h, n.K), rv = at.row(b, t, h, n.V);
          const double *before = states.data() + size_t(t - t0) * kv,
                       *after = before + kv;
          for (int64_t d = 0; d < n.K; ++d) {
            double sq = scale * q[rk + size_t(d)], dqd = 0, dkd = 0, dgd = 0;
            double decay = std::exp(g[rk + size_t(d)]);
            for (int64_t j = 0; j < n.V; ++j) {
              size_t e = size_t(d * n.V + j);
              gt[e] = ga[e] + sq * dout[rv + size_t(j)];
              dqd += dout[rv + size_t(j)] * after[e];
              dkd += gt[e] * v[rv + size_t(j)];
              dgd += gt[e] * before[e];
              ga[e] = decay * gt[e];
            }
            dq[rk + size_t(d)] = scale * dqd;
            dk[rk + size_t(d)] = dkd;
            dg[rk + size_t(d)] = decay * dgd;
          }
          for (int64_t j = 0; j < n.V; ++j) {
            double acc = 0;
            for (int64_t d = 0; d < n.K; ++d)
              acc += k[rk + size_t(d)] * gt[size_t(d * n.V + j)];
            dv[rv + size_t(j)] = acc;
          }
        }
      }
      if (dh0)
        std::copy(ga.begin(), ga.end(), dh0 + at.state(b, h));
    }
}

namespace {

/// The roles of GLA's kernels present in a bundle, and their sizes.
struct GlaTensors {
  // [B, T, H, K] and [B, T, H, V].
  int q = -1, k = -1, g = -1, dq = -1, dk = -1, dg = -1;
  int v = -1, o = -1, dout = -1, dv = -1;
  // [B, H, K, V]; [N, H, K, V] with N = B, or 0 when unused.
  int ht = -1, h0 = -1, dht = -1, dh0 = -1;
  // [B, NT, H, K, V], NT = cdiv(T, chunk); an empty output is unused.
  int hs = -1, dhs = -1;
  GlaSizes n;

  bool bind(RefContext &c);
};

/// Tensor i's values, or `size` zeros when the kernel lacks it (an input
/// that no output the kernel writes depends on).
std::vector<double> inputOr(const RefContext &c, int i, size_t size) {
  return i >= 0 ? c.values(i) : std::vector<double>(size);
}

/// Tensor i's values if the kernel reads it; none when it lacks it, writes
/// it or it is empty (unused).
std::vector<double> given(const RefContext &c, int i) {
  return i >= 0 && !c.isOutput(i) ? c.values(i) : std::vector<double>();
}

const double *orNull(const std::vector<double> &values) {
  return values.empty() ? nullptr : values.data();
}

} // namespace

int64_t glaChunkOf(const RefContext &c) {
  if (auto it = c.options.find("chunk"); it != c.options.end())
    return it->is_number_integer() ? it->get<int64_t>() : 0;
  const nlohmann::json &t = c.bundle.templateParams;
  if (auto it = t.find("CHUNK"); it != t.end() && it->is_number_integer())
    return it->get<int64_t>();
  return 0;
}

namespace {

bool GlaTensors::bind(RefContext &c) {
  using Roles = std::vector<std::pair<const char *, int *>>;
  Roles keys = {{"q", &q},   {"k", &k},   {"g", &g},
                {"dq", &dq}, {"dk", &dk}, {"dg", &dg}},
        values = {{"v", &v}, {"o", &o}, {"do", &dout}, {"dv", &dv}},
        states = {{"ht", &ht}, {"h0", &h0}, {"dht", &dht}, {"dh0", &dh0}},
        chunks = {{"hs", &hs}, {"dhs", &dhs}};
  int firstKey = -1, firstValue = -1;
  for (auto [roles, rank, first] : {std::tuple{&keys, size_t(4), &firstKey},
                                    {&values, 4, &firstValue},
                                    {&states, 4, nullptr},
                                    {&chunks, 5, nullptr}})
    for (auto [role, slot] : *roles) {
      *slot = c.index(role);
      if (*slot < 0)
        continue;
      if (c.shape(*slot).size() != rank)
        return c.fail("tensor '" + c.nameOf(role) + "' must have rank " +
                      std::to_string(rank));
      if (first && *first < 0)
        *first = *slot;
    }
  if (firstKey < 0 || firstValue < 0)
    return c.fail("the kernel needs a [B, T, H, K] tensor (q, k, g) and a "
                  "[B, T, H, V] one (v, o, do)");
  const std::vector<int64_t> &ks = c.shape(firstKey);
  n.B = ks[0], n.T = ks[1], n.H = ks[2], n.K = ks[3];
  n.V = c.shape(firstValue)[3];
  auto expect = [&](int i, const std::vector<int64_t> &want,
                    const std::string &form) {
    if (i < 0 || c.shape(i) == want)
      return true;
    return c.fail("tensor '" + c.param(i) + "' " + formatShape(c.shape(i)) +
                  " must be " + form + " = " + formatShape(want));
  };
  for (auto [role, slot] : keys)
    if (!expect(*slot, {n.B, n.T, n.H, n.K}, "[B, T, H, K]"))
      return false;
  for (auto [role, slot] : values)
    if (!expect(*slot, {n.B, n.T, n.H, n.V}, "[B, T, H, V]"))
      return false;
  for (auto [role, slot] : states) {
    // Optional states are empty when unused; ht never is.
    int64_t N = *slot >= 0 && slot != &ht && c.shape(*slot)[0] == 0 ? 0 : n.B;
    if (!expect(*slot, {N, n.H, n.K, n.V}, N ? "[B, H, K, V]" : "[0, H, K, V]"))
      return false;
    if (N == 0)
      *slot = -1;
  }
  for (auto [role, slot] : chunks)
    if (*slot >= 0 && c.isOutput(*slot) && c.shape(*slot)[1] == 0)
      *slot = -1;
  n.chunk = glaChunkOf(c);
  if (hs < 0 && dhs < 0) {
    // No per-chunk tensor: the chunk length changes nothing computed.
    n.chunk = 64;
    return true;
  }
  if (n.chunk < 1)
    return c.fail("the per-chunk states need the chunk length: a positive "
                  "integer \"chunk\" option or template parameter CHUNK");
  int64_t NT = chunkCount(n);
  for (auto [role, slot] : chunks)
    if (!expect(*slot, {n.B, NT, n.H, n.K, n.V},
                "[B, cdiv(T, " + std::to_string(n.chunk) + "), H, K, V]"))
      return false;
  return true;
}

/// A kernel built with GC (chunk_gla_states, chunk_gla_bwd_dh) reads in `g`
/// chunk_gla_cumsum's sums within each chunk: the gates the references take
/// are their differences, restarting at each chunk of n.chunk rows.
void gatesFromChunkSums(const RefContext &c, const GlaSizes &n,
                        std::vector<double> &g) {
  auto gc = c.bundle.templateParams.find("GC");
  if (gc == c.bundle.templateParams.end() || !gc->is_boolean() ||
      !gc->get<bool>())
    return;
  size_t row = size_t(n.H * n.K);
  for (int64_t b = 0; b < n.B; ++b)
    for (int64_t t = n.T - 1; t > 0; --t) {
      if (t % n.chunk == 0)
        continue;
      double *at = g.data() + size_t(b * n.T + t) * row;
      const double *before = at - row;
      for (size_t i = 0; i < row; ++i)
        at[i] -= before[i];
    }
}

/// The outputs among `results` that the kernel writes.
void emit(RefContext &c,
          std::initializer_list<std::pair<int, std::vector<double> *>> results,
          std::map<std::string, std::vector<double>> &outputs) {
  for (auto [i, values] : results)
    if (c.isOutput(i))
      outputs[c.param(i)] = std::move(*values);
}

} // namespace

namespace {
/// The forward references; without gates (`gated` false: the
/// chunk_linear_* kernels, kernels/linear_attention_chunked.tile) g is 0.
bool forwardRef(RefContext &c,
                std::map<std::string, std::vector<double>> &outputs,
                bool gated) {
  GlaTensors t;
  if (!t.bind(c))
    return false;
  // For a missing tensor c.tensor fails, naming it.
  for (auto [role, i, needed] : {std::tuple{"k", t.k, true},
                                 {"v", t.v, true},
                                 {"g", t.g, gated},
                                 {"q", t.q, c.isOutput(t.o)}})
    if (needed && i < 0)
      return c.tensor(role, 4) >= 0;
  double scale;
  if (!c.scale(t.n.K, scale))
    return false;
  const GlaSizes &n = t.n;
  size_t keys = size_t(n.B * n.T * n.H * n.K),
         vals = size_t(n.B * n.T * n.H * n.V), kv = size_t(n.K * n.V);
  std::vector<double> q = inputOr(c, t.q, keys), k = c.values(t.k),
                      v = c.values(t.v), g = inputOr(c, t.g, keys),
                      h0 = given(c, t.h0), hsIn = given(c, t.hs);
  gatesFromChunkSums(c, n, g);
  std::vector<double> o(vals), ht(size_t(n.B * n.H) * kv),
      hs(size_t(n.B * chunkCount(n) * n.H) * kv);
  glaForward(n, q.data(), k.data(), v.data(), g.data(), orNull(h0),
             orNull(hsIn), scale, o.data(), ht.data(), hs.data());
  emit(c, {{t.o, &o}, {t.ht, &ht}, {t.hs, &hs}}, outputs);
  return true;
}

/// The backward references; without gates as forwardRef.
bool backwardRef(RefContext &c,
                 std::map<std::string, std::vector<double>> &outputs,
                 bool gated) {
  GlaTensors t;
  if (!t.bind(c))
    return false;
  // G_t needs q, g and do; dq and dg the states too (k, v); dv k, dk v.
  bool states = c.isOutput(t.dq) || c.isOutput(t.dg);
  for (auto [role, i, needed] : {std::tuple{"q", t.q, true},
                                 {"g", t.g, gated},
                                 {"do", t.dout, true},
                                 {"k", t.k, states || c.isOutput(t.dv)},
                                 {"v", t.v, states || c.isOutput(t.dk)}})
    if (needed && i < 0)
      return c.tensor(role, 4) >= 0;
  double scale;
  if (!c.scale(t.n.K, scale))
    return false;
  const GlaSizes &n = t.n;
  size_t keys = size_t(n.B * n.T * n.H * n.K),
         vals = size_t(n.B * n.T * n.H * n.V), kv = size_t(n.K * n.V);
  std::vector<double> q = c.values(t.q), k = inputOr(c, t.k, keys),
                      v = inputOr(c, t.v, vals), g = inputOr(c, t.g, keys),
                      dout = c.values(t.dout), h0 = given(c, t.h0),
                      hsIn = given(c, t.hs), dht = given(c, t.dht),
                      dhsIn = given(c, t.dhs);
  gatesFromChunkSums(c, n, g);
  std::vector<double> dq(keys), dk(keys), dv(vals), dg(keys),
      dh0(size_t(n.B * n.H) * kv), dhs(size_t(n.B * chunkCount(n) * n.H) * kv);
  glaBackward(n, q.data(), k.data(), v.data(), g.data(), dout.data(),
              orNull(h0), orNull(hsIn), orNull(dht), orNull(dhsIn), scale,
              dq.data(), dk.data(), dv.data(), dg.data(), dh0.data(),
              dhs.data());
  emit(c,
       {{t.dq, &dq},
        {t.dk, &dk},
        {t.dv, &dv},
        {t.dg, &dg},
        {t.dh0, &dh0},
        {t.dhs, &dhs}},
       outputs);
  return true;
}
} // namespace

bool glaForwardRef(RefContext &c,
                   std::map<std::string, std::vector<double>> &outputs) {
  return forwardRef(c, outputs, /*gated=*/true);
}
bool glaBackwardRef(RefContext &c,
                    std::map<std::string, std::vector<double>> &outputs) {
  return backwardRef(c, outputs, /*gated=*/true);
}
bool linearChunkForwardRef(
    RefContext &c, std::map<std::string, std::vector<double>> &outputs) {
  return forwardRef(c, outputs, /*gated=*/false);
}
bool linearChunkBackwardRef(
    RefContext &c, std::map<std::string, std::vector<double>> &outputs) {
  return backwardRef(c, outputs, /*gated=*/false);
}

namespace {
/// The sizes of chunk_gla_intra's scores `a` [B, T, H, CHUNK] against q, gc
/// (and k if the kernel has it) [B, T, H, K]; false (c failed) when a
/// tensor is missing or misshapen.
bool intraSizes(RefContext &c, int a, GlaSizes &n) {
  int q = c.tensor("q", 4), k = c.index("k"), g = c.tensor("gc", 4);
  if (q < 0 || g < 0 || a < 0)
    return false;
  const std::vector<int64_t> &s = c.shape(q);
  n.B = s[0], n.T = s[1], n.H = s[2], n.K = s[3], n.chunk = c.shape(a)[3];
  for (int i : {k, g})
    if (i >= 0 && c.shape(i) != s)
      return c.fail("tensor '" + c.param(i) + "' " + formatShape(c.shape(i)) +
                    " must be q's shape " + formatShape(s));
  std::vector<int64_t> want = {n.B, n.T, n.H, n.chunk};
  if (c.shape(a) != want || n.chunk < 1)
    return c.fail("tensor '" + c.param(a) + "' " + formatShape(c.shape(a)) +
                  " must be [B, T, H, CHUNK] with q's B, T, H");
  return true;
}
} // namespace

bool glaIntraRef(RefContext &c,
                 std::map<std::string, std::vector<double>> &outputs) {
  GlaSizes n;
  int a = c.tensor("a", 4);
  if (c.tensor("k", 4) < 0 || !intraSizes(c, a, n))
    return false;
  std::vector<double> scores(size_t(n.B * n.T * n.H * n.chunk));
  glaIntraScores(n, c.values(c.index("q")).data(),
                 c.values(c.index("k")).data(), c.values(c.index("gc")).data(),
                 scores.data());
  outputs[c.param(a)] = std::move(scores);
  return true;
}

bool glaOutputRef(RefContext &c,
                  std::map<std::string, std::vector<double>> &outputs) {
  GlaSizes n;
  int a = c.tensor("a", 4), v = c.tensor("v", 4), hs = c.tensor("hs", 5),
      o = c.tensor("o", 4);
  if (!intraSizes(c, a, n) || v < 0 || hs < 0 || o < 0)
    return false;
  n.V = c.shape(v)[3];
  GlaIndex at{n, chunkCount(n)};
  std::vector<int64_t> rowsV = {n.B, n.T, n.H, n.V},
                       chunks = {n.B, at.NT, n.H, n.K, n.V};
  if (c.shape(v) != rowsV || c.shape(o) != rowsV || c.shape(hs) != chunks)
    return c.fail("v and o must be [B, T, H, V] and hs [B, cdiv(T, CHUNK), "
                  "H, K, V] with q's B, T, H, K and a's CHUNK");
  double scale;
  if (!c.scale(n.K, scale))
    return false;
  std::vector<double> q = c.values(c.index("q")), gc = c.values(c.index("gc")),
                      scores = c.values(a), vals = c.values(v),
                      states = c.values(hs), out(vals.size());
  std::vector<double> qg(size_t(n.K));
  for (int64_t b = 0; b < n.B; ++b)
    for (int64_t h = 0; h < n.H; ++h)
      for (int64_t t = 0; t < n.T; ++t) {
        int64_t c0 = t - t % n.chunk;
        size_t rt = at.row(b, t, h, n.K);
        for (int64_t d = 0; d < n.K; ++d)
          qg[size_t(d)] = q[rt + size_t(d)] * std::exp(gc[rt + size_t(d)]);
        const double *st = states.data() + at.chunk(b, c0 / n.chunk, h);
        const double *at_t = scores.data() + at.row(b, t, h, n.chunk);
        for (int64_t j = 0; j < n.V; ++j) {
          double acc = 0;
          for (int64_t d = 0; d < n.K; ++d)
            acc += qg[size_t(d)] * st[d * n.V + j];
          for (int64_t i = 0; i < n.chunk && c0 + i < n.T; ++i)
            acc += at_t[i] * vals[at.row(b, c0 + i, h, n.V) + size_t(j)];
          out[at.row(b, t, h, n.V) + size_t(j)] = scale * acc;
        }
      }
  outputs[c.param(o)] = std::move(out);
  return true;
}

namespace {
/// Gate tensor `gates` [B, T, H, K]'s sizes and the chunk of the cumulative
/// sums (option or CHUNK); false (c failed) without a chunk.
bool cumsumSizes(RefContext &c, int gates, GlaSizes &n) {
  const std::vector<int64_t> &s = c.shape(gates);
  n.B = s[0], n.T = s[1], n.H = s[2], n.K = s[3], n.chunk = glaChunkOf(c);
  if (n.chunk < 1)
    return c.fail("the cumulative sums need the chunk length: a positive "
                  "integer \"chunk\" option or template parameter CHUNK");
  return true;
}

/// tile-run's uniform u in [-1, 1] made forget gates logsigmoid(4 + 4u)
/// (the header says why).
void drawForgetGates(std::vector<double> &values) {
  for (double &x : values)
    x = -std::log1p(std::exp(-(4 + 4 * x)));
}
} // namespace

bool glaCumsumRef(RefContext &c,
                  std::map<std::string, std::vector<double>> &outputs) {
  int g = c.tensor("g", 4), gc = c.tensor("gc", 4);
  GlaSizes n;
  if (g < 0 || gc < 0 || !c.same(g, 0, gc, 0) || !c.same(g, 1, gc, 1) ||
      !c.same(g, 2, gc, 2) || !c.same(g, 3, gc, 3) || !cumsumSizes(c, g, n))
    return false;
  std::vector<double> sums(size_t(n.B * n.T * n.H * n.K));
  glaChunkCumsum(n, c.values(g).data(), sums.data());
  outputs[c.param(gc)] = std::move(sums);
  return true;
}

namespace {
/// chunk_gla_intra's and chunk_gla_output's gc, when the kernel reads it:
/// the chunk cumulative sums of forget gates (deriveGlaInputs' draw), as
/// chunk_gla_cumsum writes them.
bool deriveChunkCumsums(RefContext &c, std::vector<HostTensor> &host,
                        const std::set<std::string> &fromFiles) {
  int gc = c.index("gc");
  if (gc < 0 || c.isOutput(gc) || fromFiles.count(c.param(gc)))
    return true;
  GlaSizes n;
  if (c.tensor("gc", 4) < 0 || !cumsumSizes(c, gc, n))
    return false;
  std::vector<double> gates = c.values(gc), sums(gates.size());
  drawForgetGates(gates);
  glaChunkCumsum(n, gates.data(), sums.data());
  c.derive(gc, sums, host, fromFiles);
  return true;
}
} // namespace

bool deriveGlaInputs(RefContext &c, std::vector<HostTensor> &host,
                     const std::set<std::string> &fromFiles) {
  int g = c.index("g");
  if (g < 0)
    return deriveChunkCumsums(c, host, fromFiles) &&
           deriveGlaIntraGrads(c, host, fromFiles);
  std::vector<double> gates = c.values(g);
  if (!fromFiles.count(c.param(g)) && !c.isOutput(g)) {
    drawForgetGates(gates);
    c.derive(g, gates, host, fromFiles);
  }
  return true;
}

} // namespace tegula::rt
