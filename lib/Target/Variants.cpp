//===- Variants.cpp - Specialized builds a bundle carries -----------------===//

#include "tegula/Target/Variants.h"

#include "Tile/TileDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace tegula;
using namespace tegula::tile;

namespace {
/// What the variant assumes of each size variable: the launch checks it.
constexpr int64_t kVariantDivisor = 16;
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
  for (func::FuncOp kernel : kernels) {
    KernelVariant variant;
    variant.kernel = kernel.getSymName().str();
    variant.name = "div" + std::to_string(kVariantDivisor);
    variant.function = variant.kernel + "__" + variant.name;
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
      variant.when.push_back(sizeVar.getValue().str() + " % " +
                             std::to_string(kVariantDivisor) + " == 0");
    }
    if (assumed.empty() ||
        SymbolTable::lookupSymbolIn(tileModule, variant.function))
      continue;
    func::FuncOp copy = kernel.clone();
    copy.setSymName(variant.function);
    for (unsigned i : assumed)
      copy.setArgAttr(i, TileDialect::kDivisibilityAttrName,
                      builder.getI64IntegerAttr(kVariantDivisor));
    tileModule.getBody()->push_back(copy);
    variants.push_back(std::move(variant));
  }
  return variants;
}
