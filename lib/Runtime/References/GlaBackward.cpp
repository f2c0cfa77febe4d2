//===- GlaBackward.cpp - float64 references of the GLA backward's chunks --===//
//
// The references of kernels/gla_bwd.tile's per-chunk launches (its header):
// chunk_gla_bwd_da's score gradients, chunk_gla_bwd_dqk_intra's intra-chunk
// dq and dk, chunk_gla_bwd_dqkg's dq, dk, dg and chunk_gla_bwd_dv's dv.
// Each is written from its definition, one chunk of positions at a time:
//   da[t, j]  = scale dout_t . v_{t0 + j} for t0 + j <= t (t0 = t's chunk
//               start), 0 above;
//   dqi[i]    = sum_{j <= i} da[i, j] k_j o exp(gc_i - gc_j),
//   dki[j]    = sum_{i >= j} da[i, j] q_i o exp(gc_i - gc_j) (same chunk);
//   dq, dk, dg: the exact gradients (glaBackward) of each chunk restarted
//               from the states hs and state gradients dhs it is given,
//               the gates recovered from gc; the kernel adds dqi and dki,
//               which --check derives from the inputs (deriveGlaIntraGrads)
//               unless a file gives them;
//   dv[j]     = scale sum_{i >= j} a[i, j] dout_i + (k_j o exp(gl - gc_j))
//               dhs[c], a the scores given (its lower triangle, exact for
//               any), gl = gc at the chunk's last position.
//
//===----------------------------------------------------------------------===//

#include "RefContext.h"

#include <cmath>

namespace tegula::rt {

namespace {
/// Offset of the (b, t, h) row of a [B, T, H, width] tensor.
size_t rowOf(const GlaSizes &n, int64_t b, int64_t t, int64_t h,
             int64_t width) {
  return size_t(((b * n.T + t) * n.H + h) * width);
}
} // namespace

void glaChunkScoreGrads(const GlaSizes &n, const double *v, const double *dout,
                        double scale, double *da) {
  for (int64_t b = 0; b < n.B; ++b)
    for (int64_t h = 0; h < n.H; ++h)
      for (int64_t t = 0; t < n.T; ++t) {
        int64_t t0 = t - t % n.chunk;
        double *out = da + rowOf(n, b, t, h, n.chunk);
        const double *dt = dout + rowOf(n, b, t, h, n.V);
        for (int64_t j = 0; j < n.chunk; ++j) {
          double acc = 0;
          if (t0 + j <= t) {
            const double *vj = v + rowOf(n, b, t0 + j, h, n.V);
            for (int64_t e = 0; e < n.V; ++e)
              acc += dt[e] * vj[e];
          }
          out[j] = scale * acc;
        }
      }
}

void glaIntraGrads(const GlaSizes &n, const double *q, const double *k,
                   const double *gc, const double *da, double *dqi,
                   double *dki) {
  for (int64_t b = 0; b < n.B; ++b)
    for (int64_t h = 0; h < n.H; ++h)
      for (int64_t t = 0; t < n.T; ++t) {
        size_t rt = rowOf(n, b, t, h, n.K);
        for (int64_t d = 0; d < n.K; ++d)
          dqi[rt + size_t(d)] = dki[rt + size_t(d)] = 0;
      }
  for (int64_t b = 0; b < n.B; ++b)
    for (int64_t h = 0; h < n.H; ++h)
      for (int64_t i = 0; i < n.T; ++i) {
        int64_t t0 = i - i % n.chunk;
        size_t ri = rowOf(n, b, i, h, n.K);
        const double *ai = da + rowOf(n, b, i, h, n.chunk);
        // Pair (i, j), j <= i in i's chunk: into dq_i and dk_j.
        for (int64_t j = t0; j <= i; ++j) {
          size_t rj = rowOf(n, b, j, h, n.K);
          for (int64_t d = 0; d < n.K; ++d) {
            double w =
                ai[j - t0] * std::exp(gc[ri + size_t(d)] - gc[rj + size_t(d)]);
            dqi[ri + size_t(d)] += w * k[rj + size_t(d)];
            dki[rj + size_t(d)] += w * q[ri + size_t(d)];
          }
        }
      }
}

namespace {
/// The [B, T, H, X] tensors of `roles` into `ids`, all with the first's B,
/// T and H; false (c failed) when one is missing or misshapen.
bool rowTensors(RefContext &c, std::initializer_list<const char *> roles,
                std::vector<int> &ids) {
  for (const char *role : roles) {
    int i = c.tensor(role, 4);
    if (i < 0)
      return false;
    if (!ids.empty() && !(c.same(ids[0], 0, i, 0) && c.same(ids[0], 1, i, 1) &&
                          c.same(ids[0], 2, i, 2)))
      return false;
    ids.push_back(i);
  }
  return true;
}

/// The gates g of each chunk recovered from their sums gc within it.
std::vector<double> gatesOf(const GlaSizes &n, const std::vector<double> &gc) {
  std::vector<double> g(gc.size());
  for (int64_t b = 0; b < n.B; ++b)
    for (int64_t t = 0; t < n.T; ++t)
      for (int64_t h = 0; h < n.H; ++h) {
        size_t r = rowOf(n, b, t, h, n.K);
        size_t p = t % n.chunk ? rowOf(n, b, t - 1, h, n.K) : 0;
        for (int64_t d = 0; d < n.K; ++d)
          g[r + size_t(d)] =
              gc[r + size_t(d)] - (t % n.chunk ? gc[p + size_t(d)] : 0.0);
      }
  return g;
}

/// The per-chunk states hs and dhs (roles) [B, cdiv(T, chunk), H, K, V].
bool chunkStates(RefContext &c, const GlaSizes &n,
                 std::initializer_list<const char *> roles) {
  std::vector<int64_t> want = {n.B, (n.T + n.chunk - 1) / n.chunk, n.H, n.K,
                               n.V};
  for (const char *role : roles) {
    int i = c.tensor(role, 5);
    if (i < 0)
      return false;
    if (c.shape(i) != want)
      return c.fail("tensor '" + c.param(i) + "' " + formatShape(c.shape(i)) +
                    " must be [B, cdiv(T, " + std::to_string(n.chunk) +
                    "), H, K, V] = " + formatShape(want));
  }
  return true;
}
} // namespace

bool glaScoreGradsRef(RefContext &c,
                      std::map<std::string, std::vector<double>> &outputs) {
  std::vector<int> t;
  if (!rowTensors(c, {"v", "do", "da"}, t) || !c.same(t[0], 3, t[1], 3))
    return false;
  const std::vector<int64_t> &s = c.shape(t[0]);
  GlaSizes n{s[0], s[1], s[2], 0, s[3], c.shape(t[2])[3]};
  if (n.chunk < 1)
    return c.fail("tensor '" + c.param(t[2]) + "' has no columns");
  double scale;
  if (!c.scale(n.V, scale))
    return false;
  std::vector<double> da(size_t(n.B * n.T * n.H * n.chunk));
  glaChunkScoreGrads(n, c.values(t[0]).data(), c.values(t[1]).data(), scale,
                     da.data());
  outputs[c.param(t[2])] = std::move(da);
  return true;
}

bool glaIntraGradsRef(RefContext &c,
                      std::map<std::string, std::vector<double>> &outputs) {
  std::vector<int> t;
  if (!rowTensors(c, {"q", "k", "gc", "da", "dqi", "dki"}, t))
    return false;
  const std::vector<int64_t> &s = c.shape(t[0]);
  GlaSizes n{s[0], s[1], s[2], s[3], 0, c.shape(t[3])[3]};
  for (int i : {t[1], t[2], t[4], t[5]})
    if (!c.same(t[0], 3, i, 3))
      return false;
  std::vector<double> dqi(size_t(n.B * n.T * n.H * n.K)), dki(dqi.size());
  glaIntraGrads(n, c.values(t[0]).data(), c.values(t[1]).data(),
                c.values(t[2]).data(), c.values(t[3]).data(), dqi.data(),
                dki.data());
  outputs[c.param(t[4])] = std::move(dqi);
  outputs[c.param(t[5])] = std::move(dki);
  return true;
}

bool glaDqkgRef(RefContext &c,
                std::map<std::string, std::vector<double>> &outputs) {
  std::vector<int> t;
  if (!rowTensors(c, {"q", "k", "gc", "v", "do", "dq", "dk", "dg"}, t) ||
      !c.same(t[3], 3, t[4], 3))
    return false;
  const std::vector<int64_t> &s = c.shape(t[0]);
  GlaSizes n{s[0], s[1], s[2], s[3], c.shape(t[3])[3], glaChunkOf(c)};
  if (n.chunk < 1)
    return c.fail("the per-chunk states need the chunk length: a positive "
                  "integer \"chunk\" option or template parameter CHUNK");
  double scale;
  if (!chunkStates(c, n, {"hs", "dhs"}) || !c.scale(n.K, scale))
    return false;
  std::vector<double> g = gatesOf(n, c.values(t[2]));
  size_t keys = size_t(n.B * n.T * n.H * n.K), kv = size_t(n.K * n.V);
  std::vector<double> dq(keys), dk(keys), dg(keys),
      dv(size_t(n.B * n.T * n.H * n.V)), dh0(size_t(n.B * n.H) * kv),
      dhs(size_t(n.B * ((n.T + n.chunk - 1) / n.chunk) * n.H) * kv);
  glaBackward(n, c.values(t[0]).data(), c.values(t[1]).data(),
              c.values(t[3]).data(), g.data(), c.values(t[4]).data(), nullptr,
              c.values(c.index("hs")).data(), nullptr,
              c.values(c.index("dhs")).data(), scale, dq.data(), dk.data(),
              dv.data(), dg.data(), dh0.data(), dhs.data());
  outputs[c.param(t[5])] = std::move(dq);
  outputs[c.param(t[6])] = std::move(dk);
  outputs[c.param(t[7])] = std::move(dg);
  return true;
}

bool glaDvRef(RefContext &c,
              std::map<std::string, std::vector<double>> &outputs) {
  std::vector<int> t;
  if (!rowTensors(c, {"k", "gc", "a", "do", "dv"}, t) ||
      !c.same(t[0], 3, t[1], 3) || !c.same(t[3], 3, t[4], 3))
    return false;
  const std::vector<int64_t> &s = c.shape(t[0]);
  GlaSizes n{s[0], s[1], s[2], s[3], c.shape(t[3])[3], c.shape(t[2])[3]};
  if (n.chunk < 1)
    return c.fail("tensor '" + c.param(t[2]) + "' has no columns");
  double scale;
  if (!chunkStates(c, n, {"dhs"}) || !c.scale(n.K, scale))
    return false;
  std::vector<double> k = c.values(t[0]), gc = c.values(t[1]),
                      a = c.values(t[2]), dout = c.values(t[3]),
                      dhs = c.values(c.index("dhs")),
                      dv(size_t(n.B * n.T * n.H * n.V));
  int64_t NT = (n.T + n.chunk - 1) / n.chunk;
  for (int64_t b = 0; b < n.B; ++b)
    for (int64_t h = 0; h < n.H; ++h)
      for (int64_t j = 0; j < n.T; ++j) {
        int64_t t0 = j - j % n.chunk, tl = std::min(n.T, t0 + n.chunk) - 1;
        double *out = dv.data() + rowOf(n, b, j, h, n.V);
        const double *dh =
            dhs.data() +
            size_t(((b * NT + t0 / n.chunk) * n.H + h) * n.K * n.V);
        size_t rj = rowOf(n, b, j, h, n.K), rl = rowOf(n, b, tl, h, n.K);
        for (int64_t e = 0; e < n.V; ++e) {
          double acc = 0;
          for (int64_t i = j; i <= tl; ++i)
            acc += scale * a[rowOf(n, b, i, h, n.chunk) + size_t(j - t0)] *
                   dout[rowOf(n, b, i, h, n.V) + size_t(e)];
          for (int64_t d = 0; d < n.K; ++d)
            acc += k[rj + size_t(d)] *
                   std::exp(gc[rl + size_t(d)] - gc[rj + size_t(d)]) *
                   dh[d * n.V + e];
          out[e] = acc;
        }
      }
  outputs[c.param(t[4])] = std::move(dv);
  return true;
}

bool deriveGlaIntraGrads(RefContext &c, std::vector<HostTensor> &host,
                         const std::set<std::string> &fromFiles) {
  int dqi = c.index("dqi"), dki = c.index("dki");
  bool wanted = false;
  for (int i : {dqi, dki})
    wanted |= i >= 0 && !c.isOutput(i) && !fromFiles.count(c.param(i));
  if (!wanted)
    return true;
  std::vector<int> t;
  if (!rowTensors(c, {"q", "k", "gc", "v", "do", "dqi", "dki"}, t))
    return false;
  const std::vector<int64_t> &s = c.shape(t[0]);
  GlaSizes n{s[0], s[1], s[2], s[3], c.shape(t[3])[3], glaChunkOf(c)};
  double scale;
  if (n.chunk < 1)
    return c.fail("the intra-chunk gradients need the chunk length: a "
                  "positive integer \"chunk\" option or template parameter "
                  "CHUNK");
  if (!c.scale(n.K, scale))
    return false;
  std::vector<double> da(size_t(n.B * n.T * n.H * n.chunk)),
      dq(size_t(n.B * n.T * n.H * n.K)), dk(dq.size());
  glaChunkScoreGrads(n, c.values(t[3]).data(), c.values(t[4]).data(), scale,
                     da.data());
  glaIntraGrads(n, c.values(t[0]).data(), c.values(t[1]).data(),
                c.values(t[2]).data(), da.data(), dq.data(), dk.data());
  c.derive(dqi, dq, host, fromFiles);
  c.derive(dki, dk, host, fromFiles);
  return true;
}

} // namespace tegula::rt
