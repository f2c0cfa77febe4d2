//===- MemoryOpToNVVM.cpp - Loads and stores of global tensors ------------===//
//
// tile.load and tile.store, with addresses and masks from MemoryAccess.cpp:
// a load selects `other` for masked-off registers (it never branches), a
// store skips them.
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

namespace {
struct LoadLowering : public StatefulPattern<LoadOp> {
  using StatefulPattern::StatefulPattern;
  LogicalResult
  matchAndRewrite(LoadOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    emitMemoryBarrier(rewriter, op, state);
    GlobalAccess access{op.getTensor().getType(), adaptor.getTensor(),
                        op.getIndices(),          adaptor.getIndices(),
                        adaptor.getMask(),        op.getMask()};
    access.tileTensor = op.getTensor();
    SmallVector<Value> values =
        emitMaskedLoad(rewriter, op, access, adaptor.getOther(),
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
    GlobalAccess access{op.getTensor().getType(), adaptor.getTensor(),
                        op.getIndices(),          adaptor.getIndices(),
                        adaptor.getMask(),        op.getMask()};
    access.tileTensor = op.getTensor();
    AccessPlan plan = planAccess(rewriter, op, access, storedType, width);
    SmallVector<Value> values = unpackVector(rewriter, loc, adaptor.getValue());
    unsigned alignment = plan.width * getStoredBytes(storedType);
    // Replicated registers (zero layout bases) would store the same value
    // twice; that is harmless, so no deduplication is attempted here.
    for (size_t group = 0; group < plan.size(); ++group) {
      Value address = plan.address(rewriter, loc, group);
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
