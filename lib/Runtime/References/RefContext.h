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

  /// Whether dim `da` of tensor `a` equals dim `db` of tensor `b`.
  bool same(int a, size_t da, int b, size_t db) {
    if (shape(a)[da] == shape(b)[db])
      return true;
    return fail("tensors '" + param(a) + "' " + formatShape(shape(a)) +
                " and '" + param(b) + "' " + formatShape(shape(b)) +
                " do not fit together");
  }
};

/// "attention_bwd" (References/AttentionBackward.cpp): whichever of delta,
/// dq, dk, dv the kernel writes.
bool attentionBackwardRef(RefContext &c,
                          std::map<std::string, std::vector<double>> &outputs);

/// kernels/layer_norm.tile's references (References/LayerNorm.cpp).
bool layerNormForwardRef(RefContext &c,
                         std::map<std::string, std::vector<double>> &outputs);
bool layerNormBackwardRef(RefContext &c,
                          std::map<std::string, std::vector<double>> &outputs);
bool layerNormDwDbRef(RefContext &c,
                      std::map<std::string, std::vector<double>> &outputs);

/// The inputs the backward references need from the forward, derived in
/// float64 into `host` where the kernel reads them and no --in file in
/// `fromFiles` gives them: attention_bwd's o, lse and delta
/// (References/AttentionBackward.cpp), layer_norm_bwd_dx's mean and rstd.
bool deriveAttentionBackwardInputs(RefContext &c, std::vector<HostTensor> &host,
                                   const std::set<std::string> &fromFiles);
bool deriveLayerNormInputs(RefContext &c, std::vector<HostTensor> &host,
                           const std::set<std::string> &fromFiles);

} // namespace tegula::rt

#endif // TEGULA_LIB_RUNTIME_REFERENCES_REFCONTEXT_H
