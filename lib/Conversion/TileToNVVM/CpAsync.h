//===- CpAsync.h - The cp.async copy family ---------------------*- C++ -*-===//
//
// Asynchronous copies of 4-, 8- or 16-byte groups from global into shared
// memory (sm_80+), committed in groups and waited for by count. Reached only
// through Families.h.
//
//===----------------------------------------------------------------------===//

#ifndef TEGULA_LIB_CONVERSION_TILETONVVM_CPASYNC_H
#define TEGULA_LIB_CONVERSION_TILETONVVM_CPASYNC_H

#include "Common.h"

namespace tegula::tile {

/// Whether groups of `groupBytes` of `element`, masked-off ones reading
/// `other` (null: zero), can be copied by cp.async.
bool canCopyWithCpAsync(int64_t groupBytes, mlir::Type element,
                        mlir::Value other);
/// One group: `bytes` from `source` (global) to the shared address
/// `destination` builds when `predicate` holds, zero-filled otherwise.
void emitCpAsync(mlir::OpBuilder &builder, mlir::Location loc,
                 llvm::function_ref<mlir::Value()> destination,
                 mlir::Value source, int64_t bytes, mlir::Value predicate);
void emitCpAsyncCommit(mlir::OpBuilder &builder, mlir::Location loc);
/// Waits until at most `pending` committed groups of this thread are in
/// flight.
void emitCpAsyncWait(mlir::OpBuilder &builder, mlir::Location loc,
                     int64_t pending);

} // namespace tegula::tile

#endif // TEGULA_LIB_CONVERSION_TILETONVVM_CPASYNC_H
