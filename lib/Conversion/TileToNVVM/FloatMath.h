//===- FloatMath.h - Scalar float arithmetic for the math lowerings -*- C++
//-*-===//
//
// The accurate (f64) and fast (f32) forms of the math builtins are written
// as scalar code over one float type, in ops that stay legal in the
// conversion (scalar arith and LLVM intrinsics). Ops built here carry no
// fast-math flags: each rounds separately, as the CPU harness of
// test/Conversion/accurate-math-cpu.test runs them.
//
//===----------------------------------------------------------------------===//

#ifndef TEGULA_LIB_CONVERSION_TILETONVVM_FLOATMATH_H
#define TEGULA_LIB_CONVERSION_TILETONVVM_FLOATMATH_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace tegula::tile {

/// Scalar arithmetic of one float type in legal ops.
struct FloatMath {
  mlir::OpBuilder &b;
  mlir::Location loc;
  mlir::FloatType type;

  using Value = mlir::Value;
  using P = mlir::arith::CmpFPredicate;

  Value c(double v) {
    return mlir::arith::ConstantOp::create(b, loc, type,
                                           b.getFloatAttr(type, v));
  }
  Value add(Value x, Value y) {
    return mlir::arith::AddFOp::create(b, loc, x, y);
  }
  Value sub(Value x, Value y) {
    return mlir::arith::SubFOp::create(b, loc, x, y);
  }
  Value mul(Value x, Value y) {
    return mlir::arith::MulFOp::create(b, loc, x, y);
  }
  Value div(Value x, Value y) {
    return mlir::arith::DivFOp::create(b, loc, x, y);
  }
  Value neg(Value x) { return mlir::arith::NegFOp::create(b, loc, x); }
  Value fma(Value x, Value y, Value z) {
    return mlir::LLVM::FMAOp::create(b, loc, x, y, z);
  }
  Value abs(Value x) { return mlir::LLVM::FAbsOp::create(b, loc, x); }
  Value floor(Value x) { return mlir::LLVM::FFloorOp::create(b, loc, x); }
  Value copysign(Value x, Value sign) {
    return mlir::LLVM::CopySignOp::create(b, loc, x, sign);
  }
  Value cmp(P p, Value x, Value y) {
    return mlir::arith::CmpFOp::create(b, loc, p, x, y);
  }
  Value select(Value c, Value x, Value y) {
    return mlir::arith::SelectOp::create(b, loc, c, x, y);
  }
  Value orI(Value x, Value y) {
    return mlir::arith::OrIOp::create(b, loc, x, y);
  }
  Value andI(Value x, Value y) {
    return mlir::arith::AndIOp::create(b, loc, x, y);
  }
  /// sum c[i] x^(n-1-i), highest power first, by FMA.
  Value horner(llvm::ArrayRef<double> coefficients, Value x) {
    Value r = c(coefficients.front());
    for (double k : coefficients.drop_front())
      r = fma(r, x, c(k));
    return r;
  }
};

} // namespace tegula::tile

#endif // TEGULA_LIB_CONVERSION_TILETONVVM_FLOATMATH_H
