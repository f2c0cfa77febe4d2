//===- PipelineSync.cpp - Which pipeline ops must synchronize -------------===//
//
// Walks each block in order and drops a pop's wait and barrier when no push
// came since the last full synchronization (that wait covered every group),
// and a push's barrier when its ring was not read since the last barrier,
// or, when it was read once, makes the barrier conditional on the push
// writing that very stage. Pops and pushes count per ring, whichever SSA
// value names it (a pipeline `var` goes through loops and branches).
//
//===----------------------------------------------------------------------===//

#include "tegula/Analysis/PipelineSync.h"

#include "Tile/TileOps.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/DenseSet.h"

using namespace mlir;
using namespace tegula::tile;

namespace {
/// What is known at a point of a block about the last barrier.
struct SyncFacts {
  bool barrierSeen = false; ///< a barrier executed earlier in this block
  bool synced = false;      ///< ... after waiting for every copy, and no
                            ///< push was issued since
  /// Pops of each ring (by the tile.pipeline.create result, ringOf) since
  /// the last barrier (their reads follow it).
  llvm::DenseMap<Value, int> popsSinceBarrier;
};

} // namespace

Value tegula::tile::getRing(Value pipeline) {
  SmallVector<Value> worklist = {pipeline};
  llvm::DenseSet<Value> seen;
  Value ring;
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    if (!seen.insert(value).second)
      continue;
    if (value.getDefiningOp<PipelineCreateOp>()) {
      if (ring && ring != value)
        return {};
      ring = value;
      continue;
    }
    Operation *owner = value.getDefiningOp();
    unsigned index = 0;
    if (owner) {
      index = cast<OpResult>(value).getResultNumber();
    } else {
      auto arg = cast<BlockArgument>(value);
      owner = arg.getOwner()->getParentOp();
      auto loop = dyn_cast_or_null<scf::ForOp>(owner);
      if (!loop || arg.getArgNumber() < loop.getNumInductionVars())
        return {};
      index = arg.getArgNumber() - loop.getNumInductionVars();
    }
    if (auto loop = dyn_cast<scf::ForOp>(owner)) {
      worklist.push_back(loop.getInitArgs()[index]);
      worklist.push_back(loop.getYieldedValues()[index]);
      continue;
    }
    if (auto branch = dyn_cast<scf::IfOp>(owner)) {
      for (Region *region : {&branch.getThenRegion(), &branch.getElseRegion()})
        if (!region->empty())
          worklist.push_back(
              region->front().getTerminator()->getOperand(index));
      continue;
    }
    return {};
  }
  return ring;
}

namespace {
bool hasPipelineOps(Operation *op) {
  bool found = false;
  op->walk([&](Operation *inner) {
    if (isa<PipelinePushOp, PipelinePopOp>(inner))
      found = true;
  });
  return found;
}

void analyzeBlock(Block &block, SyncFacts facts,
                  llvm::DenseMap<Operation *, PipelineSync> &out);

/// Analyzes the regions of `op` and returns what holds after it.
SyncFacts analyzeNested(Operation *op, const SyncFacts &before,
                        llvm::DenseMap<Operation *, PipelineSync> &out) {
  // A conditional runs its region at most once, right here: it starts from
  // the facts before it. Loops come around again: nothing is known.
  bool once = isa<scf::IfOp>(op);
  for (Region &region : op->getRegions())
    for (Block &block : region)
      analyzeBlock(block, once ? before : SyncFacts(), out);
  if (!hasPipelineOps(op))
    return before;
  // A branch may have pushed (no longer synced) or popped (more reads since
  // the barrier, of stages not known here).
  SyncFacts after;
  if (once) {
    after.barrierSeen = before.barrierSeen;
    after.popsSinceBarrier = before.popsSinceBarrier;
    op->walk([&](PipelinePopOp pop) {
      after.popsSinceBarrier[getRing(pop.getPipeline())] += 2;
    });
  }
  return after;
}

void analyzeBlock(Block &block, SyncFacts facts,
                  llvm::DenseMap<Operation *, PipelineSync> &out) {
  for (Operation &op : block) {
    if (auto pop = dyn_cast<PipelinePopOp>(op)) {
      if (facts.synced) {
        out[&op] = PipelineSync::None;
      } else {
        out[&op] = PipelineSync::Full;
        facts.barrierSeen = facts.synced = true;
        facts.popsSinceBarrier.clear();
      }
      ++facts.popsSinceBarrier[getRing(pop.getPipeline())];
      continue;
    }
    if (auto push = dyn_cast<PipelinePushOp>(op)) {
      int reads = facts.popsSinceBarrier.lookup(getRing(push.getPipeline()));
      if (!facts.barrierSeen || reads > 1) {
        out[&op] = PipelineSync::Full;
        facts.barrierSeen = true;
        facts.popsSinceBarrier.clear();
      } else {
        out[&op] = reads == 0 ? PipelineSync::None : PipelineSync::IfSameStage;
      }
      facts.synced = false;
      continue;
    }
    if (op.getNumRegions() != 0)
      facts = analyzeNested(&op, facts, out);
  }
}
} // namespace

LogicalResult tegula::tile::analyzePipelineSync(
    Operation *root, llvm::DenseMap<Operation *, PipelineSync> &out) {
  // Counters and barriers are per ring: a pipeline value that may name one
  // ring or another at run time (the frontend rejects such vars) has none.
  WalkResult walk = root->walk([&](Operation *op) {
    if (!isa<PipelinePushOp, PipelinePopOp>(op))
      return WalkResult::advance();
    Value pipeline = op->getOperand(0);
    if (getRing(pipeline))
      return WalkResult::advance();
    op->emitError() << "this pipeline may name different rings depending on "
                       "run-time control flow; which ring a pipeline names "
                       "must be known at compile time";
    return WalkResult::interrupt();
  });
  if (walk.wasInterrupted())
    return failure();
  root->walk([&](FunctionOpInterface func) {
    if (!func.isExternal())
      analyzeBlock(func.getFunctionBody().front(), SyncFacts(), out);
  });
  return success();
}
