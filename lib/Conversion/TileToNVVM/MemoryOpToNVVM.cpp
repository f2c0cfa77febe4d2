//===- MemoryOpToNVVM.cpp - Loads and stores of global tensors ------------===//
//
// Each register's address is base + sum(index_d * stride_d) in 64 bits,
// with row-major strides from the extents or, for a strided tensor, the
// strides it carries;
// its mask is every index within its extent (one unsigned compare covers
// both ends) AND the user's mask. A masked-off load reads the tensor's first
// element instead (always valid: extents are positive) and selects `other`,
// so loads never branch; a masked-off store is skipped.
//
//===----------------------------------------------------------------------===//

#include "MemoryAccess.h"

#include "Families.h"
#include "Patterns.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace tegula::tile;

AccessPlan tegula::tile::planAccess(OpBuilder &builder, Location loc,
                                    GlobalTensorType type, Value tensor,
                                    ValueRange indices, Value userMask,
                                    Type storedType, unsigned width) {
  unsigned rank = type.getRank();
  Value base = LLVM::ExtractValueOp::create(builder, loc, tensor, 0);
  SmallVector<Value> extents, strides(rank);
  for (unsigned dim = 0; dim < rank; ++dim)
    extents.push_back(LLVM::ExtractValueOp::create(builder, loc, tensor,
                                                   ArrayRef<int64_t>{dim + 1}));
  // Strides in 64 bits: tensors may pass 2^31 elements.
  if (type.getIsStrided()) {
    for (unsigned dim = 0; dim < rank; ++dim)
      strides[dim] = LLVM::ExtractValueOp::create(
          builder, loc, tensor, ArrayRef<int64_t>{1 + rank + dim});
  } else {
    Value stride = i64Const(builder, loc, 1);
    for (int dim = rank - 1; dim >= 0; --dim) {
      strides[dim] = stride;
      Value extent = arith::ExtUIOp::create(builder, loc, builder.getI64Type(),
                                            extents[dim]);
      stride = arith::MulIOp::create(builder, loc, stride, extent);
    }
  }
  SmallVector<SmallVector<Value>> indexElements;
  for (Value index : indices)
    indexElements.push_back(unpackVector(builder, loc, index));
  SmallVector<Value> maskElements;
  if (userMask)
    maskElements = unpackVector(builder, loc, userMask);

  AccessPlan plan;
  plan.width = width;
  int64_t registers = indexElements.front().size();
  Value zero64 = i64Const(builder, loc, 0);
  // The first register of each group stands for the group: the axis
  // analysis proved the rest consecutive and masked alike.
  for (int64_t reg = 0; reg < registers; reg += width) {
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

namespace {
Type storedTypeOf(Type elementType, OpBuilder &builder) {
  return elementType.isInteger(1) ? builder.getI8Type() : elementType;
}

} // namespace

SmallVector<Value> tegula::tile::emitMaskedLoad(
    OpBuilder &builder, Location loc, GlobalTensorType type, Value tensor,
    ValueRange indices, Value mask, Value other, unsigned vectorWidth,
    function_ref<void(int64_t, Value)> consume) {
  Type elementType = type.getElementType();
  Type storedType = storedTypeOf(elementType, builder);
  if (storedType != elementType || vectorWidth == 0)
    vectorWidth = 1;
  AccessPlan plan = planAccess(builder, loc, type, tensor, indices, mask,
                               storedType, vectorWidth);
  SmallVector<Value> others;
  if (other)
    others = unpackVector(builder, loc, other);
  Value zero = arith::ConstantOp::create(builder, loc, elementType,
                                         builder.getZeroAttr(elementType));
  SmallVector<Value> values;
  unsigned width = plan.width;
  unsigned alignment = width * getStoredBytes(storedType);
  for (auto [group, address] : llvm::enumerate(plan.addresses)) {
    SmallVector<Value> loaded;
    if (width == 1) {
      Value value = LLVM::LoadOp::create(builder, loc, storedType, address);
      if (storedType != elementType)
        value = arith::TruncIOp::create(builder, loc, elementType, value);
      loaded.push_back(value);
    } else {
      auto vectorType = VectorType::get({int64_t(width)}, storedType);
      Value vector =
          LLVM::LoadOp::create(builder, loc, vectorType, address, alignment);
      loaded = unpackVector(builder, loc, vector);
    }
    for (auto [lane, value] : llvm::enumerate(loaded)) {
      Value fallback = others.empty() ? zero : others[group * width + lane];
      Value chosen = arith::SelectOp::create(builder, loc, plan.masks[group],
                                             value, fallback);
      if (consume)
        consume(int64_t(group * width + lane), chosen);
      else
        values.push_back(chosen);
    }
  }
  return values;
}

namespace {
struct LoadLowering : public StatefulPattern<LoadOp> {
  using StatefulPattern::StatefulPattern;
  LogicalResult
  matchAndRewrite(LoadOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    emitMemoryBarrier(rewriter, op, state);
    SmallVector<Value> values = emitMaskedLoad(
        rewriter, loc, op.getTensor().getType(), adaptor.getTensor(),
        adaptor.getIndices(), adaptor.getMask(), adaptor.getOther(),
        state.vectorWidths.lookup(op));
    rewriter.replaceOp(
        op, packVector(rewriter, loc,
                       getTypeConverter()->convertType(op.getType()), values));
    return success();
  }
};

struct StoreLowering : public StatefulPattern<StoreOp> {
  using StatefulPattern::StatefulPattern;
  LogicalResult
  matchAndRewrite(StoreOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    emitMemoryBarrier(rewriter, op, state);
    Type elementType = op.getValue().getType().getElementType();
    Type storedType = storedTypeOf(elementType, rewriter);
    unsigned width = storedType == elementType
                         ? std::max(1u, state.vectorWidths.lookup(op))
                         : 1;
    AccessPlan plan =
        planAccess(rewriter, loc, op.getTensor().getType(), adaptor.getTensor(),
                   adaptor.getIndices(), adaptor.getMask(), storedType, width);
    SmallVector<Value> values = unpackVector(rewriter, loc, adaptor.getValue());
    unsigned alignment = plan.width * getStoredBytes(storedType);
    // Replicated registers (zero layout bases) would store the same value
    // twice; that is harmless, so no deduplication is attempted here.
    for (auto [group, address] : llvm::enumerate(plan.addresses)) {
      auto guarded = scf::IfOp::create(rewriter, loc, plan.masks[group],
                                       /*withElseRegion=*/false);
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPointToStart(guarded.thenBlock());
      if (plan.width == 1) {
        Value value = values[group];
        if (storedType != elementType)
          value = arith::ExtUIOp::create(rewriter, loc, storedType, value);
        LLVM::StoreOp::create(rewriter, loc, value, address);
        continue;
      }
      auto vectorType = VectorType::get({int64_t(plan.width)}, storedType);
      Value vector = packVector(
          rewriter, loc, vectorType,
          ArrayRef<Value>(values).slice(group * plan.width, plan.width));
      LLVM::StoreOp::create(rewriter, loc, vector, address, alignment);
    }
    rewriter.eraseOp(op);
    return success();
  }
};
} // namespace

void tegula::tile::emitMemoryBarrier(OpBuilder &builder, Operation *op,
                                     const LoweringState &state) {
  MemoryBarrier need = state.memoryBarriers.lookup_or(op, MemoryBarrier::None);
  if (need == MemoryBarrier::None)
    return;
  if (need == MemoryBarrier::WaitCopiesAndBarrier)
    emitAsyncCopyWait(state.target, builder, op->getLoc(), /*pending=*/0);
  emitBarrier(builder, op->getLoc());
}

void tegula::tile::populateMemoryOpToNVVMPatterns(
    const TypeConverter &converter, RewritePatternSet &patterns,
    LoweringState &state) {
  patterns.add<LoadLowering, StoreLowering>(converter, patterns.getContext(),
                                            state);
}
