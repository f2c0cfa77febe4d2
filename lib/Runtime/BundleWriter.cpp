//===- BundleWriter.cpp - KERNEL.json from a typed bundle -----------------===//
//
// The one writer of KERNEL.json, beside its one reader (Bundle.cpp): tilec
// fills a Bundle and writes it here, and what it writes reads back into the
// same Bundle (RuntimeUnitTests.cpp checks every field).
//
//===----------------------------------------------------------------------===//

#include "tegula/Runtime/Bundle.h"

namespace tegula::rt {

using nlohmann::json;

namespace {
json texts(const std::vector<Expr> &exprs) {
  json list = json::array();
  for (const Expr &e : exprs)
    list.push_back(e.text());
  return list;
}

/// A tensor dim: fixed sizes as numbers, expressions of size variables as
/// strings (tools.md).
json dimJson(const Expr &dim) {
  int64_t value;
  if (dim.isLiteral(&value))
    return value;
  return dim.text();
}

json paramJson(const Param &param) {
  json p = {{"name", param.name},
            {"kind", param.isTensor ? "tensor" : "scalar"},
            {"dtype", dtypeName(param.dtype)}};
  if (!param.isTensor)
    return p;
  p["access"] = accessName(param.access);
  json dims = json::array();
  for (const Expr &dim : param.dims)
    dims.push_back(dimJson(dim));
  p["dims"] = dims;
  if (param.strided)
    p["strided"] = true;
  return p;
}

/// The file fields of a build: its cubin and, with `stats`, what ptxas
/// said of it.
template <typename Code>
void writeImage(const Code &code, bool stats, json &obj) {
  if (!code.cubinPath.empty())
    obj["cubin"] = code.cubinPath;
  if (stats && code.registers)
    obj["registers"] = *code.registers;
  if (stats && code.spillBytes)
    obj["spill_bytes"] = *code.spillBytes;
  if (stats && code.spillLoadBytes)
    obj["spill_load_bytes"] = *code.spillLoadBytes;
}

json variantJson(const Variant &variant) {
  json v = {{"name", variant.name},
            {"ptx", variant.ptxPath},
            {"when", texts(variant.when)},
            {"shared_bytes", variant.sharedBytes}};
  writeImage(variant, /*stats=*/true, v);
  return v;
}

/// What a config's code is: its launch shape, variants and images.
void writeCode(const Config &config, bool stats, json &obj) {
  obj["threads"] = config.threads;
  obj["shared_bytes"] = config.sharedBytes;
  obj["grid"] =
      texts(std::vector<Expr>(config.grid.begin(), config.grid.end()));
  writeImage(config, stats, obj);
  if (config.variants.empty())
    return;
  json variants = json::array();
  for (const Variant &variant : config.variants)
    variants.push_back(variantJson(variant));
  obj["variants"] = variants;
}

/// The reference as given: a lone name as a string, else the object.
json referenceJson(const json &reference) {
  if (reference.is_object() && reference.size() == 1 &&
      reference.contains("name") && reference["name"].is_string())
    return reference["name"];
  return reference;
}

json optionalText(const std::optional<Expr> &expr) {
  return expr ? json(expr->text()) : json(nullptr);
}
} // namespace

json bundleToJson(const Bundle &bundle) {
  json root = {{"kernel", bundle.kernel},
               {"entry", bundle.entry},
               {"target", bundle.target},
               {"template", bundle.templateParams},
               {"size_vars", bundle.sizeVars},
               {"requires", texts(bundle.requires_)},
               {"flops", optionalText(bundle.flops)},
               {"bytes", optionalText(bundle.bytes)}};
  json params = json::array();
  for (const Param &param : bundle.params)
    params.push_back(paramJson(param));
  root["params"] = params;
  if (!bundle.reference.is_null())
    root["reference"] = referenceJson(bundle.reference);
  if (!bundle.tuningPath.empty())
    root["tuning"] = bundle.tuningPath;
  // The top level describes configs[0] for launchers that ignore "configs";
  // the ptxas figures are the list's.
  if (!bundle.configs.empty())
    writeCode(bundle.configs[0], /*stats=*/!bundle.listsConfigs, root);
  if (!bundle.listsConfigs)
    return root;
  json configs = json::array();
  for (const Config &config : bundle.configs) {
    json item = {{"name", config.name},
                 {"ptx", config.ptxPath},
                 {"defines", config.defines}};
    writeCode(config, /*stats=*/true, item);
    configs.push_back(item);
  }
  root["configs"] = configs;
  return root;
}

std::string writeBundleJson(const Bundle &bundle) {
  // Strings of hand-written IR need not be UTF-8; nlohmann would throw.
  return bundleToJson(bundle).dump(2, ' ', false,
                                   json::error_handler_t::replace) +
         "\n";
}

} // namespace tegula::rt
