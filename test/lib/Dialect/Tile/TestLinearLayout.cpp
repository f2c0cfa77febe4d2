//===- TestLinearLayout.cpp - Print linear layouts for lit tests ----------===//

#include "TestPasses.h"
#include "Tile/TileOps.h"

using namespace mlir;

namespace tegula::tile {
#define GEN_PASS_DEF_TILETESTLINEARLAYOUT
#include "TestPasses.h.inc"
} // namespace tegula::tile

using namespace tegula::tile;

namespace {
struct TestLinearLayoutPass
    : public tegula::tile::impl::TileTestLinearLayoutBase<
          TestLinearLayoutPass> {
  void runOnOperation() override {
    getOperation().walk([](Operation *op) {
      for (Value result : op->getResults()) {
        auto tile = dyn_cast<RankedTensorType>(result.getType());
        if (!tile || !tile.getEncoding())
          continue;
        auto layout = dyn_cast<LayoutAttrInterface>(tile.getEncoding());
        if (!layout)
          continue;
        FailureOr<LinearLayout> linear = layout.toLinearLayout(
            tile.getShape(), [op] { return op->emitError(); });
        if (succeeded(linear))
          op->emitRemark() << "layout: " << linear->str();
      }
      // What the lowering compares with the source's layout.
      if (auto permute = dyn_cast<PermuteOp>(op))
        op->emitRemark() << "result in source: "
                         << permute.getResultLayoutInSource().str();
      if (auto reshape = dyn_cast<ReshapeOp>(op))
        op->emitRemark() << "result in source: "
                         << reshape.getResultLayoutInSource().str();
    });
  }
};
} // namespace
