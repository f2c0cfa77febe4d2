//===- TileDialect.h - The Tegula tile dialect ------------------*- C++ -*-===//
//
// Thin header over the ODS-generated dialect, type and op declarations.
//
//===----------------------------------------------------------------------===//

#ifndef TEGULA_DIALECT_TILE_TILEDIALECT_H
#define TEGULA_DIALECT_TILE_TILEDIALECT_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"

#include "Tile/LinearLayout.h"
#include "tegula/Target/TargetInfo.h"

#include "Tile/TileDialect.h.inc"

#include "Tile/TileAttrInterfaces.h.inc"

#include "Tile/TileEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "Tile/TileAttrs.h.inc"

#define GET_TYPEDEF_CLASSES
#include "Tile/TileTypes.h.inc"

namespace tegula::tile {
/// The target of the module enclosing `op` (its `tile.target`), the default
/// target when the module names none; an unknown name is reported on the
/// module and fails.
mlir::FailureOr<TargetInfo> getTarget(mlir::Operation *op);

/// The linear layout of a tile type with a (verified) layout encoding.
LinearLayout getLinearLayout(mlir::RankedTensorType type);

/// Bytes one element of `type` occupies in memory (booleans take a byte).
int64_t getStoredBytes(mlir::Type type);

/// Swizzled shared tiles start on multiples of this: the period of the
/// widest swizzle (8 rows of 128 bytes), which every narrower one's period
/// (8 rows of its width) divides.
constexpr int64_t kSwizzleAtomBytes = 1024;

/// The swizzles a shared tile can have (#tile.shared's `swizzle`), widest
/// first: the swizzle modes wgmma and TMA read.
constexpr int64_t kSwizzleModes[] = {128, 64, 32};

/// The rows and columns of the buffer that holds a tile of `shape` stored
/// with dimension `order[0]` contiguous (#tile.shared's `order`): the
/// tile's, transposed where a 2-D tile's columns are contiguous.
llvm::SmallVector<int64_t, 2> getStoredShape(llvm::ArrayRef<int64_t> shape,
                                             llvm::ArrayRef<unsigned> order);

/// The swizzle of a shared tile stored as `storedShape` (rows are every
/// dimension but the last) of `element`s: the widest of kSwizzleModes that
/// divides its rows' bytes, 0 (plain row-major) if none does or the tile
/// has one dimension. The tile is stored in column panels that wide, each
/// row's 16-byte chunks XOR-swizzled as wgmma and TMA read that swizzle
/// mode (getSharedElementAddress).
int64_t getSwizzleBytes(llvm::ArrayRef<int64_t> storedShape,
                        mlir::Type element);

/// Whether a shared tile of `shape` and `element`s is swizzled
/// (getSwizzleBytes is not 0).
bool isSwizzledShared(llvm::ArrayRef<int64_t> shape, mlir::Type element);
} // namespace tegula::tile

#endif // TEGULA_DIALECT_TILE_TILEDIALECT_H
