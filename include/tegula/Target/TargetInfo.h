//===- TargetInfo.h - What differs between GPU targets ----------*- C++ -*-===//
//
// Every target difference the lowering and the driver consult lives here,
// so that sm_90a can grow wgmma and TMA paths behind the same questions.
//
//===----------------------------------------------------------------------===//

#ifndef TEGULA_TARGET_TARGETINFO_H
#define TEGULA_TARGET_TARGETINFO_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tegula {

struct TargetInfo {
  /// The chip name for PTX (`sm_80`, `sm_90a`).
  llvm::StringRef chip;
  /// PTX ISA feature string for the NVPTX back end.
  llvm::StringRef ptxFeatures;
  /// Dynamic shared memory a block may opt into, in bytes.
  int64_t maxSharedBytes;
  /// Whether cp.async (sm_80+) is available for pipelined loads.
  bool hasAsyncCopy;
  /// Whether warpgroup MMA (wgmma) is available; the mma.sync path is used
  /// on every target until the wgmma lowering lands.
  bool hasWarpgroupMma;
  /// Bytes of kernel parameters the PTX ISA version emitted allows (4352
  /// before PTX 8.1).
  int64_t maxParamBytes;

  /// The target named `name`, or none if it is not supported.
  static std::optional<TargetInfo> lookup(llvm::StringRef name);
  /// The names of every supported target, for option lists and messages.
  static std::vector<std::string> names();
  /// What tilec compiles for unless told otherwise.
  static TargetInfo defaultTarget();
};

} // namespace tegula

#endif // TEGULA_TARGET_TARGETINFO_H
