//===- RefContext.h - A bundle's tensors and options for references -*- C++
//-*-===//
//
// What every float64 reference reads from a bundle: its tensors by role
// (options.tensors maps a role to a parameter name), its scalars, and its
// options, which fall back to template parameters (CAUSAL, INTERLEAVED) and
// then to defaults. Used by Reference.cpp and References/*.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef TEGULA_LIB_RUNTIME_REFERENCES_REFCONTEXT_H
#define TEGULA_LIB_RUNTIME_REFERENCES_REFCONTEXT_H

#include "tegula/Runtime/References.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace tegula::rt {

struct RefContext {
  const Bundle &bundle;
  const LaunchPlan &plan;
  const std::vector<HostTensor> &inputs;
  const nlohmann::json &options;
  std::string error;

  bool fail(const std::string &message) {
    if (error.empty())
      error = "reference '" + options.value("name", std::string()) +
              "': " + message;
    return false;
  }

  std::string nameOf(const std::string &role) const {
    auto map = options.find("tensors");
    if (map != options.end() && map->is_object() && map->contains(role) &&
        (*map)[role].is_string())
      return (*map)[role].get<std::string>();
    return role;
  }

  int index(const std::string &role) const {
    std::string name = nameOf(role);
    for (size_t i = 0; i < bundle.params.size(); ++i)
      if (bundle.params[i].name == name && bundle.params[i].isTensor)
        return int(i);
    return -1;
  }

  int tensor(const std::string &role, size_t rank) {
    int i = index(role);
    if (i < 0)
      return fail("the kernel has no tensor parameter '" + nameOf(role) +
                  "' (set \"tensors\": {\"" + role + "\": NAME})"),
             -1;
    if (plan.shapes[size_t(i)].size() != rank)
      return fail("tensor '" + nameOf(role) + "' must have rank " +
                  std::to_string(rank)),
             -1;
    return i;
  }

  const std::vector<int64_t> &shape(int i) const {
    return plan.shapes[size_t(i)];
  }
  std::vector<double> values(int i) const {
    return inputs[size_t(i)].toDoubles();
  }
  const std::string &param(int i) const {
    return bundle.params[size_t(i)].name;
  }

  bool flag(const std::string &key, const std::string &templateKey,
            bool fallback) const {
    if (auto it = options.find(key); it != options.end() && it->is_boolean())
      return it->get<bool>();
    const nlohmann::json &t = bundle.templateParams;
    if (auto it = t.find(templateKey); it != t.end()) {
      if (it->is_boolean())
        return it->get<bool>();
      if (it->is_number_integer())
        return it->get<int64_t>() != 0;
    }
    return fallback;
  }

  /// The scalar parameter `name`, if the kernel has one.
  std::optional<double> scalar(const std::string &name) const {
    for (size_t i = 0; i < bundle.params.size(); ++i)
      if (bundle.params[i].name == name && !bundle.params[i].isTensor)
        return plan.scalars[i].asDouble();
    return std::nullopt;
  }

  /// options.scale: a number or a scalar's name; else the scalar 'scale';
  /// else 1/sqrt(D).
  bool scale(int64_t D, double &out) {
    std::string name = "scale";
    if (auto it = options.find("scale"); it != options.end()) {
      if (it->is_number()) {
        out = it->get<double>();
        return true;
      }
      if (!it->is_string())
        return fail("'scale' must be a number or a scalar parameter's name");
      name = it->get<std::string>();
    }
    if (auto value = scalar(name)) {
      out = *value;
      return true;
    }
    if (options.contains("scale"))
      return fail("no scalar parameter '" + name + "'");
    out = 1 / std::sqrt(double(D));
    return true;
  }

  /// Whether tensor `i` exists and the kernel writes it (an output).
  bool isOutput(int i) const {
    return i >= 0 && bundle.params[size_t(i)].access != Access::Read;
  }

  /// options.eps if a number, else the scalar 'eps', else `fallback`.
  double eps(double fallback) const {
    if (auto it = options.find("eps"); it != options.end() && it->is_number())
      return it->get<double>();
    return scalar("eps").value_or(fallback);
  }

  /// A tensor the kernel reads that must be what the forward computed
  /// (layer_norm_bwd_dx's mean and rstd, rmsnorm_bwd_dx's rstd,
  /// cross_entropy_bwd's lse): refused when an element is more than 1e-4
  /// from `exact` (relative to max(1, |exact|)), as a forward kernel's
  /// f32 statistics are off by about 1e-6. `what` says what it should be
  /// ("mean of x"). Absent tensors and outputs pass.
  bool checkForwardInput(int i, const std::vector<double> &exact,
                         const std::string &what) {
    if (i < 0 || isOutput(i))
      return true;
    std::vector<double> given = values(i);
    double worst = 0;
    for (size_t r = 0; r < given.size(); ++r)
      worst = std::max(worst, std::fabs(given[r] - exact[r]) /
                                  std::max(1.0, std::fabs(exact[r])));
    if (worst <= 1e-4)
      return true;
    return fail("input '" + param(i) + "' is not the forward's " + what +
                ": max relative error " + std::to_string(worst) +
                " > 1e-4 (leave it out and --check derives it)");
  }

  /// Writes `values` into the input tensor `i` for the kernel and the
  /// reference, unless it is absent, an output or given by an --in file.
  void derive(int i, const std::vector<double> &values,
              std::vector<HostTensor> &host,
              const std::set<std::string> &fromFiles) const {
    if (i < 0 || isOutput(i) || fromFiles.count(param(i)))
      return;
    for (size_t e = 0; e < values.size(); ++e)
      host[size_t(i)].set(int64_t(e), values[e]);
  }

  /// Whether dim `da` of tensor `a` equals dim `db` of tensor `b`.
  bool same(int a, size_t da, int b, size_t db) {
    if (shape(a)[da] == shape(b)[db])
      return true;
    return fail("tensors '" + param(a) + "' " + formatShape(shape(a)) +
                " and '" + param(b) + "' " + formatShape(shape(b)) +
                " do not fit together");
  }
};

/// The column sums of `rows` ([G, C] row-major): the reduction of the
/// per-group partials (dw_part, db_part) the norm backward kernels write.
inline std::vector<double> sumPartialRows(const std::vector<double> &rows,
                                          int64_t G, int64_t C) {
  std::vector<double> sums(size_t(C), 0.0);
  for (int64_t g = 0; g < G; ++g)
    for (int64_t col = 0; col < C; ++col)
      sums[size_t(col)] += rows[size_t(g * C + col)];
  return sums;
}

/// "attention_bwd" (References/AttentionBackward.cpp): whichever of delta,
/// dq, dk, dv the kernel writes.
bool attentionBackwardRef(RefContext &c,
                          std::map<std::string, std::vector<double>> &outputs);

/// kernels/attention_varlen.tile's attention_varlen_fwd and
/// attention_varlen_bwd.tile's kernels (References/VarlenAttention.cpp):
/// whichever of o, lse, delta, dq, dk, dv the kernel writes.
bool varlenForwardRef(RefContext &c,
                      std::map<std::string, std::vector<double>> &outputs);
bool varlenBackwardRef(RefContext &c,
                       std::map<std::string, std::vector<double>> &outputs);

/// kernels/layer_norm.tile's references (References/LayerNorm.cpp).
bool layerNormForwardRef(RefContext &c,
                         std::map<std::string, std::vector<double>> &outputs);
bool layerNormBackwardRef(RefContext &c,
                          std::map<std::string, std::vector<double>> &outputs);
bool layerNormDwDbRef(RefContext &c,
                      std::map<std::string, std::vector<double>> &outputs);

/// kernels/rmsnorm.tile's training references (References/RmsNorm.cpp).
bool rmsNormForwardRef(RefContext &c,
                       std::map<std::string, std::vector<double>> &outputs);
bool rmsNormBackwardRef(RefContext &c,
                        std::map<std::string, std::vector<double>> &outputs);
bool rmsNormDwRef(RefContext &c,
                  std::map<std::string, std::vector<double>> &outputs);

/// cross_entropy_bwd's reference (References/CrossEntropy.cpp).
bool crossEntropyBackwardRef(
    RefContext &c, std::map<std::string, std::vector<double>> &outputs);

/// kernels/gla.tile's forward kernels and gla_bwd.tile's backward ones
/// (References/Gla.cpp): whichever outputs the kernel writes.
bool glaForwardRef(RefContext &c,
                   std::map<std::string, std::vector<double>> &outputs);
bool glaBackwardRef(RefContext &c,
                    std::map<std::string, std::vector<double>> &outputs);
/// The same with every gate 0: kernels/linear_attention_chunked.tile's
/// chunk_linear_* kernels (no g tensor).
bool linearChunkForwardRef(RefContext &c,
                           std::map<std::string, std::vector<double>> &outputs);
bool linearChunkBackwardRef(
    RefContext &c, std::map<std::string, std::vector<double>> &outputs);
/// chunk_gla_intra's scores (glaIntraScores), and chunk_gla_output's o
/// from the scores and states it is given (exact for any).
bool glaIntraRef(RefContext &c,
                 std::map<std::string, std::vector<double>> &outputs);
bool glaOutputRef(RefContext &c,
                  std::map<std::string, std::vector<double>> &outputs);
/// chunk_gla_cumsum's chunk cumulative sums (glaChunkCumsum).
bool glaCumsumRef(RefContext &c,
                  std::map<std::string, std::vector<double>> &outputs);
/// options.chunk, else the template's CHUNK; 0 when neither is an integer.
int64_t glaChunkOf(const RefContext &c);
/// kernels/gla_bwd.tile's per-chunk launches (References/GlaBackward.cpp):
/// chunk_gla_bwd_da's da, chunk_gla_bwd_dqk_intra's dqi and dki,
/// chunk_gla_bwd_dqkg's dq, dk and dg, chunk_gla_bwd_dv's dv.
bool glaScoreGradsRef(RefContext &c,
                      std::map<std::string, std::vector<double>> &outputs);
bool glaIntraGradsRef(RefContext &c,
                      std::map<std::string, std::vector<double>> &outputs);
bool glaDqkgRef(RefContext &c,
                std::map<std::string, std::vector<double>> &outputs);
bool glaDvRef(RefContext &c,
              std::map<std::string, std::vector<double>> &outputs);
/// chunk_gla_bwd_dqkg's dqi and dki where it reads them and no --in file
/// gives them: chunk_gla_bwd_dqk_intra's, exact, from q, k, gc, v, do.
bool deriveGlaIntraGrads(RefContext &c, std::vector<HostTensor> &host,
                         const std::set<std::string> &fromFiles);

/// The inputs the backward references need from the forward, derived in
/// float64 into `host` where the kernel reads them and no --in file in
/// `fromFiles` gives them: attention_bwd's o, lse and delta
/// (References/AttentionBackward.cpp), layer_norm_bwd_dx's mean and rstd,
/// rmsnorm_bwd_dx's rstd, cross_entropy_bwd's lse; the GLA references'
/// gates g (forget gates in (0, 1): logsigmoid of the random values).
bool deriveAttentionBackwardInputs(RefContext &c, std::vector<HostTensor> &host,
                                   const std::set<std::string> &fromFiles);
/// The varlen backward's lse and delta (References/VarlenAttention.cpp).
bool deriveVarlenInputs(RefContext &c, std::vector<HostTensor> &host,
                        const std::set<std::string> &fromFiles);
bool deriveLayerNormInputs(RefContext &c, std::vector<HostTensor> &host,
                           const std::set<std::string> &fromFiles);
bool deriveRmsNormInputs(RefContext &c, std::vector<HostTensor> &host,
                         const std::set<std::string> &fromFiles);
bool deriveCrossEntropyInputs(RefContext &c, std::vector<HostTensor> &host,
                              const std::set<std::string> &fromFiles);
bool deriveGlaInputs(RefContext &c, std::vector<HostTensor> &host,
                     const std::set<std::string> &fromFiles);

} // namespace tegula::rt

#endif // TEGULA_LIB_RUNTIME_REFERENCES_REFCONTEXT_H
