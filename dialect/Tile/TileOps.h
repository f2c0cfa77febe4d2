//===- TileOps.h - Operations of the tile dialect ---------------*- C++ -*-===//

#ifndef TEGULA_DIALECT_TILE_TILEOPS_H
#define TEGULA_DIALECT_TILE_TILEOPS_H

#include "Tile/TileDialect.h"
#include "Tile/TileInterfaces.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace tegula::tile {

/// Largest number of elements one tile may hold.
constexpr int64_t kMaxTileElements = int64_t(1) << 20;

/// Checks that `type`, if it is a tile (ranked tensor), has power-of-two
/// extents and at most kMaxTileElements elements. Reports on `op`.
mlir::LogicalResult verifyTileShape(mlir::Operation *op, mlir::Type type);

/// The i1 tile of `type`'s shape: the type of a mask over `type`.
inline mlir::Type getI1SameShape(mlir::Type type) {
  auto tile = llvm::cast<mlir::RankedTensorType>(type);
  return mlir::RankedTensorType::get(
      tile.getShape(), mlir::IntegerType::get(type.getContext(), 1),
      tile.getEncoding());
}

/// Checks every operand and result of `op` with verifyTileShape.
mlir::LogicalResult verifyTileShapes(mlir::Operation *op);

template <typename ConcreteType>
class TileShapes : public mlir::OpTrait::TraitBase<ConcreteType, TileShapes> {
public:
  static mlir::LogicalResult verifyTrait(mlir::Operation *op) {
    return verifyTileShapes(op);
  }
};

} // namespace tegula::tile

#define GET_OP_CLASSES
#include "Tile/TileOps.h.inc"

namespace tegula::tile {
/// Whether two global tensor values may address the same memory. Tensors
/// made (tile.make_tensor) from different kernel parameters do not: the
/// bundle ABI gives each tensor parameter its own buffer.
bool mayAlias(mlir::Value tensorA, mlir::Value tensorB);

/// The pop that `tile` is, directly or through one tile.trans (which stays
/// when the pop has other readers: FoldTransposeIntoPop folds only a sole
/// one), or null; `transposed` says whether `tile` is the stage transposed.
PipelinePopOp getStagePop(mlir::Value tile, bool &transposed);

/// The type a reduction over `elementType` combines and moves between
/// lanes and warps in (f16 and bf16 widen to f32), or null if unsupported.
mlir::Type getReduceWorkType(mlir::Type elementType);

/// Whether `value` is a tile in shared memory (#tile.shared: a stage, or a
/// buffer tile.to_shared staged), which wgmma reads in place.
bool isInSharedMemory(mlir::Value value);
} // namespace tegula::tile

#endif // TEGULA_DIALECT_TILE_TILEOPS_H
