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

/// One access to a global tensor: the tile IR's index tiles, whose form
/// the address follows, and the lowered tensor, indices and mask.
struct GlobalAccess {
  GlobalTensorType type;
  mlir::Value tensor;
  mlir::ValueRange tileIndices;
  mlir::ValueRange indices;
  mlir::Value mask;
  /// The tile IR's mask, whose form the mask follows (null: none or not
  /// known).
  mlir::Value tileMask = nullptr;
  /// Every element the mask allows lies within the tensor (a push of a
  /// versioned loop, VersionLoops.cpp): no bounds checks.
  bool inside = false;
  /// The tile IR's tensor, whose make_tensor may give a strided view
  /// constant strides (null: not known).
  mlir::Value tileTensor = nullptr;
};

/// Addresses and masks of an access to a global tensor, one per group of
/// `width` registers that one vector instruction moves (the first register
/// of each group stands for it). A group's address is a base plus a
/// constant element offset, which becomes the instruction's immediate
/// offset: the groups of an affine access share one base per distinct
/// dynamic part. A masked-off group's address may point anywhere: its
/// mask guards the instruction (loads are predicated, so they read nothing
/// and keep `other`).
struct AccessPlan {
  llvm::SmallVector<mlir::Value> bases;
  llvm::SmallVector<int64_t> offsets;
  llvm::SmallVector<mlir::Value> masks;
  mlir::Type storedType;
  unsigned width = 1;

  size_t size() const { return bases.size(); }
  /// Group `group`'s address: its base advanced by its offset.
  mlir::Value address(mlir::OpBuilder &builder, mlir::Location loc,
                      size_t group) const;
};
AccessPlan planAccess(mlir::OpBuilder &builder, mlir::Operation *anchor,
                      const GlobalAccess &access, mlir::Type storedType,
                      unsigned width);

/// The type a tensor of `elementType` holds in memory (i1 as i8).
mlir::Type storedTypeOf(mlir::Type elementType, mlir::OpBuilder &builder);

/// Loads this thread's registers of the block `access` addresses, with
/// out-of-bounds and masked elements replaced by `other` (or zero). With
/// `consume`, each register's value goes to it as soon as it is loaded (so
/// that a large block need not be live at once) and none are returned.
llvm::SmallVector<mlir::Value> emitMaskedLoad(
    mlir::OpBuilder &builder, mlir::Operation *anchor,
    const GlobalAccess &access, mlir::Value other, unsigned vectorWidth,
    llvm::function_ref<void(int64_t, mlir::Value)> consume = nullptr);

/// Emits what `op` needs before it by the memory-order analysis, if any.
void emitMemoryBarrier(mlir::OpBuilder &builder, mlir::Operation *op,
                       const LoweringState &state);

} // namespace tegula::tile

#endif // TEGULA_LIB_CONVERSION_TILETONVVM_MEMORYACCESS_H
