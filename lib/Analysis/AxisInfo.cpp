//===- AxisInfo.cpp - Contiguity of index tiles for vector accesses -------===//
//
// For each integer tile the analysis tracks, per dimension, the constant
// step between neighbouring elements (0: constant along it, 1: contiguous)
// and a power of two that divides every element at coordinate 0 of that
// dimension. An access whose last tensor index steps by 1 along the block's
// fastest dimension while the other indices stay constant, with aligned
// starts and extents, and whose mask (if any) is constant over each group,
// moves `width` registers in one vector instruction.
//
//===----------------------------------------------------------------------===//

#include "tegula/Analysis/AxisInfo.h"

#include "Tile/TileOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Matchers.h"

#include <algorithm>

using namespace mlir;
using namespace tegula::tile;

namespace {

constexpr int64_t kUnknownStep = AxisFacts::kUnknownStep;
constexpr int64_t kMaxDivisor = int64_t(1) << 30;

int64_t largestPowerOfTwoDividing(int64_t value) {
  if (value == 0)
    return kMaxDivisor;
  return std::min<int64_t>(kMaxDivisor, value & -value);
}

/// Divisibility of an integer scalar.
int64_t scalarDivisor(Value value, int depth = 0) {
  if (depth > 8)
    return 1;
  if (auto arg = dyn_cast<BlockArgument>(value)) {
    Operation *owner = arg.getOwner()->getParentOp();
    // A loop's induction variable steps from its lower bound.
    if (auto loop = dyn_cast<scf::ForOp>(owner))
      if (arg == loop.getInductionVar())
        return std::min(scalarDivisor(loop.getLowerBound(), depth + 1),
                        scalarDivisor(loop.getStep(), depth + 1));
    // A size variable the kernel requires (or a variant assumes) divisible.
    if (auto func = dyn_cast<func::FuncOp>(owner))
      if (arg.getOwner()->isEntryBlock())
        if (auto divisor = func.getArgAttrOfType<IntegerAttr>(
                arg.getArgNumber(), TileDialect::kDivisibilityAttrName))
          return std::min(kMaxDivisor, divisor.getInt());
    return 1;
  }
  APInt constant;
  if (auto op = value.getDefiningOp<arith::ConstantOp>())
    if (auto integer = dyn_cast<IntegerAttr>(op.getValue()))
      return largestPowerOfTwoDividing(integer.getInt());
  if (auto mul = value.getDefiningOp<arith::MulIOp>())
    return std::min(kMaxDivisor, scalarDivisor(mul.getLhs(), depth + 1) *
                                     scalarDivisor(mul.getRhs(), depth + 1));
  if (isa_and_nonnull<arith::AddIOp, arith::SubIOp, arith::MinSIOp,
                      arith::MaxSIOp, arith::MinUIOp, arith::MaxUIOp>(
          value.getDefiningOp()))
    return std::min(
        scalarDivisor(value.getDefiningOp()->getOperand(0), depth + 1),
        scalarDivisor(value.getDefiningOp()->getOperand(1), depth + 1));
  // Widening keeps a power of two; so does truncating to 32 bits, as long
  // as the divisors stay below 2^32.
  if (isa_and_nonnull<arith::ExtSIOp, arith::ExtUIOp, arith::TruncIOp>(
          value.getDefiningOp()))
    return scalarDivisor(value.getDefiningOp()->getOperand(0), depth + 1);
  if (auto select = value.getDefiningOp<arith::SelectOp>())
    return std::min(scalarDivisor(select.getTrueValue(), depth + 1),
                    scalarDivisor(select.getFalseValue(), depth + 1));
  if (auto shl = value.getDefiningOp<arith::ShLIOp>())
    if (auto amount = shl.getRhs().getDefiningOp<arith::ConstantOp>())
      if (auto integer = dyn_cast<IntegerAttr>(amount.getValue()))
        return std::min(kMaxDivisor, scalarDivisor(shl.getLhs(), depth + 1)
                                         << integer.getInt());
  return 1;
}

AxisFacts unknown(unsigned rank) {
  return {SmallVector<int64_t>(rank, kUnknownStep), 1};
}

AxisFacts analyze(Value value, int depth = 0) {
  auto type = cast<RankedTensorType>(value.getType());
  unsigned rank = type.getRank();
  if (depth > 16)
    return unknown(rank);
  Operation *op = value.getDefiningOp();
  if (!op)
    return unknown(rank);
  if (isa<ArangeOp>(op))
    return {{1}, kMaxDivisor};
  if (auto splat = dyn_cast<SplatOp>(op))
    return {SmallVector<int64_t>(rank, 0), scalarDivisor(splat.getValue())};
  if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
    auto dense = dyn_cast<SplatElementsAttr>(constant.getValue());
    if (dense && dense.getElementType().isInteger())
      return {SmallVector<int64_t>(rank, 0),
              largestPowerOfTwoDividing(
                  dense.getSplatValue<APInt>().getSExtValue())};
    return unknown(rank);
  }
  if (auto convert = dyn_cast<ConvertLayoutOp>(op))
    return analyze(convert.getSource(), depth + 1);
  if (auto expand = dyn_cast<ExpandDimsOp>(op)) {
    AxisFacts facts = analyze(expand.getSource(), depth + 1);
    facts.steps.insert(facts.steps.begin() + expand.getAxis(), 0);
    return facts;
  }
  if (auto broadcast = dyn_cast<BroadcastOp>(op)) {
    AxisFacts facts = analyze(broadcast.getSource(), depth + 1);
    for (auto [dim, extent] :
         llvm::enumerate(broadcast.getSource().getType().getShape()))
      if (extent == 1)
        facts.steps[dim] = 0;
    return facts;
  }
  auto combine = [&](auto stepOf, auto divisorOf) -> AxisFacts {
    AxisFacts lhs = analyze(op->getOperand(0), depth + 1);
    AxisFacts rhs = analyze(op->getOperand(1), depth + 1);
    AxisFacts result;
    for (unsigned dim = 0; dim < rank; ++dim)
      result.steps.push_back(stepOf(lhs.steps[dim], rhs.steps[dim], lhs, rhs));
    result.divisor = divisorOf(lhs, rhs);
    return result;
  };
  if (isa<arith::AddIOp>(op))
    return combine(
        [](int64_t a, int64_t b, auto &, auto &) {
          return a == kUnknownStep || b == kUnknownStep ? kUnknownStep : a + b;
        },
        [](AxisFacts &a, AxisFacts &b) {
          return std::min(a.divisor, b.divisor);
        });
  if (isa<arith::MulIOp>(op)) {
    // Only products with a uniform constant keep steps known.
    auto constantOf = [](Value v) -> std::optional<int64_t> {
      if (auto c = v.getDefiningOp<arith::ConstantOp>())
        if (auto d = dyn_cast<SplatElementsAttr>(c.getValue()))
          return d.getSplatValue<APInt>().getSExtValue();
      if (auto s = v.getDefiningOp<SplatOp>())
        if (auto c = s.getValue().getDefiningOp<arith::ConstantOp>())
          if (auto i = dyn_cast<IntegerAttr>(c.getValue()))
            return i.getInt();
      return std::nullopt;
    };
    Value other = op->getOperand(0);
    std::optional<int64_t> factor = constantOf(op->getOperand(1));
    if (!factor) {
      factor = constantOf(op->getOperand(0));
      other = op->getOperand(1);
    }
    if (!factor)
      return unknown(rank);
    AxisFacts facts = analyze(other, depth + 1);
    for (int64_t &step : facts.steps)
      if (step != kUnknownStep)
        step *= *factor;
    facts.divisor = std::min(
        kMaxDivisor, facts.divisor * largestPowerOfTwoDividing(*factor));
    return facts;
  }
  return unknown(rank);
}

/// How many consecutive elements along `dim`, in aligned groups starting at
/// coordinate 0, a boolean tile is constant over. Comparisons of a
/// contiguous index with a uniform bound are constant over groups that no
/// multiple of both divisors splits (`i < 64` with `i = arange(64)`: all 64).
int64_t maskConstancy(Value mask, unsigned dim, int depth = 0) {
  if (depth > 16)
    return 1;
  Operation *op = mask.getDefiningOp();
  if (!op)
    return 1;
  if (isa<SplatOp, arith::ConstantOp>(op))
    return kMaxDivisor;
  if (auto convert = dyn_cast<ConvertLayoutOp>(op))
    return maskConstancy(convert.getSource(), dim, depth + 1);
  if (auto expand = dyn_cast<ExpandDimsOp>(op)) {
    unsigned axis = expand.getAxis();
    if (dim == axis)
      return kMaxDivisor;
    return maskConstancy(expand.getSource(), dim > axis ? dim - 1 : dim,
                         depth + 1);
  }
  if (auto broadcast = dyn_cast<BroadcastOp>(op)) {
    if (broadcast.getSource().getType().getShape()[dim] == 1)
      return kMaxDivisor;
    return maskConstancy(broadcast.getSource(), dim, depth + 1);
  }
  if (isa<arith::AndIOp, arith::OrIOp, arith::XOrIOp>(op))
    return std::min(maskConstancy(op->getOperand(0), dim, depth + 1),
                    maskConstancy(op->getOperand(1), dim, depth + 1));
  if (auto cmp = dyn_cast<arith::CmpIOp>(op)) {
    AxisFacts lhs = analyze(cmp.getLhs());
    AxisFacts rhs = analyze(cmp.getRhs());
    auto uniform = [](const AxisFacts &facts) {
      return llvm::all_of(facts.steps, [](int64_t s) { return s == 0; });
    };
    if (lhs.steps[dim] == 0 && rhs.steps[dim] == 0)
      return kMaxDivisor;
    // One side uniform, the other contiguous along `dim`.
    const AxisFacts *bound = uniform(lhs)   ? &lhs
                             : uniform(rhs) ? &rhs
                                            : nullptr;
    const AxisFacts *index = bound == &lhs ? &rhs : &lhs;
    if (!bound || index->steps[dim] != 1)
      return 1;
    return std::min(bound->divisor, index->divisor);
  }
  return 1;
}
/// A power of two dividing extent `dim` of the global tensor `tensor`: the
/// fixed extent's, or the size variable's that make_tensor bound it to.
int64_t extentDivisor(Value tensor, unsigned dim) {
  auto type = cast<GlobalTensorType>(tensor.getType());
  ArrayRef<int64_t> extents = type.getShape();
  if (!ShapedType::isDynamic(extents[dim]))
    return largestPowerOfTwoDividing(extents[dim]);
  auto make = tensor.getDefiningOp<MakeTensorOp>();
  if (!make)
    return 1;
  unsigned dynamicIndex =
      llvm::count_if(extents.take_front(dim), ShapedType::isDynamic);
  return scalarDivisor(make.getDynamicDims()[dynamicIndex]);
}

/// For a strided tensor: a power of two, in elements, dividing the start of
/// every row (its base and each stride but the last) when its last stride is
/// the constant 1 (a variant's assumption, Variants.cpp); 1 otherwise, as
/// its elements need not be consecutive.
int64_t stridedRowDivisor(Value tensor, int64_t bytes) {
  auto make = tensor.getDefiningOp<MakeTensorOp>();
  if (!make || make.getStrides().empty())
    return 1;
  OperandRange strides = make.getStrides();
  APInt last;
  if (!matchPattern(strides.back(), m_ConstantInt(&last)) || !last.isOne())
    return 1;
  int64_t alignment = 1;
  if (auto arg = dyn_cast<BlockArgument>(make.getBase()))
    if (auto func = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp()))
      if (auto attr = func.getArgAttrOfType<IntegerAttr>(
              arg.getArgNumber(), TileDialect::kAlignmentAttrName))
        alignment = attr.getInt();
  int64_t divisor = std::max<int64_t>(1, alignment / bytes);
  for (Value stride : strides.drop_back())
    divisor = std::min(divisor, scalarDivisor(stride));
  return divisor;
}
} // namespace

AxisFacts tegula::tile::getAxisFacts(Value tile) { return analyze(tile); }

int64_t tegula::tile::getMaskConstancy(Value mask, unsigned dim) {
  return maskConstancy(mask, dim);
}

unsigned tegula::tile::getAccessVectorWidth(Value tensor, ValueRange indices,
                                            Value mask,
                                            RankedTensorType blockType) {
  auto tensorType = cast<GlobalTensorType>(tensor.getType());
  if (indices.empty())
    return 1;
  auto blocked = dyn_cast_or_null<BlockedLayoutAttr>(blockType.getEncoding());
  if (!blocked)
    return 1;
  unsigned fastest = blocked.getOrder().front();
  // Registers 0 .. width-1 must be consecutive along the fastest dimension.
  LinearLayout layout = getLinearLayout(blockType);
  int64_t width = 1;
  for (const auto &basis : layout.getRegBases()) {
    LinearLayout::Coords expected(basis.size(), 0);
    expected[fastest] = width;
    if (basis != expected)
      break;
    width *= 2;
  }
  int64_t bytes = getStoredBytes(tensorType.getElementType());
  width = std::min<int64_t>(width, 16 / bytes);
  // A vector moves whole or not at all: the mask must not split it.
  if (mask)
    width = std::min(width, maskConstancy(mask, fastest));
  if (width <= 1)
    return 1;

  ArrayRef<int64_t> extents = tensorType.getShape();
  unsigned last = extents.size() - 1;
  // The last tensor dimension's extent must keep groups whole and rows
  // aligned, and so must the first index of each group: narrower vectors
  // where they only allow that (all are powers of two).
  width = std::min(width, extentDivisor(tensor, last));
  // A strided view's rows start where its base and strides put them; its
  // elements are consecutive only where its last stride is known to be 1.
  if (tensorType.getIsStrided())
    width = std::min(width, stridedRowDivisor(tensor, bytes));
  for (auto [dim, index] : llvm::enumerate(indices)) {
    AxisFacts facts = analyze(index);
    int64_t step = facts.steps[fastest];
    if (dim == last) {
      if (step != 1)
        return 1;
      width = std::min(width, facts.divisor);
    } else if (step != 0) {
      return 1;
    }
  }
  return std::max<int64_t>(width, 1);
}

unsigned tegula::tile::getAccessVectorWidth(Operation *op) {
  auto access = dyn_cast<GlobalAccessOpInterface>(op);
  if (!access)
    return 0;
  RankedTensorType block = access.getVectorBlockType();
  if (!block)
    return 0;
  return getAccessVectorWidth(access.getAccessedTensor(),
                              access.getAccessIndices(), access.getAccessMask(),
                              block);
}
