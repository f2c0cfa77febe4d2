//===- VersionLoops.cpp - Loop bodies without bounds checks in range ------===//
//
// A pipelined loop's pushes check every copy against the tensor's extents,
// though only a ragged tail can leave them (the K loop of a GEMM whose K is
// not a multiple of the block, the edge blocks of M and N). This pass splits
// such a loop at a point computed before it: the leading iterations, whose
// pushes provably stay inside their tensors, run a copy of the body whose
// pushes are marked `inside` (no bounds checks); the rest run the original.
// Both loops use the same rings, so the pipeline flows on across the split.
//
// A push qualifies when every index it checks is a uniform value plus block
// coordinates (tegula/Analysis/AffineIndex.h) whose uniform part is affine
// in the induction variable: u(j) = u0 + d * j (mod 2^32) in iteration j.
// Its block lies inside while 0 <= u(j) and u(j) + maxPart < extent; the
// leading iterations where that holds are counted in 64 bits, and an
// iteration counted so has u(j) in [0, extent), so its i32 value does not
// wrap. A push the look-ahead masks off ("iteration S - 1 ahead exists")
// copies nothing, so a loop whose pushes stay inside until their mask
// turns off runs wholly in the first copy.
//
// The split is one loop after another, not a branch in the body: ptxas
// serializes the warpgroup dots of a loop whose body branches (C7515).
//
//===----------------------------------------------------------------------===//

#include "LoopSlices.h"

#include "tegula/Analysis/AffineIndex.h"

#include "Tile/TileDialect.h"
#include "Tile/TileOps.h"
#include "Tile/TilePasses.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace tegula::tile {
#define GEN_PASS_DEF_TILEVERSIONLOOPS
#include "Tile/TilePasses.h.inc"
} // namespace tegula::tile

using namespace mlir;
using namespace tegula::tile;

namespace {

/// How an i32 scalar of a loop's body varies with its induction variable.
enum class Variation { Invariant, Affine, Other };

class LoopScalars {
public:
  explicit LoopScalars(scf::ForOp loop) : loop(loop) {}

  bool isDefinedOutside(Value value) {
    return loop.isDefinedOutsideOfLoop(value);
  }

  Variation classify(Value value) {
    if (value == loop.getInductionVar())
      return Variation::Affine;
    if (auto it = memo.find(value); it != memo.end())
      return it->second;
    Variation variation = compute(value);
    memo[value] = variation;
    return variation;
  }

  /// `value` (Invariant or Affine) as computed in the iteration whose
  /// induction variable is `iv`, emitted at `builder`'s point before the
  /// loop.
  Value evaluateAt(OpBuilder &builder, Value value, Value iv) {
    std::optional<SmallVector<Operation *>> slice =
        backwardSlice(loop, ValueRange{value});
    assert(slice && "a classified scalar is computed by pure ops");
    return cloneSlice(builder, loop, *slice, iv).lookupOrDefault(value);
  }

private:
  Variation compute(Value value) {
    Operation *def = value.getDefiningOp();
    if (!def)
      return loop->isAncestor(
                 cast<BlockArgument>(value).getOwner()->getParentOp())
                 ? Variation::Other // carried, or a nested region's
                 : Variation::Invariant;
    if (!loop->isAncestor(def))
      return Variation::Invariant;
    if (def->getBlock() != loop.getBody() || !isPure(def) ||
        def->getNumRegions() != 0)
      return Variation::Other;
    SmallVector<Variation> operands;
    for (Value operand : def->getOperands())
      operands.push_back(classify(operand));
    if (llvm::is_contained(operands, Variation::Other))
      return Variation::Other;
    if (llvm::all_of(operands,
                     [](Variation v) { return v == Variation::Invariant; }))
      return Variation::Invariant;
    if (isa<arith::AddIOp, arith::SubIOp>(def))
      return Variation::Affine;
    if (isa<arith::MulIOp>(def) &&
        llvm::is_contained(operands, Variation::Invariant))
      return Variation::Affine;
    return Variation::Other;
  }

  scf::ForOp loop;
  DenseMap<Value, Variation> memo;
};

Value i64Constant(OpBuilder &builder, Location loc, int64_t value) {
  return arith::ConstantIntOp::create(builder, loc, builder.getI64Type(),
                                      value);
}

Value widen(OpBuilder &builder, Location loc, Value i32) {
  return arith::ExtSIOp::create(builder, loc, builder.getI64Type(), i32);
}

/// The number of leading iterations j < trips in which
/// lo <= start + step * j < hi (no lower bound without `lo`), in i64.
Value emitLeadingIterations(OpBuilder &builder, Location loc, Value start,
                            Value step, Value lo, Value hi, Value trips) {
  using Pred = arith::CmpIPredicate;
  auto cmp = [&](Pred pred, Value a, Value b) {
    return arith::CmpIOp::create(builder, loc, pred, a, b);
  };
  Value zero = i64Constant(builder, loc, 0), one = i64Constant(builder, loc, 1);
  Value inRange = cmp(Pred::slt, start, hi);
  if (lo)
    inRange =
        arith::AndIOp::create(builder, loc, inRange, cmp(Pred::sge, start, lo));
  // Rising: ceil((hi - start) / step). Falling: (start - lo) / -step + 1.
  Value rising = arith::DivSIOp::create(
      builder, loc,
      arith::AddIOp::create(builder, loc,
                            arith::SubIOp::create(builder, loc, hi, start),
                            arith::SubIOp::create(builder, loc, step, one)),
      arith::MaxSIOp::create(builder, loc, step, one));
  Value falling = trips;
  if (lo)
    falling = arith::AddIOp::create(
        builder, loc,
        arith::DivSIOp::create(
            builder, loc, arith::SubIOp::create(builder, loc, start, lo),
            arith::MaxSIOp::create(
                builder, loc, arith::SubIOp::create(builder, loc, zero, step),
                one)),
        one);
  Value count = arith::SelectOp::create(
      builder, loc, cmp(Pred::sgt, step, zero), rising,
      arith::SelectOp::create(builder, loc, cmp(Pred::slt, step, zero), falling,
                              trips));
  count = arith::SelectOp::create(builder, loc, inRange, count, zero);
  return arith::MinSIOp::create(builder, loc, count, trips);
}

/// Emits before a loop the start and per-iteration step (i64) of i32
/// values affine in its induction variable.
class AffineEvaluator {
public:
  AffineEvaluator(OpBuilder &builder, scf::ForOp loop, LoopScalars &scalars)
      : builder(builder), loop(loop), scalars(scalars) {
    Location loc = loop.getLoc();
    secondIv = arith::AddIOp::create(builder, loc, loop.getLowerBound(),
                                     loop.getStep());
  }

  /// constant + sum of factor * scalar in the first two iterations, as the
  /// start and the i32 difference (its congruence class is what matters).
  std::pair<Value, Value> emit(const AffineIndex &index) {
    Value first = emitAt(index, loop.getLowerBound());
    Value second = emitAt(index, secondIv);
    Location loc = loop.getLoc();
    return {widen(builder, loc, first),
            widen(builder, loc,
                  arith::SubIOp::create(builder, loc, second, first))};
  }
  std::pair<Value, Value> emit(Value scalar) {
    Location loc = loop.getLoc();
    Value first = scalars.evaluateAt(builder, scalar, loop.getLowerBound());
    Value second = scalars.evaluateAt(builder, scalar, secondIv);
    return {widen(builder, loc, first),
            widen(builder, loc,
                  arith::SubIOp::create(builder, loc, second, first))};
  }

private:
  Value emitAt(const AffineIndex &index, Value iv) {
    return index.emitUniformPart(builder, loop.getLoc(), [&](Value scalar) {
      return scalars.evaluateAt(builder, scalar, iv);
    });
  }

  OpBuilder &builder;
  scf::ForOp loop;
  LoopScalars &scalars;
  Value secondIv;
};

/// The i1 every element of a push's mask shares, if its mask is a splat of
/// it or such a splat ANDed with a per-element mask.
Value getUniformPart(Value mask) {
  if (!mask)
    return Value();
  if (auto splat = mask.getDefiningOp<SplatOp>())
    return splat.getValue();
  if (auto both = mask.getDefiningOp<arith::AndIOp>())
    for (Value operand : both->getOperands())
      if (Value uniform = getUniformPart(operand))
        return uniform;
  return Value();
}

/// Whether the analysis can bound `push`: its tensor comes from outside the
/// loop and every index that needs a check is affine with affine scalars.
/// Fills `checks` with (dimension, index) of the indices that need one.
bool canBound(PipelinePushOp push, LoopScalars &scalars,
              SmallVectorImpl<std::pair<unsigned, AffineIndex>> &checks) {
  // Its extents are read before the loop.
  if (!scalars.isDefinedOutside(push.getTensor()))
    return false;
  ArrayRef<int64_t> extents = push.getTensor().getType().getShape();
  for (auto [dim, tile] : llvm::enumerate(push.getIndices())) {
    std::optional<AffineIndex> index = getAffineIndex(tile);
    if (!index)
      return false;
    auto shape = cast<RankedTensorType>(tile.getType()).getShape();
    int64_t extent = extents[dim];
    if (extent != ShapedType::kDynamic && index->scalars.empty() &&
        index->constant >= 0 &&
        index->constant + index->maxCoordinatePart(shape) < extent)
      continue;
    for (auto [scalar, factor] : index->scalars)
      if (scalars.classify(scalar) == Variation::Other)
        return false;
    checks.push_back({unsigned(dim), std::move(*index)});
  }
  return true;
}

/// The leading iterations in which `push` reads only inside its tensor or
/// is masked off, emitted before the loop; null when it has no check to
/// skip or cannot be bounded.
Value emitSafeIterations(OpBuilder &builder, PipelinePushOp push,
                         AffineEvaluator &evaluate, LoopScalars &scalars,
                         Value trips) {
  SmallVector<std::pair<unsigned, AffineIndex>> checks;
  if (!canBound(push, scalars, checks) || checks.empty())
    return Value();
  Location loc = push.getLoc();
  Value tensor = push.getTensor();
  Value inside = trips;
  for (auto &[dim, index] : checks) {
    auto shape =
        cast<RankedTensorType>(push.getIndices()[dim].getType()).getShape();
    Value extent =
        widen(builder, loc, DimOp::create(builder, loc, tensor, dim));
    Value room = arith::SubIOp::create(
        builder, loc, extent,
        i64Constant(builder, loc, index.maxCoordinatePart(shape)));
    auto [start, step] = evaluate.emit(index);
    inside = arith::MinSIOp::create(
        builder, loc, inside,
        emitLeadingIterations(builder, loc, start, step,
                              i64Constant(builder, loc, 0), room, trips));
  }
  // Iterations from the first whose uniform mask `x < bound` is off copy
  // nothing, and stay off while x neither falls nor wraps past 2^31: then,
  // if every iteration before it is inside, all are safe.
  Value uniform = getUniformPart(push.getMask());
  auto runs = uniform ? uniform.getDefiningOp<arith::CmpIOp>() : nullptr;
  if (!runs || runs.getPredicate() != arith::CmpIPredicate::slt ||
      !runs.getLhs().getType().isInteger(32) ||
      scalars.classify(runs.getLhs()) == Variation::Other ||
      scalars.classify(runs.getRhs()) != Variation::Invariant)
    return inside;
  auto [start, step] = evaluate.emit(runs.getLhs());
  Value bound = widen(
      builder, loc,
      scalars.evaluateAt(builder, runs.getRhs(),
                         push->getParentOfType<scf::ForOp>().getLowerBound()));
  Value on =
      emitLeadingIterations(builder, loc, start, step, Value(), bound, trips);
  using Pred = arith::CmpIPredicate;
  Value last = arith::AddIOp::create(
      builder, loc, start,
      arith::MulIOp::create(
          builder, loc, step,
          arith::MaxSIOp::create(
              builder, loc, i64Constant(builder, loc, 0),
              arith::SubIOp::create(builder, loc, trips,
                                    i64Constant(builder, loc, 1)))));
  Value staysOff = arith::AndIOp::create(
      builder, loc,
      arith::CmpIOp::create(builder, loc, Pred::sge, step,
                            i64Constant(builder, loc, 0)),
      arith::CmpIOp::create(builder, loc, Pred::sle, last,
                            i64Constant(builder, loc, INT32_MAX)));
  Value allSafe = arith::AndIOp::create(
      builder, loc, staysOff,
      arith::CmpIOp::create(builder, loc, Pred::sge, inside, on));
  return arith::SelectOp::create(builder, loc, allSafe, trips, inside);
}

/// Whether `loop` stores to (or updates) a global tensor. Such a body keeps
/// the addresses and checks of its stores live besides the copies', and
/// ptxas holds two of them badly across the split: linear attention at
/// D = 128, BLOCK_V = 128 went from 199 registers to 255 and 76 spilled
/// bytes, with both copies of its loop checked alike.
bool writesGlobalMemory(scf::ForOp loop) {
  return loop
      ->walk([](GlobalAccessOpInterface access) {
        return access.writesTensor() ? WalkResult::interrupt()
                                     : WalkResult::advance();
      })
      .wasInterrupted();
}

/// Splits `loop` where its pushes stop being provably inside.
void versionLoop(scf::ForOp loop) {
  std::optional<int64_t> step = getConstantIntValue(loop.getStep());
  if (!step || *step <= 0 || !loop.getInductionVar().getType().isInteger(32) ||
      writesGlobalMemory(loop))
    return;
  SmallVector<PipelinePushOp> pushes;
  for (auto push : loop.getBody()->getOps<PipelinePushOp>())
    pushes.push_back(push);
  if (pushes.empty())
    return;
  OpBuilder builder(loop);
  Location loc = loop.getLoc();
  LoopScalars scalars(loop);
  AffineEvaluator evaluate(builder, loop, scalars);
  Value lower = widen(builder, loc, loop.getLowerBound());
  Value upper = widen(builder, loc, loop.getUpperBound());
  Value stride = i64Constant(builder, loc, *step);
  Value trips = arith::MaxSIOp::create(
      builder, loc, i64Constant(builder, loc, 0),
      arith::DivSIOp::create(
          builder, loc,
          arith::AddIOp::create(
              builder, loc, arith::SubIOp::create(builder, loc, upper, lower),
              i64Constant(builder, loc, *step - 1)),
          stride));
  Value safe;
  SmallVector<PipelinePushOp> marked;
  for (PipelinePushOp push : pushes) {
    Value iterations =
        emitSafeIterations(builder, push, evaluate, scalars, trips);
    if (!iterations)
      continue;
    marked.push_back(push);
    safe =
        safe
            ? arith::MinSIOp::create(builder, loc, safe, iterations).getResult()
            : iterations;
  }
  if (marked.empty())
    return; // the values emitted for nothing fold away
  Value split = arith::TruncIOp::create(
      builder, loc, builder.getI32Type(),
      arith::MinSIOp::create(
          builder, loc, upper,
          arith::AddIOp::create(
              builder, loc, lower,
              arith::MulIOp::create(builder, loc, safe, stride))));
  IRMapping mapping;
  auto inside = cast<scf::ForOp>(builder.clone(*loop, mapping));
  inside.getUpperBoundMutable().assign(split);
  for (PipelinePushOp push : marked)
    cast<PipelinePushOp>(mapping.lookup(push.getOperation())).setInside(true);
  loop.getLowerBoundMutable().assign(split);
  loop.getInitArgsMutable().assign(inside.getResults());
}

struct VersionLoopsPass
    : public tegula::tile::impl::TileVersionLoopsBase<VersionLoopsPass> {
  void runOnOperation() override {
    SmallVector<scf::ForOp> loops;
    getOperation().walk([&](scf::ForOp loop) { loops.push_back(loop); });
    for (scf::ForOp loop : loops)
      versionLoop(loop);
  }
};
} // namespace
