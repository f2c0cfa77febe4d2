//===- DeferDotWaits.cpp - Warpgroup dots that run across iterations ------===//
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

/// The ring a pop reads, when the pop names it directly.
PipelineCreateOp ringOf(Value operand) {
  auto pop = operand.getDefiningOp<PipelinePopOp>();
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

struct DeferDotWaitsPass
    : public tegula::tile::impl::TileDeferDotWaitsBase<DeferDotWaitsPass> {
  using TileDeferDotWaitsBase::TileDeferDotWaitsBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    SmallVector<std::pair<DotWaitOp, unsigned>> waits;
    func.walk([&](DotWaitOp wait) {
      if (std::optional<unsigned> index = deferrableAccumulator(wait))
        waits.push_back({wait, *index});
    });
    if (waits.empty())
      return;
    FailureOr<tegula::TargetInfo> target = getTarget(func);
    if (failed(target))
      return signalPassFailure();
    for (auto [wait, index] : waits) {
      auto issue = wait.getAcc().getDefiningOp<DotIssueOp>();
      // One more stage for each ring, unless shared memory runs out.
      SmallVector<PipelineCreateOp> rings = {ringOf(issue.getA())};
      if (ringOf(issue.getB()) != rings.front())
        rings.push_back(ringOf(issue.getB()));
      for (PipelineCreateOp ring : rings)
        setStages(ring, ring.getType().getStages() + 1);
      if (planSharedMemory(func).sharedBytes > target->maxSharedBytes) {
        for (PipelineCreateOp ring : rings)
          setStages(ring, ring.getType().getStages() - 1);
        continue;
      }
      wait.setPending(1);
      auto loop = cast<scf::ForOp>(wait->getParentOp());
      Value result = loop.getResult(index);
      OpBuilder builder(loop->getContext());
      builder.setInsertionPointAfter(loop);
      auto last = DotWaitOp::create(builder, loop.getLoc(), result.getType(),
                                    result, /*token=*/Value(), /*pending=*/0);
      result.replaceAllUsesExcept(last.getResult(), last);
    }
  }
};
} // namespace
