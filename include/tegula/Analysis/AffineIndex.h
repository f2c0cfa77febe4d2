//===- AffineIndex.h - Index tiles as uniform plus coordinates --*- C++ -*-===//
//
// Most index tiles of a global access are a value the whole block shares
// (a loop's offset, a program id times a block size) plus a fixed
// combination of the block's coordinates (`n0 + arange(BN)` broadcast
// along a dimension). Split that way, an access's address is a per-thread
// part that stays the same across a loop, a uniform part computed once,
// and a constant for each register (an immediate offset in the load):
// the lowering no longer recomputes 64-bit addresses per element.
//
//===----------------------------------------------------------------------===//

#ifndef TEGULA_ANALYSIS_AFFINEINDEX_H
#define TEGULA_ANALYSIS_AFFINEINDEX_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <optional>

namespace tegula::tile {

/// An i32 index tile T of shape S split as
///   T[c] = wrap32(uniform + sum_j coefficients[j] * c[j])
/// where `uniform` = constant + sum of factor * scalar over `scalars`
/// (i32 scalars of the tile IR, each the same in every thread), every
/// coefficient is >= 0 and sum_j coefficients[j] * (S[j] - 1) < 2^31: the
/// coordinate part is a non-negative i32 that never wraps.
struct AffineIndex {
  int64_t constant = 0;
  llvm::SmallVector<std::pair<mlir::Value, int64_t>> scalars;
  llvm::SmallVector<int64_t> coefficients;

  /// The largest value of the coordinate part over the tile.
  int64_t maxCoordinatePart(llvm::ArrayRef<int64_t> shape) const;
  /// The coordinate part at block coordinates `coords` (a register's offset
  /// in its layout: the constant it adds to its thread's value).
  int64_t coordinatePart(llvm::ArrayRef<int64_t> coords) const;
  /// The uniform part as i32 IR at the builder's point, each scalar taken
  /// as `valueOf(scalar)` (the scalar itself by default; a loop's value at
  /// another iteration for loop versioning). Wraps as the tile does.
  mlir::Value emitUniformPart(
      mlir::OpBuilder &builder, mlir::Location loc,
      llvm::function_ref<mlir::Value(mlir::Value)> valueOf = nullptr) const;
};

/// The split of the i32 index tile `tile`, looked through splats, aranges,
/// expand_dims, broadcasts, layout conversions, adds, subtractions of
/// uniform values and multiplications by constants; none when a part of
/// it is not of that form or its coordinate part could wrap.
std::optional<AffineIndex> getAffineIndex(mlir::Value tile);

} // namespace tegula::tile

#endif // TEGULA_ANALYSIS_AFFINEINDEX_H
