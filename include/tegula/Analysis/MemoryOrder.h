//===- MemoryOrder.h - Barriers between accesses to mut tensors -*- C++ -*-===//
//
// A load sees every earlier store of the program and a store lands after
// every earlier load, as if each tile operation ran whole. On the GPU the
// elements of one access are spread over threads that run ahead of one
// another: the analysis finds the global accesses that need a barrier
// before them so that this order holds.
//
//===----------------------------------------------------------------------===//

#ifndef TEGULA_ANALYSIS_MEMORYORDER_H
#define TEGULA_ANALYSIS_MEMORYORDER_H

#include "tegula/Analysis/PipelineSync.h"

namespace tegula::tile {

/// What a load, store or push of a global tensor needs before it.
enum class MemoryBarrier {
  None,
  Barrier,              ///< bar.sync: orders the block's global accesses
  WaitCopiesAndBarrier, ///< a store after a push: its copies land first
};

/// Fills `out` with the barrier each load, store and push under `root`
/// (laid-out tile IR) needs, where it needs one. `pipelineSync` (from
/// analyzePipelineSync) says which pops meet at a barrier anyway.
void analyzeMemoryOrder(
    mlir::Operation *root,
    const llvm::DenseMap<mlir::Operation *, PipelineSync> &pipelineSync,
    llvm::DenseMap<mlir::Operation *, MemoryBarrier> &out);

} // namespace tegula::tile

#endif // TEGULA_ANALYSIS_MEMORYORDER_H
