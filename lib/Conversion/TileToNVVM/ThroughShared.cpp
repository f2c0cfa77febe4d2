//===- ThroughShared.cpp - Tiles through shared memory --------------------===//

#include "ThroughShared.h"
#include "Families.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace tegula::tile;

int64_t tegula::tile::takeScratch(OpBuilder &builder, Location loc,
                                  Operation *op, LoweringState &state) {
  const KernelPlan &plan = state.planFor(op);
  if (op == plan.firstOverRings) {
    emitAsyncCopyWait(state.target, builder, loc, /*pending=*/0);
    emitBarrier(builder, loc);
  }
  return plan.scratchOffsetFor(op);
}

Value tegula::tile::convertThroughShared(
    const TargetInfo &target, OpBuilder &builder, Location loc,
    Operation *anchor, Value source, const LinearLayout &from,
    const LinearLayout &to, Type elementType, Type resultType,
    int64_t byteOffset, bool firstCopyWrites) {
  ThreadPosition position = getThreadPosition(builder, anchor);
  Value shared = getSharedBase(builder, anchor);
  // Booleans travel as bytes.
  Type storedType =
      elementType.isInteger(1) ? builder.getI8Type() : elementType;
  SmallVector<Value> values = unpackVector(builder, loc, source);
  Value offset = i32Const(builder, loc, byteOffset);
  auto fromCoords = emitRegisterCoords(builder, loc, from, position);
  // Warps holding copies of the tile leave the writes to the first copy
  // (one writer a shared address).
  std::optional<OpBuilder::InsertionGuard> guard;
  Value first =
      firstCopyWrites ? firstWarpCopy(builder, loc, from, anchor) : Value();
  if (first) {
    guard.emplace(builder);
    auto onlyFirst = scf::IfOp::create(builder, loc, first,
                                       /*withElseRegion=*/false);
    builder.setInsertionPointToStart(onlyFirst.thenBlock());
  }
  for (auto [value, coords] : llvm::zip(values, fromCoords)) {
    Value stored = value;
    if (storedType != elementType)
      stored = arith::ExtUIOp::create(builder, loc, storedType, value);
    Value address = getSharedElementAddress(
        builder, loc, shared, from.getShape(), coords, storedType, offset);
    LLVM::StoreOp::create(builder, loc, stored, address);
  }
  guard.reset();
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
  for (auto &coords : emitRegisterCoords(builder, loc, layout,
                                         getThreadPosition(builder, anchor))) {
    Value address = getSharedElementAddress(builder, loc, shared, shape, coords,
                                            storedType, byteOffset);
    Value loaded = LLVM::LoadOp::create(builder, loc, storedType, address);
    if (storedType != elementType)
      loaded = arith::TruncIOp::create(builder, loc, elementType, loaded);
    results.push_back(loaded);
  }
  return results;
}
