//===- TileInterfaces.cpp - What passes ask of tile ops -------------------===//
//
// Each op's answers to the interfaces of TileInterfaces.td, one section per
// interface so that the rules read side by side: which global tensor an op
// accesses (MemoryOrder, PipelineLoops, AxisInfo), how the layout pass lays
// it out (AssignLayouts), and the shared-memory scratch its lowering takes
// (SharedMemoryPlan). Ops that keep an interface's defaults have no entry.
//
//===----------------------------------------------------------------------===//

#include "Tile/TileOps.h"

using namespace mlir;
using namespace tegula::tile;

#include "Tile/TileInterfaces.cpp.inc"

//===----------------------------------------------------------------------===//
// GlobalAccessOpInterface
//===----------------------------------------------------------------------===//

RankedTensorType LoadOp::getVectorBlockType() { return getType(); }

/// The index tiles of a store or push, which its vectors follow (none for a
/// block of no dimensions).
static RankedTensorType indexBlockType(ValueRange indices) {
  return indices.empty() ? RankedTensorType()
                         : cast<RankedTensorType>(indices.front().getType());
}

bool StoreOp::writesTensor() { return true; }

RankedTensorType StoreOp::getVectorBlockType() {
  return indexBlockType(getIndices());
}

bool AtomicRMWOp::writesTensor() { return true; }

/// Atomics of one kind commute: their order between threads does not
/// change what memory holds at the next barrier.
bool AtomicRMWOp::commutesWith(Operation *other) {
  auto atomic = dyn_cast<AtomicRMWOp>(other);
  return atomic && atomic.getKind() == getKind();
}

/// One red instruction per element.
RankedTensorType AtomicRMWOp::getVectorBlockType() { return {}; }

/// The copies read global memory until a later wait.
bool PipelinePushOp::readsAfterReturning() { return true; }

RankedTensorType PipelinePushOp::getVectorBlockType() {
  return indexBlockType(getIndices());
}

//===----------------------------------------------------------------------===//
// LayoutRuleOpInterface
//===----------------------------------------------------------------------===//

Attribute tegula::tile::followResultLayout(Operation *op, LayoutQuery &query) {
  if (op->getNumResults() == 1 &&
      isa<RankedTensorType>(op->getResult(0).getType()))
    return query.layoutOf(op->getResult(0));
  return {};
}

// Cheap producers take the default layout: a conversion of one is folded
// by rebuilding it in the layout asked for.
Attribute ArangeOp::inferResultLayout(LayoutQuery &query) {
  return query.defaultLayout(getType());
}

Attribute SplatOp::inferResultLayout(LayoutQuery &query) {
  return query.defaultLayout(getType());
}

Attribute BroadcastOp::inferResultLayout(LayoutQuery &query) {
  return query.layoutOf(getSource());
}

Attribute ExpandDimsOp::inferResultLayout(LayoutQuery &query) {
  // Undoing a reduction's slice gives back the layout it was cut from.
  auto slice = dyn_cast<SliceLayoutAttr>(query.layoutOf(getSource()));
  return slice && slice.getDim() == getAxis() ? slice.getParent()
                                              : query.defaultLayout(getType());
}

Attribute ExpandDimsOp::getRequiredOperandLayout(unsigned, LayoutQuery &query) {
  return SliceLayoutAttr::get(getContext(), getAxis(),
                              query.layoutOf(getResult()));
}

Attribute TransOp::inferResultLayout(LayoutQuery &query) {
  return query.defaultLayout(getType());
}

Attribute TransOp::getRequiredOperandLayout(unsigned, LayoutQuery &query) {
  // A transpose of a stage that no warpgroup dot reads through it works
  // on registers loaded from the stage; any other source will do as is.
  if (isa<SharedLayoutAttr>(query.layoutOf(getSource())) &&
      !isa<SharedLayoutAttr>(query.layoutOf(getResult())))
    return query.defaultLayout(getSource().getType());
  return {};
}

/// A tile written to shared memory is written from the registers it is in.
Attribute ToSharedOp::getRequiredOperandLayout(unsigned, LayoutQuery &) {
  return {};
}

// Permutes and reshapes read their source in any layout: the lowering maps
// the result's layout into the source's coordinates.
Attribute PermuteOp::inferResultLayout(LayoutQuery &query) {
  return query.defaultLayout(getType());
}

Attribute PermuteOp::getRequiredOperandLayout(unsigned, LayoutQuery &) {
  return {};
}

Attribute ReshapeOp::inferResultLayout(LayoutQuery &query) {
  return query.defaultLayout(getType());
}

Attribute ReshapeOp::getRequiredOperandLayout(unsigned, LayoutQuery &) {
  return {};
}

/// A conversion is what a consumer asked for: its own layout, from any.
Attribute ConvertLayoutOp::inferResultLayout(LayoutQuery &query) {
  return query.layoutOf(getResult());
}

Attribute ConvertLayoutOp::getRequiredOperandLayout(unsigned, LayoutQuery &) {
  return {};
}

// Accesses are anchors: 16-byte chunks per thread of the data they move.
Attribute LoadOp::inferResultLayout(LayoutQuery &query) {
  return query.defaultLayout(getType());
}

// A reduction (a slice layout, of a blocked tile or of a dot's result) is
// stored from the layout it is in: threads that hold the same element store
// it to the same address (harmless, one transaction), where converting it
// to a blocked layout first would cost a shared-memory round trip and two
// barriers per store.
Attribute StoreOp::getRequiredOperandLayout(unsigned, LayoutQuery &query) {
  Attribute layout = query.layoutOf(getValue());
  if (isa_and_nonnull<SliceLayoutAttr>(layout))
    return layout;
  return query.defaultLayout(getValue().getType());
}

Attribute AtomicRMWOp::getRequiredOperandLayout(unsigned, LayoutQuery &query) {
  return query.defaultLayout(getValue().getType());
}

/// Chunks sized by the data pushed, not by its i32 indices.
Attribute PipelinePushOp::getRequiredOperandLayout(unsigned,
                                                   LayoutQuery &query) {
  return query.defaultLayout(getPipeline().getType().getTileType());
}

Attribute PipelinePopOp::inferResultLayout(LayoutQuery &query) {
  // A stage popped only to be widened (bf16 logits to f32) is read in the
  // wider type's layout: the f32 arithmetic after it has that layout, and
  // a pop reads shared memory in any layout, where converting after it
  // costs a shared-memory round trip and two barriers an iteration.
  auto widened = [](Operation *user) { return isa<arith::ExtFOp>(user); };
  Operation *pop = getOperation();
  if (!pop->use_empty() && llvm::all_of(pop->getUsers(), widened))
    return query.defaultLayout(
        cast<RankedTensorType>(pop->user_begin()->getResult(0).getType()));
  return query.defaultLayout(getType());
}

/// A scan runs over a blocked layout, whose bases each step one dimension
/// by a power of two (CumsumOpToNVVM.cpp).
Attribute CumsumOp::inferResultLayout(LayoutQuery &query) {
  return query.defaultLayout(getType());
}

Attribute ReduceOp::inferResultLayout(LayoutQuery &query) {
  return SliceLayoutAttr::get(getContext(), getAxis(),
                              query.layoutOf(getSource()));
}

/// The lowering reduces the source in any layout.
Attribute ReduceOp::getRequiredOperandLayout(unsigned, LayoutQuery &) {
  return {};
}

//===----------------------------------------------------------------------===//
// ScratchOpInterface
//===----------------------------------------------------------------------===//

/// Bytes a whole tile of `type` takes in shared memory.
static int64_t tileBytes(RankedTensorType type) {
  return type.getNumElements() * getStoredBytes(type.getElementType());
}

/// Scratch for moving the laid-out tile `source` into the layout `to`: none
/// when its lanes and warps already hold the right elements, which then
/// stay in registers (LayoutOpToNVVM.cpp), else the whole tile.
static int64_t moveBytes(RankedTensorType source, const LinearLayout &to) {
  auto mapping = getRegisterMapping(
      getLinearLayout(source), to,
      [](const LinearLayout::Coords &coords) { return coords; });
  return mapping ? 0 : tileBytes(source);
}

int64_t ConvertLayoutOp::getScratchBytes() {
  // Registers loaded from a stage read in place need no scratch.
  if (isa_and_nonnull<SharedLayoutAttr>(getSource().getType().getEncoding()))
    return 0;
  return moveBytes(getSource().getType(), getLinearLayout(getType()));
}

/// A permute's or reshape's move into the result's layout; before layout
/// assignment, as for a transpose, the most it may take.
template <typename ViewOp> static int64_t viewBytes(ViewOp view) {
  RankedTensorType source = view.getSource().getType();
  return source.getEncoding()
             ? moveBytes(source, view.getResultLayoutInSource())
             : tileBytes(source);
}

int64_t PermuteOp::getScratchBytes() { return viewBytes(*this); }

int64_t ReshapeOp::getScratchBytes() { return viewBytes(*this); }

int64_t TransOp::getScratchBytes() {
  // A transpose of a tile read in place only flips how wgmma reads it.
  if (isa_and_nonnull<SharedLayoutAttr>(getSource().getType().getEncoding()))
    return 0;
  return tileBytes(getSource().getType());
}

int64_t CumsumOp::getScratchBytes() {
  RankedTensorType source = getSource().getType();
  // Before layout assignment, a slot per element (the blocked layout's
  // count without replication).
  if (!source.getEncoding())
    return source.getNumElements() * 4;
  // Across warps, 32-bit partial sums are exchanged through one slot per
  // register, lane and warp (CumsumOpToNVVM.cpp).
  LinearLayout layout = getLinearLayout(source);
  unsigned axis = getAxis();
  if (llvm::none_of(
          layout.getWarpBases(),
          [&](const LinearLayout::Coords &basis) { return basis[axis] != 0; }))
    return 0;
  return layout.getNumRegs() * 32 * layout.getNumWarps() * 4;
}

int64_t ReduceOp::getScratchBytes() {
  RankedTensorType source = getSource().getType();
  // Before layout assignment no reduction is known to cross warps.
  if (!source.getEncoding())
    return 0;
  LinearLayout layout = getLinearLayout(source);
  int64_t warpsAlongAxis = 1;
  for (const auto &basis : layout.getWarpBases())
    if (basis[getAxis()] != 0)
      warpsAlongAxis *= 2;
  if (warpsAlongAxis == 1)
    return 0;
  int64_t outputs = source.getNumElements() / source.getDimSize(getAxis());
  // Partial results are stored in the type they combine in (f16 as f32).
  Type work = getReduceWorkType(source.getElementType());
  return warpsAlongAxis * outputs * (work ? getStoredBytes(work) : 0);
}

Type tegula::tile::getReduceWorkType(Type elementType) {
  // Shuffles move 32-bit values (i64 in two halves): narrower floats widen
  // to f32.
  if (elementType.isF16() || elementType.isBF16())
    return Float32Type::get(elementType.getContext());
  if (elementType.isF32() || elementType.isInteger(32) ||
      elementType.isInteger(64))
    return elementType;
  return {};
}
