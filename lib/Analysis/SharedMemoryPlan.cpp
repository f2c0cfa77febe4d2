//===- SharedMemoryPlan.cpp - Where a kernel's shared memory goes ---------===//

#include "tegula/Analysis/SharedMemoryPlan.h"

#include "Tile/TileOps.h"

#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace tegula::tile;

namespace {
int64_t alignTo16(int64_t bytes) { return (bytes + 15) / 16 * 16; }

/// Gives `op` a buffer of its own at `cursor`, where its swizzle pattern
/// starts, and notes whether it runs on from a tile.to_shared just before
/// it or into one just after it (those share barriers).
void planSharedTile(ToSharedOp op, KernelPlan &plan, int64_t &cursor) {
  RankedTensorType type = op.getType();
  cursor = llvm::alignTo(cursor, kSwizzleAtomBytes);
  plan.sharedTileOffsets[op] = cursor;
  cursor = alignTo16(cursor + type.getNumElements() *
                                  getStoredBytes(type.getElementType()));
  if (isa_and_nonnull<ToSharedOp>(op->getPrevNode()))
    plan.sharedTileFollowers.insert(op);
  if (isa_and_nonnull<ToSharedOp>(op->getNextNode()))
    plan.sharedTileLeaders.insert(op);
}
} // namespace

int64_t tegula::tile::getScratchBytes(Operation *op) {
  auto scratch = dyn_cast<ScratchOpInterface>(op);
  return scratch ? scratch.getScratchBytes() : 0;
}

/// Whether `op` is or holds a use of a ring: pipeline ops, and warpgroup
/// dots (reading stages in place) and their waits.
static bool usesRings(Operation *op) {
  bool uses = false;
  op->walk([&](Operation *inner) {
    if (isa<PipelineCreateOp, PipelinePushOp, PipelinePopOp, ToSharedOp,
            DotIssueOp, DotWaitOp>(inner))
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
    if (auto toShared = dyn_cast<ToSharedOp>(op)) {
      planSharedTile(toShared, plan, cursor);
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
