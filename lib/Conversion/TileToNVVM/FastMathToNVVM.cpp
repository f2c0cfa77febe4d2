//===- FastMathToNVVM.cpp - precision = fast: erf, tanh, sigmoid, div -----===//
//
// An op marked fastmath<afn> (`precision = fast` in the language) trades
// the correctly rounded result of its exact form for speed, within a bound
// stated here and in docs/language-extensions.md (Math builtins):
//
// - erf, tanh, sigmoid: f32 code alone (FMA polynomials, an f32 exp built
//   from bits, IEEE f32 division), no f64 and no approximate instruction,
//   so the CPU harness of test/Conversion/accurate-math-cpu.test runs
//   exactly what the GPU runs: erf and sigmoid within 2 ulp, tanh 1.
// - division: div.full.f32 (2 ulp over the full range, PTX ISA), and
//   rcp.approx.f32 (1 ulp) when the dividend is the constant 1. These are
//   the hardware's bounds; test/GPU/fast-math.tile holds the GPU to them.
//
// The interpreter computes the exact function for both forms.
//
//===----------------------------------------------------------------------===//

#include "Common.h"
#include "FloatMath.h"
#include "Patterns.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace tegula::tile;

namespace {

using P = arith::CmpFPredicate;

bool isApproximate(Operation *op) {
  auto flags = dyn_cast<arith::ArithFastMathInterface>(op);
  return flags &&
         arith::bitEnumContainsAll(flags.getFastMathFlagsAttr()
                                       ? flags.getFastMathFlagsAttr().getValue()
                                       : arith::FastMathFlags::none,
                                   arith::FastMathFlags::afn);
}

/// e^x in f32 with FMA, for the fast tanh and sigmoid: x = n ln2 + r
/// (n rounded in the low bits of x log2(e) + 1.5 * 2^23, ln2 in two parts),
/// e^r = 1 + r + r^2 Q(r) (Q of degree 5, a Chebyshev fit made for Tegula
/// with mpmath, error 1.4e-9), times 2^n built from bits in two halves so
/// that subnormal results round once. Within 1 ulp; x is clamped to
/// [-104, 89] (e^-104 rounds to 0, e^89 overflows); NaN passes through.
Value expF32(FloatMath &m, Value x) {
  static const double q[] = {0.000198909809, 0.00139336416, 0.00833331048,
                             0.0416664667,   0.166666672,   0.5};
  OpBuilder &b = m.b;
  Location loc = m.loc;
  Type i32 = b.getI32Type();
  auto i32c = [&](int32_t v) {
    return arith::ConstantIntOp::create(b, loc, i32, v);
  };
  x = m.select(m.cmp(P::OGT, x, m.c(89)), m.c(89), x);
  x = m.select(m.cmp(P::OLT, x, m.c(-104)), m.c(-104), x);
  Value shifted = m.fma(x, m.c(1.44269502), m.c(12582912));
  Value n = m.sub(shifted, m.c(12582912));
  Value r = m.fma(m.neg(n), m.c(0.693145752), x);
  r = m.fma(m.neg(n), m.c(1.42860677e-06), r);
  Value p = m.add(m.fma(m.mul(r, r), m.horner(q, r), r), m.c(1));
  // n itself: the low bits of `shifted`, whose bits are 0x4B400000 + n.
  Value bits = arith::BitcastOp::create(b, loc, i32, shifted);
  Value exponent = arith::SubIOp::create(b, loc, bits, i32c(0x4B400000));
  Value half = arith::ShRSIOp::create(b, loc, exponent, i32c(1));
  Value rest = arith::SubIOp::create(b, loc, exponent, half);
  auto power = [&](Value k) -> Value {
    Value biased = arith::AddIOp::create(b, loc, k, i32c(127));
    Value field = arith::ShLIOp::create(b, loc, biased, i32c(23));
    return arith::BitcastOp::create(b, loc, m.type, field);
  };
  return m.mul(m.mul(p, power(half)), power(rest));
}

/// erf(x, precision = fast) in f32 alone: x + x P(x^2) for |x| < 0.875,
/// R(|x| - 2.4) up to 3.92 and 1 beyond, with the sign of x. P (degree 5)
/// and R (degree 14) are least-squares fits made for Tegula (numpy, double,
/// on Chebyshev nodes, rounded to f32); simulated in f32 with FMA over 900k
/// arguments the error is at most 1.8 ulp, as CUDA's erff (2 ulp).
Value computeFastErf(FloatMath &m, Value x) {
  // f32 values (9 digits: each converts back to the same float).
  static const double p[] = {-0.000625429326, 0.00504235132, -0.026798673,
                             0.112826705,     -0.376125753,  0.128379166};
  static const double r[] = {1.35276412e-06, -1.12916905e-06, -1.88017366e-05,
                             3.90653368e-05, 6.00751082e-05,  -0.000344125496,
                             0.000522865099, 0.000253317616,  -0.00308448658,
                             0.00788376015,  -0.0121170701,   0.0124702593,
                             -0.00853362214, 0.00355554116,   0.999311507};
  Value a = m.abs(x);
  Value near = m.fma(a, m.horner(p, m.mul(a, a)), a);
  Value far = m.horner(r, m.sub(a, m.c(2.4)));
  Value y = m.select(m.cmp(P::OLT, a, m.c(0.875)), near, far);
  // NaN compares false: y is R(NaN) = NaN.
  y = m.select(m.cmp(P::OGE, a, m.c(3.92)), m.c(1), y);
  return m.copysign(y, x);
}

/// tanh(x, precision = fast): x + x^3 G(x^2) for |x| < 0.6 (G of degree 4,
/// a Chebyshev fit made for Tegula with mpmath, error 3e-8: no cancellation
/// near 0, and x itself for tiny and subnormal x), else 1 - 2 / (e^2|x| + 1)
/// with |x| clamped to 10 (tanh rounds to 1 from 9.02), with the sign of x.
/// Within 1 ulp (over every third float, all of them tested in C).
Value computeFastTanh(FloatMath &m, Value x) {
  static const double g[] = {-0.00626911968, 0.0211109594, -0.0538739488,
                             0.133329153, -0.333333313};
  Value a = m.abs(x);
  Value z = m.mul(a, a);
  Value near = m.fma(a, m.mul(z, m.horner(g, z)), a);
  // NaN compares false and passes the clamp: far is NaN.
  Value clamped = m.select(m.cmp(P::OGT, a, m.c(10)), m.c(10), a);
  Value e = expF32(m, m.add(clamped, clamped));
  Value far = m.sub(m.c(1), m.div(m.c(2), m.add(e, m.c(1))));
  return m.copysign(m.select(m.cmp(P::OLT, a, m.c(0.6)), near, far), x);
}

/// sigmoid(x, precision = fast): with t = e^-|x| in (0, 1], 1 / (1 + t)
/// for x >= 0 and t / (1 + t) below, so that neither overflows and tiny
/// results keep their subnormal digits. Within 2 ulp.
Value computeFastSigmoid(FloatMath &m, Value x) {
  Value t = expF32(m, m.neg(m.abs(x)));
  // x = -0 takes 1; NaN compares false and takes t = NaN.
  Value numerator = m.select(m.cmp(P::OGE, x, m.c(0)), m.c(1), t);
  return m.div(numerator, m.add(m.c(1), t));
}

using FastCompute = Value (*)(FloatMath &, Value);

/// An op marked fastmath<afn>: its f32 form, rounded to the element type.
/// Unmarked ops fall to the accurate lowering (benefit 1).
template <typename SourceOp>
struct FastLowering : public OpConversionPattern<SourceOp> {
  FastLowering(const TypeConverter &converter, MLIRContext *context,
               FastCompute compute)
      : OpConversionPattern<SourceOp>(converter, context, /*benefit=*/2),
        compute(compute) {}

  LogicalResult
  matchAndRewrite(SourceOp op, typename SourceOp::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!isApproximate(op))
      return rewriter.notifyMatchFailure(op, "not an approximate function");
    Location loc = op.getLoc();
    Type resultType = this->getTypeConverter()->convertType(op.getType());
    FloatMath math{rewriter, loc, rewriter.getF32Type()};
    rewriter.replaceOp(op, mapElementsInF32(rewriter, loc, resultType,
                                            adaptor.getOperands(),
                                            [&](ArrayRef<Value> x) -> Value {
                                              return compute(math, x[0]);
                                            }));
    return success();
  }

  FastCompute compute;
};

/// div(a, b, precision = fast) is div.full.f32: the divisor scaled into
/// range, MUFU.RCP and a multiply, 2 ulp over the full range, subnormals
/// kept. reciprocal(x, precision = fast), a division of the constant 1, is
/// rcp.approx.f32: 1 ulp, subnormals kept (ptxas scales them around the
/// MUFU.RCP). Neither has an LLVM form that NVPTX selects from `afn`, so
/// they are called by name.
struct FastDivisionLowering : public OpConversionPattern<arith::DivFOp> {
  FastDivisionLowering(const TypeConverter &converter, MLIRContext *context)
      : OpConversionPattern<arith::DivFOp>(converter, context,
                                           /*benefit=*/2) {}

  LogicalResult
  matchAndRewrite(arith::DivFOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!isFastDivision(op))
      return rewriter.notifyMatchFailure(op, "not an approximate division");
    Location loc = op.getLoc();
    Type resultType = getTypeConverter()->convertType(op.getType());
    Type f32 = rewriter.getF32Type();
    bool reciprocal = matchPattern(op.getLhs(), m_OneFloat());
    auto divide = [&](ArrayRef<Value> xs) -> Value {
      if (reciprocal)
        return LLVM::InlineAsmOp::create(
                   rewriter, loc, f32, ValueRange{xs[1]},
                   "rcp.approx.f32 $0, $1;", "=f,f",
                   /*has_side_effects=*/false, /*is_align_stack=*/false,
                   LLVM::tailcallkind::TailCallKind::None,
                   LLVM::AsmDialectAttr::get(rewriter.getContext(),
                                             LLVM::AsmDialect::AD_ATT),
                   ArrayAttr())
            .getResult(0);
      return LLVM::CallIntrinsicOp::create(
                 rewriter, loc, f32,
                 rewriter.getStringAttr("llvm.nvvm.div.full"),
                 ValueRange{xs[0], xs[1]})
          .getResult(0);
    };
    rewriter.replaceOp(op, mapElementsInF32(rewriter, loc, resultType,
                                            adaptor.getOperands(), divide));
    return success();
  }
};

} // namespace

bool tegula::tile::isFastDivision(Operation *op) {
  return isa<arith::DivFOp>(op) && isApproximate(op);
}

void tegula::tile::populateFastMathToNVVMPatterns(
    const TypeConverter &converter, RewritePatternSet &patterns) {
  MLIRContext *context = patterns.getContext();
  patterns.add<FastLowering<math::ErfOp>>(converter, context, computeFastErf);
  patterns.add<FastLowering<math::TanhOp>>(converter, context, computeFastTanh);
  patterns.add<FastLowering<SigmoidOp>>(converter, context, computeFastSigmoid);
  patterns.add<FastDivisionLowering>(converter, context);
}
