//===- PipelineOpToNVVM.cpp - Rings of shared-memory stages ---------------===//
//
// A pipeline is a ring of `stages` buffers at a planned offset in shared
// memory, with push and pop counters kept in local variables (registers
// after mem2reg). A push writes stage `pushes % stages`: with cp.async when
// its block moves in aligned 16-byte groups (the copy then overlaps
// whatever runs before the matching pop), otherwise through registers. A
// pop waits for the copies, meets the other warps at a barrier and reads
// stage `pops % stages` into the popped tile's layout. A barrier before
// each push keeps a stage from being overwritten while another warp still
// reads it.
//
// Most of those barriers are redundant in a loop body that pops its rings
// and then pushes the next blocks: the pipeline-sync analysis
// (tegula/Analysis/PipelineSync.h) says which ones an earlier op provides.
//
//===----------------------------------------------------------------------===//

#include "Common.h"
#include "Families.h"
#include "MemoryAccess.h"
#include "Patterns.h"
#include "ThroughShared.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
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

/// A barrier, taken only when the next push writes the stage the ring's
/// last pop read (pushes % stages == (pops - 1) % stages). The counters are
/// uniform across the block, so every thread takes the same branch.
void emitBarrierIfLastPopped(OpBuilder &builder, Location loc,
                             PipelineType type, const RingState &ring) {
  Type i32 = builder.getI32Type();
  Value stages = i32Const(builder, loc, type.getStages());
  Value pushes = LLVM::LoadOp::create(builder, loc, i32, ring.pushes);
  Value pops = LLVM::LoadOp::create(builder, loc, i32, ring.pops);
  Value lastPop =
      arith::SubIOp::create(builder, loc, pops, i32Const(builder, loc, 1));
  Value same = arith::CmpIOp::create(
      builder, loc, arith::CmpIPredicate::eq,
      arith::RemUIOp::create(builder, loc, pushes, stages),
      arith::RemUIOp::create(builder, loc, lastPop, stages));
  Value flag = arith::ExtUIOp::create(builder, loc, i32, same);
  emitInlinePtx(builder, loc, Type(), ValueRange{flag},
                "{ .reg .pred p; setp.ne.b32 p, $0, 0; @p bar.sync 0; }", "r");
}

struct PipelineCreateLowering : public StatefulPattern<PipelineCreateOp> {
  using StatefulPattern::StatefulPattern;

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
};

struct PipelinePushLowering : public StatefulPattern<PipelinePushOp> {
  using StatefulPattern::StatefulPattern;

  LogicalResult
  matchAndRewrite(PipelinePushOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    emitMemoryBarrier(rewriter, op, state);
    PipelineType type = op.getPipeline().getType();
    RingState ring = unpackRing(rewriter, loc, adaptor.getPipeline());
    auto indexType = cast<RankedTensorType>(op.getIndices().front().getType());
    LinearLayout layout = getLinearLayout(indexType);
    Value shared = getSharedBase(rewriter, op);
    Type element = type.getElementType();
    unsigned width = std::max(1u, state.vectorWidths.lookup(op));
    auto position = getThreadPosition(rewriter, op);

    // An asynchronous copy moves each group straight into shared memory
    // and overlaps whatever runs before the matching pop; otherwise the
    // block goes through registers.
    int64_t groupBytes = width * getStoredBytes(element);
    bool async = canCopyAsync(state.target, groupBytes, element, op.getOther());
    AccessPlan plan;
    SmallVector<Value> values;
    GlobalAccess access{op.getTensor().getType(),
                        adaptor.getTensor(),
                        op.getIndices(),
                        adaptor.getIndices(),
                        adaptor.getMask(),
                        op.getMask(),
                        op.getInside()};
    access.tileTensor = op.getTensor();
    auto loadBlock = [&](function_ref<void(int64_t, Value)> consume) {
      return emitMaskedLoad(rewriter, op, access, adaptor.getOther(), width,
                            consume);
    };
    // A small block through registers is loaded before the barrier, so the
    // loads overlap it; a large one is streamed after it, register by
    // register, so that it is never live all at once (it would spill).
    constexpr int64_t kMaxLiveRegisters = 16;
    bool stream = !async && layout.getNumRegs() > kMaxLiveRegisters;
    // Masked-off groups, by the tensor's extents or the push's mask, copy
    // nothing and are zero-filled.
    if (async)
      plan = planAccess(rewriter, op, access, element, width);
    else if (!stream)
      values = loadBlock(nullptr);
    // Every warp has finished reading the stage's previous block.
    PipelineSync sync = state.pipelineSync.lookup_or(op, PipelineSync::Full);
    if (sync == PipelineSync::Full)
      emitBarrier(rewriter, loc);
    else if (sync == PipelineSync::IfSameStage)
      emitBarrierIfLastPopped(rewriter, loc, type, ring);
    Value stage = takeStage(rewriter, loc, type, ring, ring.pushes);
    auto coords = emitRegisterCoords(rewriter, loc, layout, position);
    auto addressOf = [&](ArrayRef<Value> regCoords) {
      return getSharedElementAddress(rewriter, loc, shared, type.getShape(),
                                     regCoords, element, stage);
    };
    // Threads that hold copies of another's elements (a block smaller than
    // the threads) leave the writing to the owner: one writer an address.
    ElementOwners owners = findElementOwners(layout);
    Value owns = ownsElementsHere(rewriter, loc, owners, layout, position);
    auto onlyOwner = [&](function_ref<void()> write) {
      if (!owns)
        return write();
      auto guarded =
          scf::IfOp::create(rewriter, loc, owns, /*withElseRegion=*/false);
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPointToStart(guarded.thenBlock());
      write();
    };
    if (!async) {
      auto store = [&](int64_t reg, Value value) {
        if (!owners.regOwns[reg])
          return;
        onlyOwner([&] {
          LLVM::StoreOp::create(rewriter, loc, value, addressOf(coords[reg]));
        });
      };
      if (stream)
        loadBlock(store);
      for (auto [reg, value] : llvm::enumerate(values))
        store(reg, value);
      emitAsyncCopyCommit(state.target, rewriter, loc);
      rewriter.eraseOp(op);
      return success();
    }
    for (size_t group = 0; group < plan.size(); ++group) {
      if (!owners.regOwns[group * width])
        continue;
      // A masked-off cp.async still zero-fills: copies must not be issued.
      onlyOwner([&] {
        emitAsyncCopy(
            state.target, rewriter, loc,
            [&] { return addressOf(coords[group * width]); },
            plan.address(rewriter, loc, group), groupBytes, plan.masks[group]);
      });
    }
    emitAsyncCopyCommit(state.target, rewriter, loc);
    rewriter.eraseOp(op);
    return success();
  }
};

struct PipelinePopLowering : public StatefulPattern<PipelinePopOp> {
  using StatefulPattern::StatefulPattern;

  LogicalResult
  matchAndRewrite(PipelinePopOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    PipelineType type = op.getPipeline().getType();
    RingState ring = unpackRing(rewriter, loc, adaptor.getPipeline());
    // This thread's copies of the block have landed (younger groups may
    // stay in flight), then the barrier makes every warp's copies visible.
    // Warpgroup dots read shared memory through the async proxy: the
    // fence orders this thread's writes (cp.async or stores) before them.
    if (state.pipelineSync.lookup_or(op, PipelineSync::Full) ==
        PipelineSync::Full) {
      emitAsyncCopyWait(state.target, rewriter, loc,
                        state.pendingCopies.lookup(op));
      if (state.planFor(op).readsStagesInPlace)
        emitAsyncProxyFence(rewriter, loc);
      emitBarrier(rewriter, loc);
    }
    Value stage = takeStage(rewriter, loc, type, ring, ring.pops);
    // A tile read in place is where the stage starts.
    if (isa<SharedLayoutAttr>(op.getType().getEncoding())) {
      rewriter.replaceOp(op, stage);
      return success();
    }
    LinearLayout layout = getLinearLayout(op.getType());
    // A transposed pop reads the result's layout in the stage's coordinates.
    if (op.getTranspose())
      layout = layout.transposed();
    Type resultType = getTypeConverter()->convertType(op.getType());
    SmallVector<Value> values = readTileFromShared(
        state.target, rewriter, loc, op, type.getShape(), layout,
        type.getElementType(), type.getElementType(), stage);
    rewriter.replaceOp(op, packVector(rewriter, loc, resultType, values));
    return success();
  }
};
} // namespace

void tegula::tile::populatePipelineOpToNVVMPatterns(
    const TypeConverter &converter, RewritePatternSet &patterns,
    LoweringState &state) {
  patterns
      .add<PipelineCreateLowering, PipelinePushLowering, PipelinePopLowering>(
          converter, patterns.getContext(), state);
}
