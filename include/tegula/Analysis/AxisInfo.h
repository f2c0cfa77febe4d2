//===- AxisInfo.h - Steps and divisibility of index tiles -------*- C++ -*-===//
//
// What the lowering knows about an integer tile's values without running
// it: per dimension the constant step between neighbouring elements, and a
// power of two dividing its first elements. Vector loads and stores are
// sized from these facts (getAccessVectorWidth).
//
//===----------------------------------------------------------------------===//

#ifndef TEGULA_ANALYSIS_AXISINFO_H
#define TEGULA_ANALYSIS_AXISINFO_H

#include "Tile/TileDialect.h"

#include "mlir/IR/Value.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>

namespace tegula::tile {

struct AxisFacts {
  /// A step not known to be constant.
  static constexpr int64_t kUnknownStep = INT64_MIN;
  /// Per dimension: the constant difference between neighbours along it (0:
  /// constant along it, 1: contiguous), or kUnknownStep.
  llvm::SmallVector<int64_t> steps;
  /// A power of two dividing every element whose coordinates along the
  /// stepped dimensions are 0 (capped at 2^30).
  int64_t divisor = 1;
};

/// The facts of an integer tile (looked through conversions, broadcasts,
/// expand_dims, adds and multiplications by constants).
AxisFacts getAxisFacts(mlir::Value tile);

/// How many consecutive elements along `dim`, in aligned groups starting at
/// coordinate 0, the boolean tile `mask` is constant over (capped at 2^30).
int64_t getMaskConstancy(mlir::Value mask, unsigned dim);

/// How many consecutive registers of an access to the global tensor
/// `tensor` through `indices` (each of `blockType`) one vector instruction
/// can move: their addresses are consecutive, aligned, and masked together.
/// 1 if unknown.
unsigned getAccessVectorWidth(mlir::Value tensor, mlir::ValueRange indices,
                              mlir::Value mask,
                              mlir::RankedTensorType blockType);

/// The same for an access op (GlobalAccessOpInterface) whose lowering
/// moves vectors; 0 for any other op (atomics move one element at a time).
unsigned getAccessVectorWidth(mlir::Operation *op);

} // namespace tegula::tile

#endif // TEGULA_ANALYSIS_AXISINFO_H
