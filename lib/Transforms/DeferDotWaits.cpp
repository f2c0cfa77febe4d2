//===- DeferDotWaits.cpp - Warpgroup dots that run across iterations ------===//
//
// A GEMM's loop pops A and B, pushes the blocks of a later iteration and
// issues its dot. When the dot waits for its own wgmma group, the tensor
// cores idle while the warps loop around to the next pop. Deferred, the dot
// waits only for the previous iteration's group: the one in flight still
// reads the stage it popped, so its rings get one more stage, and since
// every warp waits for iteration i - 1's group before the barrier of pop
// i + 1, the stage that pop's push overwrites (the one iteration i - 1
// read) is free.
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

/// The loop-carried accumulator `dot` alone reads and updates, as the index
/// of its iteration argument; none if the dot cannot be deferred.
std::optional<unsigned> deferrableAccumulator(DotOp dot) {
  auto loop = dyn_cast<scf::ForOp>(dot->getParentOp());
  if (!loop || !isa<SharedLayoutAttr>(dot.getA().getType().getEncoding()) ||
      !isa<SharedLayoutAttr>(dot.getB().getType().getEncoding()) ||
      !ringOf(dot.getA()) || !ringOf(dot.getB()))
    return std::nullopt;
  auto arg = dyn_cast<BlockArgument>(dot.getAcc());
  if (!arg || arg.getOwner() != loop.getBody() || !arg.hasOneUse() ||
      !dot->hasOneUse())
    return std::nullopt;
  unsigned index = arg.getArgNumber() - loop.getNumInductionVars();
  OpOperand &use = *dot->getUses().begin();
  if (!isa<scf::YieldOp>(use.getOwner()) || use.getOperandNumber() != index)
    return std::nullopt;
  // Groups are per warp, not per dot: the only warpgroup dot of its loop.
  bool alone = true;
  loop.getBody()->walk([&](DotOp other) {
    alone &= other == dot ||
             !isa<SharedLayoutAttr>(other.getB().getType().getEncoding());
  });
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
    FailureOr<tegula::TargetInfo> target = getTarget(func);
    if (failed(target) || target->dotFamily != tegula::DotFamily::Wgmma)
      return;
    SmallVector<std::pair<DotOp, unsigned>> dots;
    func.walk([&](DotOp dot) {
      if (std::optional<unsigned> index = deferrableAccumulator(dot))
        dots.push_back({dot, *index});
    });
    for (auto [dot, index] : dots) {
      // One more stage for each ring, unless shared memory runs out.
      SmallVector<PipelineCreateOp> rings = {ringOf(dot.getA())};
      if (ringOf(dot.getB()) != rings.front())
        rings.push_back(ringOf(dot.getB()));
      for (PipelineCreateOp ring : rings)
        setStages(ring, ring.getType().getStages() + 1);
      if (planSharedMemory(func).sharedBytes > target->maxSharedBytes) {
        for (PipelineCreateOp ring : rings)
          setStages(ring, ring.getType().getStages() - 1);
        continue;
      }
      dot->setAttr(TileDialect::kDotsInFlightAttrName,
                   IntegerAttr::get(IntegerType::get(&getContext(), 32), 1));
      auto loop = cast<scf::ForOp>(dot->getParentOp());
      Value result = loop.getResult(index);
      OpBuilder builder(loop->getContext());
      builder.setInsertionPointAfter(loop);
      auto wait = DotWaitOp::create(builder, loop.getLoc(), result);
      result.replaceAllUsesExcept(wait.getResult(), wait);
    }
  }
};
} // namespace
