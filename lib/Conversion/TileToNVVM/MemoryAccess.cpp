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
// hoists it), a uniform offset computed once per access, and a part per
// register: the constant along dimensions of static stride, which becomes
// the instruction's immediate offset, and a multiple of the dynamic strides,
// added once per distinct multiple to make that group's base. Otherwise
// each register's offset is computed from its index values. The bounds check of
// an affine dimension is one add and one compare per distinct register
// constant; a uniform mask (a pipelined push's "this iteration exists")
// joins the extent of a check that is the same in every group.
//
// A masked-off group's address is left as computed: its mask guards the
// instruction. A load is a predicated `ld.global` into registers that hold
// `other` before it, so an address in flight is the access's base (shared
// by its groups) and an immediate, never a selected address per group; a
// masked-off store, atomic or cp.async moves nothing.
//
//===----------------------------------------------------------------------===//

#include "MemoryAccess.h"

#include "tegula/Analysis/AffineIndex.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"

#include <map>

using namespace mlir;
using namespace tegula::tile;

namespace {

/// A lowered global tensor: its base address, extents and 64-bit strides
/// (tensors may pass 2^31 elements).
struct TensorView {
  Value base;
  SmallVector<Value> extents, strides;
  /// Each stride known at compile time (the row-major strides of static
  /// trailing extents).
  SmallVector<std::optional<int64_t>> staticStrides;
};

TensorView unpackTensor(OpBuilder &builder, Location loc,
                        const GlobalAccess &access) {
  GlobalTensorType type = access.type;
  Value tensor = access.tensor;
  unsigned rank = type.getRank();
  TensorView view;
  view.base = LLVM::ExtractValueOp::create(builder, loc, tensor, 0);
  view.strides.resize(rank);
  view.staticStrides.resize(rank);
  for (unsigned dim = 0; dim < rank; ++dim)
    view.extents.push_back(LLVM::ExtractValueOp::create(
        builder, loc, tensor, ArrayRef<int64_t>{dim + 1}));
  if (type.getIsStrided()) {
    // A constant stride (a variant's unit last stride) is static, as a
    // contiguous tensor's: its register offsets become immediates.
    auto make = access.tileTensor
                    ? access.tileTensor.getDefiningOp<MakeTensorOp>()
                    : MakeTensorOp();
    for (unsigned dim = 0; dim < rank; ++dim) {
      APInt constant;
      if (make &&
          matchPattern(make.getStrides()[dim], m_ConstantInt(&constant))) {
        view.staticStrides[dim] = constant.getSExtValue();
        view.strides[dim] = i64Const(builder, loc, constant.getSExtValue());
        continue;
      }
      view.strides[dim] = LLVM::ExtractValueOp::create(
          builder, loc, tensor, ArrayRef<int64_t>{1 + rank + dim});
    }
    return view;
  }
  Value stride = i64Const(builder, loc, 1);
  std::optional<int64_t> staticStride = 1;
  for (int dim = rank - 1; dim >= 0; --dim) {
    view.strides[dim] = stride;
    view.staticStrides[dim] = staticStride;
    int64_t staticExtent = type.getShape()[dim];
    staticStride = staticStride && staticExtent != ShapedType::kDynamic
                       ? std::optional<int64_t>(*staticStride * staticExtent)
                       : std::nullopt;
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

/// `a && b` of two i1 masks, a null one standing for "true".
Value andMasks(OpBuilder &builder, Location loc, Value a, Value b) {
  if (!a || !b)
    return a ? a : b;
  return arith::AndIOp::create(builder, loc, a, b);
}

/// A group's mask: `mask`, or "true" when no check or mask applies.
Value orTrue(OpBuilder &builder, Location loc, Value mask) {
  return mask ? mask : arith::ConstantIntOp::create(builder, loc, 1, 1);
}

/// One offset per register, from the lowered index values.
AccessPlan planElementwise(OpBuilder &builder, Location loc,
                           const GlobalAccess &access, const TensorView &view,
                           Type storedType, unsigned width) {
  unsigned rank = access.type.getRank();
  SmallVector<SmallVector<Value>> indexElements;
  for (Value index : access.indices)
    indexElements.push_back(unpackVector(builder, loc, index));
  SmallVector<Value> maskElements;
  if (access.mask)
    maskElements = unpackVector(builder, loc, access.mask);

  AccessPlan plan;
  plan.storedType = storedType;
  plan.width = width;
  int64_t registers = indexElements.front().size();
  // The first register of each group stands for the group: the axis
  // analysis proved the rest consecutive and masked alike.
  for (int64_t reg = 0; reg < registers; reg += width) {
    Value inBounds, offset = i64Const(builder, loc, 0);
    for (unsigned dim = 0; dim < rank; ++dim) {
      Value index = indexElements[dim][reg];
      if (!access.inside) {
        Value extent = view.extents[dim];
        if (index.getType().isInteger(64))
          extent = arith::ExtUIOp::create(builder, loc, builder.getI64Type(),
                                          extent);
        inBounds = andMasks(builder, loc, inBounds,
                            arith::CmpIOp::create(builder, loc,
                                                  arith::CmpIPredicate::ult,
                                                  index, extent));
      }
      Value wide = index;
      if (!index.getType().isInteger(64))
        wide =
            arith::ExtSIOp::create(builder, loc, builder.getI64Type(), index);
      Value term = arith::MulIOp::create(builder, loc, wide, view.strides[dim]);
      offset = arith::AddIOp::create(builder, loc, offset, term);
    }
    if (access.mask)
      inBounds = andMasks(builder, loc, inBounds, maskElements[reg]);
    plan.masks.push_back(orTrue(builder, loc, inBounds));
    plan.bases.push_back(LLVM::GEPOp::create(builder, loc, view.base.getType(),
                                             storedType, view.base,
                                             ValueRange{offset}));
    plan.offsets.push_back(0);
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
      inBounds = andMasks(builder, loc, inBounds, ok);
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

/// The base and constant element offset of each group of an affine access,
/// from the register part of its index along each tensor dimension: the
/// parts along dimensions of static stride sum to the constant (the
/// instruction's immediate offset); those along dynamic strides are added
/// to the block's base once per distinct combination.
class GroupBases {
public:
  GroupBases(OpBuilder &builder, Location loc, const TensorView &view,
             Type storedType, Value blockBase)
      : builder(builder), loc(loc), view(view), storedType(storedType),
        blockBase(blockBase) {}

  std::pair<Value, int64_t> get(ArrayRef<int64_t> registerParts) {
    int64_t constant = 0;
    SmallVector<int64_t> dynamicParts;
    for (auto [part, stride] : llvm::zip(registerParts, view.staticStrides)) {
      if (stride)
        constant += part * *stride;
      else
        dynamicParts.push_back(part);
    }
    Value &base = bases[dynamicParts];
    if (!base)
      base = emitBase(registerParts);
    return {base, constant};
  }

private:
  Value emitBase(ArrayRef<int64_t> registerParts) {
    Value offset;
    for (auto [dim, part] : llvm::enumerate(registerParts)) {
      if (view.staticStrides[dim] || part == 0)
        continue;
      Value term = arith::MulIOp::create(builder, loc, view.strides[dim],
                                         i64Const(builder, loc, part));
      offset =
          offset ? arith::AddIOp::create(builder, loc, offset, term).getResult()
                 : term;
    }
    if (!offset)
      return blockBase;
    return LLVM::GEPOp::create(builder, loc, blockBase.getType(), storedType,
                               blockBase, ValueRange{offset});
  }

  OpBuilder &builder;
  Location loc;
  const TensorView &view;
  Type storedType;
  Value blockBase;
  std::map<SmallVector<int64_t>, Value> bases;
};

/// The plan from affine index tiles, or none when an index is not affine.
std::optional<AccessPlan> planAffine(OpBuilder &builder, Location loc,
                                     Operation *anchor,
                                     const GlobalAccess &access,
                                     const TensorView &view, Type storedType,
                                     unsigned width) {
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
    Value uniform = index.emitUniformPart(builder, loc);
    if (!access.inside && needsBoundsCheck(access, dim, index)) {
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
  Value blockBase = LLVM::GEPOp::create(
      builder, loc, pointer, storedType,
      LLVM::GEPOp::create(builder, loc, pointer, storedType, view.base,
                          ValueRange{threadOffset}),
      ValueRange{uniformOffset});
  GroupBases groupBases(builder, loc, view, storedType, blockBase);

  // The constants each group's checks add to their starts.
  SmallVector<SmallVector<int64_t>> checkConstants;
  for (int64_t reg = 0; reg < layout.getNumRegs(); reg += width) {
    LinearLayout::Coords offset = layout.regOffset(reg);
    SmallVector<int64_t> &constants = checkConstants.emplace_back();
    for (const AffineIndex *index : checkedIndices)
      constants.push_back(index->coordinatePart(offset));
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
  plan.storedType = storedType;
  plan.width = width;
  for (int64_t reg = 0; reg < layout.getNumRegs(); reg += width) {
    LinearLayout::Coords offset = layout.regOffset(reg);
    SmallVector<int64_t> registerParts;
    for (const AffineIndex &index : indices)
      registerParts.push_back(index.coordinatePart(offset));
    auto [base, constant] = groupBases.get(registerParts);
    plan.bases.push_back(base);
    plan.offsets.push_back(constant);
    Value inBounds = bounds.groupMask(checkConstants[reg / width]);
    if (uniformMask && !maskJoined)
      inBounds = andMasks(builder, loc, inBounds, uniformMask);
    if (!maskElements.empty())
      inBounds = andMasks(builder, loc, inBounds, maskElements[reg]);
    plan.masks.push_back(orTrue(builder, loc, inBounds));
  }
  return plan;
}

} // namespace

Type tegula::tile::storedTypeOf(Type elementType, OpBuilder &builder) {
  return elementType.isInteger(1) ? builder.getI8Type() : elementType;
}

AccessPlan tegula::tile::planAccess(OpBuilder &builder, Operation *anchor,
                                    const GlobalAccess &access, Type storedType,
                                    unsigned width) {
  Location loc = anchor->getLoc();
  TensorView view = unpackTensor(builder, loc, access);
  if (std::optional<AccessPlan> plan =
          planAffine(builder, loc, anchor, access, view, storedType, width))
    return std::move(*plan);
  return planElementwise(builder, loc, access, view, storedType, width);
}

Value AccessPlan::address(OpBuilder &builder, Location loc,
                          size_t group) const {
  if (offsets[group] == 0)
    return bases[group];
  return LLVM::GEPOp::create(
      builder, loc, bases[group].getType(), storedType, bases[group],
      ValueRange{i64Const(builder, loc, offsets[group])});
}

namespace {
/// The registers a group of `bytes` moves through inline PTX: one 16-bit
/// register for 2 bytes, else 32-bit ones (a byte zero-extended into one).
struct LoadWords {
  Type type;
  unsigned count;
  LoadWords(OpBuilder &builder, int64_t bytes)
      : type(bytes == 2 ? builder.getI16Type() : builder.getI32Type()),
        count(std::max<int64_t>(1, bytes / 4)) {}
};

/// `value` (of the group's type) as `words`, or back.
Value packWords(OpBuilder &builder, Location loc, const LoadWords &words,
                Value value) {
  Type type = words.count == 1 ? words.type
                               : VectorType::get({words.count}, words.type);
  if (getElementTypeOrSelf(value.getType()).getIntOrFloatBitWidth() == 8 &&
      !isa<VectorType>(value.getType()))
    return arith::ExtUIOp::create(builder, loc, type, value);
  return LLVM::BitcastOp::create(builder, loc, type, value);
}
Value unpackWords(OpBuilder &builder, Location loc, Type groupType,
                  Value words) {
  if (groupType.isInteger(8))
    return arith::TruncIOp::create(builder, loc, groupType, words);
  return LLVM::BitcastOp::create(builder, loc, groupType, words);
}

/// `@p ld.global` of a group of `groupType` at `base` + `byteOffset` into
/// registers that hold `fallback` first: a masked-off group reads nothing
/// and needs no address of its own, and the immediate offset keeps one
/// base live for all the access's groups.
Value emitPredicatedLoad(OpBuilder &builder, Location loc, Type groupType,
                         Value base, int64_t byteOffset, Value predicate,
                         Value fallback) {
  int64_t bytes = getStoredBytes(getElementTypeOrSelf(groupType));
  if (auto vector = dyn_cast<VectorType>(groupType))
    bytes *= vector.getNumElements();
  LoadWords words(builder, bytes);
  SmallVector<Value> fallbackWords =
      unpackVector(builder, loc, packWords(builder, loc, words, fallback));
  unsigned n = words.count;
  std::string text, outputs, constraints;
  std::string reg = words.type.isInteger(16) ? "h" : "r";
  for (unsigned i = 0; i < n; ++i) {
    text += "mov.b" + std::to_string(words.type.getIntOrFloatBitWidth()) +
            " $" + std::to_string(i) + ", $" + std::to_string(n + 2 + i) +
            ";\n\t";
    outputs += (i ? ", $" : "$") + std::to_string(i);
    constraints += "=&" + reg + ",";
  }
  std::string kind = bytes == 1   ? "u8"
                     : bytes == 2 ? "b16"
                     : n == 1     ? "b32"
                                  : "v" + std::to_string(n) + ".b32";
  text += "@$" + std::to_string(n + 1) + " ld.global." + kind + " " +
          (n == 1 ? outputs : "{" + outputs + "}") + ", [$" +
          std::to_string(n) + "+" + std::to_string(byteOffset) + "];";
  constraints += "l,b";
  for (unsigned i = 0; i < n; ++i)
    constraints += "," + reg;
  SmallVector<Value> operands{base, predicate};
  llvm::append_range(operands, fallbackWords);
  Type resultType = words.type;
  if (n > 1)
    resultType = LLVM::LLVMStructType::getLiteral(
        builder.getContext(), SmallVector<Type>(n, words.type));
  Value result =
      emitInlinePtx(builder, loc, resultType, operands, text, constraints);
  Value packed = result;
  if (n > 1) {
    SmallVector<Value> loaded;
    for (unsigned i = 0; i < n; ++i)
      loaded.push_back(LLVM::ExtractValueOp::create(
          builder, loc, result, ArrayRef<int64_t>{int64_t(i)}));
    packed = packVector(builder, loc, VectorType::get({n}, words.type), loaded);
  }
  return unpackWords(builder, loc, groupType, packed);
}
} // namespace

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
  AccessPlan plan =
      planAccess(builder, anchor, access, storedType, vectorWidth);
  SmallVector<Value> others;
  if (other)
    others = unpackVector(builder, loc, other);
  Value zero = arith::ConstantOp::create(builder, loc, elementType,
                                         builder.getZeroAttr(elementType));
  SmallVector<Value> values;
  unsigned width = plan.width;
  unsigned alignment = width * getStoredBytes(storedType);
  Type groupType =
      width == 1 ? storedType : VectorType::get({int64_t(width)}, storedType);
  for (size_t group = 0; group < plan.size(); ++group) {
    Value loaded;
    int64_t byteOffset = plan.offsets[group] * getStoredBytes(storedType);
    if (matchPattern(plan.masks[group], m_One())) {
      loaded =
          LLVM::LoadOp::create(builder, loc, groupType,
                               plan.address(builder, loc, group), alignment);
    } else {
      SmallVector<Value> fallbacks;
      for (unsigned lane = 0; lane < width; ++lane) {
        Value fallback = others.empty() ? zero : others[group * width + lane];
        if (storedType != elementType)
          fallback = arith::ExtUIOp::create(builder, loc, storedType, fallback);
        fallbacks.push_back(fallback);
      }
      // PTX's immediate offset is a signed 32-bit value.
      bool immediate = llvm::isInt<32>(byteOffset);
      loaded = emitPredicatedLoad(
          builder, loc, groupType,
          immediate ? plan.bases[group] : plan.address(builder, loc, group),
          immediate ? byteOffset : 0, plan.masks[group],
          packVector(builder, loc, groupType, fallbacks));
    }
    for (auto [lane, value] :
         llvm::enumerate(unpackVector(builder, loc, loaded))) {
      if (storedType != elementType)
        value = arith::TruncIOp::create(builder, loc, elementType, value);
      if (consume)
        consume(int64_t(group * width + lane), value);
      else
        values.push_back(value);
    }
  }
  return values;
}
