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
  // The warp index read back from lane 0 is provably the same in every
  // lane, so ptxas keeps what derives from it (a warpgroup's matrix
  // descriptors) in uniform registers instead of moving it there per use.
  Value warp = NVVM::ShflOp::create(
      builder, loc, builder.getI32Type(), i32Const(builder, loc, -1),
      arith::ShRUIOp::create(builder, loc, tid, i32Const(builder, loc, 5)),
      i32Const(builder, loc, 0), i32Const(builder, loc, 31),
      NVVM::ShflKind::idx, UnitAttr());
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

SmallVector<Value> tegula::tile::emitThreadCoords(OpBuilder &builder,
                                                  Location loc,
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
  return base;
}

SmallVector<SmallVector<Value>>
tegula::tile::emitRegisterCoords(OpBuilder &builder, Location loc,
                                 const LinearLayout &layout,
                                 ThreadPosition position) {
  unsigned rank = layout.getRank();
  SmallVector<Value> base = emitThreadCoords(builder, loc, layout, position);
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

Value tegula::tile::mapElementsInF32(
    OpBuilder &builder, Location loc, Type resultType, ValueRange operands,
    function_ref<Value(ArrayRef<Value>)> compute) {
  Type element = getElementTypeOrSelf(resultType);
  Type f32 = builder.getF32Type();
  SmallVector<SmallVector<Value>> unpacked;
  for (Value operand : operands)
    unpacked.push_back(unpackVector(builder, loc, operand));
  SmallVector<Value> results;
  for (size_t i = 0; i < unpacked.front().size(); ++i) {
    SmallVector<Value> args;
    for (auto &elements : unpacked) {
      Value x = elements[i];
      if (element != f32)
        x = arith::ExtFOp::create(builder, loc, f32, x);
      args.push_back(x);
    }
    Value y = compute(args);
    if (element != f32)
      y = arith::TruncFOp::create(builder, loc, element, y);
    results.push_back(y);
  }
  return packVector(builder, loc, resultType, results);
}

void tegula::tile::emitBarrier(OpBuilder &builder, Location loc) {
  NVVM::Barrier0Op::create(builder, loc);
}

Value tegula::tile::emitInlinePtx(OpBuilder &builder, Location loc,
                                  Type resultType, ValueRange operands,
                                  StringRef text, StringRef constraints) {
  TypeRange results = resultType ? TypeRange(resultType) : TypeRange();
  auto op = LLVM::InlineAsmOp::create(
      builder, loc, results, operands, text, constraints,
      /*has_side_effects=*/true, /*is_align_stack=*/false,
      LLVM::tailcallkind::TailCallKind::None,
      LLVM::AsmDialectAttr::get(builder.getContext(), LLVM::AsmDialect::AD_ATT),
      ArrayAttr());
  return resultType ? op.getResult(0) : Value();
}

void tegula::tile::emitAsyncProxyFence(OpBuilder &builder, Location loc) {
  emitInlinePtx(builder, loc, Type(), ValueRange(),
                "fence.proxy.async.shared::cta;", "~{memory}");
}

Value tegula::tile::getSharedElementAddress(OpBuilder &builder, Location loc,
                                            Value sharedBase,
                                            ArrayRef<int64_t> shape,
                                            ArrayRef<Value> coords,
                                            Type storedType, Value byteOffset) {
  // Rows are every dimension but the last, flattened; columns the last.
  Value row = i32Const(builder, loc, 0);
  int64_t rows = 1;
  for (auto [extent, coord] :
       llvm::zip(shape.drop_back(), coords.drop_back())) {
    row = arith::MulIOp::create(builder, loc, row,
                                i32Const(builder, loc, extent));
    row = arith::AddIOp::create(builder, loc, row, coord);
    rows *= extent;
  }
  Value column = coords.back();
  Value linear;
  int64_t swizzle = getSwizzleBytes(shape, storedType);
  if (!swizzle) {
    linear = arith::MulIOp::create(builder, loc, row,
                                   i32Const(builder, loc, shape.back()));
    linear = arith::AddIOp::create(builder, loc, linear, column);
  } else {
    // Panel, then the row within it, then the chunk XORed with the row's
    // phase: address bits 7 and up of a row of `swizzle` bytes, as many as
    // a row has chunk bits (panels of 8-row multiples keep those bits the
    // row's own).
    int64_t elementBytes = getStoredBytes(storedType);
    int64_t panelElements = swizzle / elementBytes;
    int64_t chunkElements = 16 / elementBytes;
    Value panel = arith::DivUIOp::create(builder, loc, column,
                                         i32Const(builder, loc, panelElements));
    Value inPanel = arith::RemUIOp::create(
        builder, loc, column, i32Const(builder, loc, panelElements));
    Value phase = row;
    if (int64_t rowsPer128 = 128 / swizzle; rowsPer128 > 1)
      phase = arith::ShRUIOp::create(
          builder, loc, row, i32Const(builder, loc, llvm::Log2_64(rowsPer128)));
    phase = arith::AndIOp::create(builder, loc, phase,
                                  i32Const(builder, loc, swizzle / 16 - 1));
    Value flip = arith::MulIOp::create(builder, loc, phase,
                                       i32Const(builder, loc, chunkElements));
    inPanel = arith::XOrIOp::create(builder, loc, inPanel, flip);
    linear = arith::MulIOp::create(
        builder, loc, panel, i32Const(builder, loc, rows * panelElements));
    linear = arith::AddIOp::create(
        builder, loc, linear,
        arith::MulIOp::create(builder, loc, row,
                              i32Const(builder, loc, panelElements)));
    linear = arith::AddIOp::create(builder, loc, linear, inPanel);
  }
  Value start = LLVM::GEPOp::create(builder, loc, sharedBase.getType(),
                                    builder.getI8Type(), sharedBase,
                                    ValueRange{byteOffset});
  return LLVM::GEPOp::create(builder, loc, sharedBase.getType(), storedType,
                             start, ValueRange{linear});
}

ElementOwners tegula::tile::findElementOwners(const LinearLayout &layout) {
  // Coordinates packed into one integer, each dimension in its own bits
  // (extents are powers of two), so that XOR of coordinates is XOR of keys.
  llvm::SmallVector<unsigned> shifts;
  unsigned bits = 0;
  for (int64_t extent : llvm::reverse(layout.getShape())) {
    shifts.push_back(bits);
    bits += llvm::Log2_64(uint64_t(extent));
  }
  std::reverse(shifts.begin(), shifts.end());
  auto key = [&](const LinearLayout::Coords &coords) {
    uint64_t k = 0;
    for (auto [dim, c] : llvm::enumerate(coords))
      k |= (uint64_t(c) & (uint64_t(layout.getShape()[dim]) - 1))
           << shifts[dim];
    return k;
  };
  // A basis of GF(2) vectors by leading bit; true when `v` is independent.
  llvm::SmallVector<uint64_t> basis(64, 0);
  auto insert = [&](uint64_t v) {
    for (int b = 63; b >= 0 && v; --b) {
      if (!((v >> b) & 1))
        continue;
      if (!basis[b]) {
        basis[b] = v;
        return true;
      }
      v ^= basis[b];
    }
    return false;
  };
  ElementOwners owners;
  uint64_t redundantRegs = 0;
  for (auto [i, b] : llvm::enumerate(layout.getRegBases()))
    if (!insert(key(b)))
      redundantRegs |= uint64_t(1) << i;
  for (auto [i, b] : llvm::enumerate(layout.getLaneBases()))
    if (!insert(key(b)))
      owners.redundantLanes |= 1u << i;
  // Threads past the layout's lanes and warps hold nothing of it.
  owners.redundantLanes |= ~uint32_t(layout.getNumLanes() - 1);
  for (auto [i, b] : llvm::enumerate(layout.getWarpBases()))
    if (!insert(key(b)))
      owners.redundantWarps |= 1u << i;
  owners.redundantWarps |= ~uint32_t(layout.getNumWarps() - 1);
  for (int64_t reg = 0; reg < layout.getNumRegs(); ++reg)
    owners.regOwns.push_back((uint64_t(reg) & redundantRegs) == 0);
  return owners;
}

bool ElementOwners::threadsReplicate(const LinearLayout &layout) const {
  return (redundantLanes & uint32_t(layout.getNumLanes() - 1)) ||
         (redundantWarps & uint32_t(layout.getNumWarps() - 1));
}

Value tegula::tile::ownsElementsHere(OpBuilder &builder, Location loc,
                                     const ElementOwners &owners,
                                     const LinearLayout &layout,
                                     ThreadPosition position, bool always) {
  if (!always && !owners.threadsReplicate(layout))
    return {};
  Value zero = i32Const(builder, loc, 0);
  auto noneOf = [&](Value id, uint32_t bits) {
    Value masked =
        arith::AndIOp::create(builder, loc, id, i32Const(builder, loc, bits));
    return arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::eq, masked,
                                 zero)
        .getResult();
  };
  return arith::AndIOp::create(builder, loc,
                               noneOf(position.lane, owners.redundantLanes),
                               noneOf(position.warp, owners.redundantWarps));
}

Value tegula::tile::firstWarpCopy(OpBuilder &builder, Location loc,
                                  const LinearLayout &layout,
                                  Operation *anchor) {
  uint32_t copies = 0;
  for (auto [bit, basis] : llvm::enumerate(layout.getWarpBases()))
    if (llvm::all_of(basis, [](int64_t c) { return c == 0; }))
      copies |= 1u << bit;
  if (!copies)
    return {};
  Value warp = getThreadPosition(builder, anchor).warp;
  Value bits =
      arith::AndIOp::create(builder, loc, warp, i32Const(builder, loc, copies));
  return arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::eq, bits,
                               i32Const(builder, loc, 0));
}

Value tegula::tile::combine(OpBuilder &builder, Location loc, ReduceKind kind,
                            Value a, Value b) {
  bool isFloat = isa<FloatType>(a.getType());
  switch (kind) {
  case ReduceKind::Sum:
    return isFloat ? arith::AddFOp::create(builder, loc, a, b).getResult()
                   : arith::AddIOp::create(builder, loc, a, b).getResult();
  case ReduceKind::Max:
    return isFloat ? arith::MaximumFOp::create(builder, loc, a, b).getResult()
                   : arith::MaxSIOp::create(builder, loc, a, b).getResult();
  case ReduceKind::Min:
    return isFloat ? arith::MinimumFOp::create(builder, loc, a, b).getResult()
                   : arith::MinSIOp::create(builder, loc, a, b).getResult();
  }
  llvm_unreachable("unknown reduction");
}

Value tegula::tile::shuffleXor(OpBuilder &builder, Location loc, Value value,
                               int64_t mask) {
  Type type = value.getType();
  Value all = i32Const(builder, loc, -1);
  Value clamp = i32Const(builder, loc, 31);
  auto shuffle = [&](Value word) -> Value {
    return NVVM::ShflOp::create(builder, loc, word.getType(), all, word,
                                i32Const(builder, loc, mask), clamp,
                                NVVM::ShflKind::bfly, UnitAttr());
  };
  if (type.getIntOrFloatBitWidth() == 32)
    return shuffle(value);
  assert(type.isInteger(64) && "reductions work on 32- or 64-bit values");
  Type i32 = builder.getI32Type();
  Value shift = i64Const(builder, loc, 32);
  Value low = arith::TruncIOp::create(builder, loc, i32, value);
  Value high = arith::TruncIOp::create(
      builder, loc, i32, arith::ShRUIOp::create(builder, loc, value, shift));
  Value lowBack = arith::ExtUIOp::create(builder, loc, type, shuffle(low));
  Value highBack = arith::ExtUIOp::create(builder, loc, type, shuffle(high));
  return arith::OrIOp::create(
      builder, loc, lowBack,
      arith::ShLIOp::create(builder, loc, highBack, shift));
}
