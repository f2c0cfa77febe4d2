//===- MemoryAccess.h - Masked accesses to global tensors -------*- C++ -*-===//
//
// Addresses, derived masks and vector widths of loads and stores of global
// tensors, shared by tile.load/tile.store and pipeline pushes (defined in
// MemoryOpToNVVM.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef TEGULA_LIB_CONVERSION_TILETONVVM_MEMORYACCESS_H
#define TEGULA_LIB_CONVERSION_TILETONVVM_MEMORYACCESS_H

#include "Common.h"

namespace tegula::tile {

/// Addresses and masks of an access to a global tensor, one per group of
/// `width` registers that one vector instruction moves (the first register
/// of each group stands for it).
struct AccessPlan {
  llvm::SmallVector<mlir::Value> addresses;
  llvm::SmallVector<mlir::Value> masks;
  unsigned width = 1;
};
AccessPlan planAccess(mlir::OpBuilder &builder, mlir::Location loc,
                      GlobalTensorType type, mlir::Value tensor,
                      mlir::ValueRange indices, mlir::Value userMask,
                      mlir::Type storedType, unsigned width);

/// Loads this thread's registers of the block `indices` address in a global
/// tensor, with out-of-bounds and `mask`-ed elements replaced by `other`
/// (or zero). `tensor` is the lowered tensor (address and extents). With
/// `consume`, each register's value goes to it as soon as it is loaded (so
/// that a large block need not be live at once) and none are returned.
llvm::SmallVector<mlir::Value> emitMaskedLoad(
    mlir::OpBuilder &builder, mlir::Location loc, GlobalTensorType type,
    mlir::Value tensor, mlir::ValueRange indices, mlir::Value mask,
    mlir::Value other, unsigned vectorWidth,
    llvm::function_ref<void(int64_t, mlir::Value)> consume = nullptr);

/// Emits what `op` needs before it by the memory-order analysis, if any.
void emitMemoryBarrier(mlir::OpBuilder &builder, mlir::Operation *op,
                       const LoweringState &state);

} // namespace tegula::tile

#endif // TEGULA_LIB_CONVERSION_TILETONVVM_MEMORYACCESS_H
