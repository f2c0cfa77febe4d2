//===- SharedMemoryPlan.cpp - Where a kernel's shared memory goes ---------===//

#include "tegula/Analysis/SharedMemoryPlan.h"

#include "Tile/TileOps.h"

#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace tegula::tile;

namespace {
int64_t alignTo16(int64_t bytes) { return (bytes + 15) / 16 * 16; }

} // namespace

int64_t tegula::tile::getScratchBytes(Operation *op) {
  auto bytesOf = [](RankedTensorType type) {
    return type.getNumElements() * getStoredBytes(type.getElementType());
  };
  // A move whose lanes and warps already hold the right elements stays in
  // registers (LayoutOpToNVVM.cpp).
  auto moveBytes = [&](RankedTensorType source, const LinearLayout &to) {
    auto mapping = getRegisterMapping(
        getLinearLayout(source), to,
        [](const LinearLayout::Coords &coords) { return coords; });
    return mapping ? 0 : bytesOf(source);
  };
  if (auto convert = dyn_cast<ConvertLayoutOp>(op)) {
    // Registers loaded from a stage read in place need no scratch.
    if (isa_and_nonnull<SharedLayoutAttr>(
            convert.getSource().getType().getEncoding()))
      return 0;
    return moveBytes(convert.getSource().getType(),
                     getLinearLayout(convert.getResult().getType()));
  }
  // Before layout assignment, as for a transpose, the most they may take.
  auto viewBytes = [&](auto view) {
    RankedTensorType source = view.getSource().getType();
    return source.getEncoding()
               ? moveBytes(source, view.getResultLayoutInSource())
               : bytesOf(source);
  };
  if (auto permute = dyn_cast<PermuteOp>(op))
    return viewBytes(permute);
  if (auto reshape = dyn_cast<ReshapeOp>(op))
    return viewBytes(reshape);
  // A transpose of a tile read in place only flips how wgmma reads it.
  if (auto trans = dyn_cast<TransOp>(op))
    return isa_and_nonnull<SharedLayoutAttr>(
               trans.getSource().getType().getEncoding())
               ? 0
               : bytesOf(trans.getSource().getType());
  if (auto cumsum = dyn_cast<CumsumOp>(op)) {
    // Before layout assignment, a slot per element (the blocked layout's
    // count without replication).
    if (!cumsum.getSource().getType().getEncoding())
      return cumsum.getSource().getType().getNumElements() * 4;
    // Across warps, 32-bit partial sums are exchanged through one slot per
    // register, lane and warp (CumsumOpToNVVM.cpp).
    LinearLayout layout = getLinearLayout(cumsum.getSource().getType());
    unsigned axis = cumsum.getAxis();
    if (llvm::none_of(layout.getWarpBases(),
                      [&](const LinearLayout::Coords &basis) {
                        return basis[axis] != 0;
                      }))
      return 0;
    return layout.getNumRegs() * 32 * layout.getNumWarps() * 4;
  }
  if (auto reduce = dyn_cast<ReduceOp>(op)) {
    // Before layout assignment no reduction is known to cross warps.
    if (!reduce.getSource().getType().getEncoding())
      return 0;
    LinearLayout layout = getLinearLayout(reduce.getSource().getType());
    int64_t warpsAlongAxis = 1;
    for (const auto &basis : layout.getWarpBases())
      if (basis[reduce.getAxis()] != 0)
        warpsAlongAxis *= 2;
    if (warpsAlongAxis == 1)
      return 0;
    int64_t outputs = reduce.getSource().getType().getNumElements() /
                      reduce.getSource().getType().getDimSize(reduce.getAxis());
    // Partial results are stored in the type they combine in (f16 as f32).
    Type work =
        getReduceWorkType(reduce.getSource().getType().getElementType());
    return warpsAlongAxis * outputs * (work ? getStoredBytes(work) : 0);
  }
  return 0;
}

/// Whether `op` is or holds a use of a ring: pipeline ops, and warpgroup
/// dots (reading stages in place) and their waits.
static bool usesRings(Operation *op) {
  bool uses = false;
  op->walk([&](Operation *inner) {
    if (isa<PipelineCreateOp, PipelinePushOp, PipelinePopOp, DotIssueOp,
            DotWaitOp>(inner))
      uses = true;
    else if (auto dot = dyn_cast<DotOp>(inner))
      uses |=
          isa_and_nonnull<SharedLayoutAttr>(dot.getB().getType().getEncoding());
  });
  return uses;
}

KernelPlan tegula::tile::planSharedMemory(func::FuncOp func) {
  KernelPlan plan;
  if (auto warps =
          func->getAttrOfType<IntegerAttr>(TileDialect::kWarpsAttrName))
    plan.numWarps = warps.getInt();
  // Scratch of top-level ops after the last one that uses a ring goes over
  // the rings.
  Block &body = func.getFunctionBody().front();
  Operation *lastRingUse = nullptr;
  for (Operation &op : body)
    if (usesRings(&op))
      lastRingUse = &op;
  int64_t cursor = 0, lateScratch = 0;
  func.walk([&](Operation *op) {
    if (auto create = dyn_cast<PipelineCreateOp>(op)) {
      PipelineType type = create.getType();
      // Swizzled stages start where their swizzle pattern does, as wgmma's
      // matrix descriptors read it.
      if (isSwizzledShared(type.getShape(), type.getElementType()))
        cursor = llvm::alignTo(cursor, kSwizzleAtomBytes);
      plan.pipelineOffsets[op] = cursor;
      cursor = alignTo16(cursor + type.getStages() * type.getStageBytes());
      return;
    }
    if (auto pop = dyn_cast<PipelinePopOp>(op))
      plan.readsStagesInPlace |=
          isa_and_nonnull<SharedLayoutAttr>(pop.getType().getEncoding());
    int64_t bytes = getScratchBytes(op);
    if (!bytes)
      return;
    // Only top-level ops: the first one's entry barrier must run whatever
    // branches are taken.
    if (lastRingUse && op->getBlock() == &body &&
        lastRingUse->isBeforeInBlock(op)) {
      plan.scratchOverRings.insert(op);
      if (!plan.firstOverRings)
        plan.firstOverRings = op;
      lateScratch = std::max(lateScratch, bytes);
      return;
    }
    plan.scratchBytes = std::max(plan.scratchBytes, bytes);
  });
  plan.scratchOffset = cursor;
  plan.sharedBytes =
      alignTo16(std::max(cursor + plan.scratchBytes, lateScratch));
  return plan;
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
