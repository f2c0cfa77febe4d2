//===- KernelDescription.cpp - KERNEL.json from a tile-level kernel -------===//

#include "tegula/Target/KernelDescription.h"

#include "Tile/TileDialect.h"
#include "Tile/TileOps.h"
#include "tegula/Runtime/Bundle.h"
#include "tegula/Runtime/References.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/StringSet.h"

#include <tuple>

using namespace mlir;
using namespace tegula;
using namespace tegula::tile;
using nlohmann::json;

namespace {

/// The bundle's dtype of `type`, or none for one a bundle cannot carry.
std::optional<rt::DType> bundleDType(Type type) {
  if (type.isInteger(1))
    return rt::DType::Bool;
  if (type.isInteger(32))
    return rt::DType::I32;
  if (type.isInteger(64))
    return rt::DType::I64;
  if (type.isF16())
    return rt::DType::F16;
  if (type.isBF16())
    return rt::DType::BF16;
  if (type.isF32())
    return rt::DType::F32;
  return std::nullopt;
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

/// Parses the expressions a kernel's attributes hold; the first that does
/// not parse (hand-written IR) names where it is in `error`.
struct ExprReader {
  std::string kernel;
  std::string &error;

  bool read(llvm::StringRef text, const std::string &what, rt::Expr &out) {
    std::string why;
    if (rt::Expr::parse(text.str(), out, why))
      return true;
    error = "kernel '" + kernel + "': " + what + ": " + why;
    return false;
  }

  /// The strings of an array attribute, one expression each.
  bool readList(Attribute attr, const std::string &what,
                std::vector<rt::Expr> &out) {
    auto array = dyn_cast_or_null<ArrayAttr>(attr);
    if (!array)
      return true;
    for (Attribute entry : array) {
      auto text = dyn_cast<StringAttr>(entry);
      if (!text)
        continue;
      rt::Expr e;
      if (!read(text.getValue(), what + "[" + std::to_string(out.size()) + "]",
                e))
        return false;
      out.push_back(std::move(e));
    }
    return true;
  }
};

/// The bundle parameter of argument `i` of `func` (neither a size variable
/// nor a stride), or none and `error`.
std::optional<rt::Param> describeParam(func::FuncOp func, unsigned i,
                                       const llvm::StringSet<> &strided,
                                       ExprReader &exprs, std::string &error) {
  Type type = func.getArgument(i).getType();
  rt::Param param;
  auto argName =
      func.getArgAttrOfType<StringAttr>(i, TileDialect::kArgNameAttrName);
  param.name = argName ? argName.getValue().str() : "arg" + std::to_string(i);
  std::string where = "kernel '" + func.getSymName().str() + "' argument " +
                      std::to_string(i) + " ('" + param.name + "')";
  auto ptr = dyn_cast<PtrType>(type);
  if (!ptr) {
    std::optional<rt::DType> dtype = bundleDType(type);
    if (!dtype || *dtype == rt::DType::F16 || *dtype == rt::DType::BF16) {
      error = where + ": a scalar argument must be i32, i64, f32 or i1";
      return std::nullopt;
    }
    param.dtype = *dtype;
    return param;
  }
  std::optional<rt::DType> dtype = bundleDType(ptr.getElementType());
  auto dims =
      func.getArgAttrOfType<ArrayAttr>(i, TileDialect::kArgDimsAttrName);
  if (!dtype || !dims) {
    error = where + ": a tensor argument needs a tile.dims attribute and an "
                    "f16, bf16, f32, i32, i64 or i1 element type";
    return std::nullopt;
  }
  param.isTensor = true;
  param.dtype = *dtype;
  // Size variables by name, fixed dims as numbers (tools.md).
  for (Attribute dim : dims) {
    json value = attrToJson(dim);
    std::string text =
        value.is_string() ? value.get<std::string>() : value.dump();
    rt::Expr e;
    if (!exprs.read(text,
                    "parameter '" + param.name + "' dims[" +
                        std::to_string(param.dims.size()) + "]",
                    e))
      return std::nullopt;
    param.dims.push_back(std::move(e));
  }
  auto access =
      func.getArgAttrOfType<StringAttr>(i, TileDialect::kArgAccessAttrName);
  llvm::StringRef accessName = access ? access.getValue() : "readwrite";
  param.access = accessName == "read"    ? rt::Access::Read
                 : accessName == "write" ? rt::Access::Write
                                         : rt::Access::ReadWrite;
  param.strided = strided.contains(param.name);
  return param;
}

/// The parameters and size variables of `func`'s arguments, in order.
bool describeArguments(func::FuncOp func, ExprReader &exprs, rt::Bundle &bundle,
                       std::string &error) {
  llvm::StringSet<> strided = stridedTensors(func);
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    Type type = func.getArgument(i).getType();
    std::string where = "kernel '" + func.getSymName().str() + "' argument " +
                        std::to_string(i);
    if (auto sizeVar = func.getArgAttrOfType<StringAttr>(
            i, TileDialect::kSizeVarAttrName)) {
      if (!type.isInteger(32)) {
        error = where + ": a size variable must be i32";
        return false;
      }
      bundle.sizeVars.push_back(sizeVar.getValue().str());
      continue;
    }
    // A strided tensor's strides follow the size variables; the tensor's
    // "strided" says they are there.
    if (func.getArgAttr(i, TileDialect::kStrideOfAttrName)) {
      if (!type.isInteger(64)) {
        error = where + ": a stride must be i64";
        return false;
      }
      continue;
    }
    std::optional<rt::Param> param =
        describeParam(func, i, strided, exprs, error);
    if (!param)
      return false;
    bundle.params.push_back(std::move(*param));
  }
  return true;
}

/// The "reference" field: `reference` is a name, a JSON object or empty.
bool describeReference(const std::string &reference, rt::Bundle &bundle,
                       std::string &error) {
  if (reference.empty())
    return true;
  if (reference.front() != '{') {
    bundle.reference = json{{"name", reference}};
    return true;
  }
  // The runtime's parser of user JSON: bounded nesting, checked numbers.
  std::string why;
  if (!rt::parseUserJson(reference, bundle.reference, why)) {
    error = "--reference: '" + reference + "' is not valid JSON";
    return false;
  }
  return true;
}

} // namespace

std::string target::defaultReference(llvm::StringRef kernelName) {
  return rt::isKnownReference(kernelName.str()) ? kernelName.str() : "";
}

std::optional<rt::Bundle> target::describeKernel(func::FuncOp func,
                                                 const std::string &reference,
                                                 std::string &error) {
  FailureOr<TargetInfo> targetInfo = getTarget(func);
  if (failed(targetInfo)) {
    error = "the module names an unknown target";
    return std::nullopt;
  }
  rt::Bundle bundle;
  bundle.kernel = bundle.entry = func.getSymName().str();
  bundle.target = targetInfo->chip.str();
  rt::Config code;
  int64_t warps = 4;
  if (auto attr = func->getAttrOfType<IntegerAttr>(TileDialect::kWarpsAttrName))
    warps = attr.getInt();
  code.threads = 32 * warps;
  if (auto dict =
          func->getAttrOfType<DictionaryAttr>(TileDialect::kTemplateAttrName))
    for (NamedAttribute entry : dict)
      bundle.templateParams[entry.getName().str()] =
          attrToJson(entry.getValue());
  ExprReader exprs{bundle.kernel, error};
  if (!describeArguments(func, exprs, bundle, error))
    return std::nullopt;
  std::vector<rt::Expr> grid;
  if (!exprs.readList(func->getAttr(TileDialect::kGridAttrName), "grid", grid))
    return std::nullopt;
  // Fewer than three: the rest are 1.
  for (size_t d = 0; d < code.grid.size(); ++d)
    if (d < grid.size())
      code.grid[d] = grid[d];
    else
      exprs.read("1", "grid", code.grid[d]);
  if (!exprs.readList(func->getAttr(TileDialect::kRequiresAttrName), "requires",
                      bundle.requires_))
    return std::nullopt;
  for (auto [out, attrName, what] :
       {std::tuple{&bundle.flops, TileDialect::kFlopsAttrName, "flops"},
        std::tuple{&bundle.bytes, TileDialect::kBytesAttrName, "bytes"}})
    if (auto value = func->getAttrOfType<StringAttr>(attrName)) {
      rt::Expr e;
      if (!exprs.read(value.getValue(), what, e))
        return std::nullopt;
      *out = std::move(e);
    }
  bundle.configs.push_back(std::move(code));
  if (!describeReference(reference, bundle, error))
    return std::nullopt;
  return bundle;
}
