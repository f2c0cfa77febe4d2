//===- Pipeline.h - The lowering's pass pipelines ---------------*- C++ -*-===//
//
// The passes tilec runs, built in one place and registered under names, so
// that `tile-opt --tile-lower-to-gpu` replays exactly what tilec
// runs between tile IR and NVVM-level MLIR, and `--tile-lower-to-llvm` from
// there to the LLVM dialect.
//
//===----------------------------------------------------------------------===//

#ifndef TEGULA_TARGET_PIPELINE_H
#define TEGULA_TARGET_PIPELINE_H

#include "mlir/Pass/PassManager.h"

namespace tegula::target {

/// Loop pipelining, layout assignment and conversion to per-thread
/// NVVM-level MLIR, for the target the module names (`tile.target`).
void buildLowerToGPUPipeline(mlir::OpPassManager &pm);

/// NVVM-level MLIR (scf, arith, vector, func) to the LLVM dialect.
void buildLowerToLLVMPipeline(mlir::OpPassManager &pm);

/// Registers both pipelines with the pass registry (for tile-opt).
void registerLoweringPipelines();

} // namespace tegula::target

#endif // TEGULA_TARGET_PIPELINE_H
