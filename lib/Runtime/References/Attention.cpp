//===- Attention.cpp - float64 softmax attention references ---------------===//
//
// The textbook two-pass form (max, then exp-sum), one query row at a time:
// nothing shared with how a tiled kernel computes it. The dense reference
// takes separate query and key lengths, grouped K/V heads (GQA/MQA) and a
// causal mask aligned top-left or bottom-right; the varlen and paged
// references gather each sequence into a dense one and call it.
//
//===----------------------------------------------------------------------===//

#include "RefContext.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

namespace tegula::rt {

using nlohmann::json;

void attentionForwardGqa(const double *q, const double *k, const double *v,
                         int64_t Z, int64_t H, int64_t HKV, int64_t M,
                         int64_t N, int64_t D, int64_t Dv, bool causal,
                         bool bottomRight, double scale, double *o, double *lse,
                         bool lseBase2) {
  std::vector<double> scores(size_t(std::max<int64_t>(N, 1)));
  int64_t group = H / HKV;
  for (int64_t zh = 0; zh < Z * H; ++zh) {
    int64_t zkv = (zh / H) * HKV + (zh % H) / group;
    const double *kh = k + zkv * N * D;
    const double *vh = v + zkv * N * Dv;
    for (int64_t t = 0; t < M; ++t) {
      const double *qt = q + (zh * M + t) * D;
      double *ot = o + (zh * M + t) * Dv;
      // Keys 0..keys-1 are visible. Causal top-left: row t sees s <= t;
      // bottom-right: s <= t + N - M (none when that is negative).
      int64_t keys = N;
      if (causal)
        keys = std::clamp<int64_t>(t + 1 + (bottomRight ? N - M : 0), 0, N);
      double maxScore = -std::numeric_limits<double>::infinity();
      for (int64_t s = 0; s < keys; ++s) {
        double dot = 0;
        for (int64_t d = 0; d < D; ++d)
          dot += qt[d] * kh[s * D + d];
        scores[size_t(s)] = scale * dot;
        maxScore = std::max(maxScore, scores[size_t(s)]);
      }
      double sum = 0;
      for (int64_t s = 0; s < keys; ++s) {
        scores[size_t(s)] = std::exp(scores[size_t(s)] - maxScore);
        sum += scores[size_t(s)];
      }
      for (int64_t j = 0; j < Dv; ++j) {
        double acc = 0;
        for (int64_t s = 0; s < keys; ++s)
          acc += scores[size_t(s)] * vh[s * Dv + j];
        ot[j] = keys ? acc / sum : 0;
      }
      if (lse) {
        double l = keys ? maxScore + std::log(sum)
                        : -std::numeric_limits<double>::infinity();
        lse[zh * M + t] = lseBase2 ? l / std::log(2.0) : l;
      }
    }
  }
}

void attentionForward(const double *q, const double *k, const double *v,
                      int64_t Z, int64_t H, int64_t M, int64_t N, int64_t D,
                      int64_t Dv, bool causal, double scale, double *o,
                      double *lse, bool lseBase2) {
  attentionForwardGqa(q, k, v, Z, H, H, M, N, D, Dv, causal, false, scale, o,
                      lse, lseBase2);
}

/// The split-KV partials of attentionForwardGqa (flash-decoding): S chunks
/// of c = cdiv(cdiv(N, S), block) * block keys; o [Z,H,M,S,Dv] is each
/// chunk's softmax-weighted mean of v over its visible keys, lse [Z,H,M,S]
/// the natural log of its sum of exp(scores); 0 and -inf when none.
static void splitPartials(const double *q, const double *k, const double *v,
                          int64_t Z, int64_t H, int64_t HKV, int64_t M,
                          int64_t N, int64_t D, int64_t Dv, bool causal,
                          bool bottomRight, int64_t S, int64_t block,
                          double scale, double *oOut, double *lOut) {
  int64_t chunk = S > 0 ? (N + S - 1) / S : 0;
  chunk = (chunk + block - 1) / block * block;
  std::vector<double> scores(size_t(std::max<int64_t>(chunk, 1)));
  for (int64_t z = 0; z < Z; ++z)
    for (int64_t h = 0; h < H; ++h) {
      int64_t kvh = z * HKV + h / (H / HKV);
      for (int64_t i = 0; i < M; ++i) {
        const double *qt = q + ((z * H + h) * M + i) * D;
        int64_t visible =
            causal
                ? std::clamp<int64_t>(i + 1 + (bottomRight ? N - M : 0), 0, N)
                : N;
        for (int64_t sp = 0; sp < S; ++sp) {
          int64_t lo = std::min(sp * chunk, visible),
                  hi = std::min((sp + 1) * chunk, visible);
          double *ot = oOut + (((z * H + h) * M + i) * S + sp) * Dv;
          double &lse = lOut[((z * H + h) * M + i) * S + sp];
          double maxScore = -std::numeric_limits<double>::infinity();
          for (int64_t j = lo; j < hi; ++j) {
            double dot = 0;
            for (int64_t d = 0; d < D; ++d)
              dot += qt[d] * k[(kvh * N + j) * D + d];
            scores[size_t(j - lo)] = scale * dot;
            maxScore = std::max(maxScore, scores[size_t(j - lo)]);
          }
          double sum = 0;
          for (int64_t j = lo; j < hi; ++j)
            sum += scores[size_t(j - lo)] =
                std::exp(scores[size_t(j - lo)] - maxScore);
          for (int64_t e = 0; e < Dv; ++e) {
            double acc = 0;
            for (int64_t j = lo; j < hi; ++j)
              acc += scores[size_t(j - lo)] * v[(kvh * N + j) * Dv + e];
            ot[e] = hi > lo ? acc / sum : 0;
          }
          lse = hi > lo ? maxScore + std::log(sum)
                        : -std::numeric_limits<double>::infinity();
        }
      }
    }
}

namespace {
/// RefContext with what only the attention references need.
struct Ctx : RefContext {
  /// The "split_block" option (chunks of split-KV partials are whole
  /// multiples of it), default the template's BLOCK_N, else 1; 0 after an
  /// error.
  int64_t splitBlock() {
    if (auto it = options.find("split_block"); it != options.end()) {
      if (!it->is_number_integer() || it->get<int64_t>() < 1)
        return fail("'split_block' must be a positive integer"), 0;
      return it->get<int64_t>();
    }
    if (auto t = bundle.templateParams.find("BLOCK_N");
        t != bundle.templateParams.end() && t->is_number_integer())
      return std::max<int64_t>(1, t->get<int64_t>());
    return 1;
  }

  /// Query heads H over K/V heads HKV: H a positive multiple of HKV.
  bool grouped(int qt, size_t dq, int kt, size_t dk) {
    int64_t h = shape(qt)[dq], hkv = shape(kt)[dk];
    if (hkv > 0 && h % hkv == 0)
      return true;
    return fail("'" + param(qt) + "' has " + std::to_string(h) +
                " heads, not a multiple of the " + std::to_string(hkv) +
                " K/V heads of '" + param(kt) + "'");
  }
};

/// "attention_fwd" and "attention_gqa": q [Z,H,M,D], k [Z,HKV,N,D],
/// v [Z,HKV,N,Dv] -> o [Z,H,M,Dv], optional lse [Z,H,M]. The causal mask is
/// aligned bottom-right unless "causal_align" says "top_left" (the two are
/// one when M = N).
bool denseRef(Ctx &c, std::map<std::string, std::vector<double>> &outputs) {
  int q = c.tensor("q", 4), k = c.tensor("k", 4), v = c.tensor("v", 4),
      o = c.tensor("o", 4);
  if (q < 0 || k < 0 || v < 0 || o < 0)
    return false;
  const auto &qs = c.shape(q), &ks = c.shape(k), &vs = c.shape(v);
  if (!c.same(q, 0, k, 0) || !c.same(q, 0, v, 0) || !c.same(q, 0, o, 0) ||
      !c.same(q, 1, o, 1) || !c.same(k, 1, v, 1) || !c.grouped(q, 1, k, 1))
    return false;
  if (!c.same(q, 3, k, 3) || !c.same(k, 2, v, 2) || !c.same(q, 2, o, 2) ||
      !c.same(v, 3, o, 3))
    return false;
  int lse = c.index("lse");
  if (lse >= 0 && (c.shape(lse).size() != 3 || c.shape(lse)[0] != qs[0] ||
                   c.shape(lse)[1] != qs[1] || c.shape(lse)[2] != qs[2]))
    return c.fail("tensor '" + c.nameOf("lse") + "' must be [Z, H, M]");
  std::string base = "e";
  if (auto it = c.options.find("lse_base"); it != c.options.end())
    base = it->is_string() ? it->get<std::string>() : "";
  if (base != "e" && base != "2")
    return c.fail("'lse_base' must be \"e\" or \"2\"");
  std::string align = "bottom_right";
  if (auto it = c.options.find("causal_align"); it != c.options.end())
    align = it->is_string() ? it->get<std::string>() : "";
  if (align != "top_left" && align != "bottom_right")
    return c.fail("'causal_align' must be \"top_left\" or \"bottom_right\"");
  double scale;
  if (!c.scale(qs[3], scale))
    return false;
  bool causal = c.flag("causal", "CAUSAL", false);
  std::vector<double> out(size_t(qs[0] * qs[1] * qs[2] * vs[3]));
  std::vector<double> lseOut(lse >= 0 ? size_t(qs[0] * qs[1] * qs[2]) : 0);
  std::vector<double> qv = c.values(q), kv = c.values(k), vv = c.values(v);
  attentionForwardGqa(qv.data(), kv.data(), vv.data(), qs[0], qs[1], ks[1],
                      qs[2], ks[2], qs[3], vs[3], causal,
                      align == "bottom_right", scale, out.data(),
                      lse >= 0 ? lseOut.data() : nullptr, base == "2");
  outputs[c.nameOf("o")] = std::move(out);
  if (lse >= 0)
    outputs[c.nameOf("lse")] = std::move(lseOut);
  return true;
}

/// "attention_varlen": packed sequences. q [T,H,D], k [T,HKV,D],
/// v [T,HKV,Dv] -> o [T,H,Dv]; sequence b is rows cu_seqlens[b] ..
/// cu_seqlens[b+1] - 1, attending only within itself (causal: row t of a
/// sequence sees its keys s <= t). Rows in no sequence are NaN: the kernel
/// must leave them unwritten (the runner poisons outputs with NaN).
bool varlenRef(Ctx &c, std::map<std::string, std::vector<double>> &outputs) {
  int q = c.tensor("q", 3), k = c.tensor("k", 3), v = c.tensor("v", 3),
      o = c.tensor("o", 3), cu = c.tensor("cu_seqlens", 1);
  if (q < 0 || k < 0 || v < 0 || o < 0 || cu < 0)
    return false;
  const auto &qs = c.shape(q), &ks = c.shape(k), &vs = c.shape(v);
  if (!c.same(q, 0, k, 0) || !c.same(q, 0, v, 0) || !c.same(q, 0, o, 0) ||
      !c.same(q, 1, o, 1) || !c.same(k, 1, v, 1) || !c.grouped(q, 1, k, 1) ||
      !c.same(q, 2, k, 2) || !c.same(v, 2, o, 2))
    return false;
  int64_t T = qs[0], H = qs[1], HKV = ks[1], D = qs[2], Dv = vs[2];
  std::vector<double> bounds = c.values(cu);
  if (bounds.empty())
    return c.fail("'" + c.nameOf("cu_seqlens") + "' is empty");
  std::string maxName = "max_seqlen";
  if (auto it = c.options.find("max_seqlen"); it != c.options.end()) {
    if (!it->is_string())
      return c.fail("'max_seqlen' must be a scalar parameter's name");
    maxName = it->get<std::string>();
  }
  std::optional<double> maxLen = c.scalar(maxName);
  for (size_t b = 0; b < bounds.size(); ++b) {
    bool ok = bounds[b] >= 0 && bounds[b] <= double(T) &&
              (b == 0 || bounds[b] >= bounds[b - 1]);
    if (!ok)
      return c.fail("'" + c.nameOf("cu_seqlens") + "'[" + std::to_string(b) +
                    "] = " + std::to_string(int64_t(bounds[b])) +
                    " is not a non-decreasing row index in 0.." +
                    std::to_string(T));
    if (b > 0 && maxLen && bounds[b] - bounds[b - 1] > *maxLen)
      return c.fail(
          "sequence " + std::to_string(b - 1) + " has " +
          std::to_string(int64_t(bounds[b] - bounds[b - 1])) +
          " rows, more than max_seqlen = " + std::to_string(int64_t(*maxLen)));
  }
  double scale;
  if (!c.scale(D, scale))
    return false;
  bool causal = c.flag("causal", "CAUSAL", false);
  std::vector<double> qv = c.values(q), kv = c.values(k), vv = c.values(v);
  std::vector<double> out(size_t(T * H * Dv),
                          std::numeric_limits<double>::quiet_NaN());
  for (size_t b = 0; b + 1 < bounds.size(); ++b) {
    int64_t start = int64_t(bounds[b]), L = int64_t(bounds[b + 1]) - start;
    // Gather the sequence into [H, L, D] and [HKV, L, D].
    std::vector<double> qb(size_t(H * L * D)), kb(size_t(HKV * L * D)),
        vb(size_t(HKV * L * Dv)), ob(size_t(H * L * Dv));
    for (int64_t t = 0; t < L; ++t) {
      for (int64_t h = 0; h < H; ++h)
        for (int64_t d = 0; d < D; ++d)
          qb[size_t((h * L + t) * D + d)] =
              qv[size_t(((start + t) * H + h) * D + d)];
      for (int64_t h = 0; h < HKV; ++h) {
        for (int64_t d = 0; d < D; ++d)
          kb[size_t((h * L + t) * D + d)] =
              kv[size_t(((start + t) * HKV + h) * D + d)];
        for (int64_t d = 0; d < Dv; ++d)
          vb[size_t((h * L + t) * Dv + d)] =
              vv[size_t(((start + t) * HKV + h) * Dv + d)];
      }
    }
    attentionForwardGqa(qb.data(), kb.data(), vb.data(), 1, H, HKV, L, L, D, Dv,
                        causal, false, scale, ob.data(), nullptr, false);
    for (int64_t t = 0; t < L; ++t)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t d = 0; d < Dv; ++d)
          out[size_t(((start + t) * H + h) * Dv + d)] =
              ob[size_t((h * L + t) * Dv + d)];
  }
  outputs[c.nameOf("o")] = std::move(out);
  return true;
}

/// "attention_paged": one query per sequence against a paged K/V cache.
/// q [B,H,D], k_cache [P,PAGE,HKV,D], v_cache [P,PAGE,HKV,Dv],
/// block_table [B,MAXP], seq_lens [B] -> o [B,H,Dv]. Key j of sequence b is
/// row j % PAGE of page block_table[b, j / PAGE]; a sequence of length 0
/// gives 0. The caches may also be the same memory seen flat, [P * PAGE,
/// HKV, D], with PAGE from the "page" option or the template's PAGE.
/// "attention_paged_split" gives each sequence's split-KV partials instead,
/// as "attention_split" does with M = 1: o_part [B,H,1,S,Dv] and lse_part
/// [B,H,1,S], chunks of cdiv(cdiv(seq_len, S), split_block) * split_block
/// keys.
bool pagedRef(Ctx &c, bool split,
              std::map<std::string, std::vector<double>> &outputs) {
  int q = c.tensor("q", 3), table = c.tensor("block_table", 2),
      lens = c.tensor("seq_lens", 1);
  int o = split ? -1 : c.tensor("o", 3);
  int op = split ? c.tensor("o_part", 5) : -1,
      lp = split ? c.tensor("lse_part", 4) : -1;
  int k = c.index("k_cache"), v = c.index("v_cache");
  if (k < 0 || v < 0)
    return c.fail("the kernel has no tensor parameter '" +
                  c.nameOf(k < 0 ? "k_cache" : "v_cache") + "'");
  if (q < 0 || table < 0 || lens < 0 || (split ? op < 0 || lp < 0 : o < 0))
    return false;
  int64_t block = split ? c.splitBlock() : 1;
  if (!block)
    return false;
  // The caches as [P, PAGE, HKV, D].
  std::vector<int64_t> ks = c.shape(k), vs = c.shape(v);
  if (ks.size() != vs.size() || (ks.size() != 3 && ks.size() != 4))
    return c.fail("'" + c.nameOf("k_cache") + "' and '" + c.nameOf("v_cache") +
                  "' must both be [NUM_PAGES, PAGE, HKV, D] or both "
                  "[NUM_PAGES * PAGE, HKV, D]");
  if (ks.size() == 3) {
    int64_t page = 0;
    if (auto it = c.options.find("page"); it != c.options.end()) {
      if (it->is_number_integer())
        page = it->get<int64_t>();
    } else if (auto t = c.bundle.templateParams.find("PAGE");
               t != c.bundle.templateParams.end() && t->is_number_integer()) {
      page = t->get<int64_t>();
    }
    if (page <= 0 || ks[0] % page != 0)
      return c.fail("flat caches of " + std::to_string(ks[0]) +
                    " rows need a page size dividing it (the \"page\" "
                    "option or the template's PAGE)");
    ks = {ks[0] / page, page, ks[1], ks[2]};
    vs = {vs[0] / page, page, vs[1], vs[2]};
  }
  const auto &qs = c.shape(q);
  int out = split ? op : o;
  const auto &os = c.shape(out);
  int64_t S = split ? os[3] : 1;
  bool outFits = split ? os[0] == qs[0] && os[1] == qs[1] && os[2] == 1 &&
                             os[4] == vs[3] && c.shape(lp)[0] == qs[0] &&
                             c.shape(lp)[1] == qs[1] && c.shape(lp)[2] == 1 &&
                             c.shape(lp)[3] == S
                       : os[0] == qs[0] && os[1] == qs[1] && os[2] == vs[3];
  if (ks[0] != vs[0] || ks[1] != vs[1] || ks[2] != vs[2] || qs[2] != ks[3] ||
      !outFits || ks[2] <= 0 || qs[1] % ks[2] != 0)
    return c.fail("q " + formatShape(qs) + ", k_cache " + formatShape(ks) +
                  ", v_cache " + formatShape(vs) + " (as pages) and '" +
                  c.param(out) + "' " + formatShape(os) +
                  " do not fit together");
  if (!c.same(q, 0, table, 0) || !c.same(q, 0, lens, 0))
    return false;
  int64_t B = qs[0], H = qs[1], D = qs[2], P = ks[0], PAGE = ks[1], HKV = ks[2],
          Dv = vs[3], MAXP = c.shape(table)[1];
  double scale;
  if (!c.scale(D, scale))
    return false;
  std::vector<double> tv = c.values(table), lv = c.values(lens);
  std::vector<double> qv = c.values(q), kv = c.values(k), vv = c.values(v);
  std::vector<double> result(size_t(B * H * S * Dv)), lse(size_t(B * H * S));
  for (int64_t b = 0; b < B; ++b) {
    int64_t L = int64_t(lv[size_t(b)]);
    if (L < 0 || L > MAXP * PAGE)
      return c.fail("'" + c.nameOf("seq_lens") + "'[" + std::to_string(b) +
                    "] = " + std::to_string(L) + " is not in 0.." +
                    std::to_string(MAXP * PAGE) + " (MAX_PAGES x PAGE)");
    std::vector<double> kb(size_t(HKV * L * D)), vb(size_t(HKV * L * Dv));
    for (int64_t j = 0; j < L; ++j) {
      int64_t page = int64_t(tv[size_t(b * MAXP + j / PAGE)]);
      if (page < 0 || page >= P)
        return c.fail("'" + c.nameOf("block_table") + "'[" + std::to_string(b) +
                      ", " + std::to_string(j / PAGE) +
                      "] = " + std::to_string(page) + " is not a page in 0.." +
                      std::to_string(P - 1));
      int64_t row = page * PAGE + j % PAGE;
      for (int64_t h = 0; h < HKV; ++h) {
        for (int64_t d = 0; d < D; ++d)
          kb[size_t((h * L + j) * D + d)] = kv[size_t((row * HKV + h) * D + d)];
        for (int64_t d = 0; d < Dv; ++d)
          vb[size_t((h * L + j) * Dv + d)] =
              vv[size_t((row * HKV + h) * Dv + d)];
      }
    }
    if (split)
      splitPartials(qv.data() + b * H * D, kb.data(), vb.data(), 1, H, HKV, 1,
                    L, D, Dv, false, false, S, block, scale,
                    result.data() + b * H * S * Dv, lse.data() + b * H * S);
    else
      attentionForwardGqa(qv.data() + b * H * D, kb.data(), vb.data(), 1, H,
                          HKV, 1, L, D, Dv, false, false, scale,
                          result.data() + b * H * Dv, nullptr, false);
  }
  outputs[c.param(out)] = std::move(result);
  if (split)
    outputs[c.param(lp)] = std::move(lse);
  return true;
}

/// "attention_split": split-KV partials of attention_gqa (flash-decoding).
/// q [Z,H,M,D], k [Z,HKV,N,D], v [Z,HKV,N,Dv] -> o_part [Z,H,M,S,Dv],
/// lse_part [Z,H,M,S]. Split s covers keys [s c, (s+1) c) with c =
/// cdiv(cdiv(N, S), B) B, B the "split_block" option (default the template's
/// BLOCK_N, else 1); within it the causal mask (bottom-right by default)
/// applies. o_part is that split's softmax-weighted mean of v and lse_part
/// the natural log of its sum of exp(scores); an empty split gives 0 and
/// -inf.
bool splitRef(Ctx &c, std::map<std::string, std::vector<double>> &outputs) {
  int q = c.tensor("q", 4), k = c.tensor("k", 4), v = c.tensor("v", 4),
      op = c.tensor("o_part", 5), lp = c.tensor("lse_part", 4);
  if (q < 0 || k < 0 || v < 0 || op < 0 || lp < 0)
    return false;
  const auto &qs = c.shape(q), &ks = c.shape(k), &vs = c.shape(v);
  for (size_t d : {0, 1, 2})
    if (!c.same(q, d, op, d) || !c.same(q, d, lp, d))
      return false;
  if (!c.same(q, 0, k, 0) || !c.same(q, 0, v, 0) || !c.same(k, 1, v, 1) ||
      !c.grouped(q, 1, k, 1) || !c.same(q, 3, k, 3) || !c.same(k, 2, v, 2) ||
      !c.same(v, 3, op, 4) || !c.same(op, 3, lp, 3))
    return false;
  int64_t block = c.splitBlock();
  if (!block)
    return false;
  std::string align = "bottom_right";
  if (auto it = c.options.find("causal_align"); it != c.options.end())
    align = it->is_string() ? it->get<std::string>() : "";
  if (align != "top_left" && align != "bottom_right")
    return c.fail("'causal_align' must be \"top_left\" or \"bottom_right\"");
  double scale;
  if (!c.scale(qs[3], scale))
    return false;
  bool causal = c.flag("causal", "CAUSAL", false);
  int64_t Z = qs[0], H = qs[1], M = qs[2], S = c.shape(op)[3];
  std::vector<double> qv = c.values(q), kv = c.values(k), vv = c.values(v);
  std::vector<double> oOut(size_t(Z * H * M * S * vs[3])),
      lOut(size_t(Z * H * M * S));
  splitPartials(qv.data(), kv.data(), vv.data(), Z, H, ks[1], M, ks[2], qs[3],
                vs[3], causal, align == "bottom_right", S, block, scale,
                oOut.data(), lOut.data());
  outputs[c.nameOf("o_part")] = std::move(oOut);
  outputs[c.nameOf("lse_part")] = std::move(lOut);
  return true;
}

/// "attention_combine": merges split partials. o_part [Z,H,M,S,D] and
/// lse_part [Z,H,M,S] (natural log) -> o [Z,H,M,D] = sum_s w_s o_part_s with
/// w_s = exp(lse_s) / sum_t exp(lse_t); 0 when every lse is -inf.
bool combineRef(Ctx &c, std::map<std::string, std::vector<double>> &outputs) {
  int op = c.tensor("o_part", 5), lp = c.tensor("lse_part", 4),
      o = c.tensor("o", 4);
  if (op < 0 || lp < 0 || o < 0)
    return false;
  for (size_t d : {0, 1, 2})
    if (!c.same(op, d, lp, d) || !c.same(op, d, o, d))
      return false;
  if (!c.same(op, 3, lp, 3) || !c.same(op, 4, o, 3))
    return false;
  const auto &ps = c.shape(op);
  int64_t rows = ps[0] * ps[1] * ps[2], S = ps[3], D = ps[4];
  std::vector<double> ov = c.values(op), lv = c.values(lp);
  std::vector<double> out(size_t(rows * D));
  for (int64_t r = 0; r < rows; ++r) {
    double mx = -std::numeric_limits<double>::infinity();
    for (int64_t sp = 0; sp < S; ++sp)
      mx = std::max(mx, lv[size_t(r * S + sp)]);
    if (mx == -std::numeric_limits<double>::infinity())
      continue;
    double den = 0;
    for (int64_t sp = 0; sp < S; ++sp)
      den += std::exp(lv[size_t(r * S + sp)] - mx);
    for (int64_t e = 0; e < D; ++e) {
      double num = 0;
      for (int64_t sp = 0; sp < S; ++sp)
        num += std::exp(lv[size_t(r * S + sp)] - mx) *
               ov[size_t((r * S + sp) * D + e)];
      out[size_t(r * D + e)] = num / den;
    }
  }
  outputs[c.nameOf("o")] = std::move(out);
  return true;
}
} // namespace

bool isAttentionReference(const std::string &name) {
  return name == "attention_fwd" || name == "attention_gqa" ||
         name == "attention_varlen" || name == "attention_paged" ||
         name == "attention_split" || name == "attention_combine" ||
         name == "attention_paged_split";
}

bool attentionReference(const Bundle &bundle, const LaunchPlan &plan,
                        const std::vector<HostTensor> &inputs,
                        const json &options,
                        std::map<std::string, std::vector<double>> &outputs,
                        std::string &error) {
  Ctx c{{bundle, plan, inputs, options, ""}};
  std::string name = options.value("name", std::string());
  bool ok = false;
  if (name == "attention_fwd" || name == "attention_gqa")
    ok = denseRef(c, outputs);
  else if (name == "attention_varlen")
    ok = varlenRef(c, outputs);
  else if (name == "attention_paged" || name == "attention_paged_split")
    ok = pagedRef(c, name == "attention_paged_split", outputs);
  else if (name == "attention_split")
    ok = splitRef(c, outputs);
  else if (name == "attention_combine")
    ok = combineRef(c, outputs);
  else
    c.fail("not an attention reference");
  if (!ok)
    error = c.error;
  return ok;
}

} // namespace tegula::rt
