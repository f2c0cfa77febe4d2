//===- PipelineOpToNVVM.cpp - Rings of shared-memory stages ---------------===//
//
// A pipeline is a ring of `stages` buffers at a planned offset in shared
// memory, with push and pop counters kept in local variables (registers
// after mem2reg). This first lowering copies synchronously: a push loads
// its block into registers and writes stage `pushes % stages`; a pop waits
// at a barrier and reads stage `pops % stages` into the popped tile's
// layout. A barrier before each push keeps a stage from being overwritten
// while another warp still reads it. cp.async copies that overlap the loop
// body replace the synchronous copy behind the same ops.
//
//===----------------------------------------------------------------------===//

#include "Common.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

using namespace mlir;
using namespace tegula::tile;

namespace {

struct RingState {
  Value offset; // i32 byte offset of stage 0
  Value pushes; // !llvm.ptr to the i32 push counter
  Value pops;   // !llvm.ptr to the i32 pop counter
};

RingState unpackRing(OpBuilder &builder, Location loc, Value ring) {
  return {LLVM::ExtractValueOp::create(builder, loc, ring, 0),
          LLVM::ExtractValueOp::create(builder, loc, ring, 1),
          LLVM::ExtractValueOp::create(builder, loc, ring, 2)};
}

/// Byte offset of the stage the counter at `counter` points to, and bumps
/// the counter.
Value takeStage(OpBuilder &builder, Location loc, PipelineType type,
                const RingState &ring, Value counter) {
  Type i32 = builder.getI32Type();
  Value count = LLVM::LoadOp::create(builder, loc, i32, counter);
  Value stage = arith::RemUIOp::create(
      builder, loc, count, i32Const(builder, loc, type.getStages()));
  Value stageOffset = arith::MulIOp::create(
      builder, loc, stage, i32Const(builder, loc, type.getStageBytes()));
  Value next =
      arith::AddIOp::create(builder, loc, count, i32Const(builder, loc, 1));
  LLVM::StoreOp::create(builder, loc, next, counter);
  return arith::AddIOp::create(builder, loc, ring.offset, stageOffset);
}

struct PipelineCreateLowering : public OpConversionPattern<PipelineCreateOp> {
  PipelineCreateLowering(const TypeConverter &converter, MLIRContext *context,
                         LoweringState &state)
      : OpConversionPattern(converter, context), state(state) {}

  LogicalResult
  matchAndRewrite(PipelineCreateOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    int64_t offset = state.planFor(op).pipelineOffsets.lookup(op);
    Type i32 = rewriter.getI32Type();
    auto localPtr = LLVM::LLVMPointerType::get(getContext());
    // Counters live in allocas at the function entry so that mem2reg
    // promotes them.
    Value pushes, pops;
    {
      OpBuilder::InsertionGuard guard(rewriter);
      auto func = op->getParentOfType<FunctionOpInterface>();
      rewriter.setInsertionPointToStart(&func.getFunctionBody().front());
      Value one = i32Const(rewriter, loc, 1);
      pushes = LLVM::AllocaOp::create(rewriter, loc, localPtr, i32, one);
      pops = LLVM::AllocaOp::create(rewriter, loc, localPtr, i32, one);
    }
    Value zero = i32Const(rewriter, loc, 0);
    LLVM::StoreOp::create(rewriter, loc, zero, pushes);
    LLVM::StoreOp::create(rewriter, loc, zero, pops);
    Type ringType = getTypeConverter()->convertType(op.getType());
    Value ring = LLVM::UndefOp::create(rewriter, loc, ringType);
    ring = LLVM::InsertValueOp::create(rewriter, loc, ring,
                                       i32Const(rewriter, loc, offset),
                                       ArrayRef<int64_t>{0});
    ring = LLVM::InsertValueOp::create(rewriter, loc, ring, pushes,
                                       ArrayRef<int64_t>{1});
    ring = LLVM::InsertValueOp::create(rewriter, loc, ring, pops,
                                       ArrayRef<int64_t>{2});
    rewriter.replaceOp(op, ring);
    return success();
  }

  LoweringState &state;
};

struct PipelinePushLowering : public OpConversionPattern<PipelinePushOp> {
  PipelinePushLowering(const TypeConverter &converter, MLIRContext *context,
                       LoweringState &state)
      : OpConversionPattern(converter, context), state(state) {}
  LoweringState &state;

  LogicalResult
  matchAndRewrite(PipelinePushOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    PipelineType type = op.getPipeline().getType();
    RingState ring = unpackRing(rewriter, loc, adaptor.getPipeline());
    SmallVector<Value> values = emitMaskedLoad(
        rewriter, loc, op.getTensor().getType(), adaptor.getTensor(),
        adaptor.getIndices(), adaptor.getMask(), adaptor.getOther(),
        state.vectorWidths.lookup(op));
    // Every warp has finished reading the stage's previous block.
    emitBarrier(rewriter, loc);
    Value stage = takeStage(rewriter, loc, type, ring, ring.pushes);
    auto indexType = cast<RankedTensorType>(op.getIndices().front().getType());
    LinearLayout layout = getLinearLayout(indexType);
    Value shared = getSharedBase(rewriter, op);
    Type element = type.getElementType();
    auto coords = emitRegisterCoords(rewriter, loc, layout,
                                     getThreadPosition(rewriter, op));
    for (auto [value, regCoords] : llvm::zip(values, coords)) {
      Value address = getSharedElementAddress(
          rewriter, loc, shared, type.getShape(), regCoords, element, stage);
      LLVM::StoreOp::create(rewriter, loc, value, address);
    }
    rewriter.eraseOp(op);
    return success();
  }
};

struct PipelinePopLowering : public OpConversionPattern<PipelinePopOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(PipelinePopOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    PipelineType type = op.getPipeline().getType();
    RingState ring = unpackRing(rewriter, loc, adaptor.getPipeline());
    // The pushes of every warp are visible.
    emitBarrier(rewriter, loc);
    Value stage = takeStage(rewriter, loc, type, ring, ring.pops);
    LinearLayout layout = getLinearLayout(op.getType());
    Value shared = getSharedBase(rewriter, op);
    Type element = type.getElementType();
    SmallVector<Value> values;
    for (auto &regCoords : emitRegisterCoords(
             rewriter, loc, layout, getThreadPosition(rewriter, op))) {
      Value address = getSharedElementAddress(
          rewriter, loc, shared, type.getShape(), regCoords, element, stage);
      values.push_back(LLVM::LoadOp::create(rewriter, loc, element, address));
    }
    rewriter.replaceOp(
        op, packVector(rewriter, loc,
                       getTypeConverter()->convertType(op.getType()), values));
    return success();
  }
};
} // namespace

void tegula::tile::populatePipelineOpToNVVMPatterns(
    const TypeConverter &converter, RewritePatternSet &patterns,
    LoweringState &state) {
  patterns.add<PipelineCreateLowering, PipelinePushLowering>(
      converter, patterns.getContext(), state);
  patterns.add<PipelinePopLowering>(converter, patterns.getContext());
}
