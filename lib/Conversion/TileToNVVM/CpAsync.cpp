//===- CpAsync.cpp - The cp.async copy family -----------------------------===//

#include "CpAsync.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace tegula::tile;

namespace {
/// True when `other` is absent or a tile of zeros, which is what cp.async's
/// zero fill gives masked-off elements.
bool isZeroOrAbsent(Value other) {
  if (!other)
    return true;
  Attribute value;
  if (auto constant = other.getDefiningOp<arith::ConstantOp>())
    value = constant.getValue();
  else if (auto splat = other.getDefiningOp<SplatOp>())
    if (auto constant = splat.getValue().getDefiningOp<arith::ConstantOp>())
      value = constant.getValue();
  if (auto dense = dyn_cast_or_null<SplatElementsAttr>(value))
    value = dense.getSplatValue<Attribute>();
  if (auto number = dyn_cast_or_null<FloatAttr>(value))
    return number.getValue().isZero() && !number.getValue().isNegative();
  if (auto number = dyn_cast_or_null<IntegerAttr>(value))
    return number.getValue().isZero();
  return false;
}
} // namespace

bool tegula::tile::canCopyWithCpAsync(int64_t groupBytes, Type element,
                                      Value other) {
  // cp.async moves 4, 8 or 16 aligned bytes; masked-off groups copy 0
  // bytes and are zero-filled, which is the default `other`.
  return (groupBytes == 4 || groupBytes == 8 || groupBytes == 16) &&
         !element.isInteger(1) && isZeroOrAbsent(other);
}

void tegula::tile::emitCpAsync(OpBuilder &builder, Location loc,
                               function_ref<Value()> destination, Value source,
                               int64_t bytes, Value predicate) {
  Value copied = arith::SelectOp::create(builder, loc, predicate,
                                         i32Const(builder, loc, bytes),
                                         i32Const(builder, loc, 0));
  NVVM::CpAsyncOp::create(
      builder, loc, destination(), source, builder.getI32IntegerAttr(bytes),
      // .cg (bypassing L1) exists for 16 bytes only.
      NVVM::LoadCacheModifierKindAttr::get(
          builder.getContext(), bytes == 16 ? NVVM::LoadCacheModifierKind::CG
                                            : NVVM::LoadCacheModifierKind::CA),
      copied);
}

void tegula::tile::emitCpAsyncCommit(OpBuilder &builder, Location loc) {
  NVVM::CpAsyncCommitGroupOp::create(builder, loc);
}

void tegula::tile::emitCpAsyncWait(OpBuilder &builder, Location loc,
                                   int64_t pending) {
  NVVM::CpAsyncWaitGroupOp::create(builder, loc, pending);
}
