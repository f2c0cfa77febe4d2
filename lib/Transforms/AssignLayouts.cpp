//===- AssignLayouts.cpp - Give every tile a layout -----------------------===//
//
// Anchors first: dot results take an mma layout, memory accesses a blocked
// layout with 16-byte chunks per thread. Everything else follows its
// operands, preferring mma-derived layouts so that a dot's result stays in
// the registers the tensor cores left it in, and otherwise a tile with a
// memory source rather than a constant or index math built from aranges and
// splats, whose layout is only a default. Each tile op states its own rule
// (LayoutRuleOpInterface, TileInterfaces.cpp); ops without one are
// elementwise. Loop-carried tiles take the layout their loop yields.
// Conversions are then inserted wherever a consumer needs another layout;
// conversions of cheap producers (splats, constants, aranges) and of index
// math over them are folded away by rebuilding them, and a load converted
// into a layout with as wide vectors loads into it (ConvertLayoutOp's
// canonicalization patterns, TileOps.cpp).
//
// Which dots read an operand in place, and how the warps split a dot, is
// tile-plan-dots' decision (#tile.dot_plan): a dot's mma layout is its
// plan's warp split, and tiles the plan left in shared memory
// (#tile.shared) keep that encoding; readers of them that need registers
// get a conversion, which loads them from the stage.
//
//===----------------------------------------------------------------------===//

#include "Tile/TileDialect.h"
#include "Tile/TileOps.h"
#include "Tile/TilePasses.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;

namespace tegula::tile {
#define GEN_PASS_DEF_TILEASSIGNLAYOUTS
#include "Tile/TilePasses.h.inc"
} // namespace tegula::tile

using namespace tegula::tile;

namespace {

bool isTile(Type type) { return isa<RankedTensorType>(type); }

/// True for layouts a dot produced (or slices of them): elementwise work
/// follows these rather than moving the dot's result.
bool isMmaDerived(Attribute layout) {
  if (isa_and_nonnull<MmaLayoutAttr>(layout))
    return true;
  if (auto slice = dyn_cast_or_null<SliceLayoutAttr>(layout))
    return isMmaDerived(slice.getParent());
  return false;
}

class LayoutAssigner : public LayoutQuery {
public:
  LayoutAssigner(func::FuncOp func, unsigned numWarps)
      : func(func), numWarps(numWarps), context(func.getContext()) {}

  LogicalResult run() {
    for (BlockArgument arg : func.getArguments())
      if (isTile(arg.getType()))
        (void)layoutOf(arg);
    if (failed(assignRegion(func.getBody())))
      return failure();
    rewriteTypes();
    insertConversions();
    return success();
  }

  Attribute defaultLayout(RankedTensorType type) override {
    return defaultBlocked(type);
  }

  Attribute layoutOf(Value value) override {
    auto it = layouts.find(value);
    if (it != layouts.end())
      return it->second;
    auto type = cast<RankedTensorType>(value.getType());
    Attribute layout =
        type.getEncoding() ? type.getEncoding() : defaultBlocked(type);
    layouts[value] = layout;
    return layout;
  }

private:
  /// A blocked layout for `type`: 16 bytes per thread along the last
  /// dimension, lanes then warps spread from the last dimension inwards.
  Attribute defaultBlocked(RankedTensorType type) {
    ArrayRef<int64_t> shape = type.getShape();
    unsigned rank = shape.size();
    unsigned bits = std::max(8u, type.getElementTypeBitWidth());
    SmallVector<unsigned> spt(rank, 1), tpw(rank, 1), wpc(rank, 1), order;
    spt[rank - 1] = std::min<int64_t>(shape[rank - 1], 128 / bits);
    unsigned lanes = 32;
    for (int d = rank - 1; d >= 0 && lanes > 1; --d) {
      int64_t room = std::max<int64_t>(1, shape[d] / spt[d]);
      tpw[d] = std::min<int64_t>(lanes, room);
      lanes /= tpw[d];
    }
    tpw[0] *= lanes;
    unsigned warps = numWarps;
    for (unsigned d = 0; d < rank && warps > 1; ++d) {
      int64_t room =
          std::max<int64_t>(1, shape[d] / (int64_t(spt[d]) * tpw[d]));
      wpc[d] = std::min<int64_t>(warps, room);
      warps /= wpc[d];
    }
    wpc[0] *= warps;
    for (int d = rank - 1; d >= 0; --d)
      order.push_back(d);
    return BlockedLayoutAttr::get(context, spt, tpw, wpc, order);
  }

  /// The plan of `dot` (tile-plan-dots), reported when missing.
  static FailureOr<DotPlanAttr> planOf(DotOp dot) {
    if (DotPlanAttr plan = dot.getPlanAttr())
      return plan;
    return dot.emitOpError()
           << "has no plan; run tile-plan-dots before tile-assign-layouts";
  }

  LogicalResult assignRegion(Region &region) {
    for (Block &block : region)
      for (Operation &op : block)
        if (failed(assignOp(&op)))
          return failure();
    return success();
  }

  LogicalResult assignFor(scf::ForOp loop) {
    // Start from the initial values' layouts; if the body yields another
    // (a dot accumulator's, or the loads' that a running sum follows),
    // carry that one instead and assign the body again: the initial value
    // then converts once before the loop, not on every back edge.
    for (auto [arg, init] :
         llvm::zip(loop.getRegionIterArgs(), loop.getInitArgs()))
      if (isTile(arg.getType())) {
        layouts[arg] = layoutOf(init);
        if (defaulted.contains(init))
          defaulted.insert(arg);
      }
    for (int round = 0; round < 2; ++round) {
      if (failed(assignRegion(loop.getRegion())))
        return failure();
      auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
      bool changed = false;
      for (auto [arg, yielded] :
           llvm::zip(loop.getRegionIterArgs(), yield.getOperands())) {
        if (!isTile(arg.getType()))
          continue;
        Attribute carried = layoutOf(yielded);
        if (carried != layouts.lookup(arg) && carried &&
            !isa<SharedLayoutAttr>(carried)) {
          layouts[arg] = carried;
          if (!defaulted.contains(yielded))
            defaulted.erase(arg);
          changed = true;
        }
      }
      if (!changed)
        break;
    }
    // Copy before inserting: operator[] may grow the map and move the
    // entry a reference from layouts[arg] would point to.
    for (auto [result, arg] :
         llvm::zip(loop.getResults(), loop.getRegionIterArgs()))
      if (isTile(result.getType())) {
        Attribute carried = layouts.lookup(arg);
        layouts[result] = carried;
      }
    return success();
  }

  LogicalResult assignIf(scf::IfOp branch) {
    for (Region &region : branch->getRegions())
      if (failed(assignRegion(region)))
        return failure();
    if (branch.getNumResults() == 0)
      return success();
    auto yield = branch.thenYield();
    for (auto [result, yielded] :
         llvm::zip(branch.getResults(), yield.getOperands()))
      if (isTile(result.getType()))
        layouts[result] = layoutOf(yielded);
    return success();
  }

  LogicalResult assignOp(Operation *op) {
    if (auto loop = dyn_cast<scf::ForOp>(op))
      return assignFor(loop);
    if (auto branch = dyn_cast<scf::IfOp>(op))
      return assignIf(branch);
    for (Region &region : op->getRegions())
      if (failed(assignRegion(region)))
        return failure();
    if (op->getNumResults() != 1 || !isTile(op->getResult(0).getType()))
      return success();
    Value result = op->getResult(0);
    auto type = cast<RankedTensorType>(result.getType());

    if (auto dot = dyn_cast<DotOp>(op)) {
      FailureOr<DotPlanAttr> plan = planOf(dot);
      if (failed(plan))
        return failure();
      layouts[result] = MmaLayoutAttr::get(context, plan->getWarps());
      return success();
    }
    // A tile the dot plan left in its stage stays there.
    if (isa_and_nonnull<SharedLayoutAttr>(type.getEncoding())) {
      layouts[result] = type.getEncoding();
      return success();
    }
    if (auto rule = dyn_cast<LayoutRuleOpInterface>(op))
      if (Attribute layout = rule.inferResultLayout(*this)) {
        layouts[result] = layout;
        if (isOnlyDefault(op))
          defaulted.insert(result);
        return success();
      }
    if (isa<arith::ConstantOp>(op)) {
      layouts[result] = defaultBlocked(type);
      defaulted.insert(result);
      return success();
    }
    // Elementwise: follow an mma-derived operand if any, else the first
    // whose layout was not a default (a loaded tile rather than a running
    // sum started from zeros), else the first. Within each class, an
    // operand computed in the op's innermost loop wins over one from
    // outside it: the conversion then falls on the loop-invariant operand,
    // which LICM hoists, instead of running on every iteration.
    auto loop = op->getParentOfType<scf::ForOp>();
    auto rank = [&](Value operand) {
      Attribute layout = layoutOf(operand);
      int kind = isMmaDerived(layout) ? 2 : defaulted.contains(operand) ? 0 : 1;
      return 2 * kind + (loop && isDefinedIn(operand, loop) ? 1 : 0);
    };
    Value chosen;
    for (Value operand : op->getOperands())
      if (isTile(operand.getType()) &&
          (!chosen || rank(operand) > rank(chosen)))
        chosen = operand;
    layouts[result] = chosen ? layoutOf(chosen) : defaultBlocked(type);
    if (!chosen || defaulted.contains(chosen))
      defaulted.insert(result);
    return success();
  }

  /// True when `value` is computed inside `loop` (an iteration's value,
  /// not one the loop only reads).
  static bool isDefinedIn(Value value, scf::ForOp loop) {
    Region *region = value.getParentRegion();
    return region && loop->isAncestor(region->getParentOp());
  }

  /// True when the layout of `op`'s result is only a default: cheap
  /// producers (splats, aranges; constants below), rebuilt in whatever
  /// layout a conversion asks for (RematerializeCheapProducer), and shape
  /// ops over such tiles, which the hoist of conversions above index math
  /// rebuilds too. Elementwise ops follow their other operands, so that
  /// `where(c0 + arange(B) < N, x - mu, 0.0)` keeps the layout of x, not
  /// of the i32 index tile.
  bool isOnlyDefault(Operation *op) {
    if (isa<SplatOp, ArangeOp>(op))
      return true;
    if (isa<BroadcastOp, ExpandDimsOp>(op))
      return defaulted.contains(op->getOperand(0));
    return false;
  }

  static RankedTensorType withLayout(Type type, Attribute layout) {
    auto tile = cast<RankedTensorType>(type);
    return RankedTensorType::get(tile.getShape(), tile.getElementType(),
                                 layout);
  }

  void rewriteTypes() {
    for (auto [value, layout] : layouts) {
      value.setType(withLayout(value.getType(), layout));
      // A constant's value attribute carries its type: keep them equal.
      if (auto constant = value.getDefiningOp<arith::ConstantOp>())
        if (auto dense = dyn_cast<DenseElementsAttr>(constant.getValue()))
          constant.setValueAttr(
              dense.reshape(cast<ShapedType>(value.getType())));
    }
    // Entry arguments and results keep the function type consistent.
    SmallVector<Type> results;
    func.walk([&](func::ReturnOp ret) {
      results.assign(ret.getOperandTypes().begin(),
                     ret.getOperandTypes().end());
    });
    func.setType(FunctionType::get(
        context, func.getBody().front().getArgumentTypes(), results));
  }

  /// The layout `op` needs operand `index` in, or null for any.
  Attribute requiredLayout(Operation *op, unsigned index) {
    if (auto dot = dyn_cast<DotOp>(op)) {
      Attribute mma = layoutOf(dot.getResult());
      if (index == 2)
        return mma;
      if (dot.getPlanAttr().getSource(index) == OperandSource::Stage)
        return layoutOf(dot->getOperand(index));
      return DotOperandLayoutAttr::get(context, index, mma);
    }
    if (auto rule = dyn_cast<LayoutRuleOpInterface>(op))
      return rule.getRequiredOperandLayout(index, *this);
    if (auto yield = dyn_cast<scf::YieldOp>(op)) {
      Operation *parent = yield->getParentOp();
      if (auto loop = dyn_cast<scf::ForOp>(parent))
        return layoutOf(loop.getRegionIterArgs()[index]);
      return layoutOf(parent->getResult(index));
    }
    if (auto loop = dyn_cast<scf::ForOp>(op)) {
      unsigned firstInit = loop.getNumControlOperands();
      if (index < firstInit)
        return {};
      return layoutOf(loop.getRegionIterArgs()[index - firstInit]);
    }
    // Elementwise: every operand in the result's layout.
    return followResultLayout(op, *this);
  }

  void insertConversions() {
    OpBuilder builder(context);
    func.walk([&](Operation *op) {
      for (OpOperand &use : op->getOpOperands()) {
        if (!isTile(use.get().getType()))
          continue;
        Attribute required = requiredLayout(op, use.getOperandNumber());
        auto type = cast<RankedTensorType>(use.get().getType());
        if (!required || type.getEncoding() == required)
          continue;
        builder.setInsertionPoint(op);
        Value converted = ConvertLayoutOp::create(
            builder, op->getLoc(), withLayout(type, required), use.get());
        use.set(converted);
      }
    });
  }

  func::FuncOp func;
  unsigned numWarps;
  MLIRContext *context;
  llvm::MapVector<Value, Attribute> layouts;
  /// Tiles whose layout is only a default (constants, splats, aranges, and
  /// what is computed from them alone, index and mask math): elementwise
  /// ops follow their other operands (isOnlyDefault).
  llvm::DenseSet<Value> defaulted;
};

struct AssignLayoutsPass
    : public tegula::tile::impl::TileAssignLayoutsBase<AssignLayoutsPass> {
  using TileAssignLayoutsBase::TileAssignLayoutsBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    unsigned warps = defaultWarps;
    if (auto attr =
            func->getAttrOfType<IntegerAttr>(TileDialect::kWarpsAttrName))
      warps = attr.getInt();
    if (failed(LayoutAssigner(func, warps).run()))
      return signalPassFailure();

    RewritePatternSet patterns(&getContext());
    ConvertLayoutOp::getCanonicalizationPatterns(patterns, &getContext());
    if (failed(applyPatternsGreedily(func, std::move(patterns))))
      return signalPassFailure();
  }
};
} // namespace
