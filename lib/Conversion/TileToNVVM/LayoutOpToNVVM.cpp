//===- LayoutOpToNVVM.cpp - Broadcasts, unit dims, conversions, trans -----===//
//
// When two layouts agree on what each lane and warp holds, moving between
// them is a register permutation (a vector.shuffle, free after register
// allocation); otherwise the tile goes through shared memory. Conversions,
// permutes and reshapes all compare the result's layout, mapped into the
// source's coordinates, with the source's.
//
//===----------------------------------------------------------------------===//

#include "Common.h"
#include "Patterns.h"
#include "ThroughShared.h"

#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace tegula::tile;

namespace {
using Coords = LinearLayout::Coords;

Value shuffleRegisters(OpBuilder &builder, Location loc, Value source,
                       Type resultType, ArrayRef<int64_t> mapping) {
  return vector::ShuffleOp::create(builder, loc, resultType, source, source,
                                   mapping);
}

struct BroadcastLowering : public OpConversionPattern<BroadcastOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(BroadcastOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    ArrayRef<int64_t> sourceShape = op.getSource().getType().getShape();
    auto mapping = getRegisterMapping(
        getLinearLayout(op.getSource().getType()),
        getLinearLayout(op.getType()), [&](const Coords &coords) {
          Coords projected(coords);
          for (auto [dim, extent] : llvm::enumerate(sourceShape))
            if (extent == 1)
              projected[dim] = 0;
          return projected;
        });
    if (!mapping)
      return rewriter.notifyMatchFailure(
          op, "source layout does not replicate along the broadcast dims");
    rewriter.replaceOp(
        op, shuffleRegisters(rewriter, op.getLoc(), adaptor.getSource(),
                             getTypeConverter()->convertType(op.getType()),
                             *mapping));
    return success();
  }
};

struct ExpandDimsLowering : public OpConversionPattern<ExpandDimsOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ExpandDimsOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    unsigned axis = op.getAxis();
    auto mapping = getRegisterMapping(
        getLinearLayout(op.getSource().getType()),
        getLinearLayout(op.getType()), [&](const Coords &coords) {
          Coords projected(coords);
          projected.erase(projected.begin() + axis);
          return projected;
        });
    if (!mapping)
      return rewriter.notifyMatchFailure(
          op, "source layout is not the result's slice along the new axis");
    rewriter.replaceOp(
        op, shuffleRegisters(rewriter, op.getLoc(), adaptor.getSource(),
                             getTypeConverter()->convertType(op.getType()),
                             *mapping));
    return success();
  }
};

/// The source's registers in layout `to` (the result's distribution in the
/// source's coordinates): a register permutation where lanes and warps
/// already hold the right elements, else through shared memory.
template <typename SourceOp>
struct MoveLowering : public StatefulPattern<SourceOp> {
  using StatefulPattern<SourceOp>::StatefulPattern;
  using OpAdaptor = typename SourceOp::Adaptor;

  /// The result's layout in the source's coordinates.
  virtual LinearLayout resultInSource(SourceOp op) const = 0;

  LogicalResult
  matchAndRewrite(SourceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    LinearLayout from = getLinearLayout(op.getSource().getType());
    LinearLayout to = resultInSource(op);
    Type resultType = this->getTypeConverter()->convertType(op.getType());
    auto mapping = getRegisterMapping(
        from, to, [](const Coords &coords) { return coords; });
    if (mapping) {
      rewriter.replaceOp(op, shuffleRegisters(rewriter, op.getLoc(),
                                              adaptor.getSource(), resultType,
                                              *mapping));
      return success();
    }
    rewriter.replaceOp(
        op, convertThroughShared(
                this->state.target, rewriter, op.getLoc(), op,
                adaptor.getSource(), from, to, op.getType().getElementType(),
                resultType, takeScratch(rewriter, op.getLoc(), op, this->state),
                // Only a small dot's result has warps that copy it (in other
                // layouts, copies write alike, as before).
                isa<MmaLayoutAttr>(op.getSource().getType().getEncoding())));
    return success();
  }
};

struct ConvertLayoutLowering : public MoveLowering<ConvertLayoutOp> {
  using MoveLowering::MoveLowering;
  LinearLayout resultInSource(ConvertLayoutOp op) const override {
    return getLinearLayout(op.getType());
  }

  LogicalResult
  matchAndRewrite(ConvertLayoutOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (isa<SharedLayoutAttr>(op.getSource().getType().getEncoding()))
      return readStage(op, adaptor, rewriter);
    return MoveLowering::matchAndRewrite(op, adaptor, rewriter);
  }

  /// Registers of a tile that warpgroup dots read in place, for a reader
  /// that needs them: loaded from the stage as a pop would (the pop's wait
  /// and barrier came first).
  LogicalResult readStage(ConvertLayoutOp op, OpAdaptor adaptor,
                          ConversionPatternRewriter &rewriter) const {
    bool transposed;
    PipelinePopOp pop = getStagePop(op.getSource(), transposed);
    if (!pop)
      return rewriter.notifyMatchFailure(op, "shared source is not a pop");
    PipelineType stage = pop.getPipeline().getType();
    LinearLayout layout = getLinearLayout(op.getType());
    // The result's layout in the stage's coordinates.
    if (transposed)
      layout = layout.transposed();
    SmallVector<Value> values = readTileFromShared(
        this->state.target, rewriter, op.getLoc(), op, stage.getShape(), layout,
        stage.getElementType(), stage.getElementType(), adaptor.getSource());
    rewriter.replaceOp(
        op, packVector(rewriter, op.getLoc(),
                       this->getTypeConverter()->convertType(op.getType()),
                       values));
    return success();
  }
};

/// permute and reshape: a move to the layout the op derives for its result.
template <typename ViewOp> struct ViewLowering : public MoveLowering<ViewOp> {
  using MoveLowering<ViewOp>::MoveLowering;
  LinearLayout resultInSource(ViewOp op) const override {
    return op.getResultLayoutInSource();
  }
};

struct TransLowering : public StatefulPattern<TransOp> {
  using StatefulPattern::StatefulPattern;

  LogicalResult
  matchAndRewrite(TransOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    // A stage read in place (its offset) is transposed by how the dot's
    // descriptor reads it.
    if (isa<SharedLayoutAttr>(op.getSource().getType().getEncoding())) {
      rewriter.replaceOp(op, adaptor.getSource());
      return success();
    }
    LinearLayout from = getLinearLayout(op.getSource().getType());
    LinearLayout result = getLinearLayout(op.getType());
    // The result's layout, in the source's coordinates.
    LinearLayout to = result.transposed();
    rewriter.replaceOp(op, convertThroughShared(
                               state.target, rewriter, op.getLoc(), op,
                               adaptor.getSource(), from, to,
                               op.getType().getElementType(),
                               getTypeConverter()->convertType(op.getType()),
                               takeScratch(rewriter, op.getLoc(), op, state)));
    return success();
  }
};
} // namespace

void tegula::tile::populateLayoutOpToNVVMPatterns(
    const TypeConverter &converter, RewritePatternSet &patterns,
    LoweringState &state) {
  patterns.add<BroadcastLowering, ExpandDimsLowering>(converter,
                                                      patterns.getContext());
  patterns.add<ConvertLayoutLowering, TransLowering, ViewLowering<PermuteOp>,
               ViewLowering<ReshapeOp>>(converter, patterns.getContext(),
                                        state);
}
