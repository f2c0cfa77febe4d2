//===- TargetInfo.cpp - Supported GPU targets -----------------------------===//

#include "tegula/Target/TargetInfo.h"

using namespace tegula;

namespace {
// Every supported target, once. Shared memory is the opt-in dynamic shared
// memory per block (language.md).
const TargetInfo kTargets[] = {
    {"sm_90a", "+ptx80", 232448, true, true, 4352},
    {"sm_80", "+ptx70", 166912, true, false, 4352},
};
} // namespace

std::optional<TargetInfo> TargetInfo::lookup(llvm::StringRef name) {
  for (const TargetInfo &target : kTargets)
    if (target.chip == name)
      return target;
  return std::nullopt;
}

std::vector<std::string> TargetInfo::names() {
  std::vector<std::string> names;
  for (const TargetInfo &target : kTargets)
    names.push_back(target.chip.str());
  return names;
}

TargetInfo TargetInfo::defaultTarget() { return kTargets[0]; }
