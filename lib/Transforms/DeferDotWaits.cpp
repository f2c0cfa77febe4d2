//===- DeferDotWaits.cpp - Warpgroup dots that run across iterations ------===//
//
// Two deferrals, both of a wait that follows its issue at the end of a
// loop's body:
//
// A GEMM's loop pops A and B, pushes the blocks of a later iteration and
// issues its dot (tile.dot_issue). When the wait after it waits for its own
// wgmma group, the tensor cores idle while the warps loop around to the
// next pop. Deferred (pending = 1), it waits only for the previous
// iteration's group: the one in flight still
// reads the stage it popped, so its rings get one more stage, and since
// every warp waits for iteration i - 1's group before the barrier of pop
// i + 1, the stage that pop's push overwrites (the one iteration i - 1
// read) is free. A pending = 0 wait after the loop collects the last
// group.
//
// Attention's P.V accumulates into a value the next iteration first reads
// after its own Q.K^T dot (acc * alpha). Its wait moves there, onto the
// iteration argument (pending = 0, after the Q.K^T group's own wait, which
// already drained every group), so P.V runs on the tensor cores while the
// warps loop around, pop, push the next blocks and issue Q.K^T. The rings
// it reads in place get one more stage: the next iteration's push must not
// overwrite the stage the group in flight reads, and it is free again by
// the barrier of the pop after, as above. Every other wait of such a loop
// waits for all groups, so no wait's count changes. The stage count
// assumes what every pipelined loop does: one pop a ring an iteration,
// pushes after the pops' barrier.
//
//===----------------------------------------------------------------------===//

#include "tegula/Analysis/SharedMemoryPlan.h"

#include "Tile/TileDialect.h"
#include "Tile/TileOps.h"
#include "Tile/TilePasses.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"

using namespace mlir;

namespace tegula::tile {
#define GEN_PASS_DEF_TILEDEFERDOTWAITS
#include "Tile/TilePasses.h.inc"
} // namespace tegula::tile

using namespace tegula::tile;

namespace {

/// The ring whose stage `operand` is, popped (and perhaps transposed).
PipelineCreateOp ringOf(Value operand) {
  bool transposed;
  PipelinePopOp pop = getStagePop(operand, transposed);
  return pop ? pop.getPipeline().getDefiningOp<PipelineCreateOp>()
             : PipelineCreateOp();
}

/// The loop-carried accumulator that `wait`, right after its issue,
/// alone reads and updates, as the index of its iteration argument; none if
/// the wait cannot be deferred.
std::optional<unsigned> deferrableAccumulator(DotWaitOp wait) {
  auto issue = wait.getAcc().getDefiningOp<DotIssueOp>();
  auto loop = dyn_cast<scf::ForOp>(wait->getParentOp());
  if (!issue || !loop || issue->getParentOp() != loop ||
      wait.getPending() != 0 || !issue.getResult().hasOneUse() ||
      !isa<SharedLayoutAttr>(issue.getA().getType().getEncoding()) ||
      !ringOf(issue.getA()) || !ringOf(issue.getB()))
    return std::nullopt;
  auto arg = dyn_cast<BlockArgument>(issue.getAcc());
  if (!arg || arg.getOwner() != loop.getBody() || !arg.hasOneUse() ||
      !wait->hasOneUse())
    return std::nullopt;
  unsigned index = arg.getArgNumber() - loop.getNumInductionVars();
  OpOperand &use = *wait->getUses().begin();
  if (!isa<scf::YieldOp>(use.getOwner()) || use.getOperandNumber() != index)
    return std::nullopt;
  // Groups are per warp, not per dot: the only warpgroup dot of its loop.
  bool alone = true;
  loop.getBody()->walk([&](DotIssueOp other) { alone &= other == issue; });
  if (!alone)
    return std::nullopt;
  return index;
}

void setStages(PipelineCreateOp ring, unsigned stages) {
  PipelineType type = ring.getType();
  ring.getResult().setType(PipelineType::get(ring.getContext(), type.getShape(),
                                             type.getElementType(), stages));
}

/// The rings `issue` reads in place: stages a group in flight still reads.
SmallVector<PipelineCreateOp> ringsReadBy(DotIssueOp issue) {
  SmallVector<PipelineCreateOp> rings;
  for (Value operand : {issue.getA(), issue.getB()})
    if (PipelineCreateOp ring = ringOf(operand);
        ring && !llvm::is_contained(rings, ring))
      rings.push_back(ring);
  return rings;
}

/// Whether what `issue` reads holds still while its group runs on until
/// its wait moves to `first` in the next iteration.
/// - An operand in shared memory is a ring's stage (its ring gets one
///   more) or is defined outside the loop; a buffer staged in the loop
///   (tile.to_shared) is rewritten before `first` while the group reads it.
/// - An A in registers is rewritten (by the same instructions every
///   iteration) only after a wait that drains every group. wgmma reads the
///   registers while the group runs, and ptxas does not keep them (a GEMM
///   whose A is loaded from its stage at the top of the loop read the next
///   block's A: the H100 checks, 2026-11-26).
bool operandsOutliveGroup(DotIssueOp issue, Operation *first) {
  Operation *loop = issue->getParentOp();
  for (Value operand : {issue.getA(), issue.getB()})
    if (isInSharedMemory(operand) && !ringOf(operand) &&
        loop->isAncestor(operand.getParentRegion()->getParentOp()))
      return false;
  Value a = issue.getA();
  if (isInSharedMemory(a))
    return true;
  Operation *def = a.getDefiningOp();
  Block *body = issue->getBlock();
  if (!def || !(def = body->findAncestorOpInBlock(*def)))
    return false;
  if (first->isBeforeInBlock(def))
    return true;
  for (Operation &op : *body) {
    if (&op == def)
      return false;
    if (isa<DotWaitOp>(op) && !isa<BlockArgument>(op.getOperand(0)))
      return true;
  }
  return false;
}

/// The loop-carried accumulator that `wait`, right after its issue, only
/// yields, as the index of its iteration argument, when the next iteration
/// reads it (the op that first does is returned too) and every other wait
/// of the loop drains all groups; none otherwise.
std::optional<std::pair<unsigned, Operation *>>
carriedAccumulator(DotWaitOp wait) {
  auto issue = wait.getAcc().getDefiningOp<DotIssueOp>();
  auto loop = dyn_cast<scf::ForOp>(wait->getParentOp());
  if (!issue || !loop || issue->getParentOp() != loop ||
      wait.getPending() != 0 || !issue.getResult().hasOneUse() ||
      !wait->hasOneUse() || ringsReadBy(issue).empty())
    return std::nullopt;
  OpOperand &use = *wait->getUses().begin();
  if (!isa<scf::YieldOp>(use.getOwner()))
    return std::nullopt;
  bool othersDrain = true;
  loop.getBody()->walk(
      [&](DotWaitOp other) { othersDrain &= other.getPending() == 0; });
  BlockArgument arg = loop.getRegionIterArgs()[use.getOperandNumber()];
  Operation *first = nullptr;
  for (OpOperand &read : arg.getUses()) {
    Operation *reader = loop.getBody()->findAncestorOpInBlock(*read.getOwner());
    if (!first || reader->isBeforeInBlock(first))
      first = reader;
  }
  if (!othersDrain || !first || isa<scf::YieldOp>(first) ||
      !operandsOutliveGroup(issue, first))
    return std::nullopt;
  return std::make_pair(use.getOperandNumber(), first);
}

/// One more stage for each of `rings` that has none yet (`deepened`; the
/// loops of a versioned loop share rings, and one stage serves both),
/// unless shared memory runs out (then none, and false).
bool addStage(func::FuncOp func, ArrayRef<PipelineCreateOp> rings,
              const tegula::TargetInfo &target,
              llvm::DenseSet<Operation *> &deepened) {
  SmallVector<PipelineCreateOp> added;
  for (PipelineCreateOp ring : rings)
    if (!deepened.contains(ring))
      added.push_back(ring);
  for (PipelineCreateOp ring : added)
    setStages(ring, ring.getType().getStages() + 1);
  if (planSharedMemory(func).sharedBytes > target.maxSharedBytes) {
    for (PipelineCreateOp ring : added)
      setStages(ring, ring.getType().getStages() - 1);
    return false;
  }
  for (PipelineCreateOp ring : added)
    deepened.insert(ring);
  return true;
}

/// Waits for the last group of `loop`'s result `index` after the loop.
DotWaitOp waitAfterLoop(scf::ForOp loop, unsigned index) {
  Value result = loop.getResult(index);
  OpBuilder builder(loop->getContext());
  builder.setInsertionPointAfter(loop);
  auto last = DotWaitOp::create(builder, loop.getLoc(), result.getType(),
                                result, /*token=*/Value(), /*pending=*/0);
  result.replaceAllUsesExcept(last.getResult(), last);
  return last;
}

/// Moves `wait` onto its iteration argument `index`, before `first`, the
/// op of the next iteration that first reads it.
void waitAtNextRead(DotWaitOp wait, unsigned index, Operation *first) {
  auto loop = cast<scf::ForOp>(wait->getParentOp());
  BlockArgument arg = loop.getRegionIterArgs()[index];
  wait.getResult().replaceAllUsesWith(wait.getAcc());
  wait->erase();
  OpBuilder builder(first);
  auto moved = DotWaitOp::create(builder, first->getLoc(), arg.getType(), arg,
                                 /*token=*/Value(), /*pending=*/0);
  arg.replaceAllUsesExcept(moved.getResult(), moved);
  DotWaitOp last = waitAfterLoop(loop, index);
  // Where the loop's result is read after it, the initial value enters
  // through a wait as well (it waits for nothing): a constant would be
  // rematerialized on the path that skips the loop, moves into the
  // accumulator registers that ptxas places between the group in flight
  // and the wait after the loop, and then serializes every wgmma of the
  // kernel (C7515). A wait's result is one value the loop takes as it is.
  // Where nothing reads it after the loop (linear attention's state), that
  // wait is what serializes them: ptxas 13.0 reports non-wgmma reads of the
  // accumulator in flight for any wait before the loop, and none without
  // one (the zeros are moved on both paths then, with no group in flight).
  if (last->use_empty())
    return;
  OpOperand &init = loop.getInitsMutable()[index];
  builder.setInsertionPoint(loop);
  init.set(DotWaitOp::create(builder, loop.getLoc(), init.get().getType(),
                             init.get(), /*token=*/Value(), /*pending=*/0));
}

struct DeferDotWaitsPass
    : public tegula::tile::impl::TileDeferDotWaitsBase<DeferDotWaitsPass> {
  using TileDeferDotWaitsBase::TileDeferDotWaitsBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    SmallVector<std::pair<DotWaitOp, unsigned>> waits;
    SmallVector<std::tuple<DotWaitOp, unsigned, Operation *>> carried;
    func.walk([&](DotWaitOp wait) {
      if (std::optional<unsigned> index = deferrableAccumulator(wait))
        waits.push_back({wait, *index});
      else if (auto next = carriedAccumulator(wait))
        carried.push_back({wait, next->first, next->second});
    });
    if (waits.empty() && carried.empty())
      return;
    FailureOr<tegula::TargetInfo> target = getTarget(func);
    if (failed(target))
      return signalPassFailure();
    llvm::DenseSet<Operation *> deepened;
    for (auto [wait, index] : waits) {
      auto issue = wait.getAcc().getDefiningOp<DotIssueOp>();
      if (!addStage(func, ringsReadBy(issue), *target, deepened))
        continue;
      wait.setPending(1);
      waitAfterLoop(cast<scf::ForOp>(wait->getParentOp()), index);
    }
    // One accumulator in flight across a loop's back edge at most: its A
    // registers stay live until the next iteration's wait too, and two
    // (the backward's dK and dV) spill at 128 x 64 blocks.
    llvm::DenseMap<Operation *, unsigned> perLoop;
    for (auto &entry : carried)
      ++perLoop[std::get<0>(entry)->getParentOp()];
    for (auto [wait, index, first] : carried) {
      if (perLoop[wait->getParentOp()] > 1)
        continue;
      auto issue = wait.getAcc().getDefiningOp<DotIssueOp>();
      if (addStage(func, ringsReadBy(issue), *target, deepened))
        waitAtNextRead(wait, index, first);
    }
  }
};
} // namespace
