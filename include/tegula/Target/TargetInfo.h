//===- TargetInfo.h - What differs between GPU targets ----------*- C++ -*-===//
//
// Every target difference the lowering and the driver consult lives here,
// so that sm_90a can grow wgmma and TMA paths behind the same questions.
// Facts of the chip itself (facts()) come from tegula/Runtime/Chip.h, the
// one table the runtime reads too; this adds what only the compiler needs.
//
//===----------------------------------------------------------------------===//

#ifndef TEGULA_TARGET_TARGETINFO_H
#define TEGULA_TARGET_TARGETINFO_H

#include "tegula/Runtime/Chip.h"

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tegula {

/// How pipeline pushes move blocks from global into shared memory.
enum class CopyFamily {
  Registers, ///< loads into registers, then shared-memory stores
  CpAsync,   ///< cp.async (sm_80+), 16-byte groups, commit/wait groups
};

struct TargetInfo {
  /// The chip name for PTX (`sm_80`, `sm_90a`).
  llvm::StringRef chip;
  /// PTX ISA feature string for the NVPTX back end.
  llvm::StringRef ptxFeatures;
  /// Dynamic shared memory a block may opt into, in bytes
  /// (facts().sharedBytesPerBlock).
  int64_t maxSharedBytes;
  /// Whether the target has warpgroup dots (wgmma.mma_async m64nNk16,
  /// sm_90a) beside mma.sync m16n8k16. Which dots use them is
  /// tile-plan-dots' choice, recorded on each dot (#tile.dot_plan).
  bool hasWarpgroupDots;
  /// How pipeline copies move data.
  CopyFamily copyFamily;
  /// Bytes of kernel parameters the PTX ISA version emitted allows (4352
  /// before PTX 8.1).
  int64_t maxParamBytes;
  /// The smallest block of a dot result one warp computes: the rows and
  /// columns of the tensor-core instruction (mma.sync m16n8k16).
  int64_t dotWarpRows, dotWarpCols;

  /// How `warps` warps share an [m, n] dot result.
  struct DotWarpSplit {
    unsigned alongM, alongN;
    /// Each warp gets at least dotWarpRows x dotWarpCols. When not (a
    /// 16 x 16 result over 4 warps), the warps past the result's extent
    /// compute copies of the blocks below them: the mma layout replicates.
    bool fits;
  };
  /// What a dot's result is used for, which decides how warps share it.
  enum class DotUse {
    /// Its rows are reduced (a softmax): every row stays in one warp, so
    /// row statistics need no exchange between warps.
    RowsInWarp,
    /// Only elementwise work and stores: the split that loads the fewest
    /// operand elements per warp (a 2-D split for a plain GEMM).
    Balanced,
  };
  /// The one rule for splitting a dot over warps, asked by the frontend's
  /// check and by layout assignment. Where the target has warpgroup dots
  /// and a warpgroup split exists (isWarpgroupSplit), that one. Otherwise
  /// RowsInWarp: warps along M as far as blocks of dotWarpRows rows allow,
  /// the rest along N; Balanced: among the splits that fit, the one with
  /// the fewest rows plus columns per warp (more warps along M on a tie).
  /// If no split fits, warps along M as far as rows allow and the rest
  /// along N, where some replicate. `fits` is the same for all.
  DotWarpSplit dotWarpSplit(int64_t m, int64_t n, unsigned warps,
                            DotUse use = DotUse::RowsInWarp) const;

  /// Rows of one warpgroup instruction (wgmma m64); warps 4w..4w+3 form
  /// warpgroup w.
  static constexpr int64_t kWarpgroupRows = 64;
  static constexpr unsigned kWarpsPerWarpgroup = 4;
  /// Whether `split` of an [m, n] result suits warpgroup instructions:
  /// 16 rows per warp (four consecutive warps along M cover 64 rows, as a
  /// wgmma accumulator lies), and each warpgroup's columns one
  /// instruction's n (a multiple of 8, at most 256).
  bool isWarpgroupSplit(int64_t m, int64_t n, DotWarpSplit split) const;

  /// What the chip offers: SM number, wgmma, TMA, bf16 atomics, registers
  /// and shared memory per block (Chip.h, which the runtime shares).
  const ChipFacts &facts() const { return *findChip(chip); }

  /// The target named `name`, or none if it is not supported.
  static std::optional<TargetInfo> lookup(llvm::StringRef name);
  /// The names of every supported target, for option lists and messages.
  static std::vector<std::string> names();
  /// What tilec compiles for unless told otherwise.
  static TargetInfo defaultTarget();
};

} // namespace tegula

#endif // TEGULA_TARGET_TARGETINFO_H
