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
#include "llvm/ADT/MapVector.h"

#include <deque>

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
  /// The pop whose wait and barrier the pops marked None rely on.
  Operation *lastWait = nullptr;
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
/// Every push commits its copies as one group, so a pop's block has landed
/// once at most n of the thread's most recent groups are pending, n being
/// the groups committed after the push that filled it. CopyGroups finds a
/// lower bound on n for each pop by following the commit order: each ring
/// is a FIFO of its unpopped pushes, each loop is run until its effect on
/// the FIFOs repeats, and anything it cannot follow (pushes or pops under a
/// branch or in a nested region) makes it say 0 (wait for every group).
class CopyGroups {
public:
  CopyGroups(llvm::DenseMap<Operation *, int64_t> &groupsAfter,
             llvm::DenseMap<Operation *, int64_t> &outstandingAtPush)
      : groupsAfter(groupsAfter), outstandingAtPush(outstandingAtPush) {}

  /// Commit positions of each ring's unpopped pushes; `committed` counts
  /// every push so far. Unknown once the walk loses track.
  struct Queue {
    bool known = true;
    int64_t committed = 0;
    llvm::MapVector<Value, std::deque<int64_t>> unpopped;

    /// The pushes' ages (groups committed since each), comparable across
    /// iterations.
    std::vector<std::pair<Value, std::vector<int64_t>>> ages() const {
      std::vector<std::pair<Value, std::vector<int64_t>>> result;
      for (const auto &[ring, positions] : unpopped) {
        std::vector<int64_t> age;
        for (int64_t position : positions)
          age.push_back(committed - position);
        result.push_back({ring, age});
      }
      return result;
    }
  };

  void walk(Block &block, Queue &queue) {
    for (Operation &op : block) {
      if (auto push = dyn_cast<PipelinePushOp>(op)) {
        if (queue.known) {
          auto &positions = queue.unpopped[getRing(push.getPipeline())];
          recordPush(&op, int64_t(positions.size()));
          positions.push_back(queue.committed++);
        } else {
          recordPush(&op, kUnknown);
        }
        continue;
      }
      if (auto pop = dyn_cast<PipelinePopOp>(op)) {
        int64_t after = 0;
        std::deque<int64_t> *positions =
            queue.known ? &queue.unpopped[getRing(pop.getPipeline())] : nullptr;
        if (positions && !positions->empty()) {
          after = queue.committed - positions->front() - 1;
          positions->pop_front();
        } else {
          queue.known = false;
        }
        record(&op, after);
        continue;
      }
      if (op.getNumRegions() == 0 || !hasPipelineOps(&op))
        continue;
      auto loop = dyn_cast<scf::ForOp>(op);
      if (queue.known && loop && isStraightLine(*loop.getBody()))
        walkLoop(loop, queue);
      else
        forget(&op, queue);
    }
  }

private:
  static bool hasPipelineOps(Operation *op) {
    return op
        ->walk([](Operation *inner) {
          return isa<PipelinePushOp, PipelinePopOp>(inner)
                     ? WalkResult::interrupt()
                     : WalkResult::advance();
        })
        .wasInterrupted();
  }

  /// Whether every push and pop of `body` runs once per iteration.
  static bool isStraightLine(Block &body) {
    for (Operation &op : body)
      if (op.getNumRegions() != 0 && hasPipelineOps(&op))
        return false;
    return true;
  }

  void record(Operation *pop, int64_t after) {
    auto [it, inserted] = groupsAfter.try_emplace(pop, after);
    if (!inserted)
      it->second = std::min(it->second, after);
  }

  void forget(Operation *op, Queue &queue) {
    op->walk([&](PipelinePopOp pop) { record(pop, 0); });
    op->walk([&](PipelinePushOp push) { recordPush(push, kUnknown); });
    queue.known = false;
  }

  static constexpr int64_t kUnknown = INT64_MAX;
  /// The most unpopped blocks of its ring a push was seen to find.
  void recordPush(Operation *push, int64_t outstanding) {
    auto [it, inserted] = outstandingAtPush.try_emplace(push, outstanding);
    if (!inserted)
      it->second = std::max(it->second, outstanding);
  }

  /// Runs the body from the state before the loop until the state at the
  /// top of an iteration repeats; every iteration's pops are recorded.
  /// After the loop (any trip count), each push is at least as old as in
  /// the youngest of the states seen.
  void walkLoop(scf::ForOp loop, Queue &queue) {
    constexpr int kMaxIterations = 16;
    SmallVector<Queue> tops = {queue};
    Queue state = queue;
    bool repeated = false;
    for (int i = 0; i < kMaxIterations && state.known && !repeated; ++i) {
      walk(*loop.getBody(), state);
      repeated = state.known && state.ages() == tops.back().ages();
      tops.push_back(state);
    }
    if (!repeated) {
      forget(loop, queue);
      return;
    }
    // Youngest ages over the states a trip count can leave.
    Queue after = tops.back();
    for (const Queue &top : tops) {
      if (top.ages().size() != after.ages().size())
        return forget(loop, queue);
      for (auto &[ring, positions] : after.unpopped) {
        auto other = top.unpopped.find(ring);
        if (other == top.unpopped.end() ||
            other->second.size() != positions.size())
          return forget(loop, queue);
        for (auto [mine, theirs] : llvm::zip(positions, other->second))
          mine = std::max(mine, after.committed - (top.committed - theirs));
      }
    }
    queue = after;
  }

  llvm::DenseMap<Operation *, int64_t> &groupsAfter;
  llvm::DenseMap<Operation *, int64_t> &outstandingAtPush;
};

bool hasPipelineOps(Operation *op) {
  bool found = false;
  op->walk([&](Operation *inner) {
    if (isa<PipelinePushOp, PipelinePopOp>(inner))
      found = true;
  });
  return found;
}

/// What the walk fills.
struct SyncResult {
  llvm::DenseMap<Operation *, PipelineSync> &sync;
  /// Groups committed after each pop's block, a lower bound (CopyGroups).
  const llvm::DenseMap<Operation *, int64_t> &groupsAfter;
  /// Unpopped blocks of its ring each push finds, at most (CopyGroups).
  const llvm::DenseMap<Operation *, int64_t> &outstandingAtPush;
  llvm::DenseMap<Operation *, int64_t> &pendingAllowed;
};

void analyzeBlock(Block &block, SyncFacts facts, SyncResult &out);

/// Analyzes the regions of `op` and returns what holds after it.
SyncFacts analyzeNested(Operation *op, const SyncFacts &before,
                        SyncResult &out) {
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
    after.lastWait = before.lastWait;
    op->walk([&](PipelinePopOp pop) {
      after.popsSinceBarrier[getRing(pop.getPipeline())] += 2;
    });
  }
  return after;
}

void analyzeBlock(Block &block, SyncFacts facts, SyncResult &out) {
  for (Operation &op : block) {
    if (auto pop = dyn_cast<PipelinePopOp>(op)) {
      int64_t after = out.groupsAfter.lookup_or(&op, 0);
      if (facts.synced) {
        // The wait this pop relies on must cover its block too.
        out.sync[&op] = PipelineSync::None;
        int64_t &allowed = out.pendingAllowed[facts.lastWait];
        allowed = std::min(allowed, after);
      } else {
        out.sync[&op] = PipelineSync::Full;
        out.pendingAllowed[&op] = after;
        facts.barrierSeen = facts.synced = true;
        facts.popsSinceBarrier.clear();
        facts.lastWait = &op;
      }
      ++facts.popsSinceBarrier[getRing(pop.getPipeline())];
      continue;
    }
    if (auto push = dyn_cast<PipelinePushOp>(op)) {
      int reads = facts.popsSinceBarrier.lookup(getRing(push.getPipeline()));
      if (!facts.barrierSeen || reads > 1) {
        out.sync[&op] = PipelineSync::Full;
        facts.barrierSeen = true;
        facts.popsSinceBarrier.clear();
      } else {
        // With c blocks unpopped, the push writes stage (pops + c) % S and
        // the last pop read (pops - 1) % S: the same only when c = S - 1.
        int64_t stages = push.getPipeline().getType().getStages();
        bool otherStage =
            out.outstandingAtPush.lookup_or(&op, INT64_MAX) <= stages - 2;
        out.sync[&op] = reads == 0 || otherStage ? PipelineSync::None
                                                 : PipelineSync::IfSameStage;
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
    Operation *root, llvm::DenseMap<Operation *, PipelineSync> &sync,
    llvm::DenseMap<Operation *, int64_t> &pendingAllowed) {
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
    if (func.isExternal())
      return;
    llvm::DenseMap<Operation *, int64_t> groupsAfter, outstandingAtPush;
    CopyGroups::Queue queue;
    CopyGroups(groupsAfter, outstandingAtPush)
        .walk(func.getFunctionBody().front(), queue);
    SyncResult out{sync, groupsAfter, outstandingAtPush, pendingAllowed};
    analyzeBlock(func.getFunctionBody().front(), SyncFacts(), out);
  });
  return success();
}
