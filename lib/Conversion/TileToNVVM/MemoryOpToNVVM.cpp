//===- MemoryOpToNVVM.cpp - Loads and stores of global tensors ------------===//
//
// Each register's address is base + sum(index_d * stride_d) in 64 bits;
// its mask is every index within its extent (one unsigned compare covers
// both ends) AND the user's mask. A masked-off load reads the tensor's first
// element instead (always valid: extents are positive) and selects `other`,
// so loads never branch; a masked-off store is skipped.
//
//===----------------------------------------------------------------------===//

#include "Common.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace tegula::tile;

namespace {

/// Per-register addresses and masks of an access.
struct AccessPlan {
  SmallVector<Value> addresses;
  SmallVector<Value> masks;
};

AccessPlan planAccess(OpBuilder &builder, Location loc, GlobalTensorType type,
                      Value tensor, ValueRange indices, Value userMask,
                      Type storedType) {
  unsigned rank = type.getRank();
  Value base = LLVM::ExtractValueOp::create(builder, loc, tensor, 0);
  SmallVector<Value> extents, strides(rank);
  for (unsigned dim = 0; dim < rank; ++dim)
    extents.push_back(LLVM::ExtractValueOp::create(builder, loc, tensor,
                                                   ArrayRef<int64_t>{dim + 1}));
  // Row-major strides in 64 bits: tensors may pass 2^31 elements.
  Value stride = i64Const(builder, loc, 1);
  for (int dim = rank - 1; dim >= 0; --dim) {
    strides[dim] = stride;
    Value extent = arith::ExtUIOp::create(builder, loc, builder.getI64Type(),
                                          extents[dim]);
    stride = arith::MulIOp::create(builder, loc, stride, extent);
  }
  SmallVector<SmallVector<Value>> indexElements;
  for (Value index : indices)
    indexElements.push_back(unpackVector(builder, loc, index));
  SmallVector<Value> maskElements;
  if (userMask)
    maskElements = unpackVector(builder, loc, userMask);

  AccessPlan plan;
  int64_t registers = indexElements.front().size();
  Value zero64 = i64Const(builder, loc, 0);
  for (int64_t reg = 0; reg < registers; ++reg) {
    Value inBounds, offset = zero64;
    for (unsigned dim = 0; dim < rank; ++dim) {
      Value index = indexElements[dim][reg];
      Value extent = extents[dim];
      if (index.getType().isInteger(64))
        extent =
            arith::ExtUIOp::create(builder, loc, builder.getI64Type(), extent);
      Value ok = arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::ult,
                                       index, extent);
      inBounds =
          inBounds
              ? arith::AndIOp::create(builder, loc, inBounds, ok).getResult()
              : ok;
      Value wide = index;
      if (!index.getType().isInteger(64))
        wide =
            arith::ExtSIOp::create(builder, loc, builder.getI64Type(), index);
      Value term = arith::MulIOp::create(builder, loc, wide, strides[dim]);
      offset = arith::AddIOp::create(builder, loc, offset, term);
    }
    if (userMask)
      inBounds =
          arith::AndIOp::create(builder, loc, inBounds, maskElements[reg]);
    Value safeOffset =
        arith::SelectOp::create(builder, loc, inBounds, offset, zero64);
    plan.addresses.push_back(LLVM::GEPOp::create(builder, loc, base.getType(),
                                                 storedType, base,
                                                 ValueRange{safeOffset}));
    plan.masks.push_back(inBounds);
  }
  return plan;
}

Type storedTypeOf(Type elementType, OpBuilder &builder) {
  return elementType.isInteger(1) ? builder.getI8Type() : elementType;
}

} // namespace

SmallVector<Value>
tegula::tile::emitMaskedLoad(OpBuilder &builder, Location loc,
                             GlobalTensorType type, Value tensor,
                             ValueRange indices, Value mask, Value other) {
  Type elementType = type.getElementType();
  Type storedType = storedTypeOf(elementType, builder);
  AccessPlan plan =
      planAccess(builder, loc, type, tensor, indices, mask, storedType);
  SmallVector<Value> others;
  if (other)
    others = unpackVector(builder, loc, other);
  Value zero = arith::ConstantOp::create(builder, loc, elementType,
                                         builder.getZeroAttr(elementType));
  SmallVector<Value> values;
  for (auto [reg, address] : llvm::enumerate(plan.addresses)) {
    Value loaded = LLVM::LoadOp::create(builder, loc, storedType, address);
    if (storedType != elementType)
      loaded = arith::TruncIOp::create(builder, loc, elementType, loaded);
    Value fallback = others.empty() ? zero : others[reg];
    values.push_back(arith::SelectOp::create(builder, loc, plan.masks[reg],
                                             loaded, fallback));
  }
  return values;
}

namespace {
struct LoadLowering : public OpConversionPattern<LoadOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(LoadOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    SmallVector<Value> values = emitMaskedLoad(
        rewriter, loc, op.getTensor().getType(), adaptor.getTensor(),
        adaptor.getIndices(), adaptor.getMask(), adaptor.getOther());
    rewriter.replaceOp(
        op, packVector(rewriter, loc,
                       getTypeConverter()->convertType(op.getType()), values));
    return success();
  }
};

struct StoreLowering : public OpConversionPattern<StoreOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(StoreOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type elementType = op.getValue().getType().getElementType();
    Type storedType = storedTypeOf(elementType, rewriter);
    AccessPlan plan =
        planAccess(rewriter, loc, op.getTensor().getType(), adaptor.getTensor(),
                   adaptor.getIndices(), adaptor.getMask(), storedType);
    SmallVector<Value> values = unpackVector(rewriter, loc, adaptor.getValue());
    // Replicated registers (zero layout bases) would store the same value
    // twice; that is harmless, so no deduplication is attempted here.
    for (auto [reg, address] : llvm::enumerate(plan.addresses)) {
      auto guarded = scf::IfOp::create(rewriter, loc, plan.masks[reg],
                                       /*withElseRegion=*/false);
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPointToStart(guarded.thenBlock());
      Value value = values[reg];
      if (storedType != elementType)
        value = arith::ExtUIOp::create(rewriter, loc, storedType, value);
      LLVM::StoreOp::create(rewriter, loc, value, address);
    }
    rewriter.eraseOp(op);
    return success();
  }
};
} // namespace

void tegula::tile::populateMemoryOpToNVVMPatterns(
    const TypeConverter &converter, RewritePatternSet &patterns,
    LoweringState &state) {
  patterns.add<LoadLowering, StoreLowering>(converter, patterns.getContext());
}
