//===- AtomicOpToNVVM.cpp - Atomic updates of global tensors --------------===//
//
// tile.atomic_rmw becomes one predicated `red.relaxed.gpu.global` per
// element: addresses and bounds masks are those of a store (planAccess), and
// the old values are never needed, so `red` rather than `atom`. A layout may
// give one element to several threads (or registers); a store writes it
// from each copy harmlessly, an atomic must not, so only one copy, the one
// whose redundant register, lane and warp bits are all zero, takes part.
//
// f32 max has no `red` instruction before sm_90 (nor after, for .f32): its
// bits are combined as integers. A value with the sign bit clear orders like
// its bits as a signed integer, and any such value is above every value with
// the sign bit set, so `max.s32` gives the float maximum; a value with the
// sign bit set orders in reverse of its bits as an unsigned integer, below
// every value with the sign bit clear, so `min.u32` gives it.
//
//===----------------------------------------------------------------------===//

#include "MemoryAccess.h"

#include "Patterns.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace tegula::tile;

namespace {

/// `@p red.relaxed.gpu.global.OP [address], value;` with p = `predicate`.
void emitRed(OpBuilder &builder, Location loc, StringRef op, Value address,
             Value value, StringRef valueConstraint, Value predicate) {
  Value flag =
      arith::ExtUIOp::create(builder, loc, builder.getI32Type(), predicate);
  std::string text = "{ .reg .pred p; setp.ne.b32 p, $2, 0; @p "
                     "red.relaxed.gpu.global." +
                     op.str() + " [$0], $1; }";
  std::string constraints = "l," + valueConstraint.str() + ",r,~{memory}";
  emitInlinePtx(builder, loc, Type(), ValueRange{address, value, flag}, text,
                constraints);
}

struct AtomicLowering : public StatefulPattern<AtomicRMWOp> {
  using StatefulPattern::StatefulPattern;
  LogicalResult
  matchAndRewrite(AtomicRMWOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    emitMemoryBarrier(rewriter, op, state);
    auto valueType = op.getValue().getType();
    Type element = valueType.getElementType();
    GlobalAccess access{op.getTensor().getType(), adaptor.getTensor(),
                        op.getIndices(), adaptor.getIndices(),
                        adaptor.getMask()};
    access.tileTensor = op.getTensor();
    AccessPlan plan = planAccess(rewriter, op, access, element, 1);
    SmallVector<Value> values = unpackVector(rewriter, loc, adaptor.getValue());
    ElementOwners owners = findElementOwners(getLinearLayout(valueType));
    if (owners.regOwns.size() != values.size())
      return rewriter.notifyMatchFailure(op, "registers differ from layout");

    // The copy held by this thread's lane and warp acts.
    LinearLayout layout = getLinearLayout(valueType);
    Value thread =
        ownsElementsHere(rewriter, loc, owners, layout,
                         getThreadPosition(rewriter, op), /*always=*/true);
    Value zero = i32Const(rewriter, loc, 0);

    bool isAdd = op.getKind() == AtomicKind::Add;
    Type i16 = rewriter.getI16Type(), i32 = rewriter.getI32Type();
    for (size_t reg = 0; reg < plan.size(); ++reg) {
      if (!owners.regOwns[reg])
        continue;
      Value address = plan.address(rewriter, loc, reg);
      Value predicate =
          arith::AndIOp::create(rewriter, loc, plan.masks[reg], thread);
      Value value = values[reg];
      if (element.isInteger(32)) {
        emitRed(rewriter, loc, isAdd ? "add.u32" : "max.s32", address, value,
                "r", predicate);
      } else if (element.isF16() || element.isBF16()) {
        Value bits = arith::BitcastOp::create(rewriter, loc, i16, value);
        emitRed(rewriter, loc,
                element.isF16() ? "add.noftz.f16" : "add.noftz.bf16", address,
                bits, "h", predicate);
      } else if (isAdd) {
        emitRed(rewriter, loc, "add.f32", address, value, "f", predicate);
      } else {
        Value bits = arith::BitcastOp::create(rewriter, loc, i32, value);
        Value negative = arith::CmpIOp::create(
            rewriter, loc, arith::CmpIPredicate::slt, bits, zero);
        Value positive = arith::XOrIOp::create(
            rewriter, loc, negative,
            arith::ConstantIntOp::create(rewriter, loc, 1, 1));
        emitRed(rewriter, loc, "max.s32", address, bits, "r",
                arith::AndIOp::create(rewriter, loc, predicate, positive));
        emitRed(rewriter, loc, "min.u32", address, bits, "r",
                arith::AndIOp::create(rewriter, loc, predicate, negative));
      }
    }
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

void tegula::tile::populateAtomicOpToNVVMPatterns(
    const TypeConverter &converter, RewritePatternSet &patterns,
    LoweringState &state) {
  patterns.add<AtomicLowering>(converter, patterns.getContext(), state);
}
