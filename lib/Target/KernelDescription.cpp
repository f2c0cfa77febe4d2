//===- KernelDescription.cpp - KERNEL.json from a tile-level kernel -------===//

#include "tegula/Target/KernelDescription.h"

#include "Tile/TileDialect.h"
#include "Tile/TileOps.h"
#include "tegula/Runtime/Bundle.h"
#include "tegula/Runtime/References.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace tegula;
using namespace tegula::tile;
using nlohmann::json;

namespace {

/// The bundle's name of a dtype, or "" for one a bundle cannot carry.
std::string dtypeName(Type type) {
  if (type.isInteger(1))
    return "bool";
  if (type.isInteger(32))
    return "i32";
  if (type.isInteger(64))
    return "i64";
  if (type.isF16())
    return "f16";
  if (type.isBF16())
    return "bf16";
  if (type.isF32())
    return "f32";
  return "";
}

/// The tensor parameters that take strides at launch: those a stride
/// argument names.
llvm::StringSet<> stridedTensors(func::FuncOp func) {
  llvm::StringSet<> names;
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    if (auto of = func.getArgAttrOfType<StringAttr>(
            i, TileDialect::kStrideOfAttrName))
      names.insert(of.getValue());
  return names;
}

json attrToJson(Attribute attr) {
  if (auto integer = dyn_cast<IntegerAttr>(attr))
    return integer.getType().isInteger(1) ? json(integer.getInt() != 0)
                                          : json(integer.getInt());
  if (auto boolean = dyn_cast<BoolAttr>(attr))
    return boolean.getValue();
  if (auto string = dyn_cast<StringAttr>(attr))
    return string.getValue().str();
  return nullptr;
}

json strings(Attribute attr) {
  json list = json::array();
  if (auto array = dyn_cast_or_null<ArrayAttr>(attr))
    for (Attribute entry : array)
      if (auto s = dyn_cast<StringAttr>(entry))
        list.push_back(s.getValue().str());
  return list;
}

} // namespace

std::string target::defaultReference(llvm::StringRef kernelName) {
  return rt::isKnownReference(kernelName.str()) ? kernelName.str() : "";
}

std::optional<json> target::describeKernel(func::FuncOp func,
                                           const std::string &reference,
                                           std::string &error) {
  FailureOr<TargetInfo> targetInfo = getTarget(func);
  if (failed(targetInfo)) {
    error = "the module names an unknown target";
    return std::nullopt;
  }
  std::string name = func.getSymName().str();
  json kernel;
  kernel["kernel"] = name;
  kernel["entry"] = name;
  kernel["target"] = targetInfo->chip.str();
  int64_t warps = 4;
  if (auto attr = func->getAttrOfType<IntegerAttr>(TileDialect::kWarpsAttrName))
    warps = attr.getInt();
  kernel["threads"] = 32 * warps;
  kernel["shared_bytes"] = 0;
  json templ = json::object();
  if (auto dict =
          func->getAttrOfType<DictionaryAttr>(TileDialect::kTemplateAttrName))
    for (NamedAttribute entry : dict)
      templ[entry.getName().str()] = attrToJson(entry.getValue());
  kernel["template"] = templ;

  json params = json::array(), sizeVars = json::array();
  llvm::StringSet<> strided = stridedTensors(func);
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    Type type = func.getArgument(i).getType();
    std::string where = "kernel '" + name + "' argument " + std::to_string(i);
    if (auto sizeVar = func.getArgAttrOfType<StringAttr>(
            i, TileDialect::kSizeVarAttrName)) {
      if (!type.isInteger(32)) {
        error = where + ": a size variable must be i32";
        return std::nullopt;
      }
      sizeVars.push_back(sizeVar.getValue().str());
      continue;
    }
    // A strided tensor's strides follow the size variables; the tensor's
    // "strided" says they are there.
    if (func.getArgAttr(i, TileDialect::kStrideOfAttrName)) {
      if (!type.isInteger(64)) {
        error = where + ": a stride must be i64";
        return std::nullopt;
      }
      continue;
    }
    json param;
    auto argName =
        func.getArgAttrOfType<StringAttr>(i, TileDialect::kArgNameAttrName);
    param["name"] = argName ? argName.getValue().str() : "arg" + std::to_string(i);
    if (auto ptr = dyn_cast<PtrType>(type)) {
      std::string dtype = dtypeName(ptr.getElementType());
      auto dims =
          func.getArgAttrOfType<ArrayAttr>(i, TileDialect::kArgDimsAttrName);
      if (dtype.empty() || !dims) {
        error = where + " ('" + param["name"].get<std::string>() +
                "'): a tensor argument needs a tile.dims attribute and an "
                "f16, bf16, f32, i32, i64 or i1 element type";
        return std::nullopt;
      }
      param["kind"] = "tensor";
      param["dtype"] = dtype;
      // Size variables by name, fixed dims as numbers (tools.md).
      json jsonDims = json::array();
      for (Attribute dim : dims)
        jsonDims.push_back(attrToJson(dim));
      param["dims"] = jsonDims;
      auto access =
          func.getArgAttrOfType<StringAttr>(i, TileDialect::kArgAccessAttrName);
      param["access"] = access ? access.getValue().str() : "readwrite";
      if (strided.contains(param["name"].get<std::string>()))
        param["strided"] = true;
    } else {
      std::string dtype = dtypeName(type);
      if (dtype.empty() || dtype == "f16" || dtype == "bf16") {
        error = where + " ('" + param["name"].get<std::string>() +
                "'): a scalar argument must be i32, i64, f32 or i1";
        return std::nullopt;
      }
      param["kind"] = "scalar";
      param["dtype"] = dtype;
    }
    params.push_back(param);
  }
  kernel["params"] = params;
  kernel["size_vars"] = sizeVars;
  json grid = strings(func->getAttr(TileDialect::kGridAttrName));
  while (grid.size() < 3)
    grid.push_back("1");
  kernel["grid"] = grid;
  kernel["requires"] = strings(func->getAttr(TileDialect::kRequiresAttrName));
  for (auto [key, attrName] : {std::pair{"flops", TileDialect::kFlopsAttrName},
                               std::pair{"bytes", TileDialect::kBytesAttrName}})
    if (auto value = func->getAttrOfType<StringAttr>(attrName))
      kernel[key] = value.getValue().str();
    else
      kernel[key] = nullptr;
  if (!reference.empty()) {
    if (reference.front() == '{') {
      // The runtime's parser of user JSON: bounded nesting, checked numbers.
      json parsed;
      std::string why;
      if (!rt::parseUserJson(reference, parsed, why)) {
        error = "--reference: '" + reference + "' is not valid JSON";
        return std::nullopt;
      }
      kernel["reference"] = parsed;
    } else {
      kernel["reference"] = reference;
    }
  }
  return kernel;
}
