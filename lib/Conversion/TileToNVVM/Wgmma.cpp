//===- Wgmma.cpp - The wgmma family: warpgroup dots on shared stages ------===//
//
// sm_90a's wgmma.mma_async m64nNk16. Warps 4g..4g+3 form warpgroup g; the
// warp split (TargetInfo::isWarpgroupSplit) gives every warp 16 rows, so
// each warpgroup computes a 64-row block of the result and its share N_w
// of the columns with one instruction per 16 of K. Per warp, the
// accumulator registers are mma.sync's for its 16 rows in the same order,
// and register A fragments are mma.sync's A fragments: the mma and
// dot-operand layouts serve both families.
//
// B, and A when the dot plan reads it in place, are read where the pipeline
// stage holds them (#tile.shared), through matrix descriptors of the swizzle
// (128, 64 or 32 bytes) their encoding names (getSharedElementAddress): an
// operand whose encoding runs along K is K-major, one that runs along M or N
// is MN-major (the transpose bit).
//
// tile.dot_issue fences the accumulator, issues its instructions and
// commits them as one group; tile.dot_wait waits until at most `pending`
// groups are in flight (0 after the dot, 1 when deferred:
// DeferDotWaits.cpp). The fence and the waits pass the accumulator
// through, so the compiler orders every other access to it around them
// and keeps its registers while a group still writes them.
//
//===----------------------------------------------------------------------===//

#include "Wgmma.h"
#include "Families.h"
#include "ThroughShared.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace tegula;
using namespace tegula::tile;

namespace {

constexpr int64_t kInstructionK = 16;

/// The start-address field of a matrix descriptor: bits 4..17 of the
/// shared-window address (shared memory ends below 2^18 bytes).
Value descriptorStart(OpBuilder &builder, Location loc, Value address) {
  return arith::AndIOp::create(
      builder, loc,
      arith::ShRUIOp::create(builder, loc, address, i32Const(builder, loc, 4)),
      i32Const(builder, loc, 0x3FFF));
}

/// A matrix descriptor: the start field, the two byte offsets in 16-byte
/// units, and the layout type (bits 62-63) of the `swizzle`-byte mode. The
/// base offset (bits 49-51) stays 0: every start lies in a stage aligned to
/// the swizzle's period, moved by whole periods or by less than a row
/// (sliceDescriptor), which leaves the address bits the pattern reads
/// (7 and up) as they are at the period's start.
Value makeDescriptor(OpBuilder &builder, Location loc, Value start,
                     int64_t leadingBytes, int64_t strideBytes,
                     int64_t swizzle) {
  assert((swizzle == 128 || swizzle == 64 || swizzle == 32) &&
         "the #tile.shared verifier admits these swizzles only");
  uint64_t layoutType = swizzle == 128 ? 1 : swizzle == 64 ? 2 : 3;
  Type i64 = builder.getI64Type();
  uint64_t fields = (uint64_t(leadingBytes >> 4) << 16) |
                    (uint64_t(strideBytes >> 4) << 32) | (layoutType << 62);
  return arith::OrIOp::create(builder, loc,
                              arith::ExtUIOp::create(builder, loc, i64, start),
                              i64Const(builder, loc, int64_t(fields)));
}

/// Where an operand read in place lies: its stage's shared address, rows,
/// whether they run along K, and their swizzle (the panels' bytes).
struct StageOperand {
  Value address; // i32 shared-window address of the stage
  int64_t rows;
  bool kMajor;
  int64_t swizzle;
};

/// The descriptor of the 16-wide K slice `kStep` of the rows (K-major) or
/// columns (MN-major) starting at `outer` (a multiple of 8; MN-major, on a
/// panel or inside one: the descriptor starts there, the swizzle being a
/// function of the address bits, tile-plan-dots' fitsMNMajorDescriptor).
Value sliceDescriptor(OpBuilder &builder, Location loc,
                      const StageOperand &stage, Value outer, int64_t kStep,
                      int64_t elementBytes) {
  int64_t swizzle = stage.swizzle;
  int64_t panelBytes = stage.rows * swizzle;
  Value outerOffset;
  int64_t kOffset;
  if (stage.kMajor) {
    // Rows of `swizzle` bytes within a panel; K advances within the row,
    // then to the next panel.
    int64_t kBytes = kStep * kInstructionK * elementBytes;
    outerOffset = arith::MulIOp::create(builder, loc, outer,
                                        i32Const(builder, loc, swizzle));
    kOffset = kBytes / swizzle * panelBytes + kBytes % swizzle;
  } else {
    // Columns across panels, then within the panel; K down the rows.
    int64_t panelElements = swizzle / elementBytes;
    Value panel = arith::DivUIOp::create(builder, loc, outer,
                                         i32Const(builder, loc, panelElements));
    Value inPanel = arith::RemUIOp::create(
        builder, loc, outer, i32Const(builder, loc, panelElements));
    outerOffset = arith::AddIOp::create(
        builder, loc,
        arith::MulIOp::create(builder, loc, panel,
                              i32Const(builder, loc, panelBytes)),
        arith::MulIOp::create(builder, loc, inPanel,
                              i32Const(builder, loc, elementBytes)));
    kOffset = kStep * kInstructionK * swizzle;
  }
  // The K step is added to the start field, not the address: every slice
  // of a dot then shares one shift and mask, and each costs one add (the
  // field cannot carry out: the slice lies in shared memory too).
  Value start = arith::AddIOp::create(
      builder, loc,
      descriptorStart(
          builder, loc,
          arith::AddIOp::create(builder, loc, stage.address, outerOffset)),
      i32Const(builder, loc, kOffset >> 4));
  // K-major swizzled tiles ignore the leading offset; MN-major ones step
  // from panel to panel by it. Both step 8 rows by the swizzle's period.
  int64_t leading = stage.kMajor ? 16 : panelBytes;
  return makeDescriptor(builder, loc, start, leading, 8 * swizzle, swizzle);
}

/// `{$first, ..., $(first + count - 1)}`.
std::string operandList(unsigned first, unsigned count) {
  std::string text = "{";
  for (unsigned i = 0; i < count; ++i)
    text += (i ? ", $" : "$") + std::to_string(first + i);
  return text + "}";
}

/// Inline PTX `text` returning `count` f32 accumulator registers.
SmallVector<Value> emitAccumulatorAsm(OpBuilder &builder, Location loc,
                                      unsigned count, ValueRange operands,
                                      StringRef text, StringRef constraints) {
  auto structType = LLVM::LLVMStructType::getLiteral(
      builder.getContext(), SmallVector<Type>(count, builder.getF32Type()));
  Value result =
      emitInlinePtx(builder, loc, structType, operands, text, constraints);
  SmallVector<Value> values;
  for (unsigned i = 0; i < count; ++i)
    values.push_back(LLVM::ExtractValueOp::create(builder, loc, result, i));
  return values;
}

/// Inline PTX that takes the accumulator `acc` (f32 registers) and returns
/// it, tied, after `text`; `extra` operands follow with `constraints`.
SmallVector<Value> emitOnAccumulator(OpBuilder &builder, Location loc,
                                     ArrayRef<Value> acc, ValueRange extra,
                                     StringRef extraConstraints,
                                     StringRef text) {
  unsigned count = acc.size();
  std::string constraints;
  for (unsigned i = 0; i < count; ++i)
    constraints += "=f,";
  for (unsigned i = 0; i < count; ++i)
    constraints += std::to_string(i) + ",";
  constraints += extraConstraints.str();
  if (!constraints.empty() && constraints.back() == ',')
    constraints.pop_back();
  SmallVector<Value> operands(acc);
  operands.append(extra.begin(), extra.end());
  return emitAccumulatorAsm(builder, loc, count, operands, text, constraints);
}

/// `text` writing `count` accumulator registers it does not read ($0 ..
/// $count-1; `extra` follows from $count): the first instruction of a dot
/// whose accumulator starts at zero.
SmallVector<Value> emitFreshAccumulator(OpBuilder &builder, Location loc,
                                        unsigned count, ValueRange extra,
                                        StringRef extraConstraints,
                                        StringRef text) {
  std::string constraints;
  for (unsigned i = 0; i < count; ++i)
    constraints += "=f,";
  constraints += extraConstraints.str();
  if (!constraints.empty() && constraints.back() == ',')
    constraints.pop_back();
  return emitAccumulatorAsm(builder, loc, count, extra, text, constraints);
}

/// Waits until at most `inFlight` groups of this warp are in flight.
SmallVector<Value> emitWait(OpBuilder &builder, Location loc,
                            ArrayRef<Value> acc, int64_t inFlight) {
  return emitOnAccumulator(builder, loc, acc, {}, "~{memory}",
                           "wgmma.wait_group.sync.aligned " +
                               std::to_string(inFlight) + ";");
}

struct DotIssueLowering : public OpConversionPattern<DotIssueOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(DotIssueOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType accType = op.getAcc().getType();
    // The verifier holds the encodings to what the plan decided: an mma
    // accumulator, B in place, A in place or in a dot-operand layout.
    auto mma = cast<MmaLayoutAttr>(accType.getEncoding());
    auto aShared =
        dyn_cast<SharedLayoutAttr>(op.getA().getType().getEncoding());
    auto bShared = cast<SharedLayoutAttr>(op.getB().getType().getEncoding());

    ArrayRef<unsigned> warps = mma.getWarpsPerCTA();
    int64_t m = accType.getDimSize(0), n = accType.getDimSize(1);
    int64_t k = op.getA().getType().getDimSize(1);
    int64_t columns = n / warps[1];
    Type element = op.getA().getType().getElementType();
    int64_t elementBytes = getStoredBytes(element);
    std::string ptxType = element.isBF16() ? "bf16" : "f16";

    // This warp's warpgroup: its first row and column of the result.
    ThreadPosition position = getThreadPosition(rewriter, op);
    Value warpInM = arith::RemUIOp::create(rewriter, loc, position.warp,
                                           i32Const(rewriter, loc, warps[0]));
    Value rowStart = arith::MulIOp::create(
        rewriter, loc,
        arith::DivUIOp::create(
            rewriter, loc, warpInM,
            i32Const(rewriter, loc, TargetInfo::kWarpsPerWarpgroup)),
        i32Const(rewriter, loc, TargetInfo::kWarpgroupRows));
    Value columnStart = arith::MulIOp::create(
        rewriter, loc,
        arith::DivUIOp::create(rewriter, loc, position.warp,
                               i32Const(rewriter, loc, warps[0])),
        i32Const(rewriter, loc, columns));

    Value sharedBase = LLVM::PtrToIntOp::create(
        rewriter, loc, rewriter.getI32Type(), getSharedBase(rewriter, op));
    auto stageOf = [&](Value offset, SharedLayoutAttr shared, int64_t rows,
                       bool kMajor) -> StageOperand {
      return {arith::AddIOp::create(rewriter, loc, sharedBase, offset), rows,
              kMajor, shared.getSwizzle()};
    };
    // A [M, K] along K is M rows; along M it is stored [K, M], K rows, and
    // each warpgroup's 64 rows span whole panels or one. B [K, N] along N
    // is the stage as pushed, K rows; along K the stage is [N, K], N rows.
    StageOperand b = bShared.isKMajor(1)
                         ? stageOf(adaptor.getB(), bShared, n, true)
                         : stageOf(adaptor.getB(), bShared, k, false);
    std::optional<StageOperand> a;
    SmallVector<Value> aRegisters;
    if (aShared)
      a = aShared.isKMajor(0) ? stageOf(adaptor.getA(), aShared, m, true)
                              : stageOf(adaptor.getA(), aShared, k, false);
    else
      aRegisters = unpackVector(rewriter, loc, adaptor.getA());

    SmallVector<Value> acc = unpackVector(rewriter, loc, adaptor.getAcc());
    unsigned count = acc.size();
    if (count != unsigned(columns / 2))
      return rewriter.notifyMatchFailure(op, "accumulator is not one m64 row "
                                             "block per warpgroup");
    // A zero accumulator is never materialized: the first instruction
    // ignores it (scale-d = 0) and only writes its registers. Zeros moved
    // into them would be non-wgmma writes to a wgmma accumulator, which
    // makes ptxas serialize every wgmma of a kernel where another group is
    // still in flight (C7515; a deferred wait, DeferDotWaits.cpp).
    bool fresh = matchPattern(op.getAcc(), m_AnyZeroFloat());
    if (fresh)
      emitInlinePtx(rewriter, loc, Type(), ValueRange(),
                    "wgmma.fence.sync.aligned;", "~{memory}");
    else
      acc = emitOnAccumulator(rewriter, loc, acc, {}, "",
                              "wgmma.fence.sync.aligned;");

    Type i32 = rewriter.getI32Type();
    auto pairType = VectorType::get({2}, element);
    Value one = i32Const(rewriter, loc, 1);
    std::string shape = "m64n" + std::to_string(columns) + "k16";
    for (int64_t kStep = 0; kStep < k / kInstructionK; ++kStep) {
      bool first = fresh && kStep == 0;
      SmallVector<Value> extra;
      std::string constraints, aText;
      unsigned next = first ? count : 2 * count;
      if (a) {
        extra.push_back(
            sliceDescriptor(rewriter, loc, *a, rowStart, kStep, elementBytes));
        constraints += "l,";
        aText = "$" + std::to_string(next++);
      } else {
        // a0..a7 of this K slice, two to a register.
        for (int64_t word = 0; word < 4; ++word) {
          int64_t reg = (kStep << 3) + 2 * word;
          Value pair = vector::FromElementsOp::create(
              rewriter, loc, pairType,
              ValueRange{aRegisters[reg], aRegisters[reg + 1]});
          extra.push_back(LLVM::BitcastOp::create(rewriter, loc, i32, pair));
          constraints += "r,";
        }
        aText = operandList(next, 4);
        next += 4;
      }
      extra.push_back(
          sliceDescriptor(rewriter, loc, b, columnStart, kStep, elementBytes));
      constraints += "l,r";
      std::string bText = "$" + std::to_string(next++);
      std::string scaleText = "$" + std::to_string(next++);
      extra.push_back(first ? i32Const(rewriter, loc, 0) : one);
      // scale-d = 1 accumulates (0 ignores the accumulator); A and B
      // unscaled; the transpose bits say M-major (A read in place) and
      // N-major.
      std::string text = "{ .reg .pred p; setp.ne.b32 p, " + scaleText +
                         ", 0; wgmma.mma_async.sync.aligned." + shape +
                         ".f32." + ptxType + "." + ptxType + " " +
                         operandList(0, count) + ", " + aText + ", " + bText +
                         ", p, 1, 1" + (a ? (a->kMajor ? ", 0" : ", 1") : "") +
                         ", " + (b.kMajor ? "0" : "1") + "; }";
      acc = first ? emitFreshAccumulator(rewriter, loc, count, extra,
                                         constraints, text)
                  : emitOnAccumulator(rewriter, loc, acc, extra, constraints,
                                      text);
    }
    emitInlinePtx(rewriter, loc, Type(), ValueRange(),
                  "wgmma.commit_group.sync.aligned;", "~{memory}");
    // The group is counted by wgmma.wait_group, not named: the token has
    // no registers.
    Value token = LLVM::PoisonOp::create(
        rewriter, loc,
        getTypeConverter()->convertType(op.getToken().getType()));
    rewriter.replaceOp(
        op, {packVector(rewriter, loc, getTypeConverter()->convertType(accType),
                        acc),
             token});
    return success();
  }
};

/// A register tile written where warpgroup dots read it in place: the
/// previous readers of the buffer (waited for by every warp before it came
/// here) are done once the block meets; the writes go through the generic
/// proxy, so each thread fences them for the async proxy before the
/// barrier after which wgmma reads them. A run of these ops shares one
/// barrier before and one fence and barrier after (SharedMemoryPlan).
struct ToSharedLowering : public StatefulPattern<ToSharedOp> {
  using StatefulPattern::StatefulPattern;

  LogicalResult
  matchAndRewrite(ToSharedOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    const KernelPlan &plan = state.planFor(op);
    // Written once, outside every loop, it has no earlier readers.
    if (!plan.sharedTileFollowers.contains(op) &&
        op->getParentOfType<scf::ForOp>())
      emitBarrier(rewriter, loc);
    Value offset = i32Const(rewriter, loc, plan.sharedTileOffsets.lookup(op));
    LinearLayout from = getLinearLayout(op.getSource().getType());
    // Columns stored contiguous: the registers in the buffer's coordinates.
    if (cast<SharedLayoutAttr>(op.getType().getEncoding()).getOrder().front() ==
        0)
      from = from.transposed();
    // 8x8 matrices at a time where the registers are mma fragments (a
    // dot's result: stmatrix, transposing for a columns-contiguous buffer),
    // else element runs.
    SmallVector<Value> values =
        unpackVector(rewriter, loc, adaptor.getSource());
    Type element = op.getType().getElementType();
    if (!writeDotFragments(state.target, rewriter, loc, op, from.getShape(),
                           from, values, element, offset))
      writeTileToShared(rewriter, loc, op, values, from, element, offset,
                        /*firstCopyWrites=*/true);
    if (!plan.sharedTileLeaders.contains(op)) {
      emitAsyncProxyFence(rewriter, loc);
      emitBarrier(rewriter, loc);
    }
    rewriter.replaceOp(op, offset);
    return success();
  }
};

struct DotWaitLowering : public OpConversionPattern<DotWaitOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(DotWaitOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    SmallVector<Value> acc =
        emitWait(rewriter, loc, unpackVector(rewriter, loc, adaptor.getAcc()),
                 op.getPending());
    rewriter.replaceOp(
        op, packVector(rewriter, loc,
                       getTypeConverter()->convertType(op.getType()), acc));
    return success();
  }
};
} // namespace

void tegula::tile::populateWgmmaDotPatterns(const TypeConverter &converter,
                                            RewritePatternSet &patterns,
                                            LoweringState &state) {
  patterns.add<DotIssueLowering, DotWaitLowering>(converter,
                                                  patterns.getContext());
  patterns.add<ToSharedLowering>(converter, patterns.getContext(), state);
}
