//===- SinkDotWaits.cpp - Wait for a warpgroup dot where it is first read -===//
//
// tile-split-async-dots leaves each wgmma dot's wait right after its issue,
// so the warps stop until the tensor cores finish even when the next
// operations do not need the result. This pass moves such a wait down to
// the first operation that reads the result, and counts the groups issued
// in between into its `pending`: a later dot then runs while the warps work
// on the earlier one's result (the backward's S^T and dP^T, issued one
// after the other, overlap with the exponentials of the first).
//
// Only dots that read both operands from shared memory move: a register A
// must not change while its group reads it, and ptxas may give its
// registers to other values once the issue is past. A wait stays in its
// block, never passes an operation whose regions issue or wait for dots or
// write shared memory that a dot reads, and never passes a push into a ring
// (the push may be the one that reuses the stage the group reads).
//
//===----------------------------------------------------------------------===//

#include "Tile/TileDialect.h"
#include "Tile/TileOps.h"
#include "Tile/TilePasses.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;

namespace tegula::tile {
#define GEN_PASS_DEF_TILESINKDOTWAITS
#include "Tile/TilePasses.h.inc"
} // namespace tegula::tile

using namespace tegula::tile;

namespace {

/// Whether a wait may not move past `op`: it writes shared memory that a
/// group may read (a push or a staging copy), or it issues or waits for
/// groups inside regions, where the groups issued in between are not a
/// fixed count.
bool stopsWait(Operation *op) {
  if (isa<PipelinePushOp, ToSharedOp>(op))
    return true;
  if (op->getNumRegions() == 0)
    return false;
  return op
      ->walk([](Operation *inner) {
        return isa<PipelinePushOp, ToSharedOp, DotIssueOp, DotWaitOp>(inner)
                   ? WalkResult::interrupt()
                   : WalkResult::advance();
      })
      .wasInterrupted();
}

/// The operation of `block` that holds the first read of `value` after
/// `from`, or nullptr when nothing in the block reads it.
Operation *firstReader(Value value, Operation *from) {
  Block *block = from->getBlock();
  Operation *first = nullptr;
  for (Operation *user : value.getUsers()) {
    Operation *holder = block->findAncestorOpInBlock(*user);
    if (holder && (!first || holder->isBeforeInBlock(first)))
      first = holder;
  }
  return first;
}

/// Moves `wait` (pending = 0, right after its issue) down to just before
/// the first reader of its result or the first operation it may not pass.
void sinkWait(DotWaitOp wait) {
  auto issue = wait.getToken() ? wait.getToken().getDefiningOp<DotIssueOp>()
                               : DotIssueOp();
  if (wait.getPending() != 0 || !issue || wait->getPrevNode() != issue ||
      !isInSharedMemory(issue.getA()) || !isInSharedMemory(issue.getB()))
    return;
  Operation *reader = firstReader(wait.getResult(), wait);
  if (!reader)
    return;
  int32_t issuedAfter = 0;
  Operation *stop = wait->getNextNode();
  for (; stop != reader && !stopsWait(stop); stop = stop->getNextNode())
    if (isa<DotIssueOp>(stop))
      ++issuedAfter;
  if (stop == wait->getNextNode())
    return;
  wait->moveBefore(stop);
  wait.setPending(issuedAfter);
}

struct SinkDotWaitsPass
    : public tegula::tile::impl::TileSinkDotWaitsBase<SinkDotWaitsPass> {
  using TileSinkDotWaitsBase::TileSinkDotWaitsBase;

  void runOnOperation() override {
    SmallVector<DotWaitOp> waits;
    getOperation().walk([&](DotWaitOp wait) { waits.push_back(wait); });
    // Last first: a later dot's wait is in place before an earlier one
    // moves past its issue.
    for (DotWaitOp wait : llvm::reverse(waits))
      sinkWait(wait);
  }
};
} // namespace
