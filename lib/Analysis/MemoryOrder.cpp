//===- MemoryOrder.cpp - Barriers between accesses to mut tensors ---------===//
//
// The language runs each tile operation whole (the interpreter does): a
// load sees every earlier store of the program, and a store lands after
// every earlier load. On the GPU the elements of one access are spread over
// the threads of the block, which run ahead of one another, so when a load
// may read what another thread stored earlier (in program order, or in an
// earlier iteration of a loop), or a store may overwrite what another thread
// has yet to read, a barrier must come between them. bar.sync also orders
// the threads' global memory accesses within the block.
//
// analyzeMemoryOrder walks each function in program order keeping the
// accesses since the last barrier it placed. An access conflicts with one
// of them when both touch tensors that may alias (tile::mayAlias), one is a
// store, and they are not known to be made by the same thread element by
// element (same index values in the same layout, no element held by two
// threads, and no loop iteration between them when the indices vary in the
// loop), nor known to touch disjoint elements (in some dimension both index
// tiles lie in constant ranges around one uniform value, and the ranges do
// not meet: `y[0 : 128]` and `y[128 : 256]`, `y[0]` and `y[1]`; or, from
// different iterations, both lie around the loop's induction variable and
// its step clears them: `y[c0 : c0 + 128]` in `range(0, N, 128)`). A conflict
// places a barrier before the access and empties the set.
// Loops start from what holds before them joined with what their body
// leaves (the back edge), to a fixed point (inside those rounds a nested
// loop counts all its accesses as pending after it); branches join their
// arms. Atomics count as stores, except that two of one kind commute. A
// pipeline push reads its tensor asynchronously: a store after it waits
// for the copies too. Each access op says these of itself
// (GlobalAccessOpInterface: its tensor, indices, writes, commutes, reads
// after returning). Ops that meet at a barrier anyway (conversions through
// shared memory, transposes, reductions across warps, pipeline pops that
// wait) empty the set as a placed barrier does.
//
// What decides a pair that does not depend on the other access (index
// ranges, whether a thread owns its elements) is computed once per access,
// so a long run of accesses that never conflict costs a few comparisons a
// pair, and joins are linear.
//
//===----------------------------------------------------------------------===//

#include "tegula/Analysis/MemoryOrder.h"
#include "tegula/Analysis/SharedMemoryPlan.h"

#include "Tile/TileOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace tegula::tile;

namespace {

/// An access since the last barrier. `crossedLoop` is the outermost loop
/// whose back edge lies between it and the point of the walk (null when
/// none): it ran in an earlier iteration of that loop.
struct Access {
  Operation *op;
  Operation *crossedLoop;
  bool operator==(const Access &other) const {
    return op == other.op && crossedLoop == other.crossedLoop;
  }
};
using Pending = SmallVector<Access>;

ValueRange indicesOf(Operation *op) {
  return cast<GlobalAccessOpInterface>(op).getAccessIndices();
}

/// A layout conversion moves values between threads, not addresses: the
/// index it converts names the same elements.
Value throughConversions(Value value) {
  while (auto convert = value.getDefiningOp<ConvertLayoutOp>())
    value = convert.getSource();
  return value;
}

/// True when `a` and `b` hold the same values: one value, or results of
/// alike pure ops on the same values (duplicates CSE did not merge, such as
/// an index recomputed for a store).
bool sameValues(Value a, Value b, int depth = 0) {
  a = throughConversions(a);
  b = throughConversions(b);
  if (a == b)
    return true;
  Operation *opA = a.getDefiningOp(), *opB = b.getDefiningOp();
  if (!opA || !opB || depth > 8 || a.getType() != b.getType() ||
      opA->getName() != opB->getName() || !isPure(opA) ||
      opA->getNumRegions() != 0 ||
      opA->getAttrDictionary() != opB->getAttrDictionary() ||
      opA->getNumOperands() != opB->getNumOperands() ||
      cast<OpResult>(a).getResultNumber() !=
          cast<OpResult>(b).getResultNumber())
    return false;
  for (auto [x, y] : llvm::zip(opA->getOperands(), opB->getOperands()))
    if (!sameValues(x, y, depth + 1))
      return false;
  return true;
}

/// Whether `value` may differ between iterations of `loop`: it, or a value
/// it is computed from, is defined inside the loop.
bool variesIn(Value value, Operation *loop, int depth = 0) {
  value = throughConversions(value);
  Operation *owner = value.getDefiningOp();
  if (!owner)
    owner = cast<BlockArgument>(value).getOwner()->getParentOp();
  if (!loop->isAncestor(owner))
    return false;
  Operation *def = value.getDefiningOp();
  if (!def || depth > 8 || !isPure(def) || def->getNumRegions() != 0)
    return true;
  // A pure op inside the loop on values from outside it (an index LICM left
  // in place) gives the same values in every iteration.
  return llvm::any_of(def->getOperands(), [&](Value operand) {
    return variesIn(operand, loop, depth + 1);
  });
}

/// The values of an index, `base + [lo, hi]`: `base` a scalar every element
/// shares (null: 0), lo and hi constants. Unknown when `base` is not found
/// or a bound leaves the index's type (the GPU computes it modulo 2^bits).
struct IndexRange {
  Value base;
  int64_t lo = 0, hi = 0;
  bool known = false;
};

IndexRange unknownRange() { return {}; }

/// `range` if its bounds fit an integer of `bits` bits, else unknown.
IndexRange fitting(IndexRange range, unsigned bits) {
  if (!range.known || bits > 64 || !llvm::isIntN(bits, range.lo) ||
      !llvm::isIntN(bits, range.hi))
    return unknownRange();
  return range;
}

std::optional<int64_t> constantOf(Value value) {
  Attribute attr;
  if (!matchPattern(value, m_Constant(&attr)))
    return std::nullopt;
  if (auto integer = dyn_cast<IntegerAttr>(attr))
    return integer.getValue().getSExtValue();
  if (auto splat = dyn_cast<SplatElementsAttr>(attr))
    if (splat.getElementType().isInteger())
      return splat.getSplatValue<APInt>().getSExtValue();
  return std::nullopt;
}

IndexRange add(IndexRange a, IndexRange b) {
  if (!a.known || !b.known || (a.base && b.base))
    return unknownRange();
  IndexRange sum{a.base ? a.base : b.base, 0, 0, true};
  if (llvm::AddOverflow(a.lo, b.lo, sum.lo) ||
      llvm::AddOverflow(a.hi, b.hi, sum.hi))
    return unknownRange();
  return sum;
}

IndexRange scale(IndexRange a, int64_t factor) {
  if (!a.known || a.base)
    return unknownRange();
  int64_t x, y;
  if (llvm::MulOverflow(a.lo, factor, x) || llvm::MulOverflow(a.hi, factor, y))
    return unknownRange();
  return {Value(), std::min(x, y), std::max(x, y), true};
}

IndexRange rangeOf(Value value, int depth = 0);

/// The range `def` computes from its operands' (unknown if it is not a
/// sum, difference or product with a constant of known ranges).
IndexRange rangeFromOperands(Operation *def, int depth) {
  auto operand = [&](unsigned i) {
    return rangeOf(def->getOperand(i), depth + 1);
  };
  if (auto arange = dyn_cast<ArangeOp>(def))
    return {Value(), 0, arange.getType().getNumElements() - 1, true};
  if (isa<SplatOp, BroadcastOp, ExpandDimsOp>(def))
    return operand(0);
  if (isa<arith::AddIOp>(def))
    return add(operand(0), operand(1));
  if (isa<arith::SubIOp>(def))
    return add(operand(0), scale(operand(1), -1));
  if (isa<arith::MulIOp>(def))
    for (unsigned i : {0u, 1u})
      if (std::optional<int64_t> factor = constantOf(def->getOperand(1 - i)))
        return scale(operand(i), *factor);
  return unknownRange();
}

/// The range of an integer scalar or index tile (scalars: lo == hi).
IndexRange rangeOf(Value value, int depth) {
  value = throughConversions(value);
  auto integer = dyn_cast<IntegerType>(getElementTypeOrSelf(value.getType()));
  if (!integer)
    return unknownRange();
  unsigned bits = integer.getWidth();
  if (std::optional<int64_t> constant = constantOf(value))
    return fitting({Value(), *constant, *constant, true}, bits);
  IndexRange range;
  if (Operation *def = value.getDefiningOp(); def && depth <= 8)
    range = fitting(rangeFromOperands(def, depth), bits);
  // A scalar nothing simpler is known of stands for itself.
  if (!range.known && !isa<RankedTensorType>(value.getType()))
    return {value, 0, 0, true};
  return range;
}

/// Whether `a`, in a later iteration of `loop` than `b`, lies past all of
/// `b`: both are based on the loop's induction variable, which starts at a
/// constant >= 0 and moves by a constant step wider than the ranges' reach
/// (`x[c0 : c0 + BLOCK]` in `range(0, C, BLOCK)`). From a start >= 0 the
/// variable grows within [0, 2^31), assuming it never wraps (an end above
/// 2^31 - 1 - step would wrap it and break the loop itself), so the values
/// differ by more than 0 and less than 2^31 + 2^31, hence modulo 2^32 too.
bool pastEarlierIteration(const IndexRange &a, const IndexRange &b,
                          Operation *loop) {
  auto forOp = dyn_cast_or_null<scf::ForOp>(loop);
  if (!forOp || !a.base || a.base != forOp.getInductionVar() ||
      b.base != a.base)
    return false;
  std::optional<int64_t> lower = constantOf(forOp.getLowerBound());
  std::optional<int64_t> step = constantOf(forOp.getStep());
  return lower && *lower >= 0 && step && *step > 0 && *step + a.lo > b.hi &&
         a.hi - b.lo <= (int64_t(1) << 31);
}

/// Whether `a` and `b` (ranges of one index dimension) share no value, `b`
/// from an earlier iteration of `crossedLoop` if not null.
bool disjoint(const IndexRange &a, const IndexRange &b,
              Operation *crossedLoop) {
  if (!a.known || !b.known || !a.base != !b.base)
    return false;
  if (pastEarlierIteration(a, b, crossedLoop))
    return true;
  if (a.hi >= b.lo && b.hi >= a.lo)
    return false;
  if (!a.base)
    return true;
  // One uniform base: the offsets differ by less than 2^bits (the bounds
  // fit the type), so the indices differ modulo 2^bits too.
  return sameValues(a.base, b.base) &&
         !(crossedLoop &&
           (variesIn(a.base, crossedLoop) || variesIn(b.base, crossedLoop)));
}

/// Whether no lane or warp of the index tiles' layout holds a copy of
/// another's elements (one thread per element).
bool ownsElements(ValueRange indices) {
  if (indices.empty())
    return false;
  auto type = dyn_cast<RankedTensorType>(indices.front().getType());
  if (!type || !type.getEncoding())
    return false;
  LinearLayout layout = getLinearLayout(type);
  auto isZero = [](const LinearLayout::Coords &basis) {
    return llvm::all_of(basis, [](int64_t v) { return v == 0; });
  };
  return llvm::none_of(layout.getLaneBases(), isZero) &&
         llvm::none_of(layout.getWarpBases(), isZero);
}

/// What decides a conflict of one access with any other, computed once.
struct Footprint {
  Value tensor;
  bool writes = false;
  bool ownsElements = false;
  /// One range per index; empty for a strided tensor, whose distinct
  /// indices may share an address.
  SmallVector<IndexRange, 2> ranges;
};

Footprint footprintOf(GlobalAccessOpInterface op) {
  Footprint footprint;
  footprint.tensor = op.getAccessedTensor();
  footprint.writes = op.writesTensor();
  ValueRange indices = op.getAccessIndices();
  footprint.ownsElements = ownsElements(indices);
  if (!cast<GlobalTensorType>(footprint.tensor.getType()).getIsStrided())
    for (Value index : indices)
      footprint.ranges.push_back(rangeOf(index));
  return footprint;
}

/// Whether `a` and `b` touch no common element: the same tensor (row-major,
/// so distinct in-bounds indices are distinct addresses) and, in some
/// dimension, index ranges that do not meet.
bool disjoint(const Footprint &a, const Footprint &b, Operation *crossedLoop) {
  if (a.tensor != b.tensor || a.ranges.size() != b.ranges.size())
    return false;
  for (auto [x, y] : llvm::zip(a.ranges, b.ranges))
    if (disjoint(x, y, crossedLoop))
      return true;
  return false;
}

/// True when every element `a` and `b` both touch is touched by the same
/// thread in both: their index tiles are the same values in the same layout
/// (the same element-to-thread map), no lane or warp holds a copy of
/// another's elements, and the values did not change between them.
bool sameThreads(Operation *a, const Footprint &footprintA, const Access &b) {
  if (!footprintA.ownsElements)
    return false;
  ValueRange indicesA = indicesOf(a), indicesB = indicesOf(b.op);
  if (indicesA.size() != indicesB.size())
    return false;
  for (auto [x, y] : llvm::zip(indicesA, indicesB)) {
    if (x.getType() != y.getType() || !sameValues(x, y))
      return false;
    if (b.crossedLoop &&
        (variesIn(x, b.crossedLoop) || variesIn(y, b.crossedLoop)))
      return false;
  }
  return true;
}

/// Adds to `into` the accesses of `from` it lacks, in linear time.
void join(Pending &into, const Pending &from) {
  llvm::DenseSet<std::pair<Operation *, Operation *>> present;
  for (const Access &access : into)
    present.insert({access.op, access.crossedLoop});
  for (const Access &access : from)
    if (present.insert({access.op, access.crossedLoop}).second)
      into.push_back(access);
}

class MemoryOrder {
public:
  MemoryOrder(const DenseMap<Operation *, PipelineSync> &pipelineSync,
              DenseMap<Operation *, MemoryBarrier> &out)
      : pipelineSync(pipelineSync), out(out) {}

  /// Walks `block` from `pending`; places barriers only when `record`.
  Pending walk(Block &block, Pending pending, bool record) {
    for (Operation &op : block) {
      if (auto accessOp = dyn_cast<GlobalAccessOpInterface>(op)) {
        access(accessOp, pending, record);
        continue;
      }
      if (meetsAtBarrier(&op)) {
        pending.clear();
        continue;
      }
      if (auto loop = dyn_cast<scf::ForOp>(op)) {
        pending = walkLoop(loop, loop.getBody(), std::move(pending), record);
        continue;
      }
      if (auto branch = dyn_cast<scf::IfOp>(op)) {
        Pending after = walk(*branch.thenBlock(), pending, record);
        if (Block *otherwise = branch.elseBlock())
          join(after, walk(*otherwise, pending, record));
        else
          join(after, pending);
        pending = std::move(after);
        continue;
      }
      // Any other region may run any number of times.
      for (Region &region : op.getRegions())
        for (Block &body : region)
          pending = walkLoop(&op, &body, std::move(pending), record);
    }
    return pending;
  }

private:
  /// Ops whose lowering always meets the block at a barrier (bar.sync
  /// orders global accesses as well as shared ones).
  bool meetsAtBarrier(Operation *op) {
    if (isa<PipelinePopOp>(op))
      return pipelineSync.lookup_or(op, PipelineSync::Full) ==
             PipelineSync::Full;
    return getScratchBytes(op) > 0;
  }

  const Footprint &footprint(Operation *op) {
    auto [it, inserted] = footprints.try_emplace(op);
    if (inserted)
      it->second = footprintOf(cast<GlobalAccessOpInterface>(op));
    return it->second;
  }

  void access(GlobalAccessOpInterface op, Pending &pending, bool record) {
    Footprint mine = footprint(op); // a copy: footprint() may grow the map
    MemoryBarrier need = MemoryBarrier::None;
    for (const Access &earlier : pending) {
      const Footprint &theirs = footprint(earlier.op);
      // Cheapest tests first: most pairs of a long run stop at one of them.
      if ((!mine.writes && !theirs.writes) || op.commutesWith(earlier.op) ||
          disjoint(mine, theirs, earlier.crossedLoop) ||
          !mayAlias(mine.tensor, theirs.tensor) ||
          sameThreads(op, mine, earlier))
        continue;
      // A copy still in flight may read after the store lands.
      if (mine.writes &&
          cast<GlobalAccessOpInterface>(earlier.op).readsAfterReturning()) {
        need = MemoryBarrier::WaitCopiesAndBarrier;
        break;
      }
      need = MemoryBarrier::Barrier;
    }
    if (need != MemoryBarrier::None) {
      if (record) {
        MemoryBarrier &placed = out[op];
        placed = std::max(placed, need);
      }
      pending.clear();
    }
    pending.push_back({op, nullptr});
  }

  Pending walkLoop(Operation *loop, Block *body, Pending before, bool record) {
    // Only the walk that places barriers finds a loop's fixed point; walks
    // that only track what is pending (a fixed-point round of an enclosing
    // loop) take every access of the loop as pending after it, so that
    // nested loops cost linear, not exponential, time.
    if (!record) {
      Pending inside;
      body->walk([&](Operation *op) {
        if (isa<GlobalAccessOpInterface>(op))
          inside.push_back({op, loop});
      });
      join(before, inside);
      return before;
    }
    // What the body leaves comes back around, from an earlier iteration.
    auto backEdge = [&](Pending after) {
      for (Access &access : after)
        if (!access.crossedLoop || loop->isAncestor(access.crossedLoop))
          access.crossedLoop = loop;
      return after;
    };
    Pending entry = before;
    for (;;) {
      Pending next = entry;
      join(next, backEdge(walk(*body, entry, /*record=*/false)));
      if (next.size() == entry.size())
        break;
      entry = std::move(next);
    }
    Pending after = walk(*body, entry, record);
    join(after, before); // no iteration at all
    return after;
  }

  const DenseMap<Operation *, PipelineSync> &pipelineSync;
  DenseMap<Operation *, MemoryBarrier> &out;
  DenseMap<Operation *, Footprint> footprints;
};

} // namespace

void tegula::tile::analyzeMemoryOrder(
    Operation *root, const DenseMap<Operation *, PipelineSync> &pipelineSync,
    DenseMap<Operation *, MemoryBarrier> &out) {
  root->walk([&](FunctionOpInterface func) {
    if (!func.isExternal())
      MemoryOrder(pipelineSync, out)
          .walk(func.getFunctionBody().front(), {}, /*record=*/true);
  });
}
