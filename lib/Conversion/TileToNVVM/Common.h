//===- Common.h - Shared pieces of the tile-to-NVVM lowering ----*- C++ -*-===//
//
// After layout assignment every tile has a linear layout; in the lowering a
// tile becomes one vector per thread holding its registers in register
// order. These helpers give each thread its lane and warp, the coordinates
// of its registers, and the shared-memory regions planned for the kernel.
//
//===----------------------------------------------------------------------===//

#ifndef TEGULA_LIB_CONVERSION_TILETONVVM_COMMON_H
#define TEGULA_LIB_CONVERSION_TILETONVVM_COMMON_H

#include "Tile/TileOps.h"
#include "tegula/Analysis/MemoryOrder.h"
#include "tegula/Analysis/PipelineSync.h"
#include "tegula/Analysis/SharedMemoryPlan.h"
#include "tegula/Target/TargetInfo.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Transforms/DialectConversion.h"

namespace tegula::tile {

class LoweringState {
public:
  LoweringState(const TargetInfo &target) : target(target) {}

  const TargetInfo &target;
  llvm::DenseMap<mlir::Operation *, KernelPlan> plans;
  /// Registers per vector instruction of each load, store and push,
  /// computed on the tile IR before it is rewritten.
  llvm::DenseMap<mlir::Operation *, unsigned> vectorWidths;
  /// Synchronization of each pipeline pop and push (absent: Full).
  llvm::DenseMap<mlir::Operation *, PipelineSync> pipelineSync;
  /// Barriers before global accesses of programs working in place (absent:
  /// none).
  llvm::DenseMap<mlir::Operation *, MemoryBarrier> memoryBarriers;

  /// The plan of the kernel enclosing `op`.
  KernelPlan &planFor(mlir::Operation *op);
};

/// A conversion pattern that reads the kernel plans and vector widths the
/// pass computed before rewriting.
template <typename SourceOp>
struct StatefulPattern : public mlir::OpConversionPattern<SourceOp> {
  StatefulPattern(const mlir::TypeConverter &converter,
                  mlir::MLIRContext *context, LoweringState &state)
      : mlir::OpConversionPattern<SourceOp>(converter, context), state(state) {}

  LoweringState &state;
};

/// Thread position, created once at the entry of the enclosing function.
struct ThreadPosition {
  mlir::Value lane; // i32, 0..31
  mlir::Value warp; // i32
};
ThreadPosition getThreadPosition(mlir::OpBuilder &builder, mlir::Operation *op);

/// i32 and i64 constants.
mlir::Value i32Const(mlir::OpBuilder &builder, mlir::Location loc,
                     int64_t value);
mlir::Value i64Const(mlir::OpBuilder &builder, mlir::Location loc,
                     int64_t value);

/// The coordinates of every register of this thread: coords[reg][dim], as
/// i32 values (base from lane and warp XOR the register's constant offset).
llvm::SmallVector<llvm::SmallVector<mlir::Value>>
emitRegisterCoords(mlir::OpBuilder &builder, mlir::Location loc,
                   const LinearLayout &layout, ThreadPosition position);

/// The base of dynamic shared memory, as an address-space-3 pointer.
mlir::Value getSharedBase(mlir::OpBuilder &builder, mlir::Operation *op);

/// Extracts every element of a vector (or the value itself for scalars).
llvm::SmallVector<mlir::Value>
unpackVector(mlir::OpBuilder &builder, mlir::Location loc, mlir::Value vector);
/// Builds a vector of `type` from its elements (or returns the scalar).
mlir::Value packVector(mlir::OpBuilder &builder, mlir::Location loc,
                       mlir::Type type, mlir::ValueRange elements);

/// Writes this thread's registers of a tile into shared memory at
/// `byteOffset`, row-major by tile coordinates, and reads them back in
/// another layout; the two barriers make it safe to reuse the scratch area.
mlir::Value convertThroughShared(mlir::OpBuilder &builder, mlir::Location loc,
                                 mlir::Operation *anchor, mlir::Value source,
                                 const LinearLayout &from,
                                 const LinearLayout &to, mlir::Type elementType,
                                 mlir::Type resultType, int64_t byteOffset);

/// Addresses and masks of an access to a global tensor, one per group of
/// `width` registers that one vector instruction moves (the first register
/// of each group stands for it).
struct AccessPlan {
  llvm::SmallVector<mlir::Value> addresses;
  llvm::SmallVector<mlir::Value> masks;
  unsigned width = 1;
};
AccessPlan planAccess(mlir::OpBuilder &builder, mlir::Location loc,
                      GlobalTensorType type, mlir::Value tensor,
                      mlir::ValueRange indices, mlir::Value userMask,
                      mlir::Type storedType, unsigned width);

/// Loads this thread's registers of the block `indices` address in a global
/// tensor, with out-of-bounds and `mask`-ed elements replaced by `other`
/// (or zero). `tensor` is the lowered tensor (address and extents).
llvm::SmallVector<mlir::Value>
emitMaskedLoad(mlir::OpBuilder &builder, mlir::Location loc,
               GlobalTensorType type, mlir::Value tensor,
               mlir::ValueRange indices, mlir::Value mask, mlir::Value other,
               unsigned vectorWidth);

/// Address of element `coords` of a row-major tile of `shape` that starts
/// `byteOffset` bytes into shared memory.
mlir::Value getSharedElementAddress(mlir::OpBuilder &builder,
                                    mlir::Location loc, mlir::Value sharedBase,
                                    llvm::ArrayRef<int64_t> shape,
                                    llvm::ArrayRef<mlir::Value> coords,
                                    mlir::Type storedType,
                                    mlir::Value byteOffset);

/// Reads the registers of `to` (a layout in the coordinates of a row-major
/// tile of `shape` at `byteOffset` in shared memory) with ldmatrix, when
/// `to` has the mma fragment structure (16-bit pairs, lanes 4g + t) and the
/// rows are 16-byte aligned; none otherwise. Transposing loads serve
/// fragments whose pairs run down the shared tile's columns.
std::optional<llvm::SmallVector<mlir::Value>>
readWithLdmatrix(mlir::OpBuilder &builder, mlir::Location loc,
                 mlir::Operation *anchor, llvm::ArrayRef<int64_t> shape,
                 const LinearLayout &to, mlir::Type elementType,
                 mlir::Value byteOffset);

/// A thread-block barrier.
void emitBarrier(mlir::OpBuilder &builder, mlir::Location loc);

void populateTileToNVVMTypeConversions(mlir::TypeConverter &converter);
void populateMemoryOpToNVVMPatterns(const mlir::TypeConverter &converter,
                                    mlir::RewritePatternSet &patterns,
                                    LoweringState &state);
void populateLayoutOpToNVVMPatterns(const mlir::TypeConverter &converter,
                                    mlir::RewritePatternSet &patterns,
                                    LoweringState &state);
void populateReduceOpToNVVMPatterns(const mlir::TypeConverter &converter,
                                    mlir::RewritePatternSet &patterns,
                                    LoweringState &state);
void populateDotOpToNVVMPatterns(const mlir::TypeConverter &converter,
                                 mlir::RewritePatternSet &patterns,
                                 LoweringState &state);
void populateElementwiseToNVVMPatterns(const mlir::TypeConverter &converter,
                                       mlir::RewritePatternSet &patterns);
/// Emits what `op` needs before it by the memory-order analysis, if any.
void emitMemoryBarrier(mlir::OpBuilder &builder, mlir::Operation *op,
                       const LoweringState &state);

void populatePipelineOpToNVVMPatterns(const mlir::TypeConverter &converter,
                                      mlir::RewritePatternSet &patterns,
                                      LoweringState &state);

} // namespace tegula::tile

#endif // TEGULA_LIB_CONVERSION_TILETONVVM_COMMON_H
