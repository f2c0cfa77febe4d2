//===- MmaSync.h - The mma.sync instruction family --------------*- C++ -*-===//
//
// tile.dot as warp-level mma.sync m16n8k16 over fragments in dot-operand
// layouts, and the ldmatrix reads that fill those fragments from shared
// memory (stmatrix writes them, on sm_90). Reached only through Families.h.
//
//===----------------------------------------------------------------------===//

#ifndef TEGULA_LIB_CONVERSION_TILETONVVM_MMASYNC_H
#define TEGULA_LIB_CONVERSION_TILETONVVM_MMASYNC_H

#include "Common.h"

namespace tegula::tile {

void populateMmaSyncDotPatterns(const mlir::TypeConverter &converter,
                                mlir::RewritePatternSet &patterns);

/// Reads the registers of `to` (a layout in the coordinates of a row-major
/// tile of `shape` at `byteOffset` in shared memory) with ldmatrix, when
/// `to` has the mma fragment structure (16-bit pairs, lanes 4g + t) and the
/// rows are 16-byte aligned; none otherwise. Transposing loads serve
/// fragments whose pairs run down the shared tile's columns.
std::optional<llvm::SmallVector<mlir::Value>> readMmaFragmentsWithLdmatrix(
    mlir::OpBuilder &builder, mlir::Location loc, mlir::Operation *anchor,
    llvm::ArrayRef<int64_t> shape, const LinearLayout &to,
    mlir::Type elementType, mlir::Value byteOffset);

/// The mirror of readMmaFragmentsWithLdmatrix: writes `values`, the
/// registers of `from`, with stmatrix (sm_90), when `from` has that
/// structure and no warp holds a copy of another's registers; false,
/// writing nothing, otherwise.
bool writeMmaFragmentsWithStmatrix(mlir::OpBuilder &builder, mlir::Location loc,
                                   mlir::Operation *anchor,
                                   llvm::ArrayRef<int64_t> shape,
                                   const LinearLayout &from,
                                   llvm::ArrayRef<mlir::Value> values,
                                   mlir::Type elementType,
                                   mlir::Value byteOffset);

} // namespace tegula::tile

#endif // TEGULA_LIB_CONVERSION_TILETONVVM_MMASYNC_H
