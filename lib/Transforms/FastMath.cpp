//===- FastMath.cpp - The fast-math forms a kernel allows -----------------===//
//
// Fast math by default (docs/language-extensions.md) as flags on the ops:
// `contract` on floating-point arith, `afn` (flush-to-zero ex2) on exp and
// exp2, outside `tile.exact_math` functions. The lowering and the
// interpreter read the flags, never the function's attribute.
//
//===----------------------------------------------------------------------===//

#include "Tile/TileDialect.h"
#include "Tile/TilePasses.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;

namespace tegula::tile {
#define GEN_PASS_DEF_TILEFASTMATH
#include "Tile/TilePasses.h.inc"
} // namespace tegula::tile

using namespace tegula::tile;

namespace {

/// The flags `op` may carry beyond its own: contract on arith but its
/// conversions, afn on exp and exp2, none elsewhere. A conversion keeps
/// its rounding: with contract on both, MLIR folds extf(truncf(x)) to x, so
/// `x - cast<f32>(cast<bf16>(x))` (dot_split's low half) was 0 on the GPU
/// and not in the interpreter.
arith::FastMathFlags allowedFlags(Operation *op) {
  if (isa<arith::TruncFOp, arith::ExtFOp>(op))
    return arith::FastMathFlags::none;
  if (isa<arith::ArithDialect>(op->getDialect()))
    return arith::FastMathFlags::contract;
  if (isa<math::ExpOp, math::Exp2Op>(op))
    return arith::FastMathFlags::afn;
  return arith::FastMathFlags::none;
}

struct TileFastMathPass
    : public tegula::tile::impl::TileFastMathBase<TileFastMathPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func->hasAttr(TileDialect::kExactMathAttrName))
      return;
    func.walk([](arith::ArithFastMathInterface op) {
      arith::FastMathFlags added = allowedFlags(op);
      if (added == arith::FastMathFlags::none)
        return;
      // Ops built without the (defaulted) attribute have none to read.
      arith::FastMathFlagsAttr flags = op.getFastMathFlagsAttr();
      op->setAttr(
          op.getFastMathAttrName(),
          arith::FastMathFlagsAttr::get(
              op->getContext(),
              (flags ? flags.getValue() : arith::FastMathFlags::none) | added));
    });
  }
};

} // namespace
