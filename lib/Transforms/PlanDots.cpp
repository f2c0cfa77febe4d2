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
// A B that no stage holds (a loaded or computed tile, a state), and an A
// loaded from memory or held across the dot's loop, is written to a shared
// buffer of its own by a tile.to_shared that this pass inserts, laid out
// as the dot's descriptors read it, so that the dot can be wgmma too. The
// buffers must fit the target's shared memory beside the rings; if they
// do not, no tile is staged this way and those dots stay mma.sync.
//
//===----------------------------------------------------------------------===//

#include "Tile/TileDialect.h"
#include "Tile/TileOps.h"
#include "Tile/TilePasses.h"
#include "tegula/Analysis/SharedMemoryPlan.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;

namespace tegula::tile {
#define GEN_PASS_DEF_TILEPLANDOTS
#include "Tile/TilePasses.h.inc"
} // namespace tegula::tile

using namespace tegula::tile;

namespace {

/// Whether a warpgroup's `bytes` of an MN-major operand's rows (A's 64
/// rows, or its share of B's columns) fit a matrix descriptor of a tile of
/// `swizzle`-byte panels: whole panels, or a part of one (16 bytes up to
/// half a panel, each warpgroup's part starting on a multiple of its
/// size). The descriptor then starts inside the panel: the swizzle is a
/// function of the address bits 7 and up, which such a start leaves alone,
/// so the panel's XOR pattern holds there too (Triton 3.6 starts the second
/// warpgroup's B of linear attention's q_r S 64 bytes into a panel the same
/// way).
bool fitsMNMajorDescriptor(int64_t bytes, int64_t swizzle) {
  return bytes % swizzle == 0 || (bytes % 16 == 0 && swizzle % bytes == 0);
}

/// Whether operand `index` (0 for A, 1 for B) of `dot`, split over warps as
/// `warps`, can be read by wgmma where its pipeline stage holds it: popped
/// (or popped and transposed) from a swizzled stage of whole 8-row swizzle
/// periods, and laid out as a matrix descriptor can say. A stage read
/// K-major (A as pushed, B transposed) takes K across whole panels; read
/// MN-major, each warpgroup's rows of A (64) or columns of B must fit the
/// descriptor of the stage's swizzle (fitsMNMajorDescriptor). Other
/// readers of the pop are planStages' business.
bool readsInPlace(DotOp dot, unsigned index, ArrayRef<unsigned> warps) {
  bool transposed;
  PipelinePopOp pop = getStagePop(dot->getOperand(index), transposed);
  if (!pop)
    return false;
  PipelineType stage = pop.getPipeline().getType();
  ArrayRef<int64_t> shape = stage.getShape();
  Type element = stage.getElementType();
  int64_t swizzle = getSwizzleBytes(shape, element);
  if (shape.size() != 2 || shape[0] % 8 != 0 || !swizzle)
    return false;
  // K-major: A as pushed, B transposed.
  if (transposed == (index == 1))
    return true;
  int64_t extent =
      index == 0 ? tegula::TargetInfo::kWarpgroupRows : shape[1] / warps[1];
  return fitsMNMajorDescriptor(extent * getStoredBytes(element), swizzle);
}

/// A register tile that tile.to_shared could write for a dot operand: the
/// operand itself, or the tile it transposes.
struct StageableTile {
  Value tile;
  bool transposed;
};

/// The register tile behind operand `index` of `dot` that a tile.to_shared
/// buffer could hold for wgmma: a 2-D 16-bit float tile that is not a pop
/// (pops have stages). An A only when registers would cost: loaded from
/// memory (its layout is a load's, not a fragment's) or held across the
/// dot's loop (see usesWarpgroupDot).
std::optional<StageableTile> getStageableTile(DotOp dot, unsigned index) {
  StageableTile stageable = {dot->getOperand(index), false};
  if (auto trans = stageable.tile.getDefiningOp<TransOp>())
    stageable = {trans.getSource(), true};
  auto type = cast<RankedTensorType>(stageable.tile.getType());
  if (type.getRank() != 2 ||
      !(type.getElementType().isBF16() || type.getElementType().isF16()) ||
      stageable.tile.getDefiningOp<PipelinePopOp>())
    return std::nullopt;
  if (index == 1)
    return stageable;
  auto loop = dot->getParentOfType<scf::ForOp>();
  Operation *owner = stageable.tile.getParentRegion()->getParentOp();
  if (stageable.tile.getDefiningOp<LoadOp>() ||
      (loop && !loop->isAncestor(owner)))
    return stageable;
  return std::nullopt;
}

/// Whether wgmma reads operand `index` of `dot`, split over warps as
/// `warps`, from a tile.to_shared buffer of `stageable` whose dimension
/// `fastest` is contiguous, as the descriptors of readsInPlace's stages:
/// swizzled rows, 8 at a time; along K, or along M or N with each
/// warpgroup's rows or columns as fitsMNMajorDescriptor allows.
bool readsStoredInPlace(DotOp dot, unsigned index, ArrayRef<unsigned> warps,
                        const StageableTile &stageable, unsigned fastest) {
  auto type = cast<RankedTensorType>(stageable.tile.getType());
  Type element = type.getElementType();
  SmallVector<int64_t, 2> stored =
      getStoredShape(type.getShape(), {fastest, 1 - fastest});
  int64_t swizzle = getSwizzleBytes(stored, element);
  if (stored[0] % 8 != 0 || !swizzle)
    return false;
  // Which dimension of the operand [M, K] or [K, N] is contiguous.
  unsigned operandFastest = stageable.transposed ? 1 - fastest : fastest;
  bool kMajor = operandFastest == (index == 0 ? 1u : 0u);
  if (kMajor)
    return true;
  int64_t extent = index == 0
                       ? tegula::TargetInfo::kWarpgroupRows
                       : dot.getResult().getType().getDimSize(1) / warps[1];
  return fitsMNMajorDescriptor(extent * getStoredBytes(element), swizzle);
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
    findStageableTiles();
    planStages();
    if (!stageTiles()) {
      // The buffers do not fit: no tile is staged, and the dots that
      // needed one are planned again without.
      stageable.clear();
      planStages();
    }
    for (auto &[dot, warps] : dots)
      record(dot, warps);
  }

private:
  /// The operands that tile.to_shared could stage, with the orders of the
  /// buffer (its contiguous dimension) wgmma could read them from.
  void findStageableTiles() {
    for (auto &[dot, warps] : dots)
      for (unsigned index : {0u, 1u}) {
        std::optional<StageableTile> tile = getStageableTile(dot, index);
        if (!tile)
          continue;
        // Registers run along the tile's rows (a load's, a dot's): an A
        // that registers may hold is staged only with its rows contiguous,
        // not by one 2-byte store per element.
        auto loop = dot->getParentOfType<scf::ForOp>();
        bool registersMayHoldA =
            !loop ||
            loop->isAncestor(tile->tile.getParentRegion()->getParentOp());
        SmallVector<unsigned, 2> fastest;
        for (unsigned dim : {1u, 0u})
          if ((index == 1 || dim == 1 || !registersMayHoldA) &&
              readsStoredInPlace(dot, index, warps, *tile, dim))
            fastest.push_back(dim);
        if (!fastest.empty())
          stageable[{dot, index}] = {*tile, fastest};
      }
  }

  /// Which dots become warpgroup instructions, and which of their operands
  /// they read in place. A pop stays in its stage when some warpgroup dot
  /// reads it there (through a transpose or not) and every other reader is
  /// a dot, which takes registers loaded from the stage; dropping a pop can
  /// turn a dot back to mma.sync, which can drop other pops: repeat until
  /// nothing changes. An operand that no stage holds can be staged
  /// (findStageableTiles).
  void planStages() {
    staged.clear();
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
      if (it != readable.end())
        return staged.contains(it->second);
      return stageable.contains({dot, index});
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

  /// One tile.to_shared buffer: a register tile and its contiguous
  /// dimension, with the operands that read it.
  struct Buffer {
    Value tile;
    unsigned fastest;
    SmallVector<std::pair<DotOp, unsigned>> readers;
  };

  /// Stages the warpgroup dots' operands that no stage holds: each tile
  /// once for the order most of its readers can read (rows contiguous on a
  /// tie: the registers of loads and dots run along rows), again for
  /// readers that need the other. Returns false, changing nothing, if the
  /// buffers do not fit beside the rings with room for a conversion as
  /// large as the largest dot result (the scratch is not planned yet).
  bool stageTiles() {
    SmallVector<Buffer> buffers;
    int64_t bytes = 0, conversion = 0;
    for (auto &[dot, warps] : dots) {
      auto it = warpgroupDots.find(dot);
      if (it == warpgroupDots.end())
        continue;
      RankedTensorType result = dot.getResult().getType();
      conversion = std::max(conversion, result.getNumElements() * 4);
      for (unsigned index : {0u, 1u}) {
        auto candidate = stageable.find({dot, index});
        if ((index == 0 && !it->second) || candidate == stageable.end())
          continue;
        ArrayRef<unsigned> orders = candidate->second.second;
        Value tile = candidate->second.first.tile;
        auto buffer = llvm::find_if(buffers, [&](Buffer &b) {
          return b.tile == tile && llvm::is_contained(orders, b.fastest);
        });
        if (buffer == buffers.end()) {
          buffers.push_back({tile, preferredOrder(tile, orders), {}});
          buffer = std::prev(buffers.end());
          auto type = cast<RankedTensorType>(tile.getType());
          bytes += llvm::alignTo(type.getNumElements() *
                                     getStoredBytes(type.getElementType()),
                                 kSwizzleAtomBytes);
        }
        buffer->readers.push_back({dot, index});
      }
    }
    if (buffers.empty())
      return true;
    if (planSharedMemory(func).sharedBytes + bytes + conversion >
        target.maxSharedBytes)
      return false;
    for (Buffer &buffer : buffers) {
      Operation *&point = stagingPoints[buffer.tile.getParentBlock()];
      Operation *first = firstReader(buffer);
      if (!point || first->isBeforeInBlock(point))
        point = first;
    }
    for (Buffer &buffer : buffers)
      materialize(buffer);
    readBuffers();
    return true;
  }

  /// The op of the tile's block that holds `buffer`'s first reader.
  static Operation *firstReader(Buffer &buffer) {
    Block *block = buffer.tile.getParentBlock();
    Operation *first = nullptr;
    for (auto [dot, index] : buffer.readers) {
      Operation *reader = block->findAncestorOpInBlock(*dot);
      if (!first || reader->isBeforeInBlock(first))
        first = reader;
    }
    return first;
  }

  /// Of `orders` (contiguous dimensions one reader accepts), the one most
  /// readers of `tile` accept, rows contiguous on a tie.
  unsigned preferredOrder(Value tile, ArrayRef<unsigned> orders) {
    if (orders.size() == 1)
      return orders.front();
    int64_t votes[2] = {0, 0};
    for (auto &[key, candidate] : stageable)
      if (candidate.first.tile == tile)
        for (unsigned dim : candidate.second)
          ++votes[dim];
    return votes[0] > votes[1] ? 0 : 1;
  }

  /// Inserts `buffer`'s tile.to_shared (readBuffers points its readers at
  /// it). The writes
  /// go just before the first reader in the tile's block, or with the
  /// block's other stagings before the first staged reader where the tile
  /// is ready by then: one barrier before a run of them and one after.
  void materialize(Buffer &buffer) {
    Operation *first = firstReader(buffer);
    Operation *group = stagingPoints.lookup(buffer.tile.getParentBlock());
    Operation *def = buffer.tile.getDefiningOp();
    Operation *at = !def || def->isBeforeInBlock(group) ? group : first;
    OpBuilder builder(at);
    auto type = cast<RankedTensorType>(buffer.tile.getType());
    SmallVector<unsigned, 2> order = {buffer.fastest, 1 - buffer.fastest};
    auto shared =
        getSharedLayout(type.getShape(), type.getElementType(), order);
    Value stored = ToSharedOp::create(
        builder, buffer.tile.getLoc(),
        RankedTensorType::get(type.getShape(), type.getElementType(), shared),
        buffer.tile);
    for (auto [dot, index] : buffer.readers)
      reads.push_back({dot, index, stored});
  }

  /// Points each staged operand at its buffer, through a transpose just
  /// before the dot where it reads the tile transposed (after every
  /// tile.to_shared is in place, so that none comes between a run).
  void readBuffers() {
    OpBuilder builder(func.getContext());
    for (auto [dot, index, stored] : reads) {
      Value operand = dot->getOperand(index);
      Value read = stored;
      if (operand != stored.getDefiningOp<ToSharedOp>().getSource()) {
        builder.setInsertionPoint(dot);
        auto operandType = cast<RankedTensorType>(operand.getType());
        auto shared = cast<SharedLayoutAttr>(
            cast<RankedTensorType>(stored.getType()).getEncoding());
        read =
            TransOp::create(builder, operand.getLoc(),
                            RankedTensorType::get(operandType.getShape(),
                                                  operandType.getElementType(),
                                                  shared.transposed()),
                            stored);
      }
      dot->setOperand(index, read);
      if (Operation *old = operand.getDefiningOp(); old && old->use_empty())
        old->erase();
    }
  }

  /// Writes `dot`'s plan, and the shared layout of the operands it reads
  /// in place on their tiles (the pop, and the transpose read through).
  void record(DotOp dot, ArrayRef<unsigned> warps) {
    auto it = warpgroupDots.find(dot);
    bool wgmma = it != warpgroupDots.end();
    auto sourceOf = [&](unsigned index) {
      bool transposed;
      PipelinePopOp pop = getStagePop(dot->getOperand(index), transposed);
      if (wgmma && (index == 1 || it->second)) {
        // A tile.to_shared result has its encoding already.
        if (pop)
          setShared(dot->getOperand(index));
        return OperandSource::Stage;
      }
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
    PipelineType stage = pop.getPipeline().getType();
    auto rows =
        getSharedLayout(stage.getShape(), stage.getElementType(), {1, 0});
    auto popLayout = pop.getTranspose() ? rows.transposed() : rows;
    setEncoding(pop.getResult(), popLayout);
    if (auto trans = value.getDefiningOp<TransOp>())
      setEncoding(trans.getResult(), popLayout.transposed());
  }

  /// The layout of a tile of `shape` stored with dimension `order[0]`
  /// contiguous, in the swizzle of its stored rows.
  SharedLayoutAttr getSharedLayout(ArrayRef<int64_t> shape, Type element,
                                   ArrayRef<unsigned> order) {
    SmallVector<int64_t, 2> stored = getStoredShape(shape, order);
    return SharedLayoutAttr::get(func.getContext(),
                                 getSwizzleBytes(stored, element), order);
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
  /// (dot, operand) that a tile.to_shared buffer could hold -> the tile
  /// and the contiguous dimensions of the buffers wgmma could read.
  llvm::DenseMap<std::pair<Operation *, unsigned>,
                 std::pair<StageableTile, SmallVector<unsigned, 2>>>
      stageable;
  /// Per block, where its run of tile.to_shared ops goes.
  llvm::DenseMap<Block *, Operation *> stagingPoints;
  /// The staged operands, each with the tile.to_shared it reads.
  SmallVector<std::tuple<DotOp, unsigned, Value>> reads;
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
