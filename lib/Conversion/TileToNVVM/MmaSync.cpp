//===- MmaSync.cpp - The mma.sync family: dot and ldmatrix fragments ------===//
//
// The operands arrive in dot-operand layouts and the accumulator in the mma
// layout, so each thread already holds exactly the fragments mma.sync
// wants. Register order (see TileAttrs.cpp):
//   accumulator  [n+1, m+8, n-tiles, m-tiles]
//   A            [k+1, m+8, k+8, k-tiles, m-tiles]
//   B            [k+1, k+8, k-tiles, n-tiles]
// so fragment (mi, ni, ki) is a fixed set of register indices. f32
// operands keep these layouts and run as two m16n8k8 .tf32 steps per 16 K,
// or, for `ieee` dots, as FMAs on operands fetched with shuffles.
//
//===----------------------------------------------------------------------===//

#include "MmaSync.h"

#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace tegula::tile;

namespace {

/// Fragment counts of one warp's part of a dot (see the register order).
struct FragmentCounts {
  int64_t mTiles, nTiles, kTiles;
  unsigned nBits, kBits;
};

/// `ieee` f32 dot: acc = fma(a[i][k], b[k][j], acc) for k = 0, 1, ... in
/// order, on the operands where the mma.sync layouts hold them. Lane
/// 4g + t holds the accumulators of rows g, g+8 and columns 2t, 2t+1; the
/// A elements of row g lie in lanes 4g .. 4g+3 and the B elements of
/// column c in lanes 4c .. 4c+3, so for each k every thread fetches its
/// two rows' A and two columns' B with an indexed shuffle (the register is
/// the same in every lane, the source lane its own).
void emitFmaDot(OpBuilder &builder, Location loc, DotOp op, ArrayRef<Value> a,
                ArrayRef<Value> b, MutableArrayRef<Value> acc,
                FragmentCounts counts) {
  ThreadPosition position = getThreadPosition(builder, op);
  Value all = i32Const(builder, loc, -1);
  Value clamp = i32Const(builder, loc, 31);
  auto fetch = [&](Value value, Value lane) -> Value {
    return NVVM::ShflOp::create(builder, loc, value.getType(), all, value, lane,
                                clamp, NVVM::ShflKind::idx, UnitAttr());
  };
  // 4g, and 4 (2t + c) for columns c = 0, 1.
  Value rowLanes = arith::AndIOp::create(builder, loc, position.lane,
                                         i32Const(builder, loc, 0x1c));
  Value t = arith::AndIOp::create(builder, loc, position.lane,
                                  i32Const(builder, loc, 3));
  Value colLanes[2];
  colLanes[0] =
      arith::ShLIOp::create(builder, loc, t, i32Const(builder, loc, 3));
  colLanes[1] = arith::OrIOp::create(builder, loc, colLanes[0],
                                     i32Const(builder, loc, 4));
  for (int64_t ki = 0; ki < counts.kTiles; ++ki) {
    for (int64_t kk = 0; kk < 16; ++kk) {
      // K = 2t' + (kk & 1) + 8 (kk >= 8) lies in lane t' = (kk % 8) / 2 of
      // the group, register bit 0 (A and B) and bit 2 (A) or 1 (B).
      Value quad = i32Const(builder, loc, (kk % 8) / 2);
      int64_t odd = kk & 1, high = kk >= 8;
      SmallVector<std::array<Value, 2>> rows(counts.mTiles),
          cols(counts.nTiles);
      Value aLane = arith::OrIOp::create(builder, loc, rowLanes, quad);
      for (int64_t mi = 0; mi < counts.mTiles; ++mi) {
        int64_t base = (ki << 3) | (mi << (3 + counts.kBits));
        for (int64_t half = 0; half < 2; ++half)
          rows[mi][half] = fetch(a[base + odd + 2 * half + 4 * high], aLane);
      }
      for (int64_t ni = 0; ni < counts.nTiles; ++ni) {
        int64_t base = (ki << 2) | (ni << (2 + counts.kBits));
        for (int64_t c = 0; c < 2; ++c)
          cols[ni][c] =
              fetch(b[base + odd + 2 * high],
                    arith::OrIOp::create(builder, loc, colLanes[c], quad));
      }
      for (int64_t mi = 0; mi < counts.mTiles; ++mi)
        for (int64_t ni = 0; ni < counts.nTiles; ++ni) {
          // Accumulator registers [n+1, m+8, n-tiles, m-tiles].
          int64_t base = (ni << 2) | (mi << (2 + counts.nBits));
          for (int64_t half = 0; half < 2; ++half)
            for (int64_t c = 0; c < 2; ++c) {
              Value &value = acc[base + 2 * half + c];
              value = LLVM::FMAOp::create(builder, loc, rows[mi][half],
                                          cols[ni][c], value);
            }
        }
    }
  }
}

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
    if (DotPlanAttr plan = op.getPlanAttr();
        plan && plan.getFamily() != DotFamily::MmaSync)
      return rewriter.notifyMatchFailure(
          op, "planned as wgmma: tile-split-async-dots splits it");
    if (!mma || !operandA || !operandB || operandA.getParent() != mma ||
        operandB.getParent() != mma)
      return rewriter.notifyMatchFailure(
          op, "dot needs mma and matching dot-operand layouts");

    ArrayRef<unsigned> warps = mma.getWarpsPerCTA();
    int64_t m = accType.getDimSize(0), n = accType.getDimSize(1);
    int64_t k = op.getA().getType().getDimSize(1);
    // A result smaller than the warps' blocks is computed by several warps
    // alike (the layouts wrap): each still does one 16 x 8 tile.
    int64_t mTiles = std::max<int64_t>(1, m / warps[0] / 16),
            nTiles = std::max<int64_t>(1, n / warps[1] / 8), kTiles = k / 16;
    unsigned nBits = llvm::Log2_64(nTiles), kBits = llvm::Log2_64(kTiles);

    Type element = op.getA().getType().getElementType();
    bool isBF16 = element.isBF16();
    auto pairType = VectorType::get({2}, element);
    Type i32 = rewriter.getI32Type();

    SmallVector<Value> a = unpackVector(rewriter, loc, adaptor.getA());
    SmallVector<Value> b = unpackVector(rewriter, loc, adaptor.getB());
    SmallVector<Value> acc = unpackVector(rewriter, loc, adaptor.getAcc());
    if (op.getIeee()) {
      emitFmaDot(rewriter, loc, op, a, b, acc,
                 {mTiles, nTiles, kTiles, nBits, kBits});
      rewriter.replaceOp(
          op, packVector(rewriter, loc,
                         getTypeConverter()->convertType(accType), acc));
      return success();
    }
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
    bool isTf32 = element.isF32();
    if (isTf32) {
      // Every operand register rounded once: cvt.rna.tf32.f32.
      auto toTf32 = [&](SmallVector<Value> &values) {
        for (Value &value : values)
          value = NVVM::ConvertFloatToTF32Op::create(
              rewriter, loc, i32, value, NVVM::FPRoundingMode::RNA,
              NVVM::SaturationMode::NONE, /*relu=*/false);
      };
      toTf32(a);
      toTf32(b);
      ptxTypes = {NVVM::MMATypes::tf32, NVVM::MMATypes::tf32};
    }

    for (int64_t mi = 0; mi < mTiles; ++mi) {
      for (int64_t ni = 0; ni < nTiles; ++ni) {
        int64_t accBase = (ni << 2) | (mi << (2 + nBits));
        SmallVector<Value> c = {acc[accBase], acc[accBase + 1],
                                acc[accBase + 2], acc[accBase + 3]};
        for (int64_t ki = 0; ki < kTiles; ++ki) {
          int64_t aBase = (ki << 3) | (mi << (3 + kBits));
          int64_t bBase = (ki << 2) | (ni << (2 + kBits));
          if (isTf32) {
            // The fragments of m16n8k16 hold K = 2t, 2t+1, 2t+8, 2t+9 where
            // m16n8k8.tf32 wants t, t+4: one k8 step takes the even K of
            // the 16 (2t as t, 2t+8 as t+4), the next the odd. A and B
            // agree on the order, so the products are the same.
            for (int64_t half = 0; half < 2; ++half) {
              SmallVector<Value> fragA = {a[aBase + half], a[aBase + 2 + half],
                                          a[aBase + 4 + half],
                                          a[aBase + 6 + half]};
              SmallVector<Value> fragB = {b[bBase + half], b[bBase + 2 + half]};
              Value d = NVVM::MmaOp::create(
                  rewriter, loc, resultStruct, fragA, fragB, c,
                  ArrayRef<int64_t>{16, 8, 8}, std::nullopt, std::nullopt,
                  ptxTypes, layouts);
              for (int64_t e = 0; e < 4; ++e)
                c[e] = LLVM::ExtractValueOp::create(rewriter, loc, d, e);
            }
            continue;
          }
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

void tegula::tile::populateMmaSyncDotPatterns(const TypeConverter &converter,
                                              RewritePatternSet &patterns) {
  patterns.add<DotLowering>(converter, patterns.getContext());
}

namespace {

/// Whether `layout`, in the coordinates of a row-major tile of `shape`,
/// holds 16-bit pairs the way ldmatrix and stmatrix move 8x8 matrices: the
/// pairs run along one dimension, lane bits 0-1 step it by 2 and 4, lane
/// bits 2-4 step the other by 1, 2, 4, and every pair's matrix starts on a
/// multiple of 8 in both (16-byte aligned rows). If so, whether the pairs
/// run down the columns (the transposing forms).
std::optional<bool> fragmentMatrices(ArrayRef<int64_t> shape,
                                     const LinearLayout &layout,
                                     Type elementType) {
  using Coords = LinearLayout::Coords;
  if (shape.size() != 2 || elementType.getIntOrFloatBitWidth() != 16 ||
      (shape[1] * 2) % 16 != 0 || layout.getRegBases().empty() ||
      layout.getLaneBases().size() != 5)
    return std::nullopt;
  Coords first = layout.getRegBases()[0];
  unsigned pair = first == Coords{0, 1} ? 1 : first == Coords{1, 0} ? 0 : 2;
  if (pair == 2)
    return std::nullopt;
  unsigned other = 1 - pair;
  auto unit = [](unsigned dim, int64_t value) {
    Coords coords = {0, 0};
    coords[dim] = value;
    return coords;
  };
  ArrayRef<Coords> lanes = layout.getLaneBases();
  if (lanes[0] != unit(pair, 2) || lanes[1] != unit(pair, 4) ||
      lanes[2] != unit(other, 1) || lanes[3] != unit(other, 2) ||
      lanes[4] != unit(other, 4))
    return std::nullopt;
  for (int64_t word = 0; word < layout.getNumRegs() / 2; ++word) {
    Coords origin = layout.regOffset(2 * word);
    if (origin[0] % 8 != 0 || origin[1] % 8 != 0)
      return std::nullopt;
  }
  return pair == 0;
}

/// Calls `move` for each run of `count` (4, 2 or 1) matrices of
/// fragmentMatrices' `layout`, from register pair `word` on, with this
/// lane's address in the run: lane l gives row l % 8 of matrix l / 8.
void forEachMatrixRun(
    OpBuilder &builder, Location loc, Operation *anchor,
    ArrayRef<int64_t> shape, const LinearLayout &layout, Type elementType,
    Value byteOffset,
    function_ref<void(Value address, int64_t word, int64_t count)> move) {
  ThreadPosition position = getThreadPosition(builder, anchor);
  Value shared = getSharedBase(builder, anchor);
  // The warp's part of every coordinate.
  Value warpPart[2];
  for (unsigned dim = 0; dim < 2; ++dim) {
    Value coord = i32Const(builder, loc, 0);
    for (auto [bit, basis] : llvm::enumerate(layout.getWarpBases())) {
      if (basis[dim] == 0)
        continue;
      Value isSet = arith::AndIOp::create(
          builder, loc,
          arith::ShRUIOp::create(builder, loc, position.warp,
                                 i32Const(builder, loc, bit)),
          i32Const(builder, loc, 1));
      coord = arith::XOrIOp::create(
          builder, loc, coord,
          arith::MulIOp::create(builder, loc, isSet,
                                i32Const(builder, loc, basis[dim])));
    }
    warpPart[dim] = coord;
  }
  Value matrix = arith::ShRUIOp::create(builder, loc, position.lane,
                                        i32Const(builder, loc, 3));
  Value rowInMatrix = arith::AndIOp::create(builder, loc, position.lane,
                                            i32Const(builder, loc, 7));
  int64_t words = layout.getNumRegs() / 2;
  for (int64_t word = 0; word < words;) {
    int64_t count = words - word >= 4 ? 4 : words - word >= 2 ? 2 : 1;
    // This lane's matrix origin, chosen among `count` constants.
    Value coords[2];
    for (unsigned dim = 0; dim < 2; ++dim) {
      Value offset = i32Const(builder, loc, layout.regOffset(2 * word)[dim]);
      for (int64_t m = 1; m < count; ++m) {
        Value isM =
            arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::eq,
                                  matrix, i32Const(builder, loc, m));
        offset = arith::SelectOp::create(
            builder, loc, isM,
            i32Const(builder, loc, layout.regOffset(2 * (word + m))[dim]),
            offset);
      }
      coords[dim] = arith::XOrIOp::create(builder, loc, warpPart[dim], offset);
    }
    coords[0] = arith::AddIOp::create(builder, loc, coords[0], rowInMatrix);
    move(getSharedElementAddress(builder, loc, shared, shape,
                                 {coords[0], coords[1]}, elementType,
                                 byteOffset),
         word, count);
    word += count;
  }
}

NVVM::MMALayout matrixLayout(bool transpose) {
  return transpose ? NVVM::MMALayout::col : NVVM::MMALayout::row;
}
} // namespace

std::optional<SmallVector<Value>> tegula::tile::readMmaFragmentsWithLdmatrix(
    OpBuilder &builder, Location loc, Operation *anchor,
    ArrayRef<int64_t> shape, const LinearLayout &to, Type elementType,
    Value byteOffset) {
  std::optional<bool> transpose = fragmentMatrices(shape, to, elementType);
  if (!transpose)
    return std::nullopt;
  auto i32 = builder.getI32Type();
  auto pairType = VectorType::get({2}, elementType);
  SmallVector<Value> registers(to.getNumRegs());
  forEachMatrixRun(
      builder, loc, anchor, shape, to, elementType, byteOffset,
      [&](Value address, int64_t word, int64_t count) {
        Type resultType = i32;
        if (count > 1)
          resultType = LLVM::LLVMStructType::getLiteral(
              builder.getContext(), SmallVector<Type>(count, i32));
        Value loaded = NVVM::LdMatrixOp::create(
            builder, loc, resultType, address, count, matrixLayout(*transpose),
            NVVM::LdStMatrixShapeAttr::get(builder.getContext(), 8, 8),
            NVVM::LdStMatrixEltType::B16);
        for (int64_t m = 0; m < count; ++m) {
          Value part =
              count == 1 ? loaded
                         : LLVM::ExtractValueOp::create(builder, loc, loaded, m)
                               .getResult();
          Value pairValue =
              LLVM::BitcastOp::create(builder, loc, pairType, part);
          for (int64_t e = 0; e < 2; ++e)
            registers[2 * (word + m) + e] =
                vector::ExtractOp::create(builder, loc, pairValue, e);
        }
      });
  return registers;
}

bool tegula::tile::writeMmaFragmentsWithStmatrix(
    OpBuilder &builder, Location loc, Operation *anchor,
    ArrayRef<int64_t> shape, const LinearLayout &from, ArrayRef<Value> values,
    Type elementType, Value byteOffset) {
  std::optional<bool> transpose = fragmentMatrices(shape, from, elementType);
  // One writer an address: no warp holds a copy of another's registers.
  if (!transpose ||
      llvm::is_contained(from.getWarpBases(), LinearLayout::Coords{0, 0}))
    return false;
  auto i32 = builder.getI32Type();
  auto pairType = VectorType::get({2}, elementType);
  forEachMatrixRun(
      builder, loc, anchor, shape, from, elementType, byteOffset,
      [&](Value address, int64_t word, int64_t count) {
        SmallVector<Value> sources;
        for (int64_t m = 0; m < count; ++m) {
          Value pair = vector::FromElementsOp::create(
              builder, loc, pairType,
              ValueRange{values[2 * (word + m)], values[2 * (word + m) + 1]});
          sources.push_back(LLVM::BitcastOp::create(builder, loc, i32, pair));
        }
        NVVM::StMatrixOp::create(
            builder, loc, address, sources, matrixLayout(*transpose),
            NVVM::LdStMatrixShapeAttr::get(builder.getContext(), 8, 8),
            NVVM::LdStMatrixEltType::B16);
      });
  return true;
}
