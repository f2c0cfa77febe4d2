//===- Common.cpp - Shared pieces of the tile-to-NVVM lowering ------------===//

#include "Common.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

using namespace mlir;
using namespace tegula::tile;

KernelPlan &LoweringState::planFor(Operation *op) {
  Operation *func = op->getParentOfType<FunctionOpInterface>();
  return plans[func ? func : op];
}

/// Finds the value an entry-block op marked `name` defines, or null.
static Value findMarked(Block &entry, StringRef name) {
  for (Operation &op : entry)
    if (op.hasAttr(name))
      return op.getResult(0);
  return {};
}

ThreadPosition tegula::tile::getThreadPosition(OpBuilder &builder,
                                               Operation *op) {
  auto func = op->getParentOfType<FunctionOpInterface>();
  Block &entry = func.getFunctionBody().front();
  // The marks are plain (undialected) attributes that the LLVM conversion
  // drops; they let every pattern share one computation per kernel.
  if (Value lane = findMarked(entry, "tegula.lane"))
    return {lane, findMarked(entry, "tegula.warp")};
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToStart(&entry);
  Location loc = func.getLoc();
  Value tid = NVVM::ThreadIdXOp::create(builder, loc, builder.getI32Type());
  Value lane =
      arith::AndIOp::create(builder, loc, tid, i32Const(builder, loc, 31));
  Value warp =
      arith::ShRUIOp::create(builder, loc, tid, i32Const(builder, loc, 5));
  lane.getDefiningOp()->setAttr("tegula.lane", builder.getUnitAttr());
  warp.getDefiningOp()->setAttr("tegula.warp", builder.getUnitAttr());
  return {lane, warp};
}

Value tegula::tile::i32Const(OpBuilder &builder, Location loc, int64_t value) {
  return arith::ConstantIntOp::create(builder, loc, builder.getI32Type(),
                                      value);
}

Value tegula::tile::i64Const(OpBuilder &builder, Location loc, int64_t value) {
  return arith::ConstantIntOp::create(builder, loc, builder.getI64Type(),
                                      value);
}

SmallVector<SmallVector<Value>>
tegula::tile::emitRegisterCoords(OpBuilder &builder, Location loc,
                                 const LinearLayout &layout,
                                 ThreadPosition position) {
  unsigned rank = layout.getRank();
  SmallVector<Value> base;
  for (unsigned dim = 0; dim < rank; ++dim) {
    Value coord = i32Const(builder, loc, 0);
    auto accumulate = [&](ArrayRef<LinearLayout::Coords> bases, Value index) {
      for (auto [bit, basis] : llvm::enumerate(bases)) {
        if (basis[dim] == 0)
          continue;
        Value shifted = arith::ShRUIOp::create(builder, loc, index,
                                               i32Const(builder, loc, bit));
        Value isSet = arith::AndIOp::create(builder, loc, shifted,
                                            i32Const(builder, loc, 1));
        Value contribution = arith::MulIOp::create(
            builder, loc, isSet, i32Const(builder, loc, basis[dim]));
        coord = arith::XOrIOp::create(builder, loc, coord, contribution);
      }
    };
    accumulate(layout.getLaneBases(), position.lane);
    accumulate(layout.getWarpBases(), position.warp);
    base.push_back(coord);
  }
  SmallVector<SmallVector<Value>> coords;
  for (int64_t reg = 0; reg < layout.getNumRegs(); ++reg) {
    LinearLayout::Coords offset = layout.regOffset(reg);
    SmallVector<Value> regCoords;
    for (unsigned dim = 0; dim < rank; ++dim)
      regCoords.push_back(
          offset[dim] == 0
              ? base[dim]
              : arith::XOrIOp::create(builder, loc, base[dim],
                                      i32Const(builder, loc, offset[dim]))
                    .getResult());
    coords.push_back(std::move(regCoords));
  }
  return coords;
}

Value tegula::tile::getSharedBase(OpBuilder &builder, Operation *op) {
  auto module = op->getParentOfType<ModuleOp>();
  auto global = module.lookupSymbol<LLVM::GlobalOp>("__tegula_shared");
  assert(global && "the pass declares the shared-memory global first");
  return LLVM::AddressOfOp::create(builder, op->getLoc(), global);
}

SmallVector<Value> tegula::tile::unpackVector(OpBuilder &builder, Location loc,
                                              Value vector) {
  auto type = dyn_cast<VectorType>(vector.getType());
  if (!type)
    return {vector};
  SmallVector<Value> elements;
  for (int64_t i = 0; i < type.getNumElements(); ++i)
    elements.push_back(vector::ExtractOp::create(builder, loc, vector, i));
  return elements;
}

Value tegula::tile::packVector(OpBuilder &builder, Location loc, Type type,
                               ValueRange elements) {
  auto vectorType = dyn_cast<VectorType>(type);
  if (!vectorType)
    return elements.front();
  return vector::FromElementsOp::create(builder, loc, vectorType, elements);
}

void tegula::tile::emitBarrier(OpBuilder &builder, Location loc) {
  NVVM::Barrier0Op::create(builder, loc);
}

Value tegula::tile::getSharedElementAddress(OpBuilder &builder, Location loc,
                                            Value sharedBase,
                                            ArrayRef<int64_t> shape,
                                            ArrayRef<Value> coords,
                                            Type storedType, Value byteOffset) {
  // Rows are every dimension but the last, flattened; columns the last.
  Value row = i32Const(builder, loc, 0);
  for (auto [extent, coord] :
       llvm::zip(shape.drop_back(), coords.drop_back())) {
    row = arith::MulIOp::create(builder, loc, row,
                                i32Const(builder, loc, extent));
    row = arith::AddIOp::create(builder, loc, row, coord);
  }
  Value column = coords.back();
  int64_t rowBytes = shape.back() * getStoredBytes(storedType);
  if (shape.size() >= 2 && rowBytes % 128 == 0) {
    // Swizzle: the 16-byte chunk of a row is XORed with the row modulo 8,
    // so the eight rows an ldmatrix phase or a column access touches fall
    // in different banks. Every access to shared tiles goes through here.
    int64_t chunkElements = 16 / getStoredBytes(storedType);
    Value phase =
        arith::AndIOp::create(builder, loc, row, i32Const(builder, loc, 7));
    Value flip = arith::MulIOp::create(builder, loc, phase,
                                       i32Const(builder, loc, chunkElements));
    column = arith::XOrIOp::create(builder, loc, column, flip);
  }
  Value linear = arith::MulIOp::create(builder, loc, row,
                                       i32Const(builder, loc, shape.back()));
  linear = arith::AddIOp::create(builder, loc, linear, column);
  Value start = LLVM::GEPOp::create(builder, loc, sharedBase.getType(),
                                    builder.getI8Type(), sharedBase,
                                    ValueRange{byteOffset});
  return LLVM::GEPOp::create(builder, loc, sharedBase.getType(), storedType,
                             start, ValueRange{linear});
}

Value tegula::tile::convertThroughShared(OpBuilder &builder, Location loc,
                                         Operation *anchor, Value source,
                                         const LinearLayout &from,
                                         const LinearLayout &to,
                                         Type elementType, Type resultType,
                                         int64_t byteOffset) {
  ThreadPosition position = getThreadPosition(builder, anchor);
  Value shared = getSharedBase(builder, anchor);
  // Booleans travel as bytes.
  Type storedType =
      elementType.isInteger(1) ? builder.getI8Type() : elementType;
  SmallVector<Value> values = unpackVector(builder, loc, source);
  Value offset = i32Const(builder, loc, byteOffset);
  auto fromCoords = emitRegisterCoords(builder, loc, from, position);
  for (auto [value, coords] : llvm::zip(values, fromCoords)) {
    Value stored = value;
    if (storedType != elementType)
      stored = arith::ExtUIOp::create(builder, loc, storedType, value);
    Value address = getSharedElementAddress(
        builder, loc, shared, from.getShape(), coords, storedType, offset);
    LLVM::StoreOp::create(builder, loc, stored, address);
  }
  emitBarrier(builder, loc);
  SmallVector<Value> results;
  if (auto fragments = readWithLdmatrix(builder, loc, anchor, to.getShape(), to,
                                        elementType, offset)) {
    emitBarrier(builder, loc);
    return packVector(builder, loc, resultType, *fragments);
  }
  for (auto &coords : emitRegisterCoords(builder, loc, to, position)) {
    Value address = getSharedElementAddress(builder, loc, shared, to.getShape(),
                                            coords, storedType, offset);
    Value loaded = LLVM::LoadOp::create(builder, loc, storedType, address);
    if (storedType != elementType)
      loaded = arith::TruncIOp::create(builder, loc, elementType, loaded);
    results.push_back(loaded);
  }
  emitBarrier(builder, loc);
  return packVector(builder, loc, resultType, results);
}

std::optional<SmallVector<Value>>
tegula::tile::readWithLdmatrix(OpBuilder &builder, Location loc,
                               Operation *anchor, ArrayRef<int64_t> shape,
                               const LinearLayout &to, Type elementType,
                               Value byteOffset) {
  using Coords = LinearLayout::Coords;
  if (shape.size() != 2 || elementType.getIntOrFloatBitWidth() != 16 ||
      (shape[1] * 2) % 16 != 0 || to.getRegBases().empty() ||
      to.getLaneBases().size() != 5)
    return std::nullopt;
  // Pairs run along `pair`; lane bits 0-1 step it by 2 and 4, lane bits
  // 2-4 step the other dimension by 1, 2, 4.
  Coords first = to.getRegBases()[0];
  unsigned pair = first == Coords{0, 1} ? 1 : first == Coords{1, 0} ? 0 : 2;
  if (pair == 2)
    return std::nullopt;
  unsigned other = 1 - pair;
  auto unit = [](unsigned dim, int64_t value) {
    Coords coords = {0, 0};
    coords[dim] = value;
    return coords;
  };
  ArrayRef<Coords> lanes = to.getLaneBases();
  if (lanes[0] != unit(pair, 2) || lanes[1] != unit(pair, 4) ||
      lanes[2] != unit(other, 1) || lanes[3] != unit(other, 2) ||
      lanes[4] != unit(other, 4))
    return std::nullopt;
  int64_t words = to.getNumRegs() / 2;
  for (int64_t word = 0; word < words; ++word) {
    Coords origin = to.regOffset(2 * word);
    if (origin[0] % 8 != 0 || origin[1] % 8 != 0)
      return std::nullopt;
  }
  bool transpose = pair == 0;

  ThreadPosition position = getThreadPosition(builder, anchor);
  Value shared = getSharedBase(builder, anchor);
  // The warp's part of every coordinate.
  Value warpPart[2];
  for (unsigned dim = 0; dim < 2; ++dim) {
    Value coord = i32Const(builder, loc, 0);
    for (auto [bit, basis] : llvm::enumerate(to.getWarpBases())) {
      if (basis[dim] == 0)
        continue;
      Value isSet = arith::AndIOp::create(
          builder, loc,
          arith::ShRUIOp::create(builder, loc, position.warp,
                                 i32Const(builder, loc, bit)),
          i32Const(builder, loc, 1));
      coord = arith::XOrIOp::create(
          builder, loc, coord,
          arith::MulIOp::create(builder, loc, isSet,
                                i32Const(builder, loc, basis[dim])));
    }
    warpPart[dim] = coord;
  }
  // Lane l gives the address of row l % 8 of matrix l / 8.
  Value matrix = arith::ShRUIOp::create(builder, loc, position.lane,
                                        i32Const(builder, loc, 3));
  Value rowInMatrix = arith::AndIOp::create(builder, loc, position.lane,
                                            i32Const(builder, loc, 7));
  auto i32 = builder.getI32Type();
  auto pairType = VectorType::get({2}, elementType);
  SmallVector<Value> registers(to.getNumRegs());
  for (int64_t word = 0; word < words;) {
    int64_t count = words - word >= 4 ? 4 : words - word >= 2 ? 2 : 1;
    // This lane's matrix origin, chosen among `count` constants.
    Value coords[2];
    for (unsigned dim = 0; dim < 2; ++dim) {
      Value offset = i32Const(builder, loc, to.regOffset(2 * word)[dim]);
      for (int64_t m = 1; m < count; ++m) {
        Value isM =
            arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::eq,
                                  matrix, i32Const(builder, loc, m));
        offset = arith::SelectOp::create(
            builder, loc, isM,
            i32Const(builder, loc, to.regOffset(2 * (word + m))[dim]), offset);
      }
      coords[dim] = arith::XOrIOp::create(builder, loc, warpPart[dim], offset);
    }
    coords[0] = arith::AddIOp::create(builder, loc, coords[0], rowInMatrix);
    Value address = getSharedElementAddress(builder, loc, shared, shape,
                                            {coords[0], coords[1]}, elementType,
                                            byteOffset);
    Type resultType = i32;
    if (count > 1)
      resultType = LLVM::LLVMStructType::getLiteral(
          builder.getContext(), SmallVector<Type>(count, i32));
    Value loaded = NVVM::LdMatrixOp::create(
        builder, loc, resultType, address, count,
        transpose ? NVVM::MMALayout::col : NVVM::MMALayout::row,
        NVVM::LdStMatrixShapeAttr::get(builder.getContext(), 8, 8),
        NVVM::LdStMatrixEltType::B16);
    for (int64_t m = 0; m < count; ++m) {
      Value part = count == 1
                       ? loaded
                       : LLVM::ExtractValueOp::create(builder, loc, loaded, m)
                             .getResult();
      Value pairValue = LLVM::BitcastOp::create(builder, loc, pairType, part);
      for (int64_t e = 0; e < 2; ++e)
        registers[2 * (word + m) + e] =
            vector::ExtractOp::create(builder, loc, pairValue, e);
    }
    word += count;
  }
  return registers;
}
