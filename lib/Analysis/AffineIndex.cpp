//===- AffineIndex.cpp - Index tiles as uniform plus coordinates ----------===//
//
// Walks an index tile's definition back to splats and aranges. Uniform
// parts stay symbolic (the tile IR's scalars, with constant factors) so the
// lowering can compute them once; coordinate parts become constant
// coefficients, kept non-negative and bounded so that adding them to the
// uniform part in 64 bits gives the same address as the program's i32
// arithmetic wherever the index is in bounds.
//
//===----------------------------------------------------------------------===//

#include "tegula/Analysis/AffineIndex.h"

#include "Tile/TileOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace tegula::tile;

namespace {

constexpr int64_t kMaxCoordinatePart = (int64_t(1) << 31) - 1;

/// The value of an i32 splat constant tile or scalar constant.
std::optional<int64_t> constantOf(Value value) {
  auto constant = value.getDefiningOp<arith::ConstantOp>();
  if (!constant)
    return std::nullopt;
  Attribute attr = constant.getValue();
  if (auto dense = dyn_cast<SplatElementsAttr>(attr))
    attr = dense.getSplatValue<Attribute>();
  if (auto integer = dyn_cast<IntegerAttr>(attr))
    return integer.getValue().getSExtValue();
  return std::nullopt;
}

bool isUniform(const AffineIndex &index) {
  return llvm::all_of(index.coefficients, [](int64_t c) { return c == 0; });
}

/// Multiplies every part by `factor`; none when a coefficient would turn
/// negative or grow past what the bound check can hold.
std::optional<AffineIndex> scaled(AffineIndex index, int64_t factor) {
  if ((factor < 0 && !isUniform(index)) || factor > kMaxCoordinatePart)
    return std::nullopt;
  index.constant *= factor;
  for (auto &[scalar, scalarFactor] : index.scalars)
    scalarFactor *= factor;
  for (int64_t &coefficient : index.coefficients) {
    if (coefficient > kMaxCoordinatePart / std::max<int64_t>(factor, 1))
      return std::nullopt;
    coefficient *= factor;
  }
  return index;
}

AffineIndex sum(AffineIndex lhs, const AffineIndex &rhs, int64_t sign) {
  lhs.constant += sign * rhs.constant;
  for (auto [scalar, factor] : rhs.scalars)
    lhs.scalars.push_back({scalar, sign * factor});
  for (auto [mine, theirs] : llvm::zip(lhs.coefficients, rhs.coefficients))
    mine += theirs;
  return lhs;
}

std::optional<AffineIndex> analyze(Value value, int depth);

std::optional<AffineIndex> analyzeDefinition(Operation *op, unsigned rank,
                                             int depth) {
  if (isa<ArangeOp>(op))
    return AffineIndex{0, {}, {1}};
  if (auto splat = dyn_cast<SplatOp>(op)) {
    AffineIndex index{0, {}, SmallVector<int64_t>(rank, 0)};
    if (std::optional<int64_t> constant = constantOf(splat.getValue()))
      index.constant = *constant;
    else
      index.scalars.push_back({splat.getValue(), 1});
    return index;
  }
  if (isa<arith::ConstantOp>(op)) {
    std::optional<int64_t> constant = constantOf(op->getResult(0));
    if (!constant)
      return std::nullopt;
    return AffineIndex{*constant, {}, SmallVector<int64_t>(rank, 0)};
  }
  if (auto convert = dyn_cast<ConvertLayoutOp>(op))
    return analyze(convert.getSource(), depth + 1);
  if (auto expand = dyn_cast<ExpandDimsOp>(op)) {
    std::optional<AffineIndex> index = analyze(expand.getSource(), depth + 1);
    if (index)
      index->coefficients.insert(index->coefficients.begin() + expand.getAxis(),
                                 0);
    return index;
  }
  if (auto broadcast = dyn_cast<BroadcastOp>(op)) {
    std::optional<AffineIndex> index =
        analyze(broadcast.getSource(), depth + 1);
    // A unit dimension's coordinate is always 0: its coefficient says
    // nothing about the broadcast result.
    if (index)
      for (auto [dim, extent] :
           llvm::enumerate(broadcast.getSource().getType().getShape()))
        if (extent == 1)
          index->coefficients[dim] = 0;
    return index;
  }
  if (isa<arith::AddIOp, arith::SubIOp, arith::MulIOp>(op)) {
    std::optional<AffineIndex> lhs = analyze(op->getOperand(0), depth + 1);
    std::optional<AffineIndex> rhs = analyze(op->getOperand(1), depth + 1);
    if (!lhs || !rhs)
      return std::nullopt;
    if (isa<arith::AddIOp>(op))
      return sum(*lhs, *rhs, 1);
    // Subtracting coordinates would make the coordinate part negative.
    if (isa<arith::SubIOp>(op))
      return isUniform(*rhs) ? std::optional(sum(*lhs, *rhs, -1))
                             : std::nullopt;
    // A product keeps the form when one side is a constant.
    auto isConstant = [](const AffineIndex &index) {
      return index.scalars.empty() && isUniform(index);
    };
    if (isConstant(*rhs))
      return scaled(*lhs, rhs->constant);
    if (isConstant(*lhs))
      return scaled(*rhs, lhs->constant);
  }
  return std::nullopt;
}

std::optional<AffineIndex> analyze(Value value, int depth) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || !type.getElementType().isInteger(32) || depth > 16)
    return std::nullopt;
  Operation *op = value.getDefiningOp();
  if (!op)
    return std::nullopt;
  std::optional<AffineIndex> index =
      analyzeDefinition(op, type.getRank(), depth);
  // Constants and factors are kept exactly (they wrap as the program's i32
  // arithmetic does only once added up); past 2^40 give up rather than
  // reason about 64-bit overflow of the bookkeeping itself.
  if (!index || std::abs(index->constant) > (int64_t(1) << 40) ||
      llvm::any_of(index->scalars, [](auto &term) {
        return std::abs(term.second) > (int64_t(1) << 40);
      }))
    return std::nullopt;
  if (index->maxCoordinatePart(type.getShape()) > kMaxCoordinatePart)
    return std::nullopt;
  return index;
}

} // namespace

Value AffineIndex::emitUniformPart(OpBuilder &builder, Location loc,
                                   function_ref<Value(Value)> valueOf) const {
  Type i32 = builder.getI32Type();
  Value sum = arith::ConstantIntOp::create(builder, loc, i32,
                                           int32_t(uint32_t(constant)));
  for (auto [scalar, factor] : scalars) {
    Value term = valueOf ? valueOf(scalar) : scalar;
    if (factor != 1)
      term = arith::MulIOp::create(
          builder, loc, term,
          arith::ConstantIntOp::create(builder, loc, i32, int32_t(factor)));
    sum = arith::AddIOp::create(builder, loc, sum, term);
  }
  return sum;
}

int64_t AffineIndex::coordinatePart(ArrayRef<int64_t> coords) const {
  int64_t part = 0;
  for (auto [coefficient, coord] : llvm::zip(coefficients, coords))
    part += coefficient * coord;
  return part;
}

int64_t AffineIndex::maxCoordinatePart(ArrayRef<int64_t> shape) const {
  int64_t largest = 0;
  for (auto [coefficient, extent] : llvm::zip(coefficients, shape)) {
    if (coefficient > kMaxCoordinatePart / std::max<int64_t>(extent, 1))
      return kMaxCoordinatePart + 1;
    largest += coefficient * (extent - 1);
  }
  return largest;
}

std::optional<AffineIndex> tegula::tile::getAffineIndex(Value tile) {
  return analyze(tile, 0);
}
