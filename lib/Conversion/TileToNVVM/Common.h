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
#include "tegula/Target/TargetInfo.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Transforms/DialectConversion.h"

namespace tegula::tile {

/// The linear layout of a tile type with a layout encoding.
LinearLayout getLinearLayout(mlir::RankedTensorType type);

/// Per-kernel facts the patterns share: where each pipeline's ring and the
/// scratch area for conversions and reductions live in shared memory.
struct KernelPlan {
  /// Byte offset of each pipeline's ring, by the op that creates it.
  llvm::DenseMap<mlir::Operation *, int64_t> pipelineOffsets;
  /// Byte offset and size of the scratch area reused by conversions and
  /// cross-warp reductions (each use is fenced by barriers).
  int64_t scratchOffset = 0;
  int64_t scratchBytes = 0;
  /// Total dynamic shared memory the kernel needs.
  int64_t sharedBytes = 0;
  unsigned numWarps = 4;
};

/// The synchronization a pipeline op needs, from the order of pops and
/// pushes in its block (analyzePipelineSync).
enum class PipelineSync {
  Full,        ///< pop: wait for the copies and meet at a barrier;
               ///< push: a barrier before writing its stage
  None,        ///< already synchronized by an earlier op of the block
  IfSameStage, ///< push: a barrier only when the stage it writes is the one
               ///< its ring's last pop read since the last barrier
};

/// What a load, store or push of a global tensor needs before it so that
/// other threads' earlier accesses are ordered (analyzeMemoryOrder).
enum class MemoryBarrier {
  None,
  Barrier,              ///< bar.sync: orders the block's global accesses
  WaitCopiesAndBarrier, ///< a store after a push: its copies land first
};

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

/// For every register of `to`, the register of `from` holding the same
/// element, when the two layouts agree on what lanes and warps hold (after
/// `project` maps `to`'s coordinates into `from`'s); none otherwise, in
/// which case the data must move between threads.
std::optional<llvm::SmallVector<int64_t>> getRegisterMapping(
    const LinearLayout &from, const LinearLayout &to,
    llvm::function_ref<LinearLayout::Coords(const LinearLayout::Coords &)>
        project);

/// Bytes one element of `type` occupies in memory (booleans take a byte).
int64_t getStoredBytes(mlir::Type type);

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

/// How many consecutive registers of an access to `tensor` through
/// `indices` (each of `blockType`) one vector instruction can move: their
/// addresses are consecutive, aligned, and masked together. 1 if unknown.
unsigned getAccessVectorWidth(GlobalTensorType tensor, mlir::ValueRange indices,
                              mlir::Value mask,
                              mlir::RankedTensorType blockType);

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

/// The type a reduction over `elementType` combines and moves between
/// lanes and warps in (f16 and bf16 widen to f32), or null if unsupported.
mlir::Type getReduceWorkType(mlir::Type elementType);

/// Bytes of shared scratch `op` needs while it runs, 0 if none. An op that
/// needs some (a conversion through shared memory, a transpose, a
/// reduction across warps) meets the block at a barrier while it runs.
int64_t getScratchBytes(mlir::Operation *op);

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
/// Finds the pops and pushes whose barriers an earlier op of the same block
/// already provides, on the tile IR before it is rewritten; a located error
/// if a pipeline may name different rings at run time.
mlir::LogicalResult
analyzePipelineSync(mlir::Operation *root,
                    llvm::DenseMap<mlir::Operation *, PipelineSync> &out);

/// Finds the global loads, stores and pushes that may touch elements other
/// threads of the program accessed earlier (one of the two a store), on the
/// tile IR before it is rewritten.
/// Fills state.memoryBarriers; reads state.pipelineSync (pops that meet at
/// a barrier order global accesses too).
void analyzeMemoryOrder(mlir::Operation *root, LoweringState &state);
/// Emits what `op` needs before it by the memory-order analysis, if any.
void emitMemoryBarrier(mlir::OpBuilder &builder, mlir::Operation *op,
                       const LoweringState &state);

void populatePipelineOpToNVVMPatterns(const mlir::TypeConverter &converter,
                                      mlir::RewritePatternSet &patterns,
                                      LoweringState &state);

} // namespace tegula::tile

#endif // TEGULA_LIB_CONVERSION_TILETONVVM_COMMON_H
