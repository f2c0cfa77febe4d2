//===- CpAsync.cpp - The cp.async copy family -----------------------------===//

#include "CpAsync.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Matchers.h"

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
  // .cg (bypassing L1) exists for 16 bytes only.
  std::string copy = std::string("cp.async.") + (bytes == 16 ? "cg" : "ca") +
                     ".shared.global [$0], [$1], " + std::to_string(bytes);
  if (matchPattern(predicate, m_One())) {
    emitInlinePtx(builder, loc, Type(), ValueRange{destination(), source},
                  copy + ";", "l,l,~{memory}");
    return;
  }
  // The ignore-src form takes the mask as a predicate, which the copy
  // instruction carries itself; a source size selected from it (the NVVM
  // op's form) costs two selects and a compare per copy. A masked-off copy
  // reads nothing, so its source address need not be valid.
  Value skip = arith::XOrIOp::create(
      builder, loc, predicate,
      arith::ConstantIntOp::create(builder, loc, builder.getI1Type(), 1));
  emitInlinePtx(builder, loc, Type(), ValueRange{destination(), source, skip},
                copy + ", $2;", "l,l,b,~{memory}");
}

void tegula::tile::emitCpAsyncCommit(OpBuilder &builder, Location loc) {
  NVVM::CpAsyncCommitGroupOp::create(builder, loc);
}

void tegula::tile::emitCpAsyncWait(OpBuilder &builder, Location loc,
                                   int64_t pending) {
  NVVM::CpAsyncWaitGroupOp::create(builder, loc, pending);
}
