//===- Variants.cpp - Specialized builds a bundle carries -----------------===//

#include "tegula/Target/Variants.h"

#include "Tile/TileDialect.h"
#include "Tile/TileOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

#include <map>

using namespace mlir;
using namespace tegula;
using namespace tegula::tile;

namespace {
/// What the variants assume of each size variable: the launch checks it.
constexpr int64_t kVariantDivisor = 16;
/// The bytes a vector access or cp.async moves at most, and so the
/// alignment a unit-stride view's rows need.
constexpr int64_t kVectorBytes = 16;

/// A strided tensor parameter: its pointer argument and its strides'.
struct StridedParam {
  std::string name;
  unsigned pointer = 0;
  SmallVector<unsigned> strides;
  int64_t elementBytes = 1;
};

/// The strided tensors of `kernel`, in parameter order.
SmallVector<StridedParam> stridedParams(func::FuncOp kernel) {
  std::map<std::string, unsigned> pointers;
  for (unsigned i = 0; i < kernel.getNumArguments(); ++i)
    if (auto name = kernel.getArgAttrOfType<StringAttr>(
            i, TileDialect::kArgNameAttrName))
      pointers[name.getValue().str()] = i;
  SmallVector<StridedParam> params;
  for (unsigned i = 0; i < kernel.getNumArguments(); ++i) {
    auto of =
        kernel.getArgAttrOfType<StringAttr>(i, TileDialect::kStrideOfAttrName);
    if (!of)
      continue;
    if (params.empty() || params.back().name != of.getValue()) {
      StridedParam param;
      param.name = of.getValue().str();
      param.pointer = pointers.at(param.name);
      auto ptr = cast<PtrType>(kernel.getArgument(param.pointer).getType());
      param.elementBytes = getStoredBytes(ptr.getElementType());
      params.push_back(std::move(param));
    }
    params.back().strides.push_back(i);
  }
  return params;
}

/// Size variables not already known to be multiples of kVariantDivisor,
/// with the conditions that assume they are.
SmallVector<unsigned> sizeVarsToAssume(func::FuncOp kernel,
                                       std::vector<std::string> &when) {
  SmallVector<unsigned> assumed;
  for (unsigned i = 0; i < kernel.getNumArguments(); ++i) {
    auto sizeVar =
        kernel.getArgAttrOfType<StringAttr>(i, TileDialect::kSizeVarAttrName);
    if (!sizeVar)
      continue;
    auto known = kernel.getArgAttrOfType<IntegerAttr>(
        i, TileDialect::kDivisibilityAttrName);
    if (known && known.getInt() % kVariantDivisor == 0)
      continue;
    assumed.push_back(i);
    when.push_back(sizeVar.getValue().str() + " % " +
                   std::to_string(kVariantDivisor) + " == 0");
  }
  return assumed;
}

/// Makes `copy` assume what `when` says of the strided tensors (see
/// addDivisibilityVariants): the last stride is the constant 1 (its argument
/// stays in the ABI, marked, unused), the others are multiples of a 16-byte
/// row, and the base is 16-byte aligned.
void assumeUnitStrides(func::FuncOp copy, ArrayRef<StridedParam> params,
                       std::vector<std::string> &when) {
  Builder builder(copy.getContext());
  OpBuilder entry = OpBuilder::atBlockBegin(&copy.getBody().front());
  Value one =
      arith::ConstantIntOp::create(entry, copy.getLoc(), entry.getI64Type(), 1);
  for (const StridedParam &param : params) {
    unsigned last = param.strides.size() - 1;
    int64_t rowElements =
        std::max<int64_t>(1, kVectorBytes / param.elementBytes);
    for (unsigned d = 0; d < last; ++d) {
      if (rowElements > 1)
        when.push_back("stride(" + param.name + ", " + std::to_string(d) +
                       ") % " + std::to_string(rowElements) + " == 0");
      copy.setArgAttr(param.strides[d], TileDialect::kDivisibilityAttrName,
                      builder.getI64IntegerAttr(rowElements));
    }
    when.push_back("stride(" + param.name + ", " + std::to_string(last) +
                   ") == 1");
    copy.setArgAttr(param.strides[last], TileDialect::kKnownValueAttrName,
                    builder.getI64IntegerAttr(1));
    copy.getArgument(param.strides[last]).replaceAllUsesWith(one);
    when.push_back("align(" + param.name +
                   ") >= " + std::to_string(kVectorBytes));
    copy.setArgAttr(param.pointer, TileDialect::kAlignmentAttrName,
                    builder.getI64IntegerAttr(kVectorBytes));
  }
}
} // namespace

std::vector<target::KernelVariant>
target::addDivisibilityVariants(ModuleOp tileModule) {
  std::vector<KernelVariant> variants;
  SmallVector<func::FuncOp> kernels;
  tileModule.walk([&](func::FuncOp func) {
    if (func->hasAttr(TileDialect::kKernelAttrName))
      kernels.push_back(func);
  });
  Builder builder(tileModule.getContext());
  std::string div = "div" + std::to_string(kVariantDivisor);
  for (func::FuncOp kernel : kernels) {
    std::vector<std::string> sizeWhen;
    SmallVector<unsigned> assumed = sizeVarsToAssume(kernel, sizeWhen);
    SmallVector<StridedParam> strided = stridedParams(kernel);
    // The ladder, most specialized first (the launcher takes the first that
    // holds): unit-stride views and aligned sizes; unit-stride views alone
    // (a ragged length: a kernel whose masks do not split vectors, such as
    // attention's over rows of a static width, still moves 16 bytes); then
    // aligned sizes alone (a transposed or broadcast view). A kernel with
    // no size left to assume has div16_unit alone, which is unit.
    struct Rung {
      bool sizes, unit;
    };
    for (Rung rung : {Rung{true, true}, Rung{false, true}, Rung{true, false}}) {
      if (rung.unit ? strided.empty() || (!rung.sizes && assumed.empty())
                    : assumed.empty())
        continue;
      KernelVariant variant;
      variant.kernel = kernel.getSymName().str();
      variant.name = !rung.unit   ? div
                     : rung.sizes ? div + "_unit"
                                  : std::string("unit");
      variant.function = variant.kernel + "__" + variant.name;
      if (rung.sizes)
        variant.when = sizeWhen;
      if (SymbolTable::lookupSymbolIn(tileModule, variant.function))
        continue;
      func::FuncOp copy = kernel.clone();
      copy.setSymName(variant.function);
      if (rung.sizes)
        for (unsigned i : assumed)
          copy.setArgAttr(i, TileDialect::kDivisibilityAttrName,
                          builder.getI64IntegerAttr(kVariantDivisor));
      if (rung.unit)
        assumeUnitStrides(copy, strided, variant.when);
      tileModule.getBody()->push_back(copy);
      variants.push_back(std::move(variant));
    }
  }
  return variants;
}
