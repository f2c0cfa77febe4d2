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
// loop). A conflict places a barrier before the access and empties the set.
// Loops start from what holds before them joined with what their body
// leaves (the back edge), to a fixed point (inside those rounds a nested
// loop counts all its accesses as pending after it); branches join their
// arms. Atomics count as stores, except that two of one kind commute. A
// pipeline push reads its tensor asynchronously: a store after it waits
// for the copies too. Ops that meet at a barrier anyway (conversions through
// shared memory, transposes, reductions across warps, pipeline pops that
// wait) empty the set as a placed barrier does.
//
//===----------------------------------------------------------------------===//

#include "tegula/Analysis/MemoryOrder.h"
#include "tegula/Analysis/SharedMemoryPlan.h"

#include "Tile/TileOps.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

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

Value tensorOf(Operation *op) {
  if (auto load = dyn_cast<LoadOp>(op))
    return load.getTensor();
  if (auto store = dyn_cast<StoreOp>(op))
    return store.getTensor();
  if (auto atomic = dyn_cast<AtomicRMWOp>(op))
    return atomic.getTensor();
  return cast<PipelinePushOp>(op).getTensor();
}

ValueRange indicesOf(Operation *op) {
  if (auto load = dyn_cast<LoadOp>(op))
    return load.getIndices();
  if (auto store = dyn_cast<StoreOp>(op))
    return store.getIndices();
  if (auto atomic = dyn_cast<AtomicRMWOp>(op))
    return atomic.getIndices();
  return cast<PipelinePushOp>(op).getIndices();
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

/// True when every element `a` and `b` both touch is touched by the same
/// thread in both: their index tiles are the same values in the same layout
/// (the same element-to-thread map), no lane or warp holds a copy of
/// another's elements, and the values did not change between them.
bool sameThreads(Operation *a, const Access &b) {
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
  auto type = dyn_cast<RankedTensorType>(indicesA.front().getType());
  if (!type || !type.getEncoding())
    return false;
  LinearLayout layout = getLinearLayout(type);
  auto isZero = [](const LinearLayout::Coords &basis) {
    return llvm::all_of(basis, [](int64_t v) { return v == 0; });
  };
  return llvm::none_of(layout.getLaneBases(), isZero) &&
         llvm::none_of(layout.getWarpBases(), isZero);
}

/// Atomics of one kind commute: their order between threads does not
/// change what memory holds at the next barrier.
bool commute(Operation *a, Operation *b) {
  auto atomicA = dyn_cast<AtomicRMWOp>(a), atomicB = dyn_cast<AtomicRMWOp>(b);
  return atomicA && atomicB && atomicA.getKind() == atomicB.getKind();
}

void join(Pending &into, const Pending &from) {
  for (const Access &access : from)
    if (!llvm::is_contained(into, access))
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
      if (isa<LoadOp, StoreOp, AtomicRMWOp, PipelinePushOp>(op)) {
        access(&op, pending, record);
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

  void access(Operation *op, Pending &pending, bool record) {
    bool writes = isa<StoreOp, AtomicRMWOp>(op);
    MemoryBarrier need = MemoryBarrier::None;
    for (const Access &earlier : pending) {
      bool earlierWrites = isa<StoreOp, AtomicRMWOp>(earlier.op);
      if ((!writes && !earlierWrites) || commute(op, earlier.op) ||
          !mayAlias(tensorOf(op), tensorOf(earlier.op)) ||
          sameThreads(op, earlier))
        continue;
      // A copy still in flight may read after the store lands.
      if (writes && isa<PipelinePushOp>(earlier.op)) {
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
      body->walk([&](Operation *op) {
        if (isa<LoadOp, StoreOp, AtomicRMWOp, PipelinePushOp>(op))
          join(before, {{op, loop}});
      });
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
