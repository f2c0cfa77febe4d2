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

/// The width of a shared tile's swizzled panels (see
/// getSharedElementAddress), which wgmma and TMA read as their 128-byte
/// swizzle. A panel's swizzle pattern repeats every 8 rows, so swizzled
/// tiles start on kSwizzleAtomBytes boundaries.
constexpr int64_t kSwizzleBytes = 128;
constexpr int64_t kSwizzleAtomBytes = 8 * kSwizzleBytes;

/// Whether a shared tile of `shape` and `element`s is stored in swizzled
/// 128-byte panels: rank 2 or more, rows a multiple of 128 bytes.
bool isSwizzledShared(llvm::ArrayRef<int64_t> shape, mlir::Type element);
} // namespace tegula::tile

#endif // TEGULA_DIALECT_TILE_TILEDIALECT_H
