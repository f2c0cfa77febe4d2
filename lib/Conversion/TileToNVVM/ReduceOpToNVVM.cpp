//===- ReduceOpToNVVM.cpp - Reductions over registers, lanes, warps -------===//
//
// A reduction along `axis` combines, in order: the registers of a thread
// whose layout bases move along the axis, then lanes with butterfly
// shuffles over the lane bits that move along it, then warps through
// shared memory. What is left is the result in the slice layout. Replicated
// registers and lanes (zero bases) are never combined, so sums count every
// element once.
//
//===----------------------------------------------------------------------===//

#include "Common.h"
#include "Patterns.h"
#include "ThroughShared.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace tegula::tile;

namespace {
using Coords = LinearLayout::Coords;

bool isZero(const Coords &coords) {
  return llvm::all_of(coords, [](int64_t v) { return v == 0; });
}

struct ReduceLowering : public StatefulPattern<ReduceOp> {
  using StatefulPattern::StatefulPattern;

  LogicalResult
  matchAndRewrite(ReduceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    unsigned axis = op.getAxis();
    ReduceKind kind = op.getKind();
    LinearLayout layout = getLinearLayout(op.getSource().getType());
    LinearLayout sliced = layout.sliceDim(axis);
    auto resultTile = dyn_cast<RankedTensorType>(op.getType());
    if (resultTile && getLinearLayout(resultTile) != sliced)
      return rewriter.notifyMatchFailure(
          op, "result layout is not the source's slice along the axis");
    for (const Coords &basis : llvm::concat<const Coords>(
             layout.getLaneBases(), layout.getWarpBases())) {
      bool alongAxis = basis[axis] != 0;
      Coords rest(basis);
      rest[axis] = 0;
      if (alongAxis && !isZero(rest))
        return rewriter.notifyMatchFailure(
            op, "a lane or warp basis moves along the axis and another dim");
    }

    Type elementType = op.getSource().getType().getElementType();
    Type work = getReduceWorkType(elementType);
    if (!work)
      return rewriter.notifyMatchFailure(op, "unsupported reduction type");

    // 1. Registers.
    int64_t duplicateBits = 0;
    for (auto [bit, basis] : llvm::enumerate(layout.getRegBases()))
      if (isZero(basis))
        duplicateBits |= int64_t(1) << bit;
    DenseMap<Coords, int64_t> outputIndex;
    for (int64_t reg = 0; reg < sliced.getNumRegs(); ++reg)
      outputIndex[sliced.regOffset(reg)] = reg;
    SmallVector<Value> inputs =
        unpackVector(rewriter, loc, adaptor.getSource());
    SmallVector<Value> partial(sliced.getNumRegs());
    for (int64_t reg = 0; reg < layout.getNumRegs(); ++reg) {
      if (reg & duplicateBits)
        continue;
      Coords key = layout.regOffset(reg);
      key.erase(key.begin() + axis);
      int64_t out = outputIndex.lookup(key);
      Value value = inputs[reg];
      if (work != elementType)
        value = arith::ExtFOp::create(rewriter, loc, work, value);
      partial[out] = partial[out]
                         ? combine(rewriter, loc, kind, partial[out], value)
                         : value;
    }

    // 2. Lanes.
    for (auto [bit, basis] : llvm::enumerate(layout.getLaneBases()))
      if (basis[axis] != 0)
        for (Value &value : partial)
          value = combine(rewriter, loc, kind, value,
                          shuffleXor(rewriter, loc, value, int64_t(1) << bit));

    // 3. Warps, through shared memory.
    SmallVector<unsigned> warpBits;
    for (auto [bit, basis] : llvm::enumerate(layout.getWarpBases()))
      if (basis[axis] != 0)
        warpBits.push_back(bit);
    if (!warpBits.empty()) {
      ThreadPosition position = getThreadPosition(rewriter, op);
      Value shared = getSharedBase(rewriter, op);
      int64_t offset = takeScratch(rewriter, loc, op, state);
      int64_t outputs = 1;
      for (int64_t extent : sliced.getShape())
        outputs *= extent;
      // This warp's slot among the warps along the axis.
      Value slot = i32Const(rewriter, loc, 0);
      for (auto [k, bit] : llvm::enumerate(warpBits)) {
        Value b = arith::ShRUIOp::create(rewriter, loc, position.warp,
                                         i32Const(rewriter, loc, bit));
        b = arith::AndIOp::create(rewriter, loc, b, i32Const(rewriter, loc, 1));
        b = arith::ShLIOp::create(rewriter, loc, b, i32Const(rewriter, loc, k));
        slot = arith::OrIOp::create(rewriter, loc, slot, b);
      }
      auto coords = emitRegisterCoords(rewriter, loc, sliced, position);
      SmallVector<Value> linear;
      for (auto &regCoords : coords) {
        Value index = i32Const(rewriter, loc, 0);
        for (auto [extent, coord] : llvm::zip(sliced.getShape(), regCoords)) {
          index = arith::MulIOp::create(rewriter, loc, index,
                                        i32Const(rewriter, loc, extent));
          index = arith::AddIOp::create(rewriter, loc, index, coord);
        }
        linear.push_back(index);
      }
      if (linear.empty())
        linear.push_back(i32Const(rewriter, loc, 0));
      auto address = [&](Value slotIndex, Value element) {
        Value index = arith::MulIOp::create(rewriter, loc, slotIndex,
                                            i32Const(rewriter, loc, outputs));
        index = arith::AddIOp::create(rewriter, loc, index, element);
        Value start = LLVM::GEPOp::create(
            rewriter, loc, shared.getType(), rewriter.getI8Type(), shared,
            ArrayRef<LLVM::GEPArg>{int32_t(offset)});
        return LLVM::GEPOp::create(rewriter, loc, shared.getType(), work, start,
                                   ValueRange{index});
      };
      for (auto [value, element] : llvm::zip(partial, linear))
        LLVM::StoreOp::create(rewriter, loc, value, address(slot, element));
      emitBarrier(rewriter, loc);
      for (auto [value, element] : llvm::zip(partial, linear)) {
        Value total;
        for (int64_t s = 0; s < (int64_t(1) << warpBits.size()); ++s) {
          Value loaded = LLVM::LoadOp::create(
              rewriter, loc, work,
              address(i32Const(rewriter, loc, s), element));
          total = total ? combine(rewriter, loc, kind, total, loaded) : loaded;
        }
        value = total;
      }
      emitBarrier(rewriter, loc);
    }

    for (Value &value : partial)
      if (work != elementType)
        value = arith::TruncFOp::create(rewriter, loc, elementType, value);
    if (!resultTile) {
      rewriter.replaceOp(op, partial.front());
      return success();
    }
    rewriter.replaceOp(
        op, packVector(rewriter, loc,
                       getTypeConverter()->convertType(resultTile), partial));
    return success();
  }
};
} // namespace

void tegula::tile::populateReduceOpToNVVMPatterns(
    const TypeConverter &converter, RewritePatternSet &patterns,
    LoweringState &state) {
  patterns.add<ReduceLowering>(converter, patterns.getContext(), state);
}
