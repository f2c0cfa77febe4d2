//===- TargetInfo.cpp - Supported GPU targets -----------------------------===//

#include "tegula/Target/TargetInfo.h"

using namespace tegula;

std::optional<TargetInfo> TargetInfo::lookup(llvm::StringRef name) {
  // Limits are the opt-in dynamic shared memory per block (language.md).
  if (name == "sm_80")
    return TargetInfo{"sm_80", "+ptx70", 166912, true, false, 4352};
  if (name == "sm_90a")
    return TargetInfo{"sm_90a", "+ptx80", 232448, true, true, 4352};
  return std::nullopt;
}
