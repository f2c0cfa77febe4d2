//===- TileOps.cpp - Verifiers, folders and effects of tile ops -----------===//

#include "Tile/TileOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <limits>

using namespace mlir;
using namespace tegula::tile;

#include "Tile/TileEnums.cpp.inc"

#define GET_OP_CLASSES
#include "Tile/TileOps.cpp.inc"

namespace {
/// Global memory reached through !tile.tensor handles.
struct GlobalMemoryResource
    : public SideEffects::Resource::Base<GlobalMemoryResource> {
  StringRef getName() final { return "tile::GlobalMemory"; }
};
/// The shared-memory rings behind !tile.pipeline handles.
struct PipelineResource : public SideEffects::Resource::Base<PipelineResource> {
  StringRef getName() final { return "tile::Pipeline"; }
};
/// A warp's groups of warpgroup dots in flight: issues add one, waits
/// retire them, and the count a wait names depends on their order.
struct DotGroupsResource
    : public SideEffects::Resource::Base<DotGroupsResource> {
  StringRef getName() final { return "tile::DotGroups"; }
};
} // namespace

/// Prints a shape as `64x128`.
static std::string shapeString(ArrayRef<int64_t> shape) {
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::interleave(shape, os, "x");
  return text;
}

/// Indexing shared by load, store and push: one index tile per tensor
/// dimension, every index tile of the block's shape.
static LogicalResult verifyIndices(Operation *op, GlobalTensorType tensor,
                                   ValueRange indices,
                                   ArrayRef<int64_t> blockShape) {
  if (static_cast<int64_t>(indices.size()) != tensor.getRank())
    return op->emitOpError()
           << "indexes a rank-" << tensor.getRank() << " tensor " << tensor
           << " with " << indices.size() << " index"
           << (indices.size() == 1 ? "" : "es")
           << "; give exactly one index per dimension";
  for (auto [position, index] : llvm::enumerate(indices)) {
    auto indexType = cast<RankedTensorType>(index.getType());
    if (indexType.getShape() != blockShape)
      return op->emitOpError()
             << "index " << position << " has shape "
             << shapeString(indexType.getShape()) << " but the block has shape "
             << shapeString(blockShape)
             << "; broadcast every index to the block's shape";
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Shape manipulation
//===----------------------------------------------------------------------===//

LogicalResult BroadcastOp::verify() {
  auto source = getSource().getType();
  auto result = getResult().getType();
  for (auto [dim, from, to] :
       llvm::enumerate(source.getShape(), result.getShape()))
    if (from != 1 && from != to)
      return emitOpError() << "cannot broadcast extent " << from << " to " << to
                           << " in dimension " << dim
                           << "; only unit extents broadcast";
  return success();
}

LogicalResult ExpandDimsOp::verify() {
  auto source = getSource().getType();
  int64_t axis = getAxis();
  if (axis < 0 || axis > source.getRank())
    return emitOpError() << "axis " << axis << " is out of range for a rank-"
                         << source.getRank() << " tile; expected 0 to "
                         << source.getRank();
  SmallVector<int64_t> expected(source.getShape());
  expected.insert(expected.begin() + axis, 1);
  if (getResult().getType().getShape() != ArrayRef<int64_t>(expected))
    return emitOpError() << "result shape "
                         << shapeString(getResult().getType().getShape())
                         << " is not the source shape with a unit extent at "
                         << axis << " (" << shapeString(expected) << ")";
  return success();
}

LogicalResult TransOp::verify() {
  ArrayRef<int64_t> from = getSource().getType().getShape();
  ArrayRef<int64_t> to = getResult().getType().getShape();
  if (from[0] != to[1] || from[1] != to[0])
    return emitOpError() << "result shape " << shapeString(to)
                         << " is not the transpose of " << shapeString(from);
  return success();
}

//===----------------------------------------------------------------------===//
// PermuteOp, ReshapeOp
//===----------------------------------------------------------------------===//

LogicalResult PermuteOp::verify() {
  ArrayRef<int64_t> from = getSource().getType().getShape();
  ArrayRef<int64_t> to = getResult().getType().getShape();
  ArrayRef<int32_t> order = getOrder();
  if (order.size() != from.size() || to.size() != from.size())
    return emitOpError() << "order has " << order.size()
                         << " entries for a rank-" << from.size()
                         << " source and a rank-" << to.size() << " result";
  SmallVector<bool> seen(from.size(), false);
  for (auto [i, dim] : llvm::enumerate(order)) {
    if (dim < 0 || dim >= int32_t(from.size()) || seen[dim])
      return emitOpError() << "order is not a permutation of 0 to "
                           << from.size() - 1;
    seen[dim] = true;
    if (to[i] != from[dim])
      return emitOpError() << "result shape " << shapeString(to) << " is not "
                           << shapeString(from) << " permuted by the order";
  }
  return success();
}

LinearLayout PermuteOp::getResultLayoutInSource() {
  ArrayRef<int32_t> order = getOrder();
  SmallVector<int32_t> inverse(order.size());
  for (auto [i, dim] : llvm::enumerate(order))
    inverse[dim] = i;
  return getLinearLayout(getResult().getType()).permuted(inverse);
}

LinearLayout ReshapeOp::getResultLayoutInSource() {
  return getLinearLayout(getResult().getType())
      .reshaped(getSource().getType().getShape());
}

LogicalResult ReshapeOp::verify() {
  RankedTensorType from = getSource().getType();
  RankedTensorType to = getResult().getType();
  if (from.getNumElements() != to.getNumElements())
    return emitOpError() << "reshapes " << shapeString(from.getShape()) << " ("
                         << from.getNumElements() << " elements) to "
                         << shapeString(to.getShape()) << " ("
                         << to.getNumElements() << " elements)";
  return success();
}

//===----------------------------------------------------------------------===//
// ConvertLayoutOp
//===----------------------------------------------------------------------===//

OpFoldResult ConvertLayoutOp::fold(FoldAdaptor) {
  if (getSource().getType() == getResult().getType())
    return getSource();
  // convert(convert(x)) moves the data once.
  if (auto inner = getSource().getDefiningOp<ConvertLayoutOp>()) {
    if (inner.getSource().getType() == getResult().getType())
      return inner.getSource();
    getSourceMutable().assign(inner.getSource());
    return getResult();
  }
  return {};
}

namespace {
/// Tiles that cost nothing to recreate (constants, splats, aranges) are
/// built directly in the layout a conversion asks for.
struct RematerializeCheapProducer : public OpRewritePattern<ConvertLayoutOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ConvertLayoutOp convert,
                                PatternRewriter &rewriter) const override {
    Operation *producer = convert.getSource().getDefiningOp();
    if (!producer)
      return failure();
    RankedTensorType type = convert.getResult().getType();
    if (auto splat = dyn_cast<SplatOp>(producer)) {
      rewriter.replaceOpWithNewOp<SplatOp>(convert, type, splat.getValue());
      return success();
    }
    if (isa<ArangeOp>(producer)) {
      rewriter.replaceOpWithNewOp<ArangeOp>(convert, type);
      return success();
    }
    if (auto constant = dyn_cast<arith::ConstantOp>(producer)) {
      auto dense = dyn_cast<SplatElementsAttr>(constant.getValue());
      if (!dense)
        return failure();
      rewriter.replaceOpWithNewOp<arith::ConstantOp>(
          convert, type,
          SplatElementsAttr::get(type, dense.getSplatValue<Attribute>()));
      return success();
    }
    // A pop or a transpose reads shared memory anyway: it can read straight
    // into the layout its only user wants, saving a round trip.
    if (!producer->hasOneUse())
      return failure();
    if (auto pop = dyn_cast<PipelinePopOp>(producer)) {
      rewriter.setInsertionPoint(pop);
      Value repopped = PipelinePopOp::create(
          rewriter, pop.getLoc(), type, pop.getPipeline(), pop.getTranspose());
      rewriter.replaceOp(convert, repopped);
      rewriter.eraseOp(pop);
      return success();
    }
    if (auto trans = dyn_cast<TransOp>(producer)) {
      rewriter.replaceOpWithNewOp<TransOp>(convert, type, trans.getSource());
      return success();
    }
    return failure();
  }
};

static RankedTensorType withEncoding(Type type, Attribute encoding) {
  auto tile = cast<RankedTensorType>(type);
  return RankedTensorType::get(tile.getShape(), tile.getElementType(),
                               encoding);
}

/// True when a global load of `from` may read straight into layout `to`
/// instead of moving through shared memory: a blocked layout that keeps
/// its vectors (at least as many consecutive elements a thread along the
/// same fastest dimension), or a slice layout, a vector that a 2-D use
/// broadcasts, of which each thread holds at most 16 elements, its own
/// rows or columns, read from L1 (attention's row statistics in a dot's
/// layout; a GEMM's bias of 256 columns, 64 a thread, still moves once).
static bool loadsInto(RankedTensorType from, Attribute to) {
  // `to` comes from a conversion of a tile of `from`'s shape: a verified
  // tile type.
  if (isa_and_nonnull<SliceLayoutAttr>(to))
    return getLinearLayout(withEncoding(from, to))
               .withoutDuplicateRegs()
               .getNumRegs() <= 16;
  auto source = dyn_cast_or_null<BlockedLayoutAttr>(from.getEncoding());
  auto target = dyn_cast_or_null<BlockedLayoutAttr>(to);
  if (!source || !target || source.getOrder() != target.getOrder())
    return false;
  unsigned fastest = source.getOrder().front();
  return target.getSizePerThread()[fastest] >=
         source.getSizePerThread()[fastest];
}

/// A global load reads memory in any layout: when every user converts it
/// to one layout it can load into (loadsInto), it does, and no data moves
/// through shared memory (rotary's f32 cos, 4 a thread, read in its bf16
/// partner's 8). Its index and mask tiles follow through the conversions
/// put on them. Loads only: a store of more than 16 bytes a thread leaves
/// gaps in each warp's write, where a load's are filled from L1.
struct LoadInConvertedLayout : public OpRewritePattern<ConvertLayoutOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ConvertLayoutOp convert,
                                PatternRewriter &rewriter) const override {
    auto load = convert.getSource().getDefiningOp<LoadOp>();
    RankedTensorType type = convert.getType();
    if (!load || !loadsInto(load.getType(), type.getEncoding()) ||
        llvm::any_of(load->getUsers(), [&](Operation *user) {
          return !isa<ConvertLayoutOp>(user) ||
                 user->getResult(0).getType() != type;
        }))
      return failure();
    rewriter.setInsertionPoint(load);
    IRMapping converted;
    for (Value operand : load->getOperands())
      if (auto tile = dyn_cast<RankedTensorType>(operand.getType()))
        converted.map(operand,
                      ConvertLayoutOp::create(
                          rewriter, load.getLoc(),
                          withEncoding(tile, type.getEncoding()), operand));
    Operation *reload = rewriter.clone(*load, converted);
    rewriter.modifyOpInPlace(reload,
                             [&] { reload->getResult(0).setType(type); });
    for (Operation *user : llvm::to_vector(load->getUsers()))
      rewriter.replaceOp(user, reload->getResults());
    rewriter.eraseOp(load);
    return success();
  }
};

/// Pure elementwise arithmetic of one result (integer, boolean or float).
static bool isElementwiseArithmetic(Operation *op) {
  llvm::StringRef dialect = op->getDialect()->getNamespace();
  return (dialect == "arith" || dialect == "math") &&
         op->getNumResults() == 1 && op->getNumRegions() == 0 && isPure(op);
}

/// Pure elementwise integer or boolean arithmetic of one result.
static bool isIntegerArithmetic(Operation *op) {
  return isElementwiseArithmetic(op) &&
         getElementTypeOrSelf(op->getResult(0).getType()).isIntOrIndex();
}

/// True for index and mask math: tiles built from splats, aranges and splat
/// constants through shape ops and integer arithmetic alone, with no memory
/// source (`c0 + arange(B) < N`). Rebuilding one in another layout costs a
/// few integer instructions a thread, less than any move through shared
/// memory. `depth` bounds the walk.
static bool isIndexMath(Value value, unsigned depth = 0) {
  Operation *op = value.getDefiningOp();
  if (!op || depth > 8)
    return false;
  if (isa<SplatOp, ArangeOp>(op))
    return true;
  if (auto constant = dyn_cast<arith::ConstantOp>(op))
    return isa<SplatElementsAttr>(constant.getValue());
  if (isa<BroadcastOp, ExpandDimsOp>(op))
    return isIndexMath(op->getOperand(0), depth + 1);
  return isIntegerArithmetic(op) &&
         llvm::all_of(op->getOperands(), [&](Value operand) {
           return isIndexMath(operand, depth + 1);
         });
}

/// True when a conversion of `value` to `target` vanishes once moved to its
/// sources: index math and splat constants (isIndexMath) are rebuilt in
/// it, and a load
/// of no other use reads into it (loadsInto), through elementwise
/// arithmetic of one use (`load(lse[rows]) * 1.44`). `depth` bounds the walk.
static bool conversionVanishes(Value value, Attribute target,
                               unsigned depth = 0) {
  Operation *op = value.getDefiningOp();
  if (!op || depth > 8)
    return false;
  if (isIndexMath(value))
    return true;
  if (!op->hasOneUse())
    return false;
  if (auto load = dyn_cast<LoadOp>(op))
    return loadsInto(load.getType(), target);
  return isElementwiseArithmetic(op) &&
         llvm::all_of(op->getOperands(), [&](Value operand) {
           return !isa<RankedTensorType>(operand.getType()) ||
                  conversionVanishes(operand, target, depth + 1);
         });
}

/// Moves a conversion above shape ops and integer arithmetic, so that index
/// and mask tiles are computed in the layout of the access that uses them:
/// the conversion ends at a splat or arange, where it vanishes. A producer
/// with other uses is rebuilt for this one only when it is index math
/// (isIndexMath), so that each consumer gets its own copy in its layout and
/// no data moves; otherwise the conversion would only move, not vanish.
/// Float arithmetic is crossed only where the conversion then vanishes
/// (conversionVanishes), so that a vector loaded and scaled each iteration
/// is loaded in the layout of the dot result it meets.
struct HoistConversionAboveIndexMath
    : public OpRewritePattern<ConvertLayoutOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ConvertLayoutOp convert,
                                PatternRewriter &rewriter) const override {
    Operation *producer = convert.getSource().getDefiningOp();
    if (!producer ||
        (!producer->hasOneUse() && !isIndexMath(convert.getSource())))
      return failure();
    Attribute target = convert.getResult().getType().getEncoding();
    if (!target)
      return failure();
    Location loc = convert.getLoc();
    if (auto broadcast = dyn_cast<BroadcastOp>(producer)) {
      Value source = ConvertLayoutOp::create(
          rewriter, loc, withEncoding(broadcast.getSource().getType(), target),
          broadcast.getSource());
      rewriter.replaceOpWithNewOp<BroadcastOp>(
          convert, convert.getResult().getType(), source);
      return success();
    }
    if (auto expand = dyn_cast<ExpandDimsOp>(producer)) {
      auto slice = SliceLayoutAttr::get(getContext(), expand.getAxis(), target);
      Value source = ConvertLayoutOp::create(
          rewriter, loc, withEncoding(expand.getSource().getType(), slice),
          expand.getSource());
      rewriter.replaceOpWithNewOp<ExpandDimsOp>(
          convert, convert.getResult().getType(), source, expand.getAxis());
      return success();
    }
    // Elementwise integer and boolean arithmetic (index and mask math), and
    // other arithmetic where the conversion vanishes at its sources.
    if (!isIntegerArithmetic(producer) &&
        !(isElementwiseArithmetic(producer) &&
          conversionVanishes(convert.getSource(), target)))
      return failure();
    auto resultType = cast<RankedTensorType>(producer->getResult(0).getType());
    SmallVector<Value> operands;
    for (Value operand : producer->getOperands()) {
      auto type = dyn_cast<RankedTensorType>(operand.getType());
      if (!type || type.getShape() != resultType.getShape())
        return failure();
      operands.push_back(ConvertLayoutOp::create(
          rewriter, loc, withEncoding(type, target), operand));
    }
    OperationState state(producer->getLoc(), producer->getName(), operands,
                         TypeRange{convert.getResult().getType()},
                         producer->getAttrs());
    rewriter.replaceOp(convert, rewriter.create(state)->getResults());
    return success();
  }
};
} // namespace

void ConvertLayoutOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                                  MLIRContext *context) {
  results.add<RematerializeCheapProducer, HoistConversionAboveIndexMath,
              LoadInConvertedLayout>(context);
}

//===----------------------------------------------------------------------===//
// Global tensors
//===----------------------------------------------------------------------===//

LogicalResult MakeTensorOp::verify() {
  GlobalTensorType tensor = getResult().getType();
  if (getBase().getType().getElementType() != tensor.getElementType())
    return emitOpError() << "pointer element type "
                         << getBase().getType().getElementType()
                         << " differs from the tensor's "
                         << tensor.getElementType();
  if (getDynamicDims().size() != tensor.getNumDynamicDims())
    return emitOpError() << "binds " << getDynamicDims().size()
                         << " dynamic extents but " << tensor << " has "
                         << tensor.getNumDynamicDims();
  unsigned strides = tensor.getIsStrided() ? tensor.getRank() : 0;
  if (getStrides().size() != strides)
    return emitOpError() << "takes " << getStrides().size() << " strides but "
                         << tensor << " needs " << strides;
  // Extents travel as i32 (the kernel ABI's size variables, tile.dim, the
  // lowering's bounds checks): a larger one would be truncated silently.
  for (int64_t extent : tensor.getShape())
    if (!ShapedType::isDynamic(extent) &&
        extent > std::numeric_limits<int32_t>::max())
      return emitOpError() << "extent " << extent << " of " << tensor
                           << " does not fit in i32, the type of extents";
  return success();
}

LogicalResult DimOp::verify() {
  int64_t rank = getTensor().getType().getRank();
  if (getDim() < 0 || getDim() >= rank)
    return emitOpError() << "dimension " << getDim()
                         << " is out of range for a rank-" << rank << " tensor";
  return success();
}

OpFoldResult DimOp::fold(FoldAdaptor) {
  int64_t extent = getTensor().getType().getShape()[getDim()];
  if (!ShapedType::isDynamic(extent))
    return IntegerAttr::get(getType(), extent);
  auto make = getTensor().getDefiningOp<MakeTensorOp>();
  if (!make)
    return {};
  // The n-th `?` extent is bound by the n-th dynamic operand.
  unsigned position =
      llvm::count_if(getTensor().getType().getShape().take_front(getDim()),
                     ShapedType::isDynamic);
  return make.getDynamicDims()[position];
}

LogicalResult LoadOp::verify() {
  GlobalTensorType tensor = getTensor().getType();
  RankedTensorType result = getResult().getType();
  if (result.getElementType() != tensor.getElementType())
    return emitOpError() << "result element type " << result.getElementType()
                         << " differs from the tensor's "
                         << tensor.getElementType();
  return verifyIndices(*this, tensor, getIndices(), result.getShape());
}

void LoadOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  effects.emplace_back(MemoryEffects::Read::get(), GlobalMemoryResource::get());
}

LogicalResult StoreOp::verify() {
  GlobalTensorType tensor = getTensor().getType();
  if (!tensor.getIsMutable())
    return emitOpError() << "stores to the read-only tensor " << tensor
                         << "; declare the parameter 'mut tensor'";
  RankedTensorType value = getValue().getType();
  if (value.getElementType() != tensor.getElementType())
    return emitOpError() << "stores " << value.getElementType()
                         << " values into a tensor of "
                         << tensor.getElementType() << "; cast them first";
  return verifyIndices(*this, tensor, getIndices(), value.getShape());
}

void StoreOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  effects.emplace_back(MemoryEffects::Write::get(),
                       GlobalMemoryResource::get());
}

LogicalResult AtomicRMWOp::verify() {
  GlobalTensorType tensor = getTensor().getType();
  if (!tensor.getIsMutable())
    return emitOpError() << "updates the read-only tensor " << tensor
                         << "; declare the parameter 'mut tensor'";
  Type element = getValue().getType().getElementType();
  if (element != tensor.getElementType())
    return emitOpError() << "combines " << element
                         << " values into a tensor of "
                         << tensor.getElementType() << "; cast them first";
  bool f32OrI32 = element.isF32() || element.isInteger(32);
  bool ok = getKind() == AtomicKind::Add
                ? f32OrI32 || element.isF16() || element.isBF16()
                : f32OrI32;
  if (!ok)
    return emitOpError() << "'" << stringifyAtomicKind(getKind())
                         << "' is not supported on " << element;
  return verifyIndices(*this, tensor, getIndices(),
                       getValue().getType().getShape());
}

void AtomicRMWOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  effects.emplace_back(MemoryEffects::Read::get(), GlobalMemoryResource::get());
  effects.emplace_back(MemoryEffects::Write::get(),
                       GlobalMemoryResource::get());
}

//===----------------------------------------------------------------------===//
// Compute
//===----------------------------------------------------------------------===//

/// The checks tile.dot and tile.dot_issue share: 2-D operands of one
/// element type contracting over K, an [M, N] accumulator, M, N and K of
/// at least 16, and register operands laid out for the accumulator's mma.
static LogicalResult verifyDotShapes(Operation *op, RankedTensorType a,
                                     RankedTensorType b, RankedTensorType acc) {
  if (a.getRank() != 2 || b.getRank() != 2 || acc.getRank() != 2)
    return op->emitOpError() << "operands must be 2-D tiles, got " << a << ", "
                             << b << " and " << acc;
  if (a.getElementType() != b.getElementType())
    return op->emitOpError()
           << "operands have different element types (" << a.getElementType()
           << " and " << b.getElementType() << "); cast one to the other";
  int64_t m = a.getDimSize(0), k = a.getDimSize(1);
  int64_t kb = b.getDimSize(0), n = b.getDimSize(1);
  if (k != kb)
    return op->emitOpError()
           << "contracts a [" << m << ", " << k << "] tile with a [" << kb
           << ", " << n << "] tile: K differs (" << k << " vs " << kb << ")";
  if (acc.getDimSize(0) != m || acc.getDimSize(1) != n)
    return op->emitOpError()
           << "accumulator is [" << acc.getDimSize(0) << ", "
           << acc.getDimSize(1) << "] but a @ b is [" << m << ", " << n << "]";
  for (auto [name, extent] :
       {std::pair<StringRef, int64_t>{"M", m}, {"N", n}, {"K", k}})
    if (extent < 16)
      return op->emitOpError()
             << name << " = " << extent
             << " is below 16: tensor-core dot needs M, N and K "
                "of at least 16 (a is ["
             << m << ", " << k << "], b is [" << kb << ", " << n << "])";
  // Any mma layout will do (warps past the result's extent replicate it),
  // but the operands must be laid out for that one.
  auto mma = dyn_cast_or_null<MmaLayoutAttr>(acc.getEncoding());
  for (auto [name, operand] :
       {std::pair<StringRef, RankedTensorType>{"a", a}, {"b", b}}) {
    auto layout = dyn_cast_or_null<DotOperandLayoutAttr>(operand.getEncoding());
    if (mma && layout && layout.getParent() != mma)
      return op->emitOpError()
             << "operand " << name << " is laid out for " << layout.getParent()
             << " but the accumulator has " << mma;
  }
  return success();
}

/// Whether operand `name` of a dot (index 0 for A, 1 for B), read from
/// `source`, has an encoding that agrees: #tile.shared when read in place,
/// not when from registers.
static LogicalResult verifyOperandSource(Operation *op, StringRef name,
                                         unsigned index,
                                         RankedTensorType operand,
                                         OperandSource source) {
  auto shared = dyn_cast_or_null<SharedLayoutAttr>(operand.getEncoding());
  if (source == OperandSource::Stage && !shared)
    return op->emitOpError()
           << "reads " << name << " in place from its stage, but " << operand
           << " has no #tile.shared encoding";
  // A staged copy is the stage's tile until layout assignment converts it
  // to registers.
  if (source == OperandSource::Registers && shared)
    return op->emitOpError() << "reads " << name << " from registers, but "
                             << operand << " stays in shared memory";
  return success();
}

LogicalResult DotOp::verify() {
  RankedTensorType a = getA().getType();
  RankedTensorType acc = getAcc().getType();
  if (getIeee() && !a.getElementType().isF32())
    return emitOpError() << "ieee applies to f32 operands, not "
                         << a.getElementType()
                         << " (whose products are exact already)";
  if (failed(verifyDotShapes(*this, a, getB().getType(), acc)))
    return failure();
  DotPlanAttr plan = getPlanAttr();
  if (!plan)
    return success();
  if (plan.getFamily() == DotFamily::Wgmma &&
      (getIeee() ||
       !(a.getElementType().isF16() || a.getElementType().isBF16())))
    return emitOpError() << "is planned as wgmma, which takes f16 or bf16 "
                            "operands, not "
                         << a.getElementType() << (getIeee() ? " ieee" : "");
  if (auto mma = dyn_cast_or_null<MmaLayoutAttr>(acc.getEncoding()))
    if (mma.getWarpsPerCTA() != plan.getWarps())
      return emitOpError() << "accumulator has " << mma
                           << " but the plan splits warps as " << plan;
  if (failed(verifyOperandSource(*this, "a", 0, a, plan.getA())))
    return failure();
  return verifyOperandSource(*this, "b", 1, getB().getType(), plan.getB());
}

LogicalResult DotIssueOp::verify() {
  RankedTensorType a = getA().getType(), b = getB().getType();
  RankedTensorType acc = getAcc().getType();
  if (failed(verifyDotShapes(*this, a, b, acc)))
    return failure();
  if (!a.getElementType().isF16() && !a.getElementType().isBF16())
    return emitOpError() << "takes f16 or bf16 operands, not "
                         << a.getElementType();
  if (!isa_and_nonnull<MmaLayoutAttr>(acc.getEncoding()))
    return emitOpError() << "accumulator " << acc << " has no #tile.mma layout";
  if (!isa_and_nonnull<DotOperandLayoutAttr>(a.getEncoding()) &&
      failed(verifyOperandSource(*this, "a", 0, a, OperandSource::Stage)))
    return failure();
  return verifyOperandSource(*this, "b", 1, b, OperandSource::Stage);
}

void DotIssueOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  effects.emplace_back(MemoryEffects::Read::get(), PipelineResource::get());
  effects.emplace_back(MemoryEffects::Read::get(), DotGroupsResource::get());
  effects.emplace_back(MemoryEffects::Write::get(), DotGroupsResource::get());
}

LogicalResult DotWaitOp::verify() {
  if (!getToken())
    return success();
  auto issue = getToken().getDefiningOp<DotIssueOp>();
  if (!issue || issue.getResult() != getAcc())
    return emitOpError() << "waits on a token, but acc is not the result of "
                            "the tile.dot_issue that returned it";
  return success();
}

void DotWaitOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  effects.emplace_back(MemoryEffects::Read::get(), DotGroupsResource::get());
  effects.emplace_back(MemoryEffects::Write::get(), DotGroupsResource::get());
}

LogicalResult ReduceOp::verify() {
  RankedTensorType source = getSource().getType();
  int64_t axis = getAxis();
  if (axis < 0 || axis >= source.getRank())
    return emitOpError() << "axis " << axis << " is out of range for a rank-"
                         << source.getRank() << " tile";
  SmallVector<int64_t> expected(source.getShape());
  expected.erase(expected.begin() + axis);
  auto resultTile = dyn_cast<RankedTensorType>(getResult().getType());
  if (expected.empty()) {
    if (resultTile)
      return emitOpError() << "reducing the only axis gives a scalar, not "
                           << resultTile;
    return success();
  }
  if (!resultTile || resultTile.getShape() != ArrayRef<int64_t>(expected))
    return emitOpError() << "result " << getResult().getType()
                         << " is not the source with axis " << axis
                         << " removed (" << shapeString(expected) << ")";
  return success();
}

LogicalResult CumsumOp::verify() {
  int64_t axis = getAxis();
  int64_t rank = getSource().getType().getRank();
  if (axis < 0 || axis >= rank)
    return emitOpError() << "axis " << axis << " is out of range for a rank-"
                         << rank << " tile";
  return success();
}

//===----------------------------------------------------------------------===//
// ToSharedOp: register tiles staged for warpgroup dots (PlanDots.cpp)
//===----------------------------------------------------------------------===//

LogicalResult ToSharedOp::verify() {
  RankedTensorType result = getType();
  if (!isa_and_nonnull<SharedLayoutAttr>(result.getEncoding()))
    return emitOpError() << "result " << result
                         << " has no #tile.shared encoding";
  if (isa_and_nonnull<SharedLayoutAttr>(getSource().getType().getEncoding()))
    return emitOpError() << "source " << getSource().getType()
                         << " is in shared memory already";
  // The encoding's swizzle is the stored rows' (verifyTileShape); wgmma's
  // descriptors step over whole periods of it, 8 rows each.
  SmallVector<int64_t, 2> stored = getStoredShape();
  if (stored[0] % 8 != 0)
    return emitOpError() << "stores " << result << " in " << stored[0]
                         << " rows, not whole 8-row swizzle periods";
  return success();
}

SmallVector<int64_t, 2> ToSharedOp::getStoredShape() {
  return cast<SharedLayoutAttr>(getType().getEncoding())
      .getStoredShape(getType().getShape());
}

void ToSharedOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  // Its buffer is shared memory that warpgroup dots read as they read
  // stages.
  effects.emplace_back(MemoryEffects::Write::get(), PipelineResource::get());
}

//===----------------------------------------------------------------------===//
// Pipelines
//===----------------------------------------------------------------------===//

void PipelineCreateOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  effects.emplace_back(MemoryEffects::Allocate::get(), PipelineResource::get());
}

LogicalResult PipelinePushOp::verify() {
  PipelineType pipeline = getPipeline().getType();
  GlobalTensorType tensor = getTensor().getType();
  if (static_cast<int64_t>(getIndices().size()) != tensor.getRank())
    return verifyIndices(*this, tensor, getIndices(), {});
  auto firstIndex = cast<RankedTensorType>(getIndices().front().getType());
  auto block =
      RankedTensorType::get(firstIndex.getShape(), tensor.getElementType());
  if (block != pipeline.getTileType())
    return emitOpError() << "pushes a block of type " << block
                         << " into a pipeline of type " << pipeline
                         << ", whose stages hold " << pipeline.getTileType();
  auto sameBlock = [&](Value value, Type element) {
    auto type = cast<RankedTensorType>(value.getType());
    return type.getShape() == block.getShape() &&
           type.getElementType() == element;
  };
  if (getMask() && !sameBlock(getMask(), IntegerType::get(getContext(), 1)))
    return emitOpError() << "mask " << getMask().getType()
                         << " is not an i1 tile of the block's shape";
  if (getOther() && !sameBlock(getOther(), block.getElementType()))
    return emitOpError() << "other " << getOther().getType()
                         << " is not a tile of the block's type " << block;
  return verifyIndices(*this, tensor, getIndices(), block.getShape());
}

void PipelinePushOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  effects.emplace_back(MemoryEffects::Read::get(), GlobalMemoryResource::get());
  effects.emplace_back(MemoryEffects::Write::get(), PipelineResource::get());
}

LogicalResult PipelinePopOp::verify() {
  PipelineType pipeline = getPipeline().getType();
  // The popped tile may carry a layout; the ring holds shape and dtype.
  RankedTensorType result = getResult().getType();
  SmallVector<int64_t> expected(pipeline.getShape());
  if (getTranspose()) {
    if (expected.size() != 2)
      return emitOpError() << "transposes a rank-" << expected.size()
                           << " pipeline block; only 2-D blocks transpose";
    std::swap(expected[0], expected[1]);
  }
  if (result.getShape() != ArrayRef<int64_t>(expected) ||
      result.getElementType() != pipeline.getElementType())
    return emitOpError() << "pops a " << getResult().getType()
                         << " from a pipeline of type " << pipeline
                         << ", whose stages hold " << pipeline.getTileType();
  return success();
}

void PipelinePopOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  effects.emplace_back(MemoryEffects::Read::get(), PipelineResource::get());
  effects.emplace_back(MemoryEffects::Write::get(), PipelineResource::get());
}

namespace {
/// trans(pop) reads the stage transposed instead.
struct FoldTransposeIntoPop : public OpRewritePattern<TransOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(TransOp trans,
                                PatternRewriter &rewriter) const override {
    auto pop = trans.getSource().getDefiningOp<PipelinePopOp>();
    if (!pop || !pop->hasOneUse())
      return failure();
    rewriter.setInsertionPoint(pop);
    Value transposed = PipelinePopOp::create(
        rewriter, pop.getLoc(), trans.getResult().getType(), pop.getPipeline(),
        !pop.getTranspose());
    rewriter.replaceOp(trans, transposed);
    rewriter.eraseOp(pop);
    return success();
  }
};
} // namespace

void TransOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                          MLIRContext *context) {
  results.add<FoldTransposeIntoPop>(context);
}

PipelinePopOp tegula::tile::getStagePop(Value tile, bool &transposed) {
  transposed = false;
  if (auto trans = tile.getDefiningOp<TransOp>()) {
    tile = trans.getSource();
    transposed = true;
  }
  auto pop = tile.getDefiningOp<PipelinePopOp>();
  if (pop)
    transposed ^= pop.getTranspose();
  return pop;
}

bool tegula::tile::isInSharedMemory(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  return type && isa_and_nonnull<SharedLayoutAttr>(type.getEncoding());
}

bool tegula::tile::mayAlias(Value tensorA, Value tensorB) {
  if (tensorA == tensorB)
    return true;
  auto makeA = tensorA.getDefiningOp<MakeTensorOp>();
  auto makeB = tensorB.getDefiningOp<MakeTensorOp>();
  if (!makeA || !makeB)
    return true;
  Value baseA = makeA.getBase(), baseB = makeB.getBase();
  // Distinct parameters of one kernel are distinct buffers; anything else
  // (an address computed some other way) may be any of them.
  return baseA == baseB || !isa<BlockArgument>(baseA) ||
         !isa<BlockArgument>(baseB);
}
