//===- TargetInfo.cpp - Supported GPU targets -----------------------------===//

#include "tegula/Target/TargetInfo.h"

using namespace tegula;

namespace {
// Every supported target, once, in the order of kSupportedChips (Chip.h),
// whose facts they take. Shared memory is the opt-in dynamic shared memory
// per block (language.md). PTX 7.5 (CUDA 11.5) is the oldest with
// cp.async's ignore-src operand, which carries a copy's mask.
const TargetInfo kTargets[] = {
    {"sm_90a", "+ptx80", findChip("sm_90a")->sharedBytesPerBlock,
     findChip("sm_90a")->hasWgmma, CopyFamily::CpAsync, 4352, 16, 8},
    {"sm_80", "+ptx75", findChip("sm_80")->sharedBytesPerBlock,
     findChip("sm_80")->hasWgmma, CopyFamily::CpAsync, 4352, 16, 8},
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

TargetInfo::DotWarpSplit TargetInfo::dotWarpSplit(int64_t m, int64_t n,
                                                  unsigned warps,
                                                  DotUse use) const {
  if (hasWarpgroupDots && m % dotWarpRows == 0 && m / dotWarpRows <= warps &&
      warps % (m / dotWarpRows) == 0) {
    unsigned alongM = m / dotWarpRows;
    DotWarpSplit split = {alongM, warps / alongM, true};
    if (isWarpgroupSplit(m, n, split))
      return split;
  }
  unsigned alongM = 1;
  while (alongM < warps && m / (2 * alongM) >= dotWarpRows)
    alongM *= 2;
  unsigned alongN = warps / alongM;
  // Along M as far as possible leaves the fewest warps along N, so if this
  // split does not fit, none does.
  bool fits = m / alongM >= dotWarpRows && n / alongN >= dotWarpCols;
  if (use == DotUse::RowsInWarp || !fits)
    return {alongM, alongN, fits};
  DotWarpSplit best = {alongM, alongN, fits};
  for (unsigned wm = alongM; wm >= 1; wm /= 2) {
    unsigned wn = warps / wm;
    if (m / wm < dotWarpRows || n / wn < dotWarpCols)
      continue;
    if (m / wm + n / wn < m / best.alongM + n / best.alongN)
      best = {wm, wn, true};
  }
  return best;
}

bool TargetInfo::isWarpgroupSplit(int64_t m, int64_t n,
                                  DotWarpSplit split) const {
  if (!hasWarpgroupDots)
    return false;
  int64_t columns = n / split.alongN;
  return m == dotWarpRows * split.alongM &&
         split.alongM % kWarpsPerWarpgroup == 0 && n % split.alongN == 0 &&
         columns % 8 == 0 && columns <= 256;
}
