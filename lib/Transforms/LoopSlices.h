//===- LoopSlices.h - The ops of a loop body that compute a value -*- C++
//-*-===//
//
// Pipelining fetches a load's block S - 1 iterations ahead, and loop
// versioning evaluates indices in the first iterations before the loop:
// both recompute values of a loop's body for another induction variable by
// cloning the pure ops that compute them.
//
//===----------------------------------------------------------------------===//

#ifndef TEGULA_LIB_TRANSFORMS_LOOPSLICES_H
#define TEGULA_LIB_TRANSFORMS_LOOPSLICES_H

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"

#include <optional>

namespace tegula::tile {

/// The ops of `loop`'s body that compute `values`, in program order, if they
/// are all pure and read only the induction variable and values from
/// outside the loop; none if a loop-carried value or an effect is involved.
std::optional<llvm::SmallVector<mlir::Operation *>>
backwardSlice(mlir::scf::ForOp loop, mlir::ValueRange values);

/// Clones `slice` with the induction variable replaced by `iv`; returns the
/// mapping.
mlir::IRMapping cloneSlice(mlir::OpBuilder &builder, mlir::scf::ForOp loop,
                           llvm::ArrayRef<mlir::Operation *> slice,
                           mlir::Value iv);

} // namespace tegula::tile

#endif // TEGULA_LIB_TRANSFORMS_LOOPSLICES_H
