//===- SplitAsyncDots.cpp - wgmma dots as an issue and a wait -------------===//
//
// A dot planned as wgmma (#tile.dot_plan) runs asynchronously: its
// instructions are issued as one group, and its accumulator may be read
// only once the group completes. Splitting it into tile.dot_issue and
// tile.dot_wait makes that visible, so that later transforms can move the
// wait (tile-defer-dot-waits). Each wait starts right after its issue with
// pending = 0, which is what the dot did as one op.
//
//===----------------------------------------------------------------------===//

#include "Tile/TileDialect.h"
#include "Tile/TileOps.h"
#include "Tile/TilePasses.h"

#include "mlir/IR/Builders.h"

using namespace mlir;

namespace tegula::tile {
#define GEN_PASS_DEF_TILESPLITASYNCDOTS
#include "Tile/TilePasses.h.inc"
} // namespace tegula::tile

using namespace tegula::tile;

namespace {

struct SplitAsyncDotsPass
    : public tegula::tile::impl::TileSplitAsyncDotsBase<SplitAsyncDotsPass> {
  using TileSplitAsyncDotsBase::TileSplitAsyncDotsBase;

  void runOnOperation() override {
    SmallVector<DotOp> dots;
    getOperation().walk([&](DotOp dot) {
      if (DotPlanAttr plan = dot.getPlanAttr();
          plan && plan.getFamily() == DotFamily::Wgmma)
        dots.push_back(dot);
    });
    OpBuilder builder(&getContext());
    for (DotOp dot : dots) {
      builder.setInsertionPoint(dot);
      Type accType = dot.getAcc().getType();
      auto issue = DotIssueOp::create(builder, dot.getLoc(), accType,
                                      DotTokenType::get(&getContext()),
                                      dot.getA(), dot.getB(), dot.getAcc());
      auto wait = DotWaitOp::create(builder, dot.getLoc(), accType,
                                    issue.getResult(), issue.getToken(),
                                    /*pending=*/0);
      dot.replaceAllUsesWith(wait.getResult());
      dot.erase();
    }
  }
};
} // namespace
