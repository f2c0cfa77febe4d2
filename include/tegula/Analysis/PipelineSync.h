//===- PipelineSync.h - Which pipeline ops must synchronize -----*- C++ -*-===//
//
// A pop waits for its ring's copies and meets the block at a barrier; a
// push meets at a barrier before overwriting a stage another warp may still
// read. In a loop body that pops its rings and then pushes the next blocks
// most of these are redundant: the analysis finds the ones an earlier op of
// the same block already provides.
//
//===----------------------------------------------------------------------===//

#ifndef TEGULA_ANALYSIS_PIPELINESYNC_H
#define TEGULA_ANALYSIS_PIPELINESYNC_H

#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/DenseMap.h"

namespace tegula::tile {

/// The synchronization a pipeline op needs.
enum class PipelineSync {
  Full,        ///< pop: wait for the copies and meet at a barrier;
               ///< push: a barrier before writing its stage
  None,        ///< already synchronized by an earlier op of the block
  IfSameStage, ///< push: a barrier only when the stage it writes is the one
               ///< its ring's last pop read since the last barrier
};

/// The tile.pipeline.create result `pipeline` names, seen through the scf
/// values that carry it; null when control flow may make it name more than
/// one ring.
mlir::Value getRing(mlir::Value pipeline);

/// Fills `sync` with the synchronization of every pop and push under `root`
/// (laid-out tile IR), and `pendingAllowed` with, for each pop that waits,
/// how many of the thread's most recent copy groups may still be in flight
/// when its wait returns (every push is one group; 0 waits for all). A
/// located error if a pipeline may name different rings at run time.
mlir::LogicalResult
analyzePipelineSync(mlir::Operation *root,
                    llvm::DenseMap<mlir::Operation *, PipelineSync> &sync,
                    llvm::DenseMap<mlir::Operation *, int64_t> &pendingAllowed);

} // namespace tegula::tile

#endif // TEGULA_ANALYSIS_PIPELINESYNC_H
