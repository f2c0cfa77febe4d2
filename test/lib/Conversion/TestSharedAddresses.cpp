//===- TestSharedAddresses.cpp - Shared addresses against the hardware's --===//
//
// getSharedElementAddress builds index arithmetic; this pass folds it for
// every element of a tile and compares the byte offsets with the swizzle
// modes as the PTX ISA states them on addresses, written here without the
// lowering's panel and chunk formula.
//
//===----------------------------------------------------------------------===//

#include "Common.h"
#include "TestPasses.h"
#include "Tile/TileOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

using namespace mlir;

namespace tegula::tile {
#define GEN_PASS_DEF_TILETESTSHAREDADDRESSES
#include "TestPasses.h.inc"
} // namespace tegula::tile

using namespace tegula::tile;

namespace {

/// The integer `value` folds to, through the folders of the ops behind it.
std::optional<int64_t> evaluate(Value value) {
  Operation *op = value.getDefiningOp();
  if (!op)
    return std::nullopt;
  SmallVector<Attribute> operands;
  for (Value operand : op->getOperands()) {
    std::optional<int64_t> known = evaluate(operand);
    if (!known)
      return std::nullopt;
    operands.push_back(IntegerAttr::get(operand.getType(), *known));
  }
  SmallVector<OpFoldResult> results;
  if (failed(op->fold(operands, results)) || results.size() != 1)
    return std::nullopt;
  if (auto folded = dyn_cast<Value>(results.front()))
    return evaluate(folded);
  if (auto attr = dyn_cast_if_present<IntegerAttr>(
          dyn_cast<Attribute>(results.front())))
    return attr.getInt();
  return std::nullopt;
}

/// The byte offset the hardware reads element (`row`, `column`) of a tile
/// of `shape` stored from offset 0 at: the S-byte swizzle mode XORs address
/// bits [4, 4 + n) with bits [7, 7 + n), n = log2(S / 16), of the address
/// in S-byte column panels (a tile without a swizzle is row-major).
int64_t hardwareAddress(ArrayRef<int64_t> shape, int64_t elementBytes,
                        int64_t swizzle, int64_t row, int64_t column) {
  int64_t byte = column * elementBytes;
  if (!swizzle)
    return row * shape[1] * elementBytes + byte;
  int64_t address =
      byte / swizzle * shape[0] * swizzle + row * swizzle + byte % swizzle;
  int64_t mask = swizzle / 16 - 1;
  return address ^ (((address >> 7) & mask) << 4);
}

struct TestSharedAddressesPass
    : public tegula::tile::impl::TileTestSharedAddressesBase<
          TestSharedAddressesPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    for (Type type : func.getArgumentTypes())
      if (auto tile = dyn_cast<RankedTensorType>(type);
          tile && tile.getRank() == 2)
        check(func, tile);
  }

  /// Folds the address of each element of `tile` in a scratch function.
  void check(func::FuncOp func, RankedTensorType tile) {
    ArrayRef<int64_t> shape = tile.getShape();
    Type element = tile.getElementType();
    int64_t elementBytes = getStoredBytes(element);
    int64_t swizzle = getSwizzleBytes(shape, element);
    Location loc = func.getLoc();
    OwningOpRef<func::FuncOp> scratch = func::FuncOp::create(
        loc, "scratch", FunctionType::get(func.getContext(), {}, {}));
    OpBuilder builder = OpBuilder::atBlockBegin(scratch->addEntryBlock());
    Value base = LLVM::ZeroOp::create(
        builder, loc, LLVM::LLVMPointerType::get(builder.getContext(), 3));
    Value zero = i32Const(builder, loc, 0);
    for (int64_t row = 0; row < shape[0]; ++row)
      for (int64_t column = 0; column < shape[1]; ++column) {
        Value address = getSharedElementAddress(
            builder, loc, base, shape,
            {i32Const(builder, loc, row), i32Const(builder, loc, column)},
            element, zero);
        // The element GEP over the tile's start (offset 0).
        auto gep = address.getDefiningOp<LLVM::GEPOp>();
        std::optional<int64_t> index = evaluate(gep.getDynamicIndices()[0]);
        int64_t want =
            hardwareAddress(shape, elementBytes, swizzle, row, column);
        if (index && *index * elementBytes == want)
          continue;
        func.emitError() << tile << ": element (" << row << ", " << column
                         << ") at byte "
                         << (index ? std::to_string(*index * elementBytes)
                                   : std::string("?"))
                         << ", the hardware's swizzle reads it at " << want;
        return;
      }
    func.emitRemark() << tile << ": swizzle " << swizzle << ", "
                      << tile.getNumElements()
                      << " elements where the hardware reads them";
  }
};
} // namespace
