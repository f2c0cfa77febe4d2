//===- TileInterfaces.h - What passes ask of tile ops -----------*- C++ -*-===//
//
// The op interfaces of TileInterfaces.td and what their methods take: the
// layout pass's answers to a layout rule (LayoutQuery).
//
//===----------------------------------------------------------------------===//

#ifndef TEGULA_DIALECT_TILE_TILEINTERFACES_H
#define TEGULA_DIALECT_TILE_TILEINTERFACES_H

#include "Tile/TileDialect.h"

#include "mlir/IR/OpDefinition.h"

namespace tegula::tile {

/// What a layout rule (LayoutRuleOpInterface) may ask the layout pass.
class LayoutQuery {
public:
  virtual ~LayoutQuery() = default;
  /// The layout the pass has given `value` (a tile), deciding it now (its
  /// type's encoding, else the default) if it has none yet.
  virtual mlir::Attribute layoutOf(mlir::Value value) = 0;
  /// The pass's blocked layout for `type`, as memory accesses use.
  virtual mlir::Attribute defaultLayout(mlir::RankedTensorType type) = 0;
};

/// The default operand rule: every tile operand of `op` takes the layout of
/// its one tile result; null (any layout) when it has none.
mlir::Attribute followResultLayout(mlir::Operation *op, LayoutQuery &query);

} // namespace tegula::tile

#include "Tile/TileInterfaces.h.inc"

#endif // TEGULA_DIALECT_TILE_TILEINTERFACES_H
