//===- Families.h - Where instruction families plug in ----------*- C++ -*-===//
//
// The lowering asks these questions of the target; TargetInfo's copyFamily
// picks the family that answers (CpAsync.h), and each dot's plan
// (#tile.dot_plan, tile-plan-dots) its dot family (MmaSync.h, Wgmma.h). A
// new family (TMA) adds a case here and its own files, nothing else.
//
//===----------------------------------------------------------------------===//

#ifndef TEGULA_LIB_CONVERSION_TILETONVVM_FAMILIES_H
#define TEGULA_LIB_CONVERSION_TILETONVVM_FAMILIES_H

#include "Common.h"

namespace tegula::tile {

//===----------------------------------------------------------------------===//
// Dot
//===----------------------------------------------------------------------===//

/// The patterns that lower tile.dot on `target` (and what its families
/// add: the writes of tiles that wgmma reads in place).
void populateDotPatterns(const TargetInfo &target,
                         const mlir::TypeConverter &converter,
                         mlir::RewritePatternSet &patterns,
                         LoweringState &state);

/// Reads the registers of `to` from a row-major tile of `shape` at
/// `byteOffset` in shared memory with the family's fragment loads, when `to`
/// is a layout they fill; none otherwise (the caller loads element-wise).
std::optional<llvm::SmallVector<mlir::Value>>
readDotFragments(const TargetInfo &target, mlir::OpBuilder &builder,
                 mlir::Location loc, mlir::Operation *anchor,
                 llvm::ArrayRef<int64_t> shape, const LinearLayout &to,
                 mlir::Type elementType, mlir::Value byteOffset);

/// Writes `values`, the registers of `from`, into a row-major tile of
/// `shape` at `byteOffset` in shared memory with the family's fragment
/// stores, when the target has them and `from` is a layout they take;
/// false, writing nothing, otherwise (the caller stores element-wise).
bool writeDotFragments(const TargetInfo &target, mlir::OpBuilder &builder,
                       mlir::Location loc, mlir::Operation *anchor,
                       llvm::ArrayRef<int64_t> shape, const LinearLayout &from,
                       llvm::ArrayRef<mlir::Value> values,
                       mlir::Type elementType, mlir::Value byteOffset);

//===----------------------------------------------------------------------===//
// Copies into shared memory
//===----------------------------------------------------------------------===//

/// Whether a push moving groups of `groupBytes` of `element` (masked-off
/// elements reading `other`, null for zero) copies asynchronously.
bool canCopyAsync(const TargetInfo &target, int64_t groupBytes,
                  mlir::Type element, mlir::Value other);
/// One asynchronous group copy (only after canCopyAsync said yes); the
/// shared address is built when the family needs it.
void emitAsyncCopy(const TargetInfo &target, mlir::OpBuilder &builder,
                   mlir::Location loc,
                   llvm::function_ref<mlir::Value()> destination,
                   mlir::Value source, int64_t bytes, mlir::Value predicate);
/// Closes the copies of one push as one group. Every push closes one, even
/// one that went through registers (an empty group), so that the waits'
/// counts of groups in flight (PipelineSync.h) hold.
void emitAsyncCopyCommit(const TargetInfo &target, mlir::OpBuilder &builder,
                         mlir::Location loc);
/// Waits until at most `pending` pushes of this thread are in flight; no-op
/// where copies are synchronous.
void emitAsyncCopyWait(const TargetInfo &target, mlir::OpBuilder &builder,
                       mlir::Location loc, int64_t pending);

} // namespace tegula::tile

#endif // TEGULA_LIB_CONVERSION_TILETONVVM_FAMILIES_H
