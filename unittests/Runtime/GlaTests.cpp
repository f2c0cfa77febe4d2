//===- GlaTests.cpp - Known answers for the GLA references ----------------===//
//
// glaForward and glaBackward on two positions worked out by hand;
// glaBackward against central differences of sum(o do) + sum(ht dht);
// chunks restarted from the forward's own states (hs, dhs) giving the
// whole sequence's outputs; the backward's intra-chunk terms (score
// gradients, dq and dk within a chunk) giving glaBackward's gradients
// where there are no states; and the reference as tile-run runs it: a
// bundle's gates derived into forget gates and CHUNK read from its
// template.
//
//===----------------------------------------------------------------------===//

#include "UnitTest.h"

#include "tegula/Runtime/Bundle.h"
#include "tegula/Runtime/HostSession.h"
#include "tegula/Runtime/References.h"

#include <vector>

using namespace tegula::rt;

namespace tegula::unittest {

namespace {
void testByHand() {
  // B = H = K = V = 1, T = 2: q = [1, 2], k = [3, 4],
  // v = [5, 6], exp(g) = [1/2, 1/4], h0 = 8, scale 1/2.
  //   S_1 = 8/2 + 15 = 19, o_0 = 19/2; S_2 = 19/4 + 24 = 28.75,
  //   o_1 = 2 * 28.75 / 2 = 28.75 = ht; hs = [8, 19] in chunks of 1.
  GlaSizes n{1, 2, 1, 1, 1, 1};
  double q[] = {1, 2}, k[] = {3, 4}, v[] = {5, 6},
         g[] = {std::log(0.5), std::log(0.25)}, h0[] = {8};
  double o[2], ht[1], hs[2];
  glaForward(n, q, k, v, g, h0, nullptr, 0.5, o, ht, hs);
  EXPECT_NEAR(o[0], 9.5);
  EXPECT_NEAR(o[1], 28.75);
  EXPECT_NEAR(ht[0], 28.75);
  EXPECT_NEAR(hs[0], 8);
  EXPECT_NEAR(hs[1], 19);
  // Chunk 1 from a given state 0 instead of 19: S_2 = 24, o_1 = 24.
  double given[] = {8, 0};
  glaForward(n, q, k, v, g, h0, given, 0.5, o, ht, nullptr);
  EXPECT_NEAR(o[0], 9.5);
  EXPECT_NEAR(o[1], 24);

  // do = [1, -1], dht = 2. t = 1: Ga = 2, G = 2 + (1/2) 2 (-1) = 1,
  // dq = (1/2)(-1) 28.75, dk = 6, dv = 4, dg = (1/4) 1 19; Ga = 1/4.
  // t = 0: G = 1/4 + (1/2) 1 1 = 3/4, dq = 19/2, dk = 15/4, dv = 9/4,
  // dg = (1/2)(3/4) 8 = 3; dh0 = (1/2)(3/4). dhs = [1/4, 2].
  double dout[] = {1, -1}, dht[] = {2};
  double dq[2], dk[2], dv[2], dg[2], dh0[1], dhs[2];
  glaBackward(n, q, k, v, g, dout, h0, nullptr, dht, nullptr, 0.5, dq, dk, dv,
              dg, dh0, dhs);
  EXPECT_NEAR(dq[1], -14.375);
  EXPECT_NEAR(dk[1], 6);
  EXPECT_NEAR(dv[1], 4);
  EXPECT_NEAR(dg[1], 4.75);
  EXPECT_NEAR(dq[0], 9.5);
  EXPECT_NEAR(dk[0], 3.75);
  EXPECT_NEAR(dv[0], 2.25);
  EXPECT_NEAR(dg[0], 3);
  EXPECT_NEAR(dh0[0], 0.375);
  EXPECT_NEAR(dhs[0], 0.25);
  EXPECT_NEAR(dhs[1], 2);
  // One chunk of 2: dhs = [Ga at t = 1] = [2], the same gradients.
  n.chunk = 2;
  glaBackward(n, q, k, v, g, dout, h0, nullptr, dht, nullptr, 0.5, dq, dk, dv,
              dg, dh0, dhs);
  EXPECT_NEAR(dhs[0], 2);
  EXPECT_NEAR(dg[0], 3);
  EXPECT_NEAR(dh0[0], 0.375);
}

/// Deterministic values in about [-1, 1].
std::vector<double> wave(size_t size, double a, double b) {
  std::vector<double> x(size);
  for (size_t i = 0; i < size; ++i)
    x[i] = std::sin(a * double(i) + b);
  return x;
}

/// A small case with B, H > 1 and T ragged against the chunk.
struct Case {
  GlaSizes n{2, 5, 2, 3, 2, 2};
  size_t keys = 60, vals = 40, states = 24, chunks = 72;
  double scale = -0.6;
  std::vector<double> q = wave(keys, 0.7, 0.3), k = wave(keys, 1.3, -0.2),
                      v = wave(vals, 0.9, 1.1), g = wave(keys, 2.1, 0.4),
                      h0 = wave(states, 0.5, -1.0), dout = wave(vals, 1.7, 0.6),
                      dht = wave(states, 0.8, 2.0);
};

void testCentralDifferences() {
  Case c;
  std::vector<double> o(c.vals), ht(c.states);
  auto loss = [&](const std::vector<double> &q, const std::vector<double> &k,
                  const std::vector<double> &v, const std::vector<double> &g,
                  const std::vector<double> &h0) {
    glaForward(c.n, q.data(), k.data(), v.data(), g.data(), h0.data(), nullptr,
               c.scale, o.data(), ht.data(), nullptr);
    double total = 0;
    for (size_t i = 0; i < c.vals; ++i)
      total += o[i] * c.dout[i];
    for (size_t i = 0; i < c.states; ++i)
      total += ht[i] * c.dht[i];
    return total;
  };
  std::vector<double> dq(c.keys), dk(c.keys), dv(c.vals), dg(c.keys),
      dh0(c.states), dhs(c.chunks);
  glaBackward(c.n, c.q.data(), c.k.data(), c.v.data(), c.g.data(),
              c.dout.data(), c.h0.data(), nullptr, c.dht.data(), nullptr,
              c.scale, dq.data(), dk.data(), dv.data(), dg.data(), dh0.data(),
              dhs.data());
  EXPECT(worstCentralDifference(
             [&](const auto &x) { return loss(x, c.k, c.v, c.g, c.h0); }, c.q,
             dq) < 1e-8);
  EXPECT(worstCentralDifference(
             [&](const auto &x) { return loss(c.q, x, c.v, c.g, c.h0); }, c.k,
             dk) < 1e-8);
  EXPECT(worstCentralDifference(
             [&](const auto &x) { return loss(c.q, c.k, x, c.g, c.h0); }, c.v,
             dv) < 1e-8);
  EXPECT(worstCentralDifference(
             [&](const auto &x) { return loss(c.q, c.k, c.v, x, c.h0); }, c.g,
             dg) < 1e-8);
  EXPECT(worstCentralDifference(
             [&](const auto &x) { return loss(c.q, c.k, c.v, c.g, x); }, c.h0,
             dh0) < 1e-8);
}

void testChunksFromStates() {
  // The forward's hs and the backward's dhs, given back, restart each chunk
  // where the whole sequence had it: the same outputs, with no h0 or dht.
  Case c;
  std::vector<double> o(c.vals), ht(c.states), hs(c.chunks), oc(c.vals);
  glaForward(c.n, c.q.data(), c.k.data(), c.v.data(), c.g.data(), c.h0.data(),
             nullptr, c.scale, o.data(), ht.data(), hs.data());
  glaForward(c.n, c.q.data(), c.k.data(), c.v.data(), c.g.data(), nullptr,
             hs.data(), c.scale, oc.data(), nullptr, nullptr);
  for (size_t i = 0; i < c.vals; ++i)
    EXPECT_NEAR(oc[i], o[i]);
  std::vector<double> grads[2][5];
  std::vector<double> dhs(c.chunks), unused(c.chunks);
  for (int from = 0; from < 2; ++from) {
    auto &[dq, dk, dv, dg, dh0] = grads[from];
    dq.resize(c.keys), dk.resize(c.keys), dv.resize(c.vals), dg.resize(c.keys),
        dh0.resize(c.states);
    glaBackward(c.n, c.q.data(), c.k.data(), c.v.data(), c.g.data(),
                c.dout.data(), from ? nullptr : c.h0.data(),
                from ? hs.data() : nullptr, from ? nullptr : c.dht.data(),
                from ? dhs.data() : nullptr, c.scale, dq.data(), dk.data(),
                dv.data(), dg.data(), dh0.data(),
                from ? unused.data() : dhs.data());
  }
  for (int i = 0; i < 4; ++i)
    for (size_t e = 0; e < grads[0][i].size(); ++e)
      EXPECT_NEAR(grads[1][i][e], grads[0][i][e]);
}

void testIntraChunkTerms() {
  // With no h0 and no dht, one chunk holding all of T has no state terms:
  // glaBackward's dq and dk are the intra-chunk ones the backward's
  // chunk_gla_bwd_da and chunk_gla_bwd_dqk_intra references form, and its
  // dv is scale a^T dout with glaIntraScores' a.
  Case c;
  GlaSizes n = c.n;
  n.chunk = n.T;
  size_t scores = size_t(n.B * n.T * n.H * n.chunk);
  std::vector<double> dq(c.keys), dk(c.keys), dv(c.vals), dg(c.keys),
      dh0(c.states), dhs(c.states), gc(c.keys), da(scores), a(scores),
      dqi(c.keys), dki(c.keys);
  glaBackward(n, c.q.data(), c.k.data(), c.v.data(), c.g.data(), c.dout.data(),
              nullptr, nullptr, nullptr, nullptr, c.scale, dq.data(), dk.data(),
              dv.data(), dg.data(), dh0.data(), dhs.data());
  glaChunkCumsum(n, c.g.data(), gc.data());
  glaChunkScoreGrads(n, c.v.data(), c.dout.data(), c.scale, da.data());
  glaIntraGrads(n, c.q.data(), c.k.data(), gc.data(), da.data(), dqi.data(),
                dki.data());
  for (size_t i = 0; i < c.keys; ++i) {
    EXPECT_NEAR(dqi[i], dq[i]);
    EXPECT_NEAR(dki[i], dk[i]);
  }
  glaIntraScores(n, c.q.data(), c.k.data(), gc.data(), a.data());
  for (int64_t b = 0; b < n.B; ++b)
    for (int64_t h = 0; h < n.H; ++h)
      for (int64_t j = 0; j < n.T; ++j)
        for (int64_t e = 0; e < n.V; ++e) {
          double acc = 0;
          for (int64_t i = j; i < n.T; ++i)
            acc += c.scale * a[size_t(((b * n.T + i) * n.H + h) * n.T + j)] *
                   c.dout[size_t(((b * n.T + i) * n.H + h) * n.V + e)];
          EXPECT_NEAR(dv[size_t(((b * n.T + j) * n.H + h) * n.V + e)], acc);
        }
  // da is 0 above the diagonal.
  EXPECT(da[1] == 0 && da[size_t(n.T) - 1] == 0);
}

void testBundle() {
  // A kernel of o from given per-chunk states (as chunk_gla_output reads
  // them) with the forward's reference in a bundle with CHUNK = 2: --check
  // draws forget gates from the random g, and the reference restarts each
  // chunk from the kernel's hs input.
  HostSession session("");
  std::string text = R"json({"kernel": "gla_from_states",
    "target": "sm_80", "threads": 128, "shared_bytes": 0,
    "template": {"CHUNK": 2}, "reference": "chunk_gla_fwd",
    "params": [
      {"name": "q", "kind": "tensor", "dtype": "f32", "dims": ["B", "T", "H", 3], "access": "read"},
      {"name": "k", "kind": "tensor", "dtype": "f32", "dims": ["B", "T", "H", 3], "access": "read"},
      {"name": "v", "kind": "tensor", "dtype": "f32", "dims": ["B", "T", "H", 2], "access": "read"},
      {"name": "g", "kind": "tensor", "dtype": "f32", "dims": ["B", "T", "H", 3], "access": "read"},
      {"name": "hs", "kind": "tensor", "dtype": "f32", "dims": ["B", "NT", "H", 3, 2], "access": "read"},
      {"name": "o", "kind": "tensor", "dtype": "f32", "dims": ["B", "T", "H", 2], "access": "write"},
      {"name": "scale", "kind": "scalar", "dtype": "f32"}],
    "size_vars": ["B", "T", "H", "NT"], "grid": ["NT", "B * H", "1"],
    "requires": [], "flops": null, "bytes": null})json";
  std::string error;
  EXPECT(parseBundleJson(text, "gla.json", session.bundle, error));
  HostOptions options;
  options.dims = {"B=2,T=5,H=2,NT=3"};
  options.scalars = {"scale=0.25"};
  options.check = true;
  EXPECT(session.bind(options, error) && session.prepareHostTensors(error));
  std::vector<double> g = session.host[3].toDoubles();
  bool forget = !g.empty();
  for (double x : g)
    forget &= x < 0 && x > std::log(0.5) - 1e-6;
  EXPECT(forget);
  std::map<std::string, std::vector<double>> refs;
  EXPECT(computeReference(session.bundle, session.plan, session.host, refs,
                          error));
  std::vector<double> in[5];
  for (size_t i = 0; i < 5; ++i)
    in[i] = session.host[i].toDoubles();
  std::vector<double> o(40);
  glaForward({2, 5, 2, 3, 2, 2}, in[0].data(), in[1].data(), in[2].data(),
             in[3].data(), nullptr, in[4].data(), 0.25, o.data(), nullptr,
             nullptr);
  EXPECT(refs.size() == 1 && refs["o"].size() == 40);
  for (size_t i = 0; i < 40 && refs["o"].size() == 40; ++i)
    EXPECT_NEAR(refs["o"][i], o[i]);
  // Without the template's CHUNK the states' chunks are unknown.
  session.bundle.templateParams = nlohmann::json::object();
  EXPECT(!computeReference(session.bundle, session.plan, session.host, refs,
                           error) &&
         error.find("need the chunk length") != std::string::npos);
}
} // namespace

void testGla() {
  testByHand();
  testCentralDifferences();
  testChunksFromStates();
  testIntraChunkTerms();
  testBundle();
}

} // namespace tegula::unittest
