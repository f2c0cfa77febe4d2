//===- PipelineLoops.cpp - Prefetch the loads of pipelined loops ----------===//

#include "LoopSlices.h"

#include "tegula/Analysis/SharedMemoryPlan.h"

#include "Tile/TileDialect.h"
#include "Tile/TileOps.h"
#include "Tile/TilePasses.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

namespace tegula::tile {
#define GEN_PASS_DEF_TILEPIPELINELOOPS
#include "Tile/TilePasses.h.inc"
} // namespace tegula::tile

using namespace tegula::tile;

namespace {

/// Pushes the block `load` reads in the iteration whose induction variable
/// is `iv`, masked off entirely when that iteration does not run.
void pushAhead(OpBuilder &builder, scf::ForOp loop, LoadOp load,
               ArrayRef<Operation *> slice, Value pipeline, Value iv) {
  Location loc = load.getLoc();
  IRMapping mapping = cloneSlice(builder, loop, slice, iv);
  auto lookup = [&](Value v) { return v ? mapping.lookupOrDefault(v) : v; };
  Value runs = arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::slt,
                                     iv, loop.getUpperBound());
  auto maskType = getI1SameShape(load.getType());
  Value mask = SplatOp::create(builder, loc, maskType, runs);
  if (Value user = lookup(load.getMask()))
    mask = arith::AndIOp::create(builder, loc, mask, user);
  SmallVector<Value> indices;
  for (Value index : load.getIndices())
    indices.push_back(lookup(index));
  PipelinePushOp::create(builder, loc, pipeline, lookup(load.getTensor()),
                         indices, mask, lookup(load.getOther()));
}

/// A load of a pipelined loop and the ops of the body that compute its
/// operands.
struct Prefetch {
  LoadOp load;
  SmallVector<Operation *> slice;
  Value ring;
};

void pipelineLoop(scf::ForOp loop, unsigned stages) {
  // The look-ahead test `iv < upper bound` needs a positive step.
  std::optional<int64_t> step = getConstantIntValue(loop.getStep());
  if (stages < 2 || !step || *step <= 0) {
    loop->emitRemark() << "this loop is not pipelined: "
                       << (stages < 2 ? "pipelined(S) needs S >= 2"
                                      : "its step is not a positive constant");
    return;
  }
  SmallVector<Prefetch> prefetches;
  for (Operation &op : *loop.getBody()) {
    auto load = dyn_cast<LoadOp>(op);
    if (!load)
      continue;
    // A block fetched ahead is read before this and the next S - 2
    // iterations store (or update atomically): not for a tensor the loop
    // writes.
    bool written = loop->walk([&](GlobalAccessOpInterface access) {
                         return access.writesTensor() &&
                                        mayAlias(access.getAccessedTensor(),
                                                 load.getTensor())
                                    ? WalkResult::interrupt()
                                    : WalkResult::advance();
                       })
                       .wasInterrupted();
    if (written) {
      load->emitRemark() << "this load is not pipelined: the loop stores to "
                            "a tensor it may read";
      continue;
    }
    SmallVector<Value> inputs(load->getOperands());
    std::optional<SmallVector<Operation *>> slice = backwardSlice(loop, inputs);
    if (!slice) {
      load->emitRemark()
          << "this load is not pipelined: its indices, mask or `other` "
             "depend on a value the loop carries or computes with effects";
      continue;
    }
    prefetches.push_back({load, std::move(*slice), Value()});
  }
  if (prefetches.empty())
    return;

  OpBuilder builder(loop);
  for (Prefetch &prefetch : prefetches) {
    RankedTensorType block = prefetch.load.getType();
    auto ringType = PipelineType::get(loop.getContext(), block.getShape(),
                                      block.getElementType(), stages);
    prefetch.ring =
        PipelineCreateOp::create(builder, prefetch.load.getLoc(), ringType);
  }
  // Prologue: the first S - 1 iterations' blocks, stage by stage, so that
  // each stage's copies are committed together in iteration order.
  Location loc = loop.getLoc();
  for (unsigned k = 0; k + 1 < stages; ++k) {
    Value offset = arith::MulIOp::create(
        builder, loc, loop.getStep(),
        arith::ConstantIntOp::create(builder, loc, builder.getI32Type(), k));
    Value iv =
        arith::AddIOp::create(builder, loc, loop.getLowerBound(), offset);
    for (Prefetch &prefetch : prefetches)
      pushAhead(builder, loop, prefetch.load, prefetch.slice, prefetch.ring,
                iv);
  }
  // Each iteration takes its blocks, then asks for the ones S - 1 ahead:
  // every pop comes before every push, so one wait and one barrier serve
  // all the loop's pops, and the copies overlap the rest of the body.
  for (Prefetch &prefetch : prefetches) {
    builder.setInsertionPoint(prefetch.load);
    Value popped =
        PipelinePopOp::create(builder, prefetch.load.getLoc(),
                              prefetch.load.getType(), prefetch.ring);
    prefetch.load.replaceAllUsesWith(popped);
  }
  builder.setInsertionPointAfter(prefetches.back().load);
  Value ahead = arith::AddIOp::create(
      builder, loc, loop.getInductionVar(),
      arith::MulIOp::create(builder, loc, loop.getStep(),
                            arith::ConstantIntOp::create(builder, loc,
                                                         builder.getI32Type(),
                                                         stages - 1)));
  for (Prefetch &prefetch : prefetches)
    pushAhead(builder, loop, prefetch.load, prefetch.slice, prefetch.ring,
              ahead);
  for (Prefetch &prefetch : prefetches)
    prefetch.load.erase();
}

/// On targets with warpgroup dots: a block loaded before a loop only to be
/// the A operand of a dot in it (attention's Q) goes through a one-stage
/// ring, so that wgmma can read it from shared memory in every iteration
/// instead of from registers the whole loop would hold.
void stageLoopInvariantOperands(func::FuncOp func) {
  FailureOr<tegula::TargetInfo> target = getTarget(func);
  if (failed(target) || !target->hasWarpgroupDots)
    return;
  SmallVector<LoadOp> loads;
  func.walk([&](DotOp dot) {
    auto load = dot.getA().getDefiningOp<LoadOp>();
    auto loop = dot->getParentOfType<scf::ForOp>();
    if (load && loop && load->hasOneUse() && !loop->isAncestor(load) &&
        isSwizzledShared(load.getType().getShape(),
                         load.getType().getElementType()))
      loads.push_back(load);
  });
  for (LoadOp load : loads) {
    OpBuilder builder(load);
    RankedTensorType block = load.getType();
    // The frontend's budget counted the rings, not this one: stage a block
    // only where it fits beside them with room for a conversion area as
    // large (the scratch is not planned yet).
    int64_t bytes =
        block.getNumElements() * getStoredBytes(block.getElementType());
    if (planSharedMemory(func).sharedBytes + 2 * bytes + kSwizzleAtomBytes >
        target->maxSharedBytes)
      continue;
    Value ring = PipelineCreateOp::create(
        builder, load.getLoc(),
        PipelineType::get(load.getContext(), block.getShape(),
                          block.getElementType(), 1));
    PipelinePushOp::create(builder, load.getLoc(), ring, load.getTensor(),
                           load.getIndices(), load.getMask(), load.getOther());
    Value popped =
        PipelinePopOp::create(builder, load.getLoc(), block, ring, false);
    load.replaceAllUsesWith(popped);
    load.erase();
  }
}

struct PipelineLoopsPass
    : public tegula::tile::impl::TilePipelineLoopsBase<PipelineLoopsPass> {
  void runOnOperation() override {
    SmallVector<std::pair<scf::ForOp, unsigned>> loops;
    getOperation().walk([&](scf::ForOp loop) {
      if (auto stages = loop->getAttrOfType<IntegerAttr>(
              TileDialect::kPipelineStagesAttrName))
        loops.push_back({loop, unsigned(stages.getInt())});
    });
    for (auto [loop, stages] : loops)
      pipelineLoop(loop, stages);
    stageLoopInvariantOperands(getOperation());
  }
};
} // namespace
