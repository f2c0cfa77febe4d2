//===- AssignLayouts.cpp - Give every tile a layout -----------------------===//
//
// Anchors first: dot results take an mma layout, memory accesses a blocked
// layout with 16-byte chunks per thread. Everything else follows its
// operands, preferring mma-derived layouts so that a dot's result stays in
// the registers the tensor cores left it in. Each tile op states its own
// rule (LayoutRuleOpInterface, TileInterfaces.cpp); ops without one are
// elementwise. Loop-carried tiles take the
// layout their loop yields. Conversions are then inserted wherever a
// consumer needs another layout, and conversions of cheap producers
// (splats, constants, aranges) are folded away by rebuilding them.
//
// On targets with warpgroup dots, a dot operand popped from a pipeline
// whose stage wgmma can read in place takes the shared layout instead of
// registers (planInPlaceReads): a pop read by several dots, directly or
// transposed, stays in its stage for those that can read it there, and
// the other readers get registers loaded from the stage (a conversion).
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

/// Whether operand `index` (0 for A, 1 for B) of `dot`, split over warps as
/// `mma`, can be read by wgmma where its pipeline stage holds it: popped
/// (or popped and transposed) from a swizzled stage of whole 8-row swizzle
/// atoms, and laid out as a matrix descriptor can say. A stage read K-major
/// (A as pushed, B transposed) needs K across whole 128-byte panels; B read
/// N-major needs each warpgroup's columns to start and end on panels. A
/// pushed transposed (M-major) stays in registers. Other readers of the pop
/// are planInPlaceReads' business.
bool readsInPlace(DotOp dot, unsigned index, MmaLayoutAttr mma) {
  bool transposed;
  PipelinePopOp pop = getStagePop(dot->getOperand(index), transposed);
  if (!pop)
    return false;
  PipelineType stage = pop.getPipeline().getType();
  ArrayRef<int64_t> shape = stage.getShape();
  Type element = stage.getElementType();
  if (shape.size() != 2 || shape[0] % 8 != 0 ||
      !isSwizzledShared(shape, element))
    return false;
  if (index == 0)
    return !transposed;
  if (transposed)
    return true;
  int64_t columns = shape[1] / mma.getWarpsPerCTA()[1];
  return (columns * getStoredBytes(element)) % kSwizzleBytes == 0;
}

/// True for layouts a dot produced (or slices of them): elementwise work
/// follows these rather than moving the dot's result.
bool isMmaDerived(Attribute layout) {
  if (isa_and_nonnull<MmaLayoutAttr>(layout))
    return true;
  if (auto slice = dyn_cast_or_null<SliceLayoutAttr>(layout))
    return isMmaDerived(slice.getParent());
  return false;
}

/// Whether some dot's result reaches a reduction (through any ops, loop
/// iterations included): then its rows must stay within a warp.
bool dotResultsAreReduced(func::FuncOp func) {
  SmallVector<Value> worklist;
  func.walk([&](DotOp dot) { worklist.push_back(dot.getResult()); });
  llvm::DenseSet<Value> seen;
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    if (!seen.insert(value).second)
      continue;
    for (OpOperand &use : value.getUses()) {
      Operation *user = use.getOwner();
      if (isa<ReduceOp>(user))
        return true;
      // A yielded value comes back as the loop's iteration argument and
      // result.
      if (auto yield = dyn_cast<scf::YieldOp>(user)) {
        Operation *parent = yield->getParentOp();
        unsigned index = use.getOperandNumber();
        if (auto loop = dyn_cast<scf::ForOp>(parent)) {
          worklist.push_back(loop.getRegionIterArgs()[index]);
          worklist.push_back(loop.getResult(index));
        } else if (parent->getNumResults() > index) {
          worklist.push_back(parent->getResult(index));
        }
        continue;
      }
      if (auto loop = dyn_cast<scf::ForOp>(user)) {
        if (use.getOperandNumber() >= loop.getNumControlOperands())
          worklist.push_back(
              loop.getRegionIterArgs()[use.getOperandNumber() -
                                       loop.getNumControlOperands()]);
        continue;
      }
      for (Value result : user->getResults())
        worklist.push_back(result);
    }
  }
  return false;
}

class LayoutAssigner : public LayoutQuery {
public:
  LayoutAssigner(func::FuncOp func, unsigned numWarps)
      : func(func), numWarps(numWarps), context(func.getContext()),
        dotUse(dotResultsAreReduced(func)
                   ? tegula::TargetInfo::DotUse::RowsInWarp
                   : tegula::TargetInfo::DotUse::Balanced) {}

  LogicalResult run() {
    planInPlaceReads();
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

  /// The mma layout of `dot`, decided once: planInPlaceReads asks before
  /// layouts are assigned, assignOp again.
  FailureOr<Attribute> mmaFor(DotOp dot) {
    auto known = mmaLayouts.find(dot);
    if (known == mmaLayouts.end())
      known = mmaLayouts.try_emplace(dot, splitOverWarps(dot)).first;
    if (!known->second)
      return failure();
    return known->second;
  }

  /// The mma layout splitting `dot` over the warps (warps past a small
  /// result's extent replicate it), or null if the target is unknown.
  Attribute splitOverWarps(DotOp dot) {
    ArrayRef<int64_t> shape = dot.getResult().getType().getShape();
    FailureOr<tegula::TargetInfo> target = getTarget(dot);
    if (failed(target))
      return {};
    tegula::TargetInfo::DotWarpSplit split =
        target->dotWarpSplit(shape[0], shape[1], numWarps, dotUse);
    return MmaLayoutAttr::get(context, {split.alongM, split.alongN});
  }

  /// Which dots become warpgroup instructions, and which of their operands
  /// they read in place. A pop stays in its stage when some warpgroup dot
  /// reads it there (through a transpose or not) and every other reader is
  /// a dot, which takes registers loaded from the stage;
  /// dropping a pop can turn a dot back to mma.sync, which can drop other
  /// pops: repeat until nothing changes.
  void planInPlaceReads() {
    SmallVector<std::pair<DotOp, MmaLayoutAttr>> dots;
    func.walk([&](DotOp dot) {
      FailureOr<Attribute> mma = mmaFor(dot);
      if (succeeded(mma))
        dots.push_back({dot, cast<MmaLayoutAttr>(*mma)});
    });
    llvm::DenseSet<Operation *> staged;
    // (dot, operand) that could read its stage in place -> the stage's pop.
    llvm::DenseMap<std::pair<Operation *, unsigned>, Operation *> readable;
    for (auto [dot, mma] : dots)
      for (unsigned index : {0u, 1u})
        if (readsInPlace(dot, index, mma)) {
          bool transposed;
          Operation *pop = getStagePop(dot->getOperand(index), transposed);
          staged.insert(pop);
          readable[{dot, index}] = pop;
        }
    auto inPlace = [&](DotOp dot, unsigned index) {
      auto it = readable.find({dot, index});
      return it != readable.end() && staged.contains(it->second);
    };
    for (bool changed = true; changed;) {
      changed = false;
      warpgroupDots.clear();
      for (auto [dot, mma] : dots) {
        bool aInPlace = inPlace(dot, 0);
        if (inPlace(dot, 1) && usesWarpgroupDot(dot, mma, aInPlace))
          warpgroupDots[dot] = aInPlace;
      }
      for (Operation *pop : llvm::to_vector(staged)) {
        bool inPlaceReader = false, othersTakeRegisters = true;
        for (OpOperand &use : pop->getUses()) {
          SmallVector<OpOperand *> reads = {&use};
          if (auto trans = dyn_cast<TransOp>(use.getOwner()))
            reads = llvm::map_to_vector(trans->getUses(),
                                        [](OpOperand &u) { return &u; });
          for (OpOperand *read : reads) {
            if (readsStageInPlace(*read))
              inPlaceReader = true;
            // Other dots take their operand in registers (requiredLayout
            // converts it); other ops might adopt the shared layout.
            else if (!isa<DotOp>(read->getOwner()))
              othersTakeRegisters = false;
          }
        }
        if (!inPlaceReader || !othersTakeRegisters) {
          staged.erase(pop);
          changed = true;
        }
      }
    }
  }

  /// Whether `use` is an operand that a warpgroup dot reads in place.
  bool readsStageInPlace(OpOperand &use) {
    auto dot = dyn_cast<DotOp>(use.getOwner());
    auto it = dot ? warpgroupDots.find(dot) : warpgroupDots.end();
    return it != warpgroupDots.end() &&
           (use.getOperandNumber() == 1 ||
            (use.getOperandNumber() == 0 && it->second));
  }

  /// `value`, a dot operand read in place, and the pop it transposes.
  void setShared(Value value) {
    layouts[value] = SharedLayoutAttr::get(context);
    if (auto trans = value.getDefiningOp<TransOp>())
      layouts[trans.getSource()] = SharedLayoutAttr::get(context);
  }

  /// Whether `dot`, whose B can be read in place (and A when `aInPlace`),
  /// becomes warpgroup instructions: the target has them, the warps split
  /// its result as they need, and its operands are 16-bit floats
  /// accumulating in f32.
  bool usesWarpgroupDot(DotOp dot, MmaLayoutAttr mma, bool aInPlace) {
    FailureOr<tegula::TargetInfo> target = getTarget(dot);
    ArrayRef<int64_t> shape = dot.getResult().getType().getShape();
    ArrayRef<unsigned> warps = mma.getWarpsPerCTA();
    Type element = dot.getA().getType().getElementType();
    // A from registers must not live across the dot's loop: ptxas has
    // reused such registers while the loop still needed them (a masked
    // attention loop on the H100); those dots stay mma.sync.
    auto loop = dot->getParentOfType<scf::ForOp>();
    if (loop && !aInPlace &&
        !loop->isAncestor(dot.getA().getParentRegion()->getParentOp()))
      return false;
    return succeeded(target) &&
           target->isWarpgroupSplit(shape[0], shape[1],
                                    {warps[0], warps[1], true}) &&
           (element.isBF16() || element.isF16()) &&
           dot.getResult().getType().getElementType().isF32() &&
           dot.getA().getType().getDimSize(1) % 16 == 0;
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
    // anchored layout (a dot accumulator), carry that one instead and
    // assign the body again.
    for (auto [arg, init] :
         llvm::zip(loop.getRegionIterArgs(), loop.getInitArgs()))
      if (isTile(arg.getType()))
        layouts[arg] = layoutOf(init);
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
        if (carried != layouts.lookup(arg) && isMmaDerived(carried)) {
          layouts[arg] = carried;
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
      FailureOr<Attribute> mma = mmaFor(dot);
      if (failed(mma))
        return failure();
      layouts[result] = *mma;
      if (auto it = warpgroupDots.find(dot); it != warpgroupDots.end()) {
        setShared(dot.getB());
        if (it->second)
          setShared(dot.getA());
      }
      return success();
    }
    if (auto rule = dyn_cast<LayoutRuleOpInterface>(op))
      if (Attribute layout = rule.inferResultLayout(*this)) {
        layouts[result] = layout;
        return success();
      }
    // Constants are cheap producers, rebuilt in the layout asked for.
    if (isa<arith::ConstantOp>(op)) {
      layouts[result] = defaultBlocked(type);
      return success();
    }
    // Elementwise: follow an mma-derived operand if any, else the first.
    Attribute chosen;
    for (Value operand : op->getOperands()) {
      if (!isTile(operand.getType()))
        continue;
      Attribute layout = layoutOf(operand);
      if (!chosen || (isMmaDerived(layout) && !isMmaDerived(chosen)))
        chosen = layout;
    }
    layouts[result] = chosen ? chosen : defaultBlocked(type);
    return success();
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
      if (readsStageInPlace(dot->getOpOperand(index)))
        return SharedLayoutAttr::get(context);
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
  /// How every dot of the function splits over warps.
  tegula::TargetInfo::DotUse dotUse;
  llvm::MapVector<Value, Attribute> layouts;
  /// The dots that become warpgroup instructions, each with whether it
  /// reads A in place too (planInPlaceReads).
  llvm::DenseMap<Operation *, bool> warpgroupDots;
  /// Each dot's mma layout, null where its target is unknown (mmaFor).
  llvm::DenseMap<Operation *, Attribute> mmaLayouts;
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
