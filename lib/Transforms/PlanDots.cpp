//===- PlanDots.cpp - Which instructions each dot becomes -----------------===//
//
// The one place that decides, for every tile.dot, how the warps split its
// result, which tensor-core family computes it and where it reads each
// operand, recorded as the dot's #tile.dot_plan. Layout assignment, the
// split of asynchronous dots, the deferral of their waits and the lowering
// read the plan and never decide again.
//
// On targets with warpgroup dots, a dot operand popped from a pipeline
// whose stage wgmma can read in place stays there (#tile.shared): a pop
// read by several dots, directly or transposed, stays in its stage for
// those that can read it there, and the other readers get registers
// loaded from the stage (a staged copy).
//
//===----------------------------------------------------------------------===//

#include "Tile/TileDialect.h"
#include "Tile/TileOps.h"
#include "Tile/TilePasses.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;

namespace tegula::tile {
#define GEN_PASS_DEF_TILEPLANDOTS
#include "Tile/TilePasses.h.inc"
} // namespace tegula::tile

using namespace tegula::tile;

namespace {

/// Whether operand `index` (0 for A, 1 for B) of `dot`, split over warps as
/// `warps`, can be read by wgmma where its pipeline stage holds it: popped
/// (or popped and transposed) from a swizzled stage of whole 8-row swizzle
/// atoms, and laid out as a matrix descriptor can say. A stage read K-major
/// (A as pushed, B transposed) needs K across whole 128-byte panels; B read
/// N-major needs each warpgroup's columns to start and end on panels. A
/// pushed transposed (M-major) stays in registers. Other readers of the pop
/// are planStages' business.
bool readsInPlace(DotOp dot, unsigned index, ArrayRef<unsigned> warps) {
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
  int64_t columns = shape[1] / warps[1];
  return (columns * getStoredBytes(element)) % kSwizzleBytes == 0;
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

class DotPlanner {
public:
  DotPlanner(func::FuncOp func, const tegula::TargetInfo &target,
             unsigned numWarps)
      : func(func), target(target), numWarps(numWarps) {}

  void run() {
    tegula::TargetInfo::DotUse use =
        dotResultsAreReduced(func) ? tegula::TargetInfo::DotUse::RowsInWarp
                                   : tegula::TargetInfo::DotUse::Balanced;
    func.walk([&](DotOp dot) {
      ArrayRef<int64_t> shape = dot.getResult().getType().getShape();
      tegula::TargetInfo::DotWarpSplit split =
          target.dotWarpSplit(shape[0], shape[1], numWarps, use);
      dots.push_back({dot, {split.alongM, split.alongN}});
    });
    planStages();
    for (auto &[dot, warps] : dots)
      record(dot, warps);
  }

private:
  /// Which dots become warpgroup instructions, and which of their operands
  /// they read in place. A pop stays in its stage when some warpgroup dot
  /// reads it there (through a transpose or not) and every other reader is
  /// a dot, which takes registers loaded from the stage; dropping a pop can
  /// turn a dot back to mma.sync, which can drop other pops: repeat until
  /// nothing changes.
  void planStages() {
    // (dot, operand) that could read its stage in place -> the stage's pop.
    llvm::DenseMap<std::pair<Operation *, unsigned>, Operation *> readable;
    for (auto &[dot, warps] : dots)
      for (unsigned index : {0u, 1u})
        if (readsInPlace(dot, index, warps)) {
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
      for (auto &[dot, warps] : dots) {
        bool aInPlace = inPlace(dot, 0);
        if (inPlace(dot, 1) && usesWarpgroupDot(dot, warps, aInPlace))
          warpgroupDots[dot] = aInPlace;
      }
      for (Operation *pop : llvm::to_vector(staged))
        if (!keepsStage(pop)) {
          staged.erase(pop);
          changed = true;
        }
    }
  }

  /// Whether `pop` stays in its stage: a warpgroup dot reads it in place
  /// (directly or through a transpose) and every other reader is a dot,
  /// which takes registers loaded from the stage; other ops might adopt
  /// the shared layout.
  bool keepsStage(Operation *pop) {
    bool inPlaceReader = false, othersTakeRegisters = true;
    for (OpOperand &use : pop->getUses()) {
      SmallVector<OpOperand *> reads = {&use};
      if (auto trans = dyn_cast<TransOp>(use.getOwner()))
        reads = llvm::map_to_vector(trans->getUses(),
                                    [](OpOperand &u) { return &u; });
      for (OpOperand *read : reads) {
        if (readsStageInPlace(*read))
          inPlaceReader = true;
        else if (!isa<DotOp>(read->getOwner()))
          othersTakeRegisters = false;
      }
    }
    return inPlaceReader && othersTakeRegisters;
  }

  /// Whether `use` is an operand that a warpgroup dot reads in place.
  bool readsStageInPlace(OpOperand &use) {
    auto dot = dyn_cast<DotOp>(use.getOwner());
    auto it = dot ? warpgroupDots.find(dot) : warpgroupDots.end();
    return it != warpgroupDots.end() &&
           (use.getOperandNumber() == 1 ||
            (use.getOperandNumber() == 0 && it->second));
  }

  /// Whether `dot`, whose B can be read in place (and A when `aInPlace`),
  /// becomes warpgroup instructions: the target has them, the warps split
  /// its result as they need, and its operands are 16-bit floats
  /// accumulating in f32.
  bool usesWarpgroupDot(DotOp dot, ArrayRef<unsigned> warps, bool aInPlace) {
    ArrayRef<int64_t> shape = dot.getResult().getType().getShape();
    Type element = dot.getA().getType().getElementType();
    // A from registers must not live across the dot's loop: ptxas has
    // reused such registers while the loop still needed them (a masked
    // attention loop on the H100); those dots stay mma.sync.
    auto loop = dot->getParentOfType<scf::ForOp>();
    if (loop && !aInPlace &&
        !loop->isAncestor(dot.getA().getParentRegion()->getParentOp()))
      return false;
    return target.isWarpgroupSplit(shape[0], shape[1],
                                   {warps[0], warps[1], true}) &&
           (element.isBF16() || element.isF16()) &&
           dot.getResult().getType().getElementType().isF32() &&
           dot.getA().getType().getDimSize(1) % 16 == 0;
  }

  /// Writes `dot`'s plan, and the shared layout of the operands it reads
  /// in place on their tiles (the pop, and the transpose read through).
  void record(DotOp dot, ArrayRef<unsigned> warps) {
    auto it = warpgroupDots.find(dot);
    bool wgmma = it != warpgroupDots.end();
    auto sourceOf = [&](unsigned index) {
      if (wgmma && (index == 1 || it->second)) {
        setShared(dot->getOperand(index));
        return OperandSource::Stage;
      }
      bool transposed;
      PipelinePopOp pop = getStagePop(dot->getOperand(index), transposed);
      return pop && staged.contains(pop) ? OperandSource::StagedCopy
                                         : OperandSource::Registers;
    };
    OperandSource a = sourceOf(0), b = sourceOf(1);
    dot.setPlanAttr(DotPlanAttr::get(
        dot.getContext(), wgmma ? DotFamily::Wgmma : DotFamily::MmaSync, warps,
        a, b));
  }

  /// `value`, popped (and perhaps transposed) from a stage, stays there:
  /// the stage as pushed runs along its rows, a transposed view along its
  /// columns.
  void setShared(Value value) {
    bool transposed;
    PipelinePopOp pop = getStagePop(value, transposed);
    auto rows = SharedLayoutAttr::get(value.getContext(), kSwizzleBytes,
                                      ArrayRef<unsigned>{1, 0});
    auto popLayout = pop.getTranspose() ? rows.transposed() : rows;
    setEncoding(pop.getResult(), popLayout);
    if (auto trans = value.getDefiningOp<TransOp>())
      setEncoding(trans.getResult(), popLayout.transposed());
  }

  static void setEncoding(Value value, Attribute encoding) {
    auto type = cast<RankedTensorType>(value.getType());
    value.setType(RankedTensorType::get(type.getShape(), type.getElementType(),
                                        encoding));
  }

  func::FuncOp func;
  const tegula::TargetInfo &target;
  unsigned numWarps;
  /// Every dot of the function with the warp split of its result.
  SmallVector<std::pair<DotOp, SmallVector<unsigned, 2>>> dots;
  /// The pops that stay in their stages.
  llvm::DenseSet<Operation *> staged;
  /// The dots that become warpgroup instructions, each with whether it
  /// reads A in place too.
  llvm::DenseMap<Operation *, bool> warpgroupDots;
};

struct PlanDotsPass
    : public tegula::tile::impl::TilePlanDotsBase<PlanDotsPass> {
  using TilePlanDotsBase::TilePlanDotsBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    bool hasDots = false;
    func.walk([&](DotOp) { hasDots = true; });
    if (!hasDots)
      return;
    FailureOr<tegula::TargetInfo> target = getTarget(func);
    if (failed(target))
      return signalPassFailure();
    unsigned warps = defaultWarps;
    if (auto attr =
            func->getAttrOfType<IntegerAttr>(TileDialect::kWarpsAttrName))
      warps = attr.getInt();
    DotPlanner(func, *target, warps).run();
  }
};
} // namespace
