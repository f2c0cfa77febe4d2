//===- CumsumOpToNVVM.cpp - Prefix sums over registers, lanes, warps ------===//
//
// An inclusive scan along `axis`, one bit of the axis index at a time, from
// the lowest: every bit of a power-of-two axis is carried by one register,
// lane or warp basis of the layout. Each element keeps `pre`, its prefix
// sum within the aligned block of the bits done so far, and `tot`, that
// block's total. Merging the block with its partner across bit j adds the
// partner's `tot` to both totals, and to `pre` where the element's bit j is
// set (its partner block lies before it). The partner is another register
// of the thread, a butterfly shuffle away (as in ReduceOpToNVVM), or, for a
// warp bit, in another warp: exchanged through shared scratch between two
// barriers, one slot per register, lane and warp.
//
//===----------------------------------------------------------------------===//

#include "Common.h"
#include "Patterns.h"
#include "ThroughShared.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace tegula::tile;

namespace {
using Coords = LinearLayout::Coords;

/// Where bit `j` of the axis index comes from.
struct AxisBit {
  enum Kind { Reg, Lane, Warp } kind;
  unsigned bit;
};

/// For each bit of the axis index, the basis that carries it; none when a
/// basis moves along the axis and another dimension at once, or by other
/// than one power of two (the layout pass gives scans blocked layouts,
/// which never do).
std::optional<SmallVector<AxisBit>> findAxisBits(const LinearLayout &layout,
                                                 unsigned axis) {
  unsigned bits = llvm::Log2_64(layout.getShape()[axis]);
  SmallVector<std::optional<AxisBit>> found(bits);
  auto visit = [&](ArrayRef<Coords> bases, AxisBit::Kind kind) {
    for (auto [bit, basis] : llvm::enumerate(bases)) {
      int64_t step = basis[axis];
      if (step == 0)
        continue;
      for (auto [dim, value] : llvm::enumerate(basis))
        if (dim != axis && value != 0)
          return false;
      if (!llvm::isPowerOf2_64(step) || llvm::Log2_64(step) >= bits ||
          found[llvm::Log2_64(step)])
        return false;
      found[llvm::Log2_64(step)] = AxisBit{kind, unsigned(bit)};
    }
    return true;
  };
  if (!visit(layout.getRegBases(), AxisBit::Reg) ||
      !visit(layout.getLaneBases(), AxisBit::Lane) ||
      !visit(layout.getWarpBases(), AxisBit::Warp))
    return std::nullopt;
  SmallVector<AxisBit> result;
  for (const std::optional<AxisBit> &bit : found) {
    if (!bit)
      return std::nullopt;
    result.push_back(*bit);
  }
  return result;
}

/// Bit `bit` of `value` (an i32), as an i1.
Value testBit(OpBuilder &builder, Location loc, Value value, unsigned bit) {
  Value shifted =
      arith::ShRUIOp::create(builder, loc, value, i32Const(builder, loc, bit));
  Value one =
      arith::AndIOp::create(builder, loc, shifted, i32Const(builder, loc, 1));
  return arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::ne, one,
                               i32Const(builder, loc, 0));
}

struct CumsumLowering : public StatefulPattern<CumsumOp> {
  using StatefulPattern::StatefulPattern;

  LogicalResult
  matchAndRewrite(CumsumOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    LinearLayout layout = getLinearLayout(op.getSource().getType());
    auto axisBits = findAxisBits(layout, op.getAxis());
    if (!axisBits)
      return rewriter.notifyMatchFailure(
          op, "a basis moves along the axis and another dimension, or by "
              "other than a power of two");

    SmallVector<Value> pre = unpackVector(rewriter, loc, adaptor.getSource());
    SmallVector<Value> tot(pre);
    int64_t numRegs = pre.size();
    ThreadPosition position = getThreadPosition(rewriter, op);
    std::optional<int64_t> scratch;
    // Registers with one total (merged across other bits already) add the
    // partner's once, so later steps shuffle and store one value.
    using Totals = DenseMap<std::pair<Value, Value>, Value>;
    auto addTotals = [&](Totals &totals, Value mine, Value other) {
      Value &total = totals[{mine, other}];
      if (!total)
        total = combine(rewriter, loc, ReduceKind::Sum, mine, other);
      return total;
    };
    // Merges with the partner's totals `other`; `later` says whether this
    // element lies in the upper block.
    auto merge = [&](Totals &totals, int64_t reg, Value other, Value later) {
      Value sum = combine(rewriter, loc, ReduceKind::Sum, pre[reg], other);
      pre[reg] = arith::SelectOp::create(rewriter, loc, later, sum, pre[reg]);
      tot[reg] = addTotals(totals, tot[reg], other);
    };

    for (const AxisBit &axisBit : *axisBits) {
      switch (axisBit.kind) {
      case AxisBit::Reg: {
        int64_t step = int64_t(1) << axisBit.bit;
        Totals totals;
        for (int64_t lo = 0; lo < numRegs; ++lo) {
          if (lo & step)
            continue;
          int64_t hi = lo | step;
          pre[hi] = combine(rewriter, loc, ReduceKind::Sum, tot[lo], pre[hi]);
          tot[lo] = tot[hi] = addTotals(totals, tot[lo], tot[hi]);
        }
        break;
      }
      case AxisBit::Lane: {
        Value later = testBit(rewriter, loc, position.lane, axisBit.bit);
        DenseMap<Value, Value> shuffled;
        Totals totals;
        for (int64_t reg = 0; reg < numRegs; ++reg) {
          Value &other = shuffled[tot[reg]];
          if (!other)
            other =
                shuffleXor(rewriter, loc, tot[reg], int64_t(1) << axisBit.bit);
          merge(totals, reg, other, later);
        }
        break;
      }
      case AxisBit::Warp: {
        Value later = testBit(rewriter, loc, position.warp, axisBit.bit);
        Value partner =
            arith::XOrIOp::create(rewriter, loc, position.warp,
                                  i32Const(rewriter, loc, 1 << axisBit.bit));
        if (!scratch)
          scratch = takeScratch(rewriter, loc, op, state);
        SmallVector<Value> others = exchangeWithWarp(
            rewriter, loc, op, position, *scratch, partner, tot);
        Totals totals;
        for (int64_t reg = 0; reg < numRegs; ++reg)
          merge(totals, reg, others[reg], later);
        break;
      }
      }
    }
    rewriter.replaceOp(
        op, packVector(rewriter, loc,
                       getTypeConverter()->convertType(op.getType()), pre));
    return success();
  }

  /// Every thread's `values` through the shared scratch at `offset` (sized
  /// by getScratchBytes): what the thread of the same lane in warp
  /// `partner` holds. Slot (warp, reg, lane), so a warp's accesses to one
  /// register are 32 consecutive words.
  static SmallVector<Value> exchangeWithWarp(OpBuilder &builder, Location loc,
                                             CumsumOp op,
                                             ThreadPosition position,
                                             int64_t offset, Value partner,
                                             ArrayRef<Value> values) {
    Value shared = getSharedBase(builder, op);
    Type type = values.front().getType();
    int64_t numRegs = values.size();
    Value start =
        LLVM::GEPOp::create(builder, loc, shared.getType(), builder.getI8Type(),
                            shared, ArrayRef<LLVM::GEPArg>{int32_t(offset)});
    auto address = [&](Value warp, int64_t reg) {
      Value index = arith::MulIOp::create(builder, loc, warp,
                                          i32Const(builder, loc, numRegs * 32));
      index = arith::AddIOp::create(builder, loc, index,
                                    i32Const(builder, loc, reg * 32));
      index = arith::AddIOp::create(builder, loc, index, position.lane);
      return LLVM::GEPOp::create(builder, loc, shared.getType(), type, start,
                                 ValueRange{index});
    };
    // Registers that share one total go through the first one's slot.
    DenseMap<Value, int64_t> firstReg;
    for (auto [reg, value] : llvm::enumerate(values))
      if (firstReg.try_emplace(value, reg).second)
        LLVM::StoreOp::create(builder, loc, value, address(position.warp, reg));
    emitBarrier(builder, loc);
    SmallVector<Value> others(numRegs);
    for (int64_t reg = 0; reg < numRegs; ++reg) {
      int64_t first = firstReg.lookup(values[reg]);
      others[reg] = first == reg ? LLVM::LoadOp::create(builder, loc, type,
                                                        address(partner, reg))
                                       .getResult()
                                 : others[first];
    }
    // The next exchange (or the next user of the scratch) writes again.
    emitBarrier(builder, loc);
    return others;
  }
};
} // namespace

void tegula::tile::populateCumsumOpToNVVMPatterns(
    const TypeConverter &converter, RewritePatternSet &patterns,
    LoweringState &state) {
  patterns.add<CumsumLowering>(converter, patterns.getContext(), state);
}
