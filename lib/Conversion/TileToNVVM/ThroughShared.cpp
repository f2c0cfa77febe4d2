//===- ThroughShared.cpp - Tiles through shared memory --------------------===//

#include "ThroughShared.h"
#include "Families.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace tegula::tile;

namespace {
/// How many consecutive registers of `layout` hold consecutive elements of
/// the tile's last dimension from an aligned start, at most `limit` (a
/// power of two): its first register bases step that dimension by 1, 2,
/// 4, ... and no other basis touches those low bits of it. Shared memory
/// keeps runs of up to 16 bytes of a row together (the swizzle moves
/// whole 16-byte chunks; an unswizzled tile's rows must hold whole runs),
/// so one vector instruction moves such a run.
int64_t contiguousRegisters(const LinearLayout &layout, int64_t limit) {
  unsigned last = layout.getRank() - 1;
  if (layout.getShape()[last] % limit != 0)
    limit = 1;
  ArrayRef<LinearLayout::Coords> regs = layout.getRegBases();
  unsigned leading = 0;
  for (int64_t run = 1; leading < regs.size() && run < limit; run *= 2) {
    LinearLayout::Coords step(layout.getRank(), 0);
    step[last] = run;
    if (regs[leading] != step)
      break;
    ++leading;
  }
  // Lanes, warps and the remaining registers must leave the run's bits
  // alone (shortening the run only drops bases above the bits checked).
  int64_t others = layout.getThreadBits(last);
  for (const LinearLayout::Coords &basis : regs.drop_front(leading))
    others |= basis[last];
  while (leading > 0 && (others & ((int64_t(1) << leading) - 1)))
    --leading;
  return int64_t(1) << leading;
}

/// The widest run a 16-byte access of `storedType` may move.
int64_t vectorLimit(Type storedType) {
  return std::max<int64_t>(1, 16 / getStoredBytes(storedType));
}
} // namespace

int64_t tegula::tile::takeScratch(OpBuilder &builder, Location loc,
                                  Operation *op, LoweringState &state) {
  const KernelPlan &plan = state.planFor(op);
  if (op == plan.firstOverRings) {
    emitAsyncCopyWait(state.target, builder, loc, /*pending=*/0);
    emitBarrier(builder, loc);
  }
  return plan.scratchOffsetFor(op);
}

void tegula::tile::writeTileToShared(OpBuilder &builder, Location loc,
                                     Operation *anchor, ArrayRef<Value> values,
                                     const LinearLayout &from, Type elementType,
                                     Value byteOffset, bool firstCopyWrites) {
  ThreadPosition position = getThreadPosition(builder, anchor);
  Value shared = getSharedBase(builder, anchor);
  // Booleans travel as bytes.
  Type storedType =
      elementType.isInteger(1) ? builder.getI8Type() : elementType;
  auto fromCoords = emitRegisterCoords(builder, loc, from, position);
  // Warps holding copies of the tile leave the writes to the first copy
  // (one writer a shared address).
  OpBuilder::InsertionGuard guard(builder);
  Value first =
      firstCopyWrites ? firstWarpCopy(builder, loc, from, anchor) : Value();
  if (first) {
    auto onlyFirst = scf::IfOp::create(builder, loc, first,
                                       /*withElseRegion=*/false);
    builder.setInsertionPointToStart(onlyFirst.thenBlock());
  }
  // Runs of registers that are consecutive in the row go as one vector.
  int64_t run = contiguousRegisters(from, vectorLimit(storedType));
  for (size_t reg = 0; reg < values.size(); reg += run) {
    SmallVector<Value> stored;
    for (Value value : values.slice(reg, run))
      stored.push_back(
          storedType == elementType
              ? value
              : arith::ExtUIOp::create(builder, loc, storedType, value)
                    .getResult());
    Value address =
        getSharedElementAddress(builder, loc, shared, from.getShape(),
                                fromCoords[reg], storedType, byteOffset);
    if (run == 1) {
      LLVM::StoreOp::create(builder, loc, stored.front(), address);
      continue;
    }
    auto vectorType = VectorType::get({run}, storedType);
    LLVM::StoreOp::create(builder, loc,
                          packVector(builder, loc, vectorType, stored), address,
                          run * getStoredBytes(storedType));
  }
}

Value tegula::tile::convertThroughShared(
    const TargetInfo &target, OpBuilder &builder, Location loc,
    Operation *anchor, Value source, const LinearLayout &from,
    const LinearLayout &to, Type elementType, Type resultType,
    int64_t byteOffset, bool firstCopyWrites) {
  Type storedType =
      elementType.isInteger(1) ? builder.getI8Type() : elementType;
  Value offset = i32Const(builder, loc, byteOffset);
  writeTileToShared(builder, loc, anchor, unpackVector(builder, loc, source),
                    from, elementType, offset, firstCopyWrites);
  emitBarrier(builder, loc);
  SmallVector<Value> results =
      readTileFromShared(target, builder, loc, anchor, to.getShape(), to,
                         elementType, storedType, offset);
  emitBarrier(builder, loc);
  return packVector(builder, loc, resultType, results);
}

SmallVector<Value> tegula::tile::readTileFromShared(
    const TargetInfo &target, OpBuilder &builder, Location loc,
    Operation *anchor, ArrayRef<int64_t> shape, const LinearLayout &layout,
    Type elementType, Type storedType, Value byteOffset) {
  if (auto fragments = readDotFragments(target, builder, loc, anchor, shape,
                                        layout, elementType, byteOffset))
    return *fragments;
  Value shared = getSharedBase(builder, anchor);
  SmallVector<Value> results;
  auto coords = emitRegisterCoords(builder, loc, layout,
                                   getThreadPosition(builder, anchor));
  // Runs of registers that are consecutive in the row come as one vector.
  int64_t run = contiguousRegisters(layout, vectorLimit(storedType));
  for (size_t reg = 0; reg < coords.size(); reg += run) {
    Value address = getSharedElementAddress(
        builder, loc, shared, shape, coords[reg], storedType, byteOffset);
    SmallVector<Value> loaded;
    if (run == 1) {
      loaded.push_back(LLVM::LoadOp::create(builder, loc, storedType, address));
    } else {
      auto vectorType = VectorType::get({run}, storedType);
      loaded =
          unpackVector(builder, loc,
                       LLVM::LoadOp::create(builder, loc, vectorType, address,
                                            run * getStoredBytes(storedType)));
    }
    for (Value value : loaded)
      results.push_back(
          storedType == elementType
              ? value
              : arith::TruncIOp::create(builder, loc, elementType, value)
                    .getResult());
  }
  return results;
}
