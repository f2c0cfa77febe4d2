//===- References.h - float64 host references and comparison ---*- C++ -*-===//
//
// Independent, deliberately naive float64 implementations of the kernels
// the project ships, used by `tile-run --check`. A bundle names its
// reference with a "reference" field (docs/runtime.md).
//
//===----------------------------------------------------------------------===//

#ifndef TEGULA_RUNTIME_REFERENCES_H
#define TEGULA_RUNTIME_REFERENCES_H

#include "tegula/Runtime/Binding.h"
#include "tegula/Runtime/Bundle.h"
#include "tegula/Runtime/Tensor.h"

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace tegula::rt {

/// softmax(scale * q k^T) v per (z, h). q is [Z, H, M, D], k [Z, H, N, D],
/// v [Z, H, N, Dv], o [Z, H, M, Dv]. With `causal`, query row t sees keys
/// s <= t. `lse` (nullable) is [Z, H, M]: log of the softmax denominator
/// including the max, natural log or, with `lseBase2`, log2.
void attentionForward(const double *q, const double *k, const double *v,
                      int64_t Z, int64_t H, int64_t M, int64_t N, int64_t D,
                      int64_t Dv, bool causal, double scale, double *o,
                      double *lse, bool lseBase2);

/// attentionForward with HKV K/V heads (H a multiple of HKV; query head h
/// reads K/V head h / (H / HKV)): k is [Z, HKV, N, D], v [Z, HKV, N, Dv].
/// With `bottomRight`, the causal mask is aligned to the last key: row t
/// sees keys s <= t + N - M, none when that is negative (o = 0, lse = -inf).
void attentionForwardGqa(const double *q, const double *k, const double *v,
                         int64_t Z, int64_t H, int64_t HKV, int64_t M,
                         int64_t N, int64_t D, int64_t Dv, bool causal,
                         bool bottomRight, double scale, double *o, double *lse,
                         bool lseBase2);

/// The attention references (References/Attention.cpp): attention_fwd,
/// attention_gqa, attention_split, attention_combine, attention_varlen,
/// attention_paged, attention_paged_split (docs/kernels.md).
bool isAttentionReference(const std::string &name);
bool attentionReference(const Bundle &bundle, const LaunchPlan &plan,
                        const std::vector<HostTensor> &inputs,
                        const nlohmann::json &options,
                        std::map<std::string, std::vector<double>> &outputs,
                        std::string &error);

/// The backward of attentionForward with M = N = rows and Dv = D, for the
/// output gradient `dout` [Z, H, N, D]: dq, dk, dv [Z, H, N, D]. Also gives
/// the forward's o [Z, H, N, D], lse [Z, H, N] (natural log) and delta =
/// rowsum(dout o) [Z, H, N] where non-null. Causal is aligned top-left.
void attentionBackward(const double *q, const double *k, const double *v,
                       const double *dout, int64_t Z, int64_t H, int64_t N,
                       int64_t D, bool causal, double scale, double *dq,
                       double *dk, double *dv, double *o, double *lse,
                       double *delta);

/// attentionBackward with M queries and N keys and HKV K/V heads (H a
/// multiple of HKV; query head h reads K/V head h / (H / HKV)): q, dout, dq,
/// o are [Z, H, M, D], lse and delta [Z, H, M]; k, v, dk, dv are
/// [Z, HKV, N, D], and a K/V head's dk and dv sum the gradients of every
/// query head that reads it. The causal mask is aligned bottom-right (row i
/// sees keys j <= i + N - M): a row that sees no key has o = 0, lse = -inf,
/// delta = 0 and contributes no gradient.
void attentionBackwardGqa(const double *q, const double *k, const double *v,
                          const double *dout, int64_t Z, int64_t H, int64_t HKV,
                          int64_t M, int64_t N, int64_t D, bool causal,
                          double scale, double *dq, double *dk, double *dv,
                          double *o, double *lse, double *delta);

/// Inputs a reference needs to be consistent with the others, computed
/// from them in float64 (rounded to their dtypes) into `host`: for
/// "attention_bwd", the forward's o and lse and delta = rowsum(do o) from q,
/// k, v and do; for "layer_norm_bwd_dx" mean and rstd, for "rmsnorm_bwd_dx"
/// rstd from x; for "cross_entropy_bwd" lse from the logits; for the GLA
/// references (chunk_gla_*, recurrent_gla_fwd) forget gates g =
/// logsigmoid(4 + 4u) of the random u: where the kernel reads them and
/// `fromFiles` (the --in names) does not give them.
/// Other references derive nothing.
bool deriveReferenceInputs(const Bundle &bundle, const LaunchPlan &plan,
                           std::vector<HostTensor> &host,
                           const std::set<std::string> &fromFiles,
                           std::string &error);

/// Causal linear attention in its quadratic form on [B, T, H, D] inputs:
/// o_t = scale * sum_{s <= t} (q_t . k_s) v_s; v and o are [B, T, H, Dv].
void linearAttention(const double *q, const double *k, const double *v,
                     int64_t B, int64_t T, int64_t H, int64_t D, int64_t Dv,
                     double scale, double *o);

/// Packed variable-length attention's sizes (flash-attn's varlen layout):
/// q, o, dq [TQ, H, D]; k, v, dk, dv [TK, HKV, D]; lse, delta [H, TQ]
/// (head-major). B sequences: b is q rows cuQ[b] .. cuQ[b+1] - 1 and k rows
/// cuK[b] .. cuK[b+1] - 1 (cuQ, cuK of B + 1 non-decreasing bounds).
struct VarlenSizes {
  int64_t TQ = 0, TK = 0, H = 0, HKV = 1, D = 0, B = 0;
};

/// The forward of each sequence by the definition (References/
/// VarlenAttention.cpp): query head h reads K/V head h / (H / HKV); with
/// `causal` query i of a sequence sees key j iff j <= i + len_k - len_q
/// (bottom-right). A row that sees no key gets o = 0 and lse = -inf; rows
/// in no sequence are NaN in o and lse (nullable: natural log).
void varlenAttentionForward(const VarlenSizes &n, const double *q,
                            const double *k, const double *v,
                            const int64_t *cuQ, const int64_t *cuK,
                            bool causal, double scale, double *o,
                            double *lse);

/// Its backward for the output gradient `dout` [TQ, H, D] and, when
/// non-null, an lse gradient `dlse` [H, TQ]: dq, dk, dv; rows in no
/// sequence are NaN, keys no query sees 0. Also the forward's o, lse and
/// delta = rowsum(dout o) [H, TQ] (every row; 0 in no sequence) where
/// non-null.
void varlenAttentionBackward(const VarlenSizes &n, const double *q,
                             const double *k, const double *v,
                             const double *dout, const double *dlse,
                             const int64_t *cuQ, const int64_t *cuK,
                             bool causal, double scale, double *dq, double *dk,
                             double *dv, double *o, double *lse,
                             double *delta);

/// Gated linear attention's sizes: q, k, g [B, T, H, K]; v, o [B, T, H, V];
/// states h0, ht, dht, dh0 [B, H, K, V]; per-chunk states hs, dhs
/// [B, NT, H, K, V] with NT = cdiv(T, chunk).
struct GlaSizes {
  int64_t B = 0, T = 0, H = 0, K = 0, V = 0, chunk = 1;
};

/// GLA (fla's chunk_gla, [B, T, H, K] layout) by its step recurrence per
/// (b, h): S_0 = h0 (0 when null), S_t = diag(exp(g_t)) S_{t-1} + k_t^T v_t,
/// o_t = scale q_t S_t; ht = S_T and hs[b, c, h] = S before position
/// c * chunk. With hsIn, S restarts from hsIn[b, c, h] at each chunk's
/// first position (each chunk's outputs from given states). q may be null
/// when o is; o, ht and hs may be null.
void glaForward(const GlaSizes &n, const double *q, const double *k,
                const double *v, const double *g, const double *h0,
                const double *hsIn, double scale, double *o, double *ht,
                double *hs);

/// chunk_gla_cumsum's gc [B, T, H, K]: the sum of g over the rows up to t
/// of t's chunk of n.chunk rows.
void glaChunkCumsum(const GlaSizes &n, const double *g, double *gc);

/// chunk_gla_intra's scores: a[b, t, h, j] = sum_d q[t, d] k[j', d]
/// exp(gc[t, d] - gc[j', d]) for j' = (t / chunk) * chunk + j <= t, else 0;
/// gc glaChunkCumsum's. a is [B, T, H, chunk].
void glaIntraScores(const GlaSizes &n, const double *q, const double *k,
                    const double *gc, double *a);

/// chunk_gla_bwd_da's score gradients [B, T, H, chunk]: da[b, t, h, j] =
/// scale dout[t] . v[t0 + j] for t0 + j <= t, t0 = t's chunk start, else 0.
void glaChunkScoreGrads(const GlaSizes &n, const double *v, const double *dout,
                        double scale, double *da);

/// chunk_gla_bwd_dqk_intra's intra-chunk gradients [B, T, H, K] from the
/// lower triangle of da: dqi[i] = sum_{j <= i} da[i, j] k_j exp(gc_i -
/// gc_j), dki[j] = sum_{i >= j} da[i, j] q_i exp(gc_i - gc_j), i and j in
/// one chunk.
void glaIntraGrads(const GlaSizes &n, const double *q, const double *k,
                   const double *gc, const double *da, double *dqi,
                   double *dki);

/// The gradients of glaForward's L = sum(o dout) + sum(ht dht) (dht null:
/// 0) through its adjoint: with Ga_t = dL/dS_t through positions after t
/// (dht at t = T - 1) and G_t = Ga_t + scale q_t^T dout_t,
///   dq_t = scale dout_t S_t^T, dk_t = v_t G_t^T, dv_t = k_t G_t,
///   dg_t = exp(g_t) o rowsum(G_t o S_{t-1}), Ga_{t-1} = diag(exp(g_t)) G_t,
/// dh0 = Ga_{-1} and dhs[b, c, h] = Ga at chunk c's last position. With
/// dhsIn, Ga restarts from dhsIn[b, c, h] there; with hsIn, S as in
/// glaForward. h0, hsIn, dht and dhsIn may be null, the outputs not.
void glaBackward(const GlaSizes &n, const double *q, const double *k,
                 const double *v, const double *g, const double *dout,
                 const double *h0, const double *hsIn, const double *dht,
                 const double *dhsIn, double scale, double *dq, double *dk,
                 double *dv, double *dg, double *dh0, double *dhs);

/// Rotary embedding of x [B, T, H, D] with cos/sin [T, R/2], rotating the
/// first R features (R even, R <= D) and copying the rest. `interleaved`
/// pairs (2i, 2i+1); otherwise pairs (i, i + R/2) ("halves", as GPT-NeoX).
void rotary(const double *x, const double *cos, const double *sin, int64_t B,
            int64_t T, int64_t H, int64_t D, int64_t R, bool interleaved,
            double *out);

/// LayerNorm of each row of x [M, N]: mean, rstd = 1 / sqrt(biased variance
/// + eps), y = (x - mean) rstd w + b with w, b [N]. mean and rstd [M] are
/// nullable.
void layerNorm(const double *x, const double *w, const double *b, int64_t M,
               int64_t N, double eps, double *y, double *mean, double *rstd);

/// The gradients of layerNorm for the output gradient dy [M, N]: dx [M, N],
/// and the sums of dy xhat (dw) and dy (db) over the rows r with r % G == g
/// in row g of dwPart and dbPart [G, N] (G = 1: dw and db themselves).
void layerNormBackward(const double *x, const double *w, const double *dy,
                       int64_t M, int64_t N, double eps, int64_t G, double *dx,
                       double *dwPart, double *dbPart);

/// Computes the bundle's reference outputs by tensor name from the inputs
/// the kernel saw (`inputs[i]` is parameter i before the launch).
/// Whether `name` is one of the float64 references the runtime ships.
/// c[M, N] = a[M, K] @ b[K, N].
void matmul(const double *a, const double *b, int64_t M, int64_t N, int64_t K,
            double *c);

/// c = gelu(a @ b + bias) with the exact gelu(x) = x/2 (1 + erf(x/sqrt 2));
/// bias is [N].
void matmulBiasGelu(const double *a, const double *b, const double *bias,
                    int64_t M, int64_t N, int64_t K, double *c);

/// Per row r of logits [R, V]: lse[r] = log sum_v exp(logits[r, v]) and
/// loss[r] = lse[r] - logits[r, target[r]]; a negative target (ignore_index)
/// gives loss 0, and one past V picks 0 (as the kernel's masked load does).
void crossEntropy(const double *logits, const int64_t *target, int64_t R,
                  int64_t V, double *loss, double *lse);

/// y[r, :] = x[r, :] / sqrt(mean(x[r, :]^2) + eps) * w.
void rmsNorm(const double *x, const double *w, int64_t R, int64_t C, double eps,
             double *y);

/// rmsNorm, and rstd[r] = 1 / sqrt(mean(x[r, :]^2) + eps) where rstd [R] is
/// not null.
void rmsNormForward(const double *x, const double *w, int64_t R, int64_t C,
                    double eps, double *y, double *rstd);

/// The gradients of rmsNorm for the output gradient dy [R, C]: dx [R, C] =
/// rstd (w dy - x rstd^2 mean(x w dy)) per row, and the sums of dy x rstd
/// over the rows r with r % G == g in row g of dwPart [G, C] (G = 1: dw).
void rmsNormBackward(const double *x, const double *w, const double *dy,
                     int64_t R, int64_t C, double eps, int64_t G, double *dx,
                     double *dwPart);

/// The gradient of crossEntropy's loss[r] times dloss[r] [R]:
/// dlogits[r, v] = (exp(logits[r, v] - lse[r]) - (v == target[r])) dloss[r],
/// and 0 in the rows whose target is negative.
void crossEntropyBackward(const double *logits, const int64_t *target,
                          const double *dloss, int64_t R, int64_t V,
                          double *dlogits);

bool isKnownReference(const std::string &name);

bool computeReference(const Bundle &bundle, const LaunchPlan &plan,
                      const std::vector<HostTensor> &inputs,
                      std::map<std::string, std::vector<double>> &outputs,
                      std::string &error);

struct Comparison {
  double relL2 = 0;
  double maxAbs = 0;
  int64_t nonFinite = 0; // NaN or Inf in the output where the ref is finite
  int64_t firstNonFinite = -1;
  double tolerance = 0;
  bool pass = false;
};

/// The relative-L2 tolerance for outputs of a kernel whose float tensors have
/// the given dtypes: the loosest of them (docs/runtime.md justifies the
/// values); 0 (exact) for integer-only kernels.
double toleranceFor(const std::vector<DType> &dtypes);

Comparison compare(const HostTensor &output, const std::vector<double> &ref,
                   double tolerance);

} // namespace tegula::rt

#endif // TEGULA_RUNTIME_REFERENCES_H
