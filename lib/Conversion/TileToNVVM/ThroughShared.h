//===- ThroughShared.h - Tiles through shared memory ------------*- C++ -*-===//
//
// The shared scratch area an op takes, and tiles written there in one layout
// and read back in another. Built on the helpers (Common.h) and the target's
// instruction families (Families.h): the fragment loads of its dot family,
// the copy waits of its copy family. Common.h never calls up into them.
//
//===----------------------------------------------------------------------===//

#ifndef TEGULA_LIB_CONVERSION_TILETONVVM_THROUGHSHARED_H
#define TEGULA_LIB_CONVERSION_TILETONVVM_THROUGHSHARED_H

#include "Common.h"

namespace tegula::tile {

/// The byte offset of `op`'s shared scratch. Before the first op whose
/// scratch lies over the rings (SharedMemoryPlan), waits for every copy of
/// this thread and meets the block, so no copy or reader of a stage is
/// left.
int64_t takeScratch(mlir::OpBuilder &builder, mlir::Location loc,
                    mlir::Operation *op, LoweringState &state);

/// Writes this thread's registers `values` of a tile laid out as `from`
/// into shared memory at `byteOffset`, row-major by `from`'s coordinates
/// (getSharedElementAddress), runs of a row as vectors. With
/// `firstCopyWrites`, warps that hold copies of the tile leave the writes
/// to the first copy (firstWarpCopy). No barrier.
void writeTileToShared(mlir::OpBuilder &builder, mlir::Location loc,
                       mlir::Operation *anchor,
                       llvm::ArrayRef<mlir::Value> values,
                       const LinearLayout &from, mlir::Type elementType,
                       mlir::Value byteOffset, bool firstCopyWrites);

/// Writes this thread's registers of a tile into shared memory at
/// `byteOffset`, row-major by tile coordinates, and reads them back in
/// another layout; the two barriers make it safe to reuse the scratch area.
/// With `firstCopyWrites`, warps that hold copies of the tile leave the
/// writes to the first copy (firstWarpCopy).
mlir::Value convertThroughShared(const TargetInfo &target,
                                 mlir::OpBuilder &builder, mlir::Location loc,
                                 mlir::Operation *anchor, mlir::Value source,
                                 const LinearLayout &from,
                                 const LinearLayout &to, mlir::Type elementType,
                                 mlir::Type resultType, int64_t byteOffset,
                                 bool firstCopyWrites = false);

/// Reads this thread's registers of `layout` from a row-major tile of
/// `shape` at `byteOffset` in shared memory: with the dot family's fragment
/// loads where they apply, else element by element (as `storedType`,
/// truncated to `elementType` where they differ: booleans travel as bytes).
llvm::SmallVector<mlir::Value>
readTileFromShared(const TargetInfo &target, mlir::OpBuilder &builder,
                   mlir::Location loc, mlir::Operation *anchor,
                   llvm::ArrayRef<int64_t> shape, const LinearLayout &layout,
                   mlir::Type elementType, mlir::Type storedType,
                   mlir::Value byteOffset);

} // namespace tegula::tile

#endif // TEGULA_LIB_CONVERSION_TILETONVVM_THROUGHSHARED_H
