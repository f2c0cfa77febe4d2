//===- SharedMemoryPlan.h - Where a kernel's shared memory goes -*- C++ -*-===//
//
// Each pipeline ring gets its own region of dynamic shared memory; the ops
// that move data between threads (conversions through shared memory,
// transposes, reductions across warps) share one scratch region after the
// rings, fenced by barriers. The plan is made on laid-out tile IR, before
// the lowering rewrites it, and checked against the target's budget.
//
//===----------------------------------------------------------------------===//

#ifndef TEGULA_ANALYSIS_SHAREDMEMORYPLAN_H
#define TEGULA_ANALYSIS_SHAREDMEMORYPLAN_H

#include "Tile/TileDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace tegula::tile {

/// The shared memory of one kernel.
struct KernelPlan {
  /// Byte offset of each pipeline's ring, by the op that creates it.
  llvm::DenseMap<mlir::Operation *, int64_t> pipelineOffsets;
  /// Byte offset of each tile.to_shared's buffer, allocated as rings are.
  llvm::DenseMap<mlir::Operation *, int64_t> sharedTileOffsets;
  /// tile.to_shared ops that directly follow another in their block: the
  /// first one's entry barrier serves the run, and only its last meets the
  /// block after the writes (the others' writes are fenced and met there).
  llvm::SmallPtrSet<mlir::Operation *, 4> sharedTileFollowers;
  llvm::SmallPtrSet<mlir::Operation *, 4> sharedTileLeaders;
  /// Byte offset and size of the scratch area reused by conversions and
  /// cross-warp reductions (each use is fenced by barriers).
  int64_t scratchOffset = 0;
  int64_t scratchBytes = 0;
  /// The ops that need scratch after the last top-level op that uses a ring
  /// (or waits for warpgroup dots): their scratch starts at 0, over the
  /// rings. The first of them must wait for every copy and meet the block.
  llvm::SmallPtrSet<mlir::Operation *, 4> scratchOverRings;
  mlir::Operation *firstOverRings = nullptr;
  /// Total dynamic shared memory the kernel needs.
  int64_t sharedBytes = 0;
  unsigned numWarps = 4;

  int64_t scratchOffsetFor(mlir::Operation *op) const {
    return scratchOverRings.contains(op) ? 0 : scratchOffset;
  }
  /// Whether a warpgroup dot reads a stage in place (#tile.shared), through
  /// the async proxy: the pops then fence the copies before their barrier.
  bool readsStagesInPlace = false;
};

/// Plans the shared memory of `func`. On tile IR not laid out yet, the
/// rings and transposes only: which reductions cross warps is not known.
KernelPlan planSharedMemory(mlir::func::FuncOp func);

/// Bytes of shared scratch `op` needs while it runs, 0 if none (its
/// ScratchOpInterface's answer). An op that needs some (a conversion through
/// shared memory, a transpose, a reduction across warps) meets the block at
/// a barrier while it runs.
int64_t getScratchBytes(mlir::Operation *op);

} // namespace tegula::tile

#endif // TEGULA_ANALYSIS_SHAREDMEMORYPLAN_H
