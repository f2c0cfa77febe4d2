//===- AccurateMathToNVVM.cpp - tanh, erf, sigmoid, log1p, pow, floor -----===//
//
// The math builtins of issue 16 are exact in the language (the interpreter
// computes them in double and rounds once), so the GPU code may not use the
// approximate f32 instructions: each element is widened to f64, computed
// with f64 arithmetic to about 1e-13 relative error, and rounded to f32 (then
// to f16/bf16). The result is then the correctly rounded one except where
// the exact value lies within ~1e-13 of a rounding boundary. f64 costs half
// the f32 rate on A100/H100. The pieces:
//
// - exp: Cody-Waite reduction x = n ln2 + r (|r| <= ln2 / 2, both parts of
//   ln2 by FMA), a degree-12 Taylor polynomial, and 2^n built from bits;
//   arguments are clamped to [-200, 200], far past f32's range.
// - log: u = 2^k m with m in [sqrt(1/2), sqrt(2)), s = (m - 1) / (m + 1),
//   log m = 2 s (1 + s^2/3 + ... + s^16/17) (|s| <= 0.172).
// - erf: x P(x^2) for |x| < 1 and 1 - exp(-x^2) R(x - 2.46) for
//   1 <= |x| < 3.92 (past it erf rounds to 1 in f32); P (degree 11) and R
//   (degree 16) are Chebyshev fits made for Tegula with mpmath (error
//   7e-18 and 1.1e-12).
//
// floor and ceil are exact in f32 (cvt.rmi / cvt.rpi). The fast forms
// (`precision = fast`, fastmath<afn> on the op) are f32 code of a stated
// bound: FastMathToNVVM.cpp.
//
//===----------------------------------------------------------------------===//

#include "Common.h"
#include "FloatMath.h"
#include "Patterns.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

#include <limits>

using namespace mlir;
using namespace tegula::tile;

namespace {

/// f64 arithmetic, with exp and log built from the f64 bits.
struct F64 : FloatMath {
  F64(OpBuilder &b, Location loc) : FloatMath{b, loc, b.getF64Type()} {}

  Value i64(int64_t v) {
    return arith::ConstantIntOp::create(b, loc, b.getI64Type(), v);
  }

  Value exp(Value x) {
    // Clamping keeps 2^n a normal double; NaN passes (compares false).
    x = select(cmp(arith::CmpFPredicate::OGT, x, c(200)), c(200), x);
    x = select(cmp(arith::CmpFPredicate::OLT, x, c(-200)), c(-200), x);
    // fptosi of NaN would be poison: compute on 0 and select NaN back.
    Value isNaN = cmp(arith::CmpFPredicate::UNO, x, x);
    Value nan = x;
    x = select(isNaN, c(0), x);
    Value n = LLVM::RoundEvenOp::create(b, loc, mul(x, c(1.4426950408889634)));
    Value r =
        fma(arith::NegFOp::create(b, loc, n), c(6.93147180369123816490e-01), x);
    r = fma(arith::NegFOp::create(b, loc, n), c(1.90821492927058770002e-10), r);
    double taylor[13];
    double factorial = 1;
    for (int k = 0; k <= 12; ++k) {
      factorial *= k ? k : 1;
      taylor[12 - k] = 1 / factorial;
    }
    Value p = horner(taylor, r);
    Value exponent = arith::FPToSIOp::create(b, loc, b.getI64Type(), n);
    Value bits = arith::ShLIOp::create(
        b, loc, arith::AddIOp::create(b, loc, exponent, i64(1023)), i64(52));
    Value scale = arith::BitcastOp::create(b, loc, b.getF64Type(), bits);
    return select(isNaN, nan, mul(p, scale));
  }

  Value log(Value u) {
    Type i64Type = b.getI64Type();
    Value bits = arith::BitcastOp::create(b, loc, i64Type, u);
    Value exponent = arith::SubIOp::create(
        b, loc, arith::ShRSIOp::create(b, loc, bits, i64(52)), i64(1023));
    Value mantissa = arith::OrIOp::create(
        b, loc,
        arith::AndIOp::create(b, loc, bits, i64((int64_t(1) << 52) - 1)),
        i64(int64_t(1023) << 52));
    Value m = arith::BitcastOp::create(b, loc, b.getF64Type(), mantissa);
    Value big = cmp(arith::CmpFPredicate::OGT, m, c(1.4142135623730951));
    m = select(big, mul(m, c(0.5)), m);
    exponent =
        select(big, arith::AddIOp::create(b, loc, exponent, i64(1)), exponent);
    Value k = arith::SIToFPOp::create(b, loc, b.getF64Type(), exponent);
    Value f = sub(m, c(1));
    Value s = div(f, add(c(2), f));
    Value z = mul(s, s);
    double series[9];
    for (int i = 0; i <= 8; ++i)
      series[8 - i] = 1.0 / (2 * i + 1);
    Value logM = mul(add(s, s), horner(series, z));
    Value r = fma(k, c(0.6931471805599453), logM);
    double inf = std::numeric_limits<double>::infinity();
    r = select(cmp(arith::CmpFPredicate::OEQ, u, c(0)), c(-inf), r);
    r = select(cmp(arith::CmpFPredicate::OEQ, u, c(inf)), c(inf), r);
    // Negative or NaN: NaN.
    return select(cmp(arith::CmpFPredicate::OGE, u, c(0)), r,
                  c(std::numeric_limits<double>::quiet_NaN()));
  }
};

Value computeTanh(F64 &m, ArrayRef<Value> args) {
  Value x = args[0], a = m.abs(x);
  // Near 0, 1 - 2 / (e + 1) cancels: the Taylor series (to x^13, error
  // below 2e-17 relative for |x| < 0.1).
  Value z = m.mul(x, x);
  Value series =
      m.mul(x, m.horner({21844.0 / 6081075, -1382.0 / 155925, 62.0 / 2835,
                         -17.0 / 315, 2.0 / 15, -1.0 / 3, 1.0},
                        z));
  Value e = m.exp(m.add(a, a));
  Value far = m.copysign(m.sub(m.c(1), m.div(m.c(2), m.add(e, m.c(1)))), x);
  return m.select(m.cmp(arith::CmpFPredicate::OLT, a, m.c(0.1)), series, far);
}

Value computeSigmoid(F64 &m, ArrayRef<Value> args) {
  return m.div(
      m.c(1), m.add(m.c(1), m.exp(arith::NegFOp::create(m.b, m.loc, args[0]))));
}

Value computeLog1p(F64 &m, ArrayRef<Value> args) {
  // 1 + x is exact in f64 for f32 x with |x| >= 2^-29; below 2^-20 the
  // series to x^3 is (error x^4 / 4).
  Value x = args[0];
  Value small = m.mul(x, m.horner({1.0 / 3, -0.5, 1.0}, x));
  return m.select(m.cmp(arith::CmpFPredicate::OLT, m.abs(x), m.c(0x1p-20)),
                  small, m.log(m.add(m.c(1), x)));
}

Value computeErf(F64 &m, ArrayRef<Value> args) {
  static const double p[] = {
      -7.795898827002142e-10, 1.3720064546777686e-08, -1.6208483801871705e-07,
      1.6447424703317362e-06, -1.492473690741966e-05, 0.00012055294904839707,
      -0.0008548325975389692, 0.0052239776071164225,  -0.02686617064323777,
      0.11283791670945006,    -0.37612638903183543,   1.1283791670955126};
  static const double r[] = {
      3.708279996466289e-10,   -1.6474645330917554e-09, 3.8346987808984e-09,
      -1.5932722080957088e-08, 7.72676920113506e-08,    -3.1250005541246117e-07,
      1.2114076325149163e-06,  -4.667372458790065e-06,  1.7560954667120975e-05,
      -6.423196812520709e-05,  0.00022824118759167937,  -0.0007862709544414148,
      0.0026189543055234405,   -0.008408308404618882,   0.02592234669377085,
      -0.07638143516343282,    0.21382067722012252};
  Value x = args[0], a = m.abs(x);
  Value z = m.mul(a, a); // exact: a came from a float of 24 bits
  Value near = m.mul(a, m.horner(p, z));
  Value tail = m.sub(m.c(1), m.mul(m.exp(arith::NegFOp::create(m.b, m.loc, z)),
                                   m.horner(r, m.sub(a, m.c(2.46)))));
  Value y = m.select(m.cmp(arith::CmpFPredicate::OLT, a, m.c(1)), near, tail);
  y = m.select(m.cmp(arith::CmpFPredicate::OGE, a, m.c(3.92)), m.c(1), y);
  return m.copysign(y, x); // NaN: a compares false throughout, y = tail = NaN
}

/// C's pow, special cases included (pow(x, 0) = 1, pow(1, y) = 1,
/// pow(-1, +-inf) = 1, signed zeros and odd integer exponents).
Value computePow(F64 &m, ArrayRef<Value> args) {
  using P = arith::CmpFPredicate;
  Value x = args[0], y = args[1], a = m.abs(x);
  Value r = m.exp(m.mul(y, m.log(a)));
  Value floorY = m.floor(y);
  Value isInt = m.cmp(P::OEQ, floorY, y);
  Value half = m.floor(m.mul(y, m.c(0.5)));
  Value isOdd = m.cmp(P::OEQ, m.sub(y, m.add(half, half)), m.c(1));
  Value negative = arith::CmpIOp::create(
      m.b, m.loc, arith::CmpIPredicate::slt,
      arith::BitcastOp::create(m.b, m.loc, m.b.getI64Type(), x), m.i64(0));
  double inf = std::numeric_limits<double>::infinity();
  Value finiteNonZero =
      m.andI(m.cmp(P::ONE, a, m.c(0)), m.cmp(P::ONE, a, m.c(inf)));
  Value nan = m.andI(
      m.andI(negative, finiteNonZero),
      arith::XOrIOp::create(m.b, m.loc, isInt,
                            arith::ConstantIntOp::create(m.b, m.loc, 1, 1)));
  r = m.select(m.andI(negative, isOdd), arith::NegFOp::create(m.b, m.loc, r),
               r);
  r = m.select(nan, m.c(std::numeric_limits<double>::quiet_NaN()), r);
  Value one = m.orI(m.cmp(P::OEQ, x, m.c(1)), m.cmp(P::OEQ, y, m.c(0)));
  one = m.orI(one, m.andI(m.cmp(P::OEQ, x, m.c(-1)),
                          m.cmp(P::OEQ, m.abs(y), m.c(inf))));
  return m.select(one, m.c(1), r);
}

using Compute = Value (*)(F64 &, ArrayRef<Value>);

/// Widens every element to f64, computes, rounds to f32 and then to the
/// element type.
template <typename SourceOp>
struct AccurateLowering : public OpConversionPattern<SourceOp> {
  AccurateLowering(const TypeConverter &converter, MLIRContext *context,
                   Compute compute)
      : OpConversionPattern<SourceOp>(converter, context), compute(compute) {}

  LogicalResult
  matchAndRewrite(SourceOp op, typename SourceOp::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type resultType =
        this->getTypeConverter()->convertType(op->getResult(0).getType());
    Type f32 = rewriter.getF32Type(), f64 = rewriter.getF64Type();
    F64 math{rewriter, loc};
    rewriter.replaceOp(
        op, mapElementsInF32(rewriter, loc, resultType, adaptor.getOperands(),
                             [&](ArrayRef<Value> xs) -> Value {
                               SmallVector<Value> args;
                               for (Value x : xs)
                                 args.push_back(arith::ExtFOp::create(
                                     rewriter, loc, f64, x));
                               return arith::TruncFOp::create(
                                   rewriter, loc, f32, compute(math, args));
                             }));
    return success();
  }

  Compute compute;
};

/// floor and ceil are exact in f32 and in every narrower float.
template <typename SourceOp, typename IntrinsicOp>
struct RoundingLowering : public OpConversionPattern<SourceOp> {
  using OpConversionPattern<SourceOp>::OpConversionPattern;
  LogicalResult
  matchAndRewrite(SourceOp op, typename SourceOp::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type resultType = this->getTypeConverter()->convertType(op.getType());
    rewriter.replaceOp(
        op, mapElementsInF32(rewriter, loc, resultType, adaptor.getOperand(),
                             [&](ArrayRef<Value> x) -> Value {
                               return IntrinsicOp::create(rewriter, loc, x[0]);
                             }));
    return success();
  }
};

} // namespace

void tegula::tile::populateAccurateMathToNVVMPatterns(
    const TypeConverter &converter, RewritePatternSet &patterns) {
  MLIRContext *context = patterns.getContext();
  patterns.add<AccurateLowering<math::TanhOp>>(converter, context, computeTanh);
  patterns.add<AccurateLowering<SigmoidOp>>(converter, context, computeSigmoid);
  patterns.add<AccurateLowering<math::ErfOp>>(converter, context, computeErf);
  patterns.add<AccurateLowering<math::Log1pOp>>(converter, context,
                                                computeLog1p);
  patterns.add<AccurateLowering<math::PowFOp>>(converter, context, computePow);
  patterns.add<RoundingLowering<math::FloorOp, LLVM::FFloorOp>,
               RoundingLowering<math::CeilOp, LLVM::FCeilOp>>(converter,
                                                              context);
}
