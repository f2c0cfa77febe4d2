//===- Reference.cpp - Choosing a bundle's reference; comparing outputs ---===//
//
// The bundle's "reference" object names the reference and may map its roles
// to parameter names and set options; unset options fall back to the
// template parameters (CAUSAL, INTERLEAVED) and then to defaults.
//
//===----------------------------------------------------------------------===//

#include "References/RefContext.h"

#include <algorithm>
#include <cmath>

namespace tegula::rt {

using nlohmann::json;

namespace {

bool linearAttentionRef(RefContext &c,
                        std::map<std::string, std::vector<double>> &outputs) {
  int q = c.tensor("q", 4), k = c.tensor("k", 4), v = c.tensor("v", 4),
      o = c.tensor("o", 4);
  if (q < 0 || k < 0 || v < 0 || o < 0)
    return false;
  for (size_t d : {0, 1, 2})
    if (!c.same(q, d, k, d) || !c.same(q, d, v, d) || !c.same(q, d, o, d))
      return false;
  if (!c.same(q, 3, k, 3) || !c.same(v, 3, o, 3))
    return false;
  const auto &qs = c.shape(q), &vs = c.shape(v);
  double scale;
  if (!c.scale(qs[3], scale))
    return false;
  std::vector<double> out(size_t(qs[0] * qs[1] * qs[2] * vs[3]));
  std::vector<double> qv = c.values(q), kv = c.values(k), vv = c.values(v);
  linearAttention(qv.data(), kv.data(), vv.data(), qs[0], qs[1], qs[2], qs[3],
                  vs[3], scale, out.data());
  outputs[c.nameOf("o")] = std::move(out);
  return true;
}

bool rotaryRef(RefContext &c,
               std::map<std::string, std::vector<double>> &outputs) {
  int x = c.tensor("x", 4), cs = c.tensor("cos", 2), sn = c.tensor("sin", 2);
  if (x < 0 || cs < 0 || sn < 0)
    return false;
  const auto &xs = c.shape(x);
  if (c.shape(cs) != c.shape(sn) || c.shape(cs)[0] != xs[1] ||
      2 * c.shape(cs)[1] > xs[3])
    return c.fail("cos and sin must both be [T, R/2] with R <= D; x is " +
                  formatShape(xs) + ", cos " + formatShape(c.shape(cs)) +
                  ", sin " + formatShape(c.shape(sn)));
  // Out of place into 'out' if the kernel has it, else in place in x.
  int out = c.index("out");
  if (out < 0 && c.bundle.params[size_t(x)].access != Access::ReadWrite)
    return c.fail("the kernel has no '" + c.nameOf("out") + "' tensor and '" +
                  c.nameOf("x") + "' is not readwrite");
  if (out >= 0 && c.shape(out) != xs)
    return c.fail("'" + c.nameOf("out") + "' must have the shape of x");
  bool interleaved = c.flag("interleaved", "INTERLEAVED", false);
  std::vector<double> result(size_t(xs[0] * xs[1] * xs[2] * xs[3]));
  std::vector<double> xv = c.values(x), cv = c.values(cs), sv = c.values(sn);
  rotary(xv.data(), cv.data(), sv.data(), xs[0], xs[1], xs[2], xs[3],
         2 * c.shape(cs)[1], interleaved, result.data());
  outputs[out >= 0 ? c.nameOf("out") : c.nameOf("x")] = std::move(result);
  return true;
}
} // namespace

bool matmulRef(RefContext &c,
               std::map<std::string, std::vector<double>> &outputs) {
  int a = c.tensor("a", 2), b = c.tensor("b", 2), out = c.tensor("c", 2);
  if (a < 0 || b < 0 || out < 0)
    return false;
  if (!c.same(a, 1, b, 0) || !c.same(a, 0, out, 0) || !c.same(b, 1, out, 1))
    return false;
  const auto &as = c.shape(a), &bs = c.shape(b);
  std::vector<double> result(size_t(as[0] * bs[1]));
  std::vector<double> av = c.values(a), bv = c.values(b);
  matmul(av.data(), bv.data(), as[0], bs[1], as[1], result.data());
  outputs[c.nameOf("c")] = std::move(result);
  return true;
}

bool matmulBiasGeluRef(RefContext &c,
                       std::map<std::string, std::vector<double>> &outputs) {
  int a = c.tensor("a", 2), b = c.tensor("b", 2), bias = c.tensor("bias", 1),
      out = c.tensor("c", 2);
  if (a < 0 || b < 0 || bias < 0 || out < 0)
    return false;
  if (!c.same(a, 1, b, 0) || !c.same(b, 1, bias, 0) || !c.same(a, 0, out, 0) ||
      !c.same(b, 1, out, 1))
    return false;
  const auto &as = c.shape(a), &bs = c.shape(b);
  std::vector<double> result(size_t(as[0] * bs[1]));
  std::vector<double> av = c.values(a), bv = c.values(b),
                      biasv = c.values(bias);
  matmulBiasGelu(av.data(), bv.data(), biasv.data(), as[0], bs[1], as[1],
                 result.data());
  outputs[c.nameOf("c")] = std::move(result);
  return true;
}

bool crossEntropyRef(RefContext &c,
                     std::map<std::string, std::vector<double>> &outputs) {
  int logits = c.tensor("logits", 2), target = c.tensor("target", 1),
      loss = c.tensor("loss", 1), lse = c.tensor("lse", 1);
  if (logits < 0 || target < 0 || loss < 0 || lse < 0)
    return false;
  if (!c.same(logits, 0, target, 0) || !c.same(logits, 0, loss, 0) ||
      !c.same(logits, 0, lse, 0))
    return false;
  const auto &ls = c.shape(logits);
  std::vector<double> x = c.values(logits), t = c.values(target);
  std::vector<int64_t> targets(t.begin(), t.end());
  std::vector<double> lossv(static_cast<size_t>(ls[0])),
      lsev(static_cast<size_t>(ls[0]));
  crossEntropy(x.data(), targets.data(), ls[0], ls[1], lossv.data(),
               lsev.data());
  outputs[c.nameOf("loss")] = std::move(lossv);
  outputs[c.nameOf("lse")] = std::move(lsev);
  return true;
}

bool rmsNormRef(RefContext &c,
                std::map<std::string, std::vector<double>> &outputs) {
  int x = c.tensor("x", 2), w = c.tensor("w", 1), y = c.tensor("y", 2);
  if (x < 0 || w < 0 || y < 0)
    return false;
  if (!c.same(x, 1, w, 0) || !c.same(x, 0, y, 0) || !c.same(x, 1, y, 1))
    return false;
  double eps = 1e-6;
  for (size_t i = 0; i < c.bundle.params.size(); ++i)
    if (c.bundle.params[i].name == "eps" && !c.bundle.params[i].isTensor)
      eps = c.plan.scalars[i].asDouble();
  const auto &xs = c.shape(x);
  std::vector<double> result(size_t(xs[0] * xs[1]));
  std::vector<double> xv = c.values(x), wv = c.values(w);
  rmsNorm(xv.data(), wv.data(), xs[0], xs[1], eps, result.data());
  outputs[c.nameOf("y")] = std::move(result);
  return true;
}

namespace {
using ReferenceFn = bool (*)(RefContext &,
                             std::map<std::string, std::vector<double>> &);

/// Every reference by name, in the order errors list them. The attention
/// family (no function here) binds its own tensors (References/Attention.cpp).
const std::pair<const char *, ReferenceFn> kReferences[] = {
    {"attention_fwd", nullptr},
    {"attention_gqa", nullptr},
    {"attention_split", nullptr},
    {"attention_combine", nullptr},
    {"attention_varlen", nullptr},
    {"attention_paged", nullptr},
    {"attention_paged_split", nullptr},
    {"attention_bwd", attentionBackwardRef},
    {"attention_varlen_fwd", varlenForwardRef},
    {"attention_varlen_bwd_preprocess", varlenBackwardRef},
    {"attention_varlen_bwd_dkdv", varlenBackwardRef},
    {"attention_varlen_bwd_dq", varlenBackwardRef},
    {"linear_attention", linearAttentionRef},
    {"rotary", rotaryRef},
    {"matmul", matmulRef},
    {"matmul_bias_gelu", matmulBiasGeluRef},
    {"cross_entropy", crossEntropyRef},
    {"cross_entropy_bwd", crossEntropyBackwardRef},
    {"rmsnorm", rmsNormRef},
    {"rmsnorm_fwd", rmsNormForwardRef},
    {"rmsnorm_bwd_dx", rmsNormBackwardRef},
    {"rmsnorm_bwd_dw", rmsNormDwRef},
    {"layer_norm_fwd", layerNormForwardRef},
    {"layer_norm_bwd_dx", layerNormBackwardRef},
    {"layer_norm_bwd_dwdb", layerNormDwDbRef},
    {"chunk_gla_fwd", glaForwardRef},
    {"chunk_gla_states", glaForwardRef},
    {"chunk_gla_cumsum", glaCumsumRef},
    {"chunk_gla_intra", glaIntraRef},
    {"chunk_gla_output", glaOutputRef},
    {"recurrent_gla_fwd", glaForwardRef},
    {"chunk_gla_bwd_dh", glaBackwardRef},
    {"chunk_gla_bwd_da", glaScoreGradsRef},
    {"chunk_gla_bwd_dqk_intra", glaIntraGradsRef},
    {"chunk_gla_bwd_dqkg", glaDqkgRef},
    {"chunk_gla_bwd_dv", glaDvRef},
    {"chunk_linear_states", linearChunkForwardRef},
    {"chunk_linear_output", linearChunkForwardRef},
    {"chunk_linear_bwd_dh", linearChunkBackwardRef},
    {"chunk_linear_bwd_dqk", linearChunkBackwardRef},
    {"chunk_linear_bwd_dv", linearChunkBackwardRef},
    {"recurrent_linear_fwd", linearChunkForwardRef},
};

const std::pair<const char *, ReferenceFn> *
findReference(const std::string &name) {
  for (const auto &entry : kReferences)
    if (name == entry.first)
      return &entry;
  return nullptr;
}

/// "a, b, ... or z": the names of kReferences.
std::string referenceNames() {
  std::string names;
  size_t count = std::size(kReferences);
  for (size_t i = 0; i < count; ++i)
    names += std::string(i == 0           ? ""
                         : i + 1 == count ? " or "
                                          : ", ") +
             kReferences[i].first;
  return names;
}
} // namespace

bool isKnownReference(const std::string &name) {
  return findReference(name) != nullptr;
}

bool computeReference(const Bundle &bundle, const LaunchPlan &plan,
                      const std::vector<HostTensor> &inputs,
                      std::map<std::string, std::vector<double>> &outputs,
                      std::string &error) {
  if (bundle.reference.is_null()) {
    error = "the bundle names no reference; pass --ref NAME=FILE.npy";
    return false;
  }
  RefContext c{bundle, plan, inputs, bundle.reference, ""};
  std::string name = bundle.reference["name"].get<std::string>();
  const auto *entry = findReference(name);
  if (entry && !entry->second)
    return attentionReference(bundle, plan, inputs, bundle.reference, outputs,
                              error);
  bool ok =
      entry ? entry->second(c, outputs)
            : c.fail("unknown reference (expected " + referenceNames() + ")");
  if (!ok)
    error = c.error;
  return ok;
}

bool deriveReferenceInputs(const Bundle &bundle, const LaunchPlan &plan,
                           std::vector<HostTensor> &host,
                           const std::set<std::string> &fromFiles,
                           std::string &error) {
  if (bundle.reference.is_null())
    return true;
  RefContext c{bundle, plan, host, bundle.reference, ""};
  std::string name = bundle.reference.value("name", std::string());
  bool ok = true;
  if (name == "attention_bwd")
    ok = deriveAttentionBackwardInputs(c, host, fromFiles);
  else if (const auto *entry = findReference(name);
           entry && entry->second == varlenBackwardRef)
    ok = deriveVarlenInputs(c, host, fromFiles);
  else if (name == "layer_norm_bwd_dx")
    ok = deriveLayerNormInputs(c, host, fromFiles);
  else if (name == "rmsnorm_bwd_dx")
    ok = deriveRmsNormInputs(c, host, fromFiles);
  else if (name == "cross_entropy_bwd")
    ok = deriveCrossEntropyInputs(c, host, fromFiles);
  else if (const auto *entry = findReference(name);
           entry &&
           (entry->second == glaForwardRef || entry->second == glaBackwardRef ||
            entry->second == glaIntraRef || entry->second == glaOutputRef ||
            entry->second == glaCumsumRef ||
            entry->second == glaIntraGradsRef || entry->second == glaDqkgRef ||
            entry->second == glaDvRef))
    ok = deriveGlaInputs(c, host, fromFiles);
  if (!ok)
    error = c.error;
  return ok;
}

double toleranceFor(const std::vector<DType> &dtypes) {
  double tol = 0;
  for (DType t : dtypes) {
    if (t == DType::BF16)
      tol = std::max(tol, 1e-2);
    else if (t == DType::F16)
      tol = std::max(tol, 2e-3);
    else if (t == DType::F32)
      tol = std::max(tol, 1e-5);
  }
  return tol;
}

Comparison compare(const HostTensor &output, const std::vector<double> &ref,
                   double tolerance) {
  Comparison c;
  c.tolerance = tolerance;
  double errSq = 0, refSq = 0;
  for (int64_t i = 0; i < output.numel(); ++i) {
    double o = output.get(i), r = ref[size_t(i)];
    if (!std::isfinite(o) || !std::isfinite(r)) {
      // Matching infinities or NaNs in both are agreement.
      if (o == r || (std::isnan(o) && std::isnan(r)))
        continue;
      if (c.nonFinite++ == 0)
        c.firstNonFinite = i;
      continue;
    }
    errSq += (o - r) * (o - r);
    refSq += r * r;
    c.maxAbs = std::max(c.maxAbs, std::fabs(o - r));
  }
  // An all-zero reference falls back to the absolute L2 error.
  c.relL2 = refSq > 0 ? std::sqrt(errSq / refSq) : std::sqrt(errSq);
  c.pass = c.nonFinite == 0 && c.relL2 <= tolerance;
  return c;
}

} // namespace tegula::rt
