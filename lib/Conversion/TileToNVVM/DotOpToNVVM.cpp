//===- DotOpToNVVM.cpp - tile.dot on tensor cores (mma.sync m16n8k16) -----===//
//
// The operands arrive in dot-operand layouts and the accumulator in the mma
// layout, so each thread already holds exactly the fragments mma.sync
// wants. Register order (see TileAttrs.cpp):
//   accumulator  [n+1, m+8, n-tiles, m-tiles]
//   A            [k+1, m+8, k+8, k-tiles, m-tiles]
//   B            [k+1, k+8, k-tiles, n-tiles]
// so fragment (mi, ni, ki) is a fixed set of register indices.
//
//===----------------------------------------------------------------------===//

#include "Common.h"

#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace tegula::tile;

namespace {

struct DotLowering : public OpConversionPattern<DotOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(DotOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType accType = op.getAcc().getType();
    auto mma = dyn_cast<MmaLayoutAttr>(accType.getEncoding());
    auto operandA =
        dyn_cast<DotOperandLayoutAttr>(op.getA().getType().getEncoding());
    auto operandB =
        dyn_cast<DotOperandLayoutAttr>(op.getB().getType().getEncoding());
    if (!mma || !operandA || !operandB || operandA.getParent() != mma ||
        operandB.getParent() != mma)
      return rewriter.notifyMatchFailure(
          op, "dot needs mma and matching dot-operand layouts");

    ArrayRef<unsigned> warps = mma.getWarpsPerCTA();
    int64_t m = accType.getDimSize(0), n = accType.getDimSize(1);
    int64_t k = op.getA().getType().getDimSize(1);
    int64_t mTiles = m / warps[0] / 16, nTiles = n / warps[1] / 8,
            kTiles = k / 16;
    unsigned nBits = llvm::Log2_64(nTiles), kBits = llvm::Log2_64(kTiles);

    Type element = op.getA().getType().getElementType();
    bool isBF16 = element.isBF16();
    auto pairType = VectorType::get({2}, element);
    Type i32 = rewriter.getI32Type();

    SmallVector<Value> a = unpackVector(rewriter, loc, adaptor.getA());
    SmallVector<Value> b = unpackVector(rewriter, loc, adaptor.getB());
    SmallVector<Value> acc = unpackVector(rewriter, loc, adaptor.getAcc());
    // Two 16-bit elements per 32-bit register; bf16 fragments go as i32.
    auto pack = [&](Value lo, Value hi) -> Value {
      Value pair =
          vector::FromElementsOp::create(rewriter, loc, pairType, {lo, hi});
      if (!isBF16)
        return pair;
      return LLVM::BitcastOp::create(rewriter, loc, i32, pair);
    };

    Type f32 = rewriter.getF32Type();
    auto resultStruct =
        LLVM::LLVMStructType::getLiteral(getContext(), {f32, f32, f32, f32});
    std::optional<std::array<NVVM::MMATypes, 2>> ptxTypes;
    if (isBF16)
      ptxTypes = {NVVM::MMATypes::bf16, NVVM::MMATypes::bf16};
    else
      ptxTypes = {NVVM::MMATypes::f16, NVVM::MMATypes::f16};
    std::array<NVVM::MMALayout, 2> layouts = {NVVM::MMALayout::row,
                                              NVVM::MMALayout::col};

    for (int64_t mi = 0; mi < mTiles; ++mi) {
      for (int64_t ni = 0; ni < nTiles; ++ni) {
        int64_t accBase = (ni << 2) | (mi << (2 + nBits));
        SmallVector<Value> c = {acc[accBase], acc[accBase + 1],
                                acc[accBase + 2], acc[accBase + 3]};
        for (int64_t ki = 0; ki < kTiles; ++ki) {
          int64_t aBase = (ki << 3) | (mi << (3 + kBits));
          int64_t bBase = (ki << 2) | (ni << (2 + kBits));
          SmallVector<Value> fragA = {pack(a[aBase], a[aBase + 1]),
                                      pack(a[aBase + 2], a[aBase + 3]),
                                      pack(a[aBase + 4], a[aBase + 5]),
                                      pack(a[aBase + 6], a[aBase + 7])};
          SmallVector<Value> fragB = {pack(b[bBase], b[bBase + 1]),
                                      pack(b[bBase + 2], b[bBase + 3])};
          Value d =
              NVVM::MmaOp::create(rewriter, loc, resultStruct, fragA, fragB, c,
                                  ArrayRef<int64_t>{16, 8, 16}, std::nullopt,
                                  std::nullopt, ptxTypes, layouts);
          for (int64_t e = 0; e < 4; ++e)
            c[e] = LLVM::ExtractValueOp::create(rewriter, loc, d, e);
        }
        for (int64_t e = 0; e < 4; ++e)
          acc[accBase + e] = c[e];
      }
    }
    rewriter.replaceOp(op, packVector(rewriter, loc,
                                      getTypeConverter()->convertType(accType),
                                      acc));
    return success();
  }
};
} // namespace

void tegula::tile::populateDotOpToNVVMPatterns(const TypeConverter &converter,
                                               RewritePatternSet &patterns,
                                               LoweringState &state) {
  patterns.add<DotLowering>(converter, patterns.getContext());
}
