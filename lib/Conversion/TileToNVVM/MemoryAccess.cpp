//===- MemoryAccess.cpp - Addresses and masks of global accesses ----------===//
//
// Each register's address is base + sum(index_d * stride_d) in 64 bits,
// with row-major strides from the extents or, for a strided tensor, the
// strides it carries; its mask is every index within its extent (one
// unsigned compare covers both ends) AND the user's mask.
//
// When every index tile is a uniform value plus a fixed combination of the
// block's coordinates (tegula/Analysis/AffineIndex.h), the address splits
// into a per-thread offset (the same in every loop iteration, so LLVM
// hoists it), a uniform offset computed once per access, and a constant per
// register that becomes the instruction's immediate offset. Otherwise each
// register's offset is computed from its index values. The bounds check of
// an affine dimension is one add and one compare per distinct register
// constant; a uniform mask (a pipelined push's "this iteration exists")
// joins the extent of a check that is the same in every group.
//
// A masked-off load reads the tensor's first element instead (always
// valid: extents are positive) and selects `other`, so loads never branch;
// a masked-off store, atomic or cp.async moves nothing, and its address is
// left as computed.
//
//===----------------------------------------------------------------------===//

#include "MemoryAccess.h"

#include "tegula/Analysis/AffineIndex.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace tegula::tile;

namespace {

/// A lowered global tensor: its base address, extents and 64-bit strides
/// (tensors may pass 2^31 elements).
struct TensorView {
  Value base;
  SmallVector<Value> extents, strides;
};

TensorView unpackTensor(OpBuilder &builder, Location loc, GlobalTensorType type,
                        Value tensor) {
  unsigned rank = type.getRank();
  TensorView view;
  view.base = LLVM::ExtractValueOp::create(builder, loc, tensor, 0);
  view.strides.resize(rank);
  for (unsigned dim = 0; dim < rank; ++dim)
    view.extents.push_back(LLVM::ExtractValueOp::create(
        builder, loc, tensor, ArrayRef<int64_t>{dim + 1}));
  if (type.getIsStrided()) {
    for (unsigned dim = 0; dim < rank; ++dim)
      view.strides[dim] = LLVM::ExtractValueOp::create(
          builder, loc, tensor, ArrayRef<int64_t>{1 + rank + dim});
    return view;
  }
  Value stride = i64Const(builder, loc, 1);
  for (int dim = rank - 1; dim >= 0; --dim) {
    view.strides[dim] = stride;
    // A static extent is a constant, so that strides fold into offsets.
    Value extent =
        type.getShape()[dim] == ShapedType::kDynamic
            ? arith::ExtUIOp::create(builder, loc, builder.getI64Type(),
                                     view.extents[dim])
                  .getResult()
            : i64Const(builder, loc, type.getShape()[dim]);
    stride = arith::MulIOp::create(builder, loc, stride, extent);
  }
  return view;
}

/// base + the sum of `offsets` where `inBounds` holds, else base. The
/// select picks an offset, not an address: a select of addresses feeding
/// a load sends InstCombine through a search that is quadratic in a
/// function's straight-line loads.
Value inBoundsAddress(OpBuilder &builder, Location loc, Value inBounds,
                      Value base, Type storedType, ArrayRef<Value> offsets) {
  Value sum = offsets.front();
  for (Value offset : offsets.drop_front())
    sum = arith::AddIOp::create(builder, loc, sum, offset);
  Value safe = arith::SelectOp::create(builder, loc, inBounds, sum,
                                       i64Const(builder, loc, 0));
  return LLVM::GEPOp::create(builder, loc, base.getType(), storedType, base,
                             ValueRange{safe});
}

/// One offset per register, from the lowered index values.
AccessPlan planElementwise(OpBuilder &builder, Location loc,
                           const GlobalAccess &access, const TensorView &view,
                           Type storedType, unsigned width,
                           MaskedOffAddress policy) {
  unsigned rank = access.type.getRank();
  SmallVector<SmallVector<Value>> indexElements;
  for (Value index : access.indices)
    indexElements.push_back(unpackVector(builder, loc, index));
  SmallVector<Value> maskElements;
  if (access.mask)
    maskElements = unpackVector(builder, loc, access.mask);

  AccessPlan plan;
  plan.width = width;
  int64_t registers = indexElements.front().size();
  // The first register of each group stands for the group: the axis
  // analysis proved the rest consecutive and masked alike.
  for (int64_t reg = 0; reg < registers; reg += width) {
    Value inBounds, offset = i64Const(builder, loc, 0);
    for (unsigned dim = 0; dim < rank; ++dim) {
      Value index = indexElements[dim][reg];
      Value extent = view.extents[dim];
      if (index.getType().isInteger(64))
        extent =
            arith::ExtUIOp::create(builder, loc, builder.getI64Type(), extent);
      Value ok = arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::ult,
                                       index, extent);
      inBounds =
          inBounds
              ? arith::AndIOp::create(builder, loc, inBounds, ok).getResult()
              : ok;
      Value wide = index;
      if (!index.getType().isInteger(64))
        wide =
            arith::ExtSIOp::create(builder, loc, builder.getI64Type(), index);
      Value term = arith::MulIOp::create(builder, loc, wide, view.strides[dim]);
      offset = arith::AddIOp::create(builder, loc, offset, term);
    }
    if (access.mask)
      inBounds =
          arith::AndIOp::create(builder, loc, inBounds, maskElements[reg]);
    plan.addresses.push_back(
        policy == MaskedOffAddress::Anywhere
            ? LLVM::GEPOp::create(builder, loc, view.base.getType(), storedType,
                                  view.base, ValueRange{offset})
            : inBoundsAddress(builder, loc, inBounds, view.base, storedType,
                              {offset}));
    plan.masks.push_back(inBounds);
  }
  return plan;
}

/// True when, along every dimension, the lane and warp bits of `layout`'s
/// coordinates never meet a register's: XOR-ing a register's constant
/// offset onto a thread's coordinates then adds it.
bool registerOffsetsAdd(const LinearLayout &layout) {
  for (unsigned dim = 0; dim < layout.getRank(); ++dim)
    if (layout.getThreadBits(dim) & layout.getRegBits(dim))
      return false;
  return true;
}

/// The i32 sum of an affine index's uniform terms.
Value emitUniformPart(OpBuilder &builder, Location loc,
                      const AffineIndex &index) {
  Value sum = i32Const(builder, loc, int32_t(uint32_t(index.constant)));
  for (auto [scalar, factor] : index.scalars) {
    Value term = scalar;
    if (factor != 1)
      term = arith::MulIOp::create(builder, loc, scalar,
                                   i32Const(builder, loc, int32_t(factor)));
    sum = arith::AddIOp::create(builder, loc, sum, term);
  }
  return sum;
}

/// Sum of value_j * weight_j in the type of the values; weights constant.
Value emitWeightedSum(OpBuilder &builder, Location loc, Type type,
                      ArrayRef<Value> values, ArrayRef<int64_t> weights) {
  Value sum = arith::ConstantIntOp::create(builder, loc, type, 0);
  for (auto [value, weight] : llvm::zip(values, weights)) {
    if (weight == 0)
      continue;
    Value term = arith::MulIOp::create(
        builder, loc, value,
        arith::ConstantIntOp::create(builder, loc, type, weight));
    sum = arith::AddIOp::create(builder, loc, sum, term);
  }
  return sum;
}

/// The bounds check of one dimension of an affine access: its index is
/// uniform + thread + a constant per register, in bounds where the i32 sum,
/// read unsigned, is below `extent` (one compare covers both ends).
struct DimensionCheck {
  Value uniform, thread, extent;
};

/// The in-bounds i1 of the groups of an affine access:
/// (uniform + thread) + constant <u extent, one compare per distinct
/// (check, constant), emitted where a group first needs it.
class BoundsChecks {
public:
  BoundsChecks(OpBuilder &builder, Location loc,
               ArrayRef<DimensionCheck> checks)
      : builder(builder), loc(loc), checks(checks), emitted(checks.size()) {
    for (const DimensionCheck &check : checks)
      starts.push_back(
          arith::AddIOp::create(builder, loc, check.uniform, check.thread));
  }

  /// The AND of every check of a group whose register constants are
  /// `constants` (one per check); null without checks.
  Value groupMask(ArrayRef<int64_t> constants) {
    Value inBounds;
    for (auto [k, constant] : llvm::enumerate(constants)) {
      Value &ok = emitted[k][constant];
      if (!ok) {
        Value index = starts[k];
        if (constant != 0)
          index = arith::AddIOp::create(
              builder, loc, index, i32Const(builder, loc, int32_t(constant)));
        ok = arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::ult,
                                   index, checks[k].extent);
      }
      inBounds =
          inBounds
              ? arith::AndIOp::create(builder, loc, inBounds, ok).getResult()
              : ok;
    }
    return inBounds;
  }

private:
  OpBuilder &builder;
  Location loc;
  ArrayRef<DimensionCheck> checks;
  SmallVector<Value> starts;
  SmallVector<DenseMap<int64_t, Value>> emitted;
};

/// The scalar i1 that `mask` splats, if it is a uniform mask.
Value getUniformMask(Value mask) {
  if (!mask)
    return Value();
  if (auto splat = mask.getDefiningOp<SplatOp>())
    return splat.getValue();
  return Value();
}

/// The affine form of every index tile of `access`, when all have one, share
/// the block's type and a layout whose register offsets add.
std::optional<SmallVector<AffineIndex>>
getAffineIndices(const GlobalAccess &access) {
  auto blockType = cast<RankedTensorType>(access.tileIndices.front().getType());
  SmallVector<AffineIndex> indices;
  for (Value index : access.tileIndices) {
    std::optional<AffineIndex> affine = getAffineIndex(index);
    if (!affine || index.getType() != blockType)
      return std::nullopt;
    indices.push_back(std::move(*affine));
  }
  if (!registerOffsetsAdd(getLinearLayout(blockType)))
    return std::nullopt;
  return indices;
}

/// False where the index along `dim` never leaves a static extent
/// (constants alone).
bool needsBoundsCheck(const GlobalAccess &access, unsigned dim,
                      const AffineIndex &index) {
  int64_t extent = access.type.getShape()[dim];
  auto blockType = cast<RankedTensorType>(access.tileIndices.front().getType());
  return extent == ShapedType::kDynamic || !index.scalars.empty() ||
         index.constant < 0 ||
         index.constant + index.maxCoordinatePart(blockType.getShape()) >=
             extent;
}

/// The plan from affine index tiles, or none when an index is not affine.
std::optional<AccessPlan> planAffine(OpBuilder &builder, Location loc,
                                     Operation *anchor,
                                     const GlobalAccess &access,
                                     const TensorView &view, Type storedType,
                                     unsigned width, MaskedOffAddress policy) {
  std::optional<SmallVector<AffineIndex>> affine = getAffineIndices(access);
  if (!affine)
    return std::nullopt;
  ArrayRef<AffineIndex> indices = *affine;
  auto blockType = cast<RankedTensorType>(access.tileIndices.front().getType());
  LinearLayout layout = getLinearLayout(blockType);

  Type i32 = builder.getI32Type(), i64 = builder.getI64Type();
  SmallVector<Value> threadCoords = emitThreadCoords(
      builder, loc, layout, getThreadPosition(builder, anchor));
  SmallVector<Value> wideThreadCoords;
  for (Value coord : threadCoords)
    wideThreadCoords.push_back(
        arith::ExtUIOp::create(builder, loc, i64, coord));
  unsigned blockRank = blockType.getRank();
  // weights[j]: the element offset of one step along block dimension j.
  SmallVector<Value> weights(blockRank, i64Const(builder, loc, 0));
  Value uniformOffset = i64Const(builder, loc, 0);
  // checks: the dimensions whose index may leave their extent, in order;
  // checkedIndices[k] is check k's index.
  SmallVector<DimensionCheck> checks;
  SmallVector<const AffineIndex *> checkedIndices;
  for (auto [dim, index] : llvm::enumerate(indices)) {
    Value uniform = emitUniformPart(builder, loc, index);
    if (needsBoundsCheck(access, dim, index)) {
      checks.push_back(
          {uniform,
           emitWeightedSum(builder, loc, i32, threadCoords, index.coefficients),
           view.extents[dim]});
      checkedIndices.push_back(&index);
    }
    Value wide = arith::ExtSIOp::create(builder, loc, i64, uniform);
    uniformOffset = arith::AddIOp::create(
        builder, loc, uniformOffset,
        arith::MulIOp::create(builder, loc, wide, view.strides[dim]));
    for (unsigned j = 0; j < blockRank; ++j)
      if (index.coefficients[j] != 0)
        weights[j] = arith::AddIOp::create(
            builder, loc, weights[j],
            arith::MulIOp::create(
                builder, loc, view.strides[dim],
                i64Const(builder, loc, index.coefficients[j])));
  }
  // Per thread, then per access: LLVM hoists the first out of loops.
  Value threadOffset = i64Const(builder, loc, 0);
  for (unsigned j = 0; j < blockRank; ++j)
    threadOffset = arith::AddIOp::create(
        builder, loc, threadOffset,
        arith::MulIOp::create(builder, loc, wideThreadCoords[j], weights[j]));
  Type pointer = view.base.getType();
  Value blockBase;
  if (policy == MaskedOffAddress::Anywhere)
    blockBase = LLVM::GEPOp::create(
        builder, loc, pointer, storedType,
        LLVM::GEPOp::create(builder, loc, pointer, storedType, view.base,
                            ValueRange{threadOffset}),
        ValueRange{uniformOffset});

  // The constants each group's checks add to their starts.
  SmallVector<SmallVector<int64_t>> checkConstants;
  for (int64_t reg = 0; reg < layout.getNumRegs(); reg += width) {
    LinearLayout::Coords offset = layout.regOffset(reg);
    SmallVector<int64_t> &constants = checkConstants.emplace_back();
    for (const AffineIndex *index : checkedIndices) {
      int64_t registerPart = 0;
      for (unsigned j = 0; j < blockRank; ++j)
        registerPart += index->coefficients[j] * offset[j];
      constants.push_back(registerPart);
    }
  }
  // A uniform mask (a pipelined loop's "this iteration exists") joins the
  // extent of a check that is the same in every group (extent 0 where the
  // mask is off): one select instead of an AND per group. Joined to a check
  // with several constants it would make each of them vary with the loop.
  Value uniformMask = getUniformMask(access.tileMask);
  bool maskJoined = false;
  for (unsigned k = 0; uniformMask && !maskJoined && k < checks.size(); ++k) {
    if (llvm::any_of(checkConstants, [&](ArrayRef<int64_t> group) {
          return group[k] != checkConstants.front()[k];
        }))
      continue;
    checks[k].extent = arith::SelectOp::create(
        builder, loc, uniformMask, checks[k].extent, i32Const(builder, loc, 0));
    maskJoined = true;
  }
  BoundsChecks bounds(builder, loc, checks);

  SmallVector<Value> maskElements;
  if (access.mask && !uniformMask)
    maskElements = unpackVector(builder, loc, access.mask);
  AccessPlan plan;
  plan.width = width;
  for (int64_t reg = 0; reg < layout.getNumRegs(); reg += width) {
    LinearLayout::Coords offset = layout.regOffset(reg);
    Value registerOffset = i64Const(builder, loc, 0);
    for (unsigned j = 0; j < blockRank; ++j)
      if (offset[j] != 0)
        registerOffset = arith::AddIOp::create(
            builder, loc, registerOffset,
            arith::MulIOp::create(builder, loc, weights[j],
                                  i64Const(builder, loc, offset[j])));
    Value inBounds = bounds.groupMask(checkConstants[reg / width]);
    if (uniformMask && !maskJoined)
      inBounds =
          inBounds ? arith::AndIOp::create(builder, loc, inBounds, uniformMask)
                         .getResult()
                   : uniformMask;
    if (!maskElements.empty())
      inBounds = inBounds ? arith::AndIOp::create(builder, loc, inBounds,
                                                  maskElements[reg])
                                .getResult()
                          : maskElements[reg];
    if (!inBounds)
      inBounds = arith::ConstantIntOp::create(builder, loc, 1, 1);
    plan.addresses.push_back(
        policy == MaskedOffAddress::Anywhere
            ? LLVM::GEPOp::create(builder, loc, pointer, storedType, blockBase,
                                  ValueRange{registerOffset})
            : inBoundsAddress(builder, loc, inBounds, view.base, storedType,
                              {threadOffset, uniformOffset, registerOffset}));
    plan.masks.push_back(inBounds);
  }
  return plan;
}

} // namespace

Type tegula::tile::storedTypeOf(Type elementType, OpBuilder &builder) {
  return elementType.isInteger(1) ? builder.getI8Type() : elementType;
}

AccessPlan tegula::tile::planAccess(OpBuilder &builder, Operation *anchor,
                                    const GlobalAccess &access, Type storedType,
                                    unsigned width, MaskedOffAddress policy) {
  Location loc = anchor->getLoc();
  TensorView view = unpackTensor(builder, loc, access.type, access.tensor);
  if (std::optional<AccessPlan> plan = planAffine(
          builder, loc, anchor, access, view, storedType, width, policy))
    return std::move(*plan);
  return planElementwise(builder, loc, access, view, storedType, width, policy);
}

SmallVector<Value>
tegula::tile::emitMaskedLoad(OpBuilder &builder, Operation *anchor,
                             const GlobalAccess &access, Value other,
                             unsigned vectorWidth,
                             function_ref<void(int64_t, Value)> consume) {
  Location loc = anchor->getLoc();
  Type elementType = access.type.getElementType();
  Type storedType = storedTypeOf(elementType, builder);
  if (storedType != elementType || vectorWidth == 0)
    vectorWidth = 1;
  AccessPlan plan = planAccess(builder, anchor, access, storedType, vectorWidth,
                               MaskedOffAddress::InBounds);
  SmallVector<Value> others;
  if (other)
    others = unpackVector(builder, loc, other);
  Value zero = arith::ConstantOp::create(builder, loc, elementType,
                                         builder.getZeroAttr(elementType));
  SmallVector<Value> values;
  unsigned width = plan.width;
  unsigned alignment = width * getStoredBytes(storedType);
  for (auto [group, address] : llvm::enumerate(plan.addresses)) {
    SmallVector<Value> loaded;
    if (width == 1) {
      Value value = LLVM::LoadOp::create(builder, loc, storedType, address);
      if (storedType != elementType)
        value = arith::TruncIOp::create(builder, loc, elementType, value);
      loaded.push_back(value);
    } else {
      auto vectorType = VectorType::get({int64_t(width)}, storedType);
      Value vector =
          LLVM::LoadOp::create(builder, loc, vectorType, address, alignment);
      loaded = unpackVector(builder, loc, vector);
    }
    for (auto [lane, value] : llvm::enumerate(loaded)) {
      Value fallback = others.empty() ? zero : others[group * width + lane];
      Value chosen = arith::SelectOp::create(builder, loc, plan.masks[group],
                                             value, fallback);
      if (consume)
        consume(int64_t(group * width + lane), chosen);
      else
        values.push_back(chosen);
    }
  }
  return values;
}
