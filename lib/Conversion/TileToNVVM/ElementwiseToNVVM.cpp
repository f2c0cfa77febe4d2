//===- ElementwiseToNVVM.cpp - arith and math on tiles --------------------===//
//
// Elementwise work on a tile is the same op on the thread's register
// vector: arith ops are rebuilt over vectors and left to the standard LLVM
// lowering. Transcendentals use the GPU's approximate instructions
// (ex2.approx, lg2.approx, ...) in f32, element by element, as Triton does;
// narrower floats are widened around them.
//
// Index math (AffineIndexLowering) is the exception: an integer tile that is
// a uniform value plus a combination of the block's coordinates becomes
// (uniform + thread) + a constant per register, the form the bounds checks
// of global accesses take, so that LLVM shares the sums with them and keeps
// one value live across a loop instead of one per register.
//
//===----------------------------------------------------------------------===//

#include "Common.h"
#include "Patterns.h"

#include "Tile/TileInterfaces.h"
#include "tegula/Analysis/AffineIndex.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace tegula::tile;

namespace {

bool touchesTiles(Operation *op) {
  auto isTile = [](Type type) { return isa<RankedTensorType>(type); };
  return llvm::any_of(op->getOperandTypes(), isTile) ||
         llvm::any_of(op->getResultTypes(), isTile);
}

/// Any arith op on tiles becomes the same op on register vectors.
struct ArithOnTilesLowering : public ConversionPattern {
  ArithOnTilesLowering(const TypeConverter &converter, MLIRContext *context)
      : ConversionPattern(converter, MatchAnyOpTypeTag(), /*benefit=*/1,
                          context) {}

  LogicalResult
  matchAndRewrite(Operation *op, ArrayRef<Value> operands,
                  ConversionPatternRewriter &rewriter) const override {
    if (!isa<arith::ArithDialect>(op->getDialect()) || !touchesTiles(op) ||
        op->getNumRegions() != 0)
      return failure();
    SmallVector<Type> resultTypes;
    if (failed(getTypeConverter()->convertTypes(op->getResultTypes(),
                                                resultTypes)))
      return failure();
    if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
      auto dense = dyn_cast<SplatElementsAttr>(constant.getValue());
      if (!dense)
        return rewriter.notifyMatchFailure(op, "only splat tile constants");
      auto vectorType = cast<VectorType>(resultTypes.front());
      rewriter.replaceOpWithNewOp<arith::ConstantOp>(
          op, vectorType,
          DenseElementsAttr::get(vectorType, dense.getSplatValue<Attribute>()));
      return success();
    }
    OperationState state(op->getLoc(), op->getName(), operands, resultTypes,
                         op->getAttrs());
    rewriter.replaceOp(op, rewriter.create(state)->getResults());
    return success();
  }
};

/// True when `value` indexes a global access, whose bounds checks compute
/// (uniform + thread) + constant_r for each register (MemoryAccess.cpp).
bool indexesGlobalAccess(Value value) {
  return llvm::any_of(value.getUsers(), [&](Operation *user) {
    auto access = dyn_cast<GlobalAccessOpInterface>(user);
    return access && llvm::is_contained(access.getAccessIndices(), value);
  });
}

/// An integer add, subtraction or multiplication whose result is affine
/// index math (getAffineIndex: `c0 + arange(B)`, `pid * BM + arange(BM)`)
/// that also indexes a global access, in a layout whose register offsets
/// add to the thread's coordinates: register r is (uniform + thread) +
/// constant_r, the sums the access's bounds checks compute, so the other
/// users (`cols < N`) share them. As plain vector arithmetic, LLVM would
/// hoist each register's `thread ^ offset_r` out of a loop and keep them
/// all live beside the checks' sums (LayerNorm's variance loop at BLOCK =
/// 4096: 16 registers a thread, and a spill). Index math that no access
/// shares is left as it is: there the form only trades hoisted registers
/// for adds in the loop, which LLVM and ptxas weigh.
template <typename ArithOp>
struct AffineIndexLowering : public OpConversionPattern<ArithOp> {
  using OpConversionPattern<ArithOp>::OpConversionPattern;

  LogicalResult
  matchAndRewrite(ArithOp op, typename ArithOp::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = dyn_cast<RankedTensorType>(op.getType());
    if (!type || !type.getEncoding())
      return failure();
    if (!indexesGlobalAccess(op.getResult()))
      return failure();
    std::optional<AffineIndex> affine = getAffineIndex(op.getResult());
    if (!affine)
      return failure();
    LinearLayout layout = getLinearLayout(type);
    for (unsigned dim = 0; dim < layout.getRank(); ++dim)
      if (layout.getThreadBits(dim) & layout.getRegBits(dim))
        return failure();
    Location loc = op.getLoc();
    SmallVector<Value> threadCoords = emitThreadCoords(
        rewriter, loc, layout, getThreadPosition(rewriter, op));
    Value start = i32Const(rewriter, loc, int32_t(uint32_t(affine->constant)));
    for (auto [scalar, factor] : affine->scalars)
      start = arith::AddIOp::create(
          rewriter, loc, start,
          arith::MulIOp::create(rewriter, loc, scalar,
                                i32Const(rewriter, loc, int32_t(factor))));
    for (auto [coord, coefficient] :
         llvm::zip(threadCoords, affine->coefficients))
      start = arith::AddIOp::create(
          rewriter, loc, start,
          arith::MulIOp::create(rewriter, loc, coord,
                                i32Const(rewriter, loc, coefficient)));
    SmallVector<Value> elements;
    for (int64_t reg = 0; reg < layout.getNumRegs(); ++reg) {
      int64_t constant = affine->coordinatePart(layout.regOffset(reg));
      Value element = start;
      if (constant != 0)
        element = arith::AddIOp::create(
            rewriter, loc, start, i32Const(rewriter, loc, int32_t(constant)));
      elements.push_back(element);
    }
    rewriter.replaceOp(
        op, packVector(rewriter, loc,
                       this->getTypeConverter()->convertType(type), elements));
    return success();
  }
};

/// Which f32 computation a math op becomes.
enum class Approx { Exp, Exp2, Log, Log2, Sqrt, Rsqrt, Sin, Cos, AbsF };

template <typename MathOp, Approx kind>
struct MathLowering : public OpConversionPattern<MathOp> {
  using OpConversionPattern<MathOp>::OpConversionPattern;

  static Value intrinsic(OpBuilder &builder, Location loc, StringRef name,
                         Value x) {
    return LLVM::CallIntrinsicOp::create(builder, loc, x.getType(),
                                         builder.getStringAttr(name),
                                         ValueRange{x})
        .getResult(0);
  }

  /// exp and exp2 flagged `afn` (tile-fast-math: every kernel without
  /// exact_math) use ex2.approx.ftz.f32, as CUDA's fast math and Triton's
  /// softmax do: the non-flushing form costs a compare and two predicated
  /// multiplies around every MUFU.EX2 (issue 24). lg2, rsqrt,
  /// sqrt, sin and cos keep their non-flushing forms: subnormal inputs
  /// there would change results (log of a subnormal becomes -inf), which
  /// the interpreter does not model, and none is on a measured hot path.
  static Value compute(OpBuilder &builder, Location loc, Value x, bool ftz) {
    Type f32 = x.getType();
    StringRef ex2 =
        ftz ? "llvm.nvvm.ex2.approx.ftz.f32" : "llvm.nvvm.ex2.approx.f32";
    auto constant = [&](double value) {
      return arith::ConstantOp::create(builder, loc, f32,
                                       builder.getF32FloatAttr(value));
    };
    switch (kind) {
    case Approx::Exp: {
      Value scaled =
          arith::MulFOp::create(builder, loc, x, constant(1.4426950408889634));
      return intrinsic(builder, loc, ex2, scaled);
    }
    case Approx::Exp2:
      return intrinsic(builder, loc, ex2, x);
    case Approx::Log: {
      Value log2 = intrinsic(builder, loc, "llvm.nvvm.lg2.approx.f", x);
      return arith::MulFOp::create(builder, loc, log2,
                                   constant(0.6931471805599453));
    }
    case Approx::Log2:
      return intrinsic(builder, loc, "llvm.nvvm.lg2.approx.f", x);
    case Approx::Sqrt:
      return LLVM::SqrtOp::create(builder, loc, x);
    case Approx::Rsqrt:
      return intrinsic(builder, loc, "llvm.nvvm.rsqrt.approx.f", x);
    // NVPTX selects sin.approx / cos.approx for `afn` sine and cosine.
    case Approx::Sin:
      return LLVM::SinOp::create(builder, loc, x, LLVM::FastmathFlags::afn);
    case Approx::Cos:
      return LLVM::CosOp::create(builder, loc, x, LLVM::FastmathFlags::afn);
    case Approx::AbsF:
      return LLVM::FAbsOp::create(builder, loc, x);
    }
    llvm_unreachable("unknown math op");
  }

  LogicalResult
  matchAndRewrite(MathOp op, typename MathOp::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type resultType = this->getTypeConverter()->convertType(op.getType());
    bool ftz =
        arith::bitEnumContainsAll(op.getFastmath(), arith::FastMathFlags::afn);
    rewriter.replaceOp(
        op, mapElementsInF32(rewriter, loc, resultType, adaptor.getOperand(),
                             [&](ArrayRef<Value> x) {
                               return compute(rewriter, loc, x[0], ftz);
                             }));
    return success();
  }
};

struct AbsILowering : public OpConversionPattern<math::AbsIOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(math::AbsIOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getOperand();
    Value zero = arith::ConstantOp::create(rewriter, loc, x.getType(),
                                           rewriter.getZeroAttr(x.getType()));
    Value negated = arith::SubIOp::create(rewriter, loc, zero, x);
    rewriter.replaceOpWithNewOp<arith::MaxSIOp>(op, x, negated);
    return success();
  }
};
} // namespace

void tegula::tile::populateElementwiseToNVVMPatterns(
    const TypeConverter &converter, RewritePatternSet &patterns) {
  MLIRContext *context = patterns.getContext();
  patterns.add<ArithOnTilesLowering>(converter, context);
  patterns.add<AffineIndexLowering<arith::AddIOp>,
               AffineIndexLowering<arith::SubIOp>,
               AffineIndexLowering<arith::MulIOp>>(converter, context,
                                                   /*benefit=*/2);
  patterns.add<MathLowering<math::ExpOp, Approx::Exp>,
               MathLowering<math::Exp2Op, Approx::Exp2>,
               MathLowering<math::LogOp, Approx::Log>,
               MathLowering<math::Log2Op, Approx::Log2>,
               MathLowering<math::SqrtOp, Approx::Sqrt>,
               MathLowering<math::RsqrtOp, Approx::Rsqrt>,
               MathLowering<math::SinOp, Approx::Sin>,
               MathLowering<math::CosOp, Approx::Cos>,
               MathLowering<math::AbsFOp, Approx::AbsF>, AbsILowering>(
      converter, context);
}
