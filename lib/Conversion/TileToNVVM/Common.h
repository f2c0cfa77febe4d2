//===- Common.h - Shared pieces of the tile-to-NVVM lowering ----*- C++ -*-===//
//
// After layout assignment every tile has a linear layout; in the lowering a
// tile becomes one vector per thread holding its registers in register
// order. These helpers give each thread its lane and warp, the coordinates
// of its registers, and the shared-memory regions planned for the kernel.
// They are the bottom layer: the instruction families (MmaSync.h, Wgmma.h,
// CpAsync.h) build on them, and nothing here calls up into a family; what
// composes families (ThroughShared.h, the patterns) sits above.
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
  /// Copy groups each waiting pop lets stay in flight.
  llvm::DenseMap<mlir::Operation *, int64_t> pendingCopies;
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

/// For a layout whose warps replicate (zero warp bases: a dot result
/// smaller than the warps' blocks), an i1 that holds in the warps whose
/// replicated bits are zero, so that one copy of each element is written;
/// null when no warp replicates.
mlir::Value firstWarpCopy(mlir::OpBuilder &builder, mlir::Location loc,
                          const LinearLayout &layout, mlir::Operation *anchor);

/// Which copies of a layout's elements are the ones that act (atomics,
/// copies into shared memory): every register, lane and warp bit whose
/// basis is spanned by the bases before it (register bits first, then
/// lanes, then warps) must be zero.
struct ElementOwners {
  llvm::SmallVector<bool> regOwns;
  uint32_t redundantLanes = 0, redundantWarps = 0;
  /// Whether some lane or warp of the layout holds a copy of another's
  /// elements (threads past the layout's lanes and warps aside).
  bool threadsReplicate(const LinearLayout &layout) const;
};
ElementOwners findElementOwners(const LinearLayout &layout);

/// An i1 that holds in the threads whose lane and warp own their elements;
/// null when no thread replicates another, unless `always`.
mlir::Value ownsElementsHere(mlir::OpBuilder &builder, mlir::Location loc,
                             const ElementOwners &owners,
                             const LinearLayout &layout,
                             ThreadPosition position, bool always = false);

/// i32 and i64 constants.
mlir::Value i32Const(mlir::OpBuilder &builder, mlir::Location loc,
                     int64_t value);
mlir::Value i64Const(mlir::OpBuilder &builder, mlir::Location loc,
                     int64_t value);

/// The coordinates of every register of this thread: coords[reg][dim], as
/// i32 values (base from lane and warp XOR the register's constant offset).
/// This thread's coordinates of register 0 of `layout`: register r's are
/// these XOR layout.regOffset(r).
llvm::SmallVector<mlir::Value> emitThreadCoords(mlir::OpBuilder &builder,
                                                mlir::Location loc,
                                                const LinearLayout &layout,
                                                ThreadPosition position);
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

/// The packed value of `resultType` whose element i is `compute` of element
/// i of each packed operand, computed in f32: narrower float elements are
/// extended before `compute` and its f32 result truncated after.
mlir::Value mapElementsInF32(
    mlir::OpBuilder &builder, mlir::Location loc, mlir::Type resultType,
    mlir::ValueRange operands,
    llvm::function_ref<mlir::Value(llvm::ArrayRef<mlir::Value>)> compute);

/// Address of element `coords` of a tile of `shape` that starts `byteOffset`
/// bytes into shared memory. Rows are every dimension but the last. A
/// swizzled tile (getSwizzleBytes: S = 128, 64 or 32) is stored as column
/// panels of S bytes (all rows of the first S bytes, then the next), chunk
/// c of row r (16 bytes) at chunk c ^ ((r >> log2(128 / S)) % (S / 16)) of
/// the row: on a start 8 * S-aligned and panels of a multiple of 8 rows,
/// wgmma's and TMA's swizzle of S bytes (address bits 4 and up XORed with
/// bits 7 and up, log2(S / 16) of each), and free of bank conflicts for
/// ldmatrix and column accesses. Other tiles are plain row-major.
mlir::Value getSharedElementAddress(mlir::OpBuilder &builder,
                                    mlir::Location loc, mlir::Value sharedBase,
                                    llvm::ArrayRef<int64_t> shape,
                                    llvm::ArrayRef<mlir::Value> coords,
                                    mlir::Type storedType,
                                    mlir::Value byteOffset);

/// `a` and `b` combined by `kind` (add, max or min; float or signed int).
mlir::Value combine(mlir::OpBuilder &builder, mlir::Location loc,
                    ReduceKind kind, mlir::Value a, mlir::Value b);

/// Butterfly shuffle of a 32- or 64-bit value with the lane `mask` away;
/// shfl moves 32 bits, so a 64-bit value goes as its two halves.
mlir::Value shuffleXor(mlir::OpBuilder &builder, mlir::Location loc,
                       mlir::Value value, int64_t mask);

/// A thread-block barrier.
void emitBarrier(mlir::OpBuilder &builder, mlir::Location loc);

/// Inline PTX with side effects (never moved or dropped): `resultType` null
/// for none; `constraints` in LLVM's syntax.
mlir::Value emitInlinePtx(mlir::OpBuilder &builder, mlir::Location loc,
                          mlir::Type resultType, mlir::ValueRange operands,
                          llvm::StringRef text, llvm::StringRef constraints);

/// Orders this thread's earlier shared-memory writes before later reads by
/// the async proxy (wgmma operands, bulk copies).
void emitAsyncProxyFence(mlir::OpBuilder &builder, mlir::Location loc);

} // namespace tegula::tile

#endif // TEGULA_LIB_CONVERSION_TILETONVVM_COMMON_H
