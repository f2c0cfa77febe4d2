//===- Chip.h - What a GPU target name means, without LLVM ------*- C++ -*-===//
//
// The one place that knows GPU target facts: what a name like `sm_90a`
// says (SM number, suffix, which GPUs run its code) and what each chip the
// compiler supports offers. It is a header of plain C++ because both sides
// ask it: the runtime (lib/Runtime, built without LLVM for GPU machines)
// checks bundles and devices against it, and the compiler's TargetInfo
// (tegula/Target/TargetInfo.h) answers the lowering from it.
//
//===----------------------------------------------------------------------===//

#ifndef TEGULA_RUNTIME_CHIP_H
#define TEGULA_RUNTIME_CHIP_H

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tegula {

/// A target name taken apart: `sm_90a` is SM 90 with suffix "a".
struct ChipName {
  /// The digits after "sm_", saturating at 2^20 (names come from bundles).
  int64_t number = 0;
  /// What follows the digits: "a" (that exact GPU only), "f" (the family:
  /// the same major version), anything else (that GPU or newer).
  std::string suffix;

  /// Whether PTX for this target runs on compute capability major.minor.
  bool runsOn(int major, int minor) const {
    if (suffix == "a")
      return major == number / 10 && minor == number % 10;
    if (suffix == "f")
      return major == number / 10 && minor >= number % 10;
    // In 64 bits: the capability may come from a caller and be absurd.
    return int64_t(major) * 10 + minor >= number;
  }
  /// Whether a cubin for this target is the image for major.minor: the same
  /// SM number exactly, whatever the suffix.
  bool cubinRunsOn(int major, int minor) const {
    return int64_t(major) * 10 + minor == number;
  }
};

/// `sm_` and at least two digits, then any suffix; none otherwise.
inline std::optional<ChipName> parseChipName(std::string_view name) {
  if (name.size() < 5 || name.substr(0, 3) != "sm_" ||
      !std::isdigit((unsigned char)name[3]) ||
      !std::isdigit((unsigned char)name[4]))
    return std::nullopt;
  ChipName chip;
  size_t end = 3;
  for (; end < name.size() && std::isdigit((unsigned char)name[end]); ++end)
    chip.number =
        std::min<int64_t>(chip.number * 10 + (name[end] - '0'), 1 << 20);
  chip.suffix = std::string(name.substr(end));
  return chip;
}

/// The architecture name of compute capability major.minor: "sm_90" for
/// 9.0 (no suffix: the GPU itself, as tuning tables record it).
inline std::string archName(int ccMajor, int ccMinor) {
  return "sm_" + std::to_string(ccMajor * 10 + ccMinor);
}

/// What a chip the compiler supports offers.
struct ChipFacts {
  std::string_view name;
  int64_t smNumber;
  /// Warpgroup MMA (wgmma.mma_async): sm_90a only, not the family.
  bool hasWgmma;
  /// The tensor memory accelerator (cp.async.bulk.tensor): sm_90 on.
  bool hasTma;
  /// red.add.noftz.bf16, behind atomic_add on bf16: sm_90 on.
  bool hasBf16Atomics;
  /// 32-bit registers one block may use (the register file of an SM).
  int64_t registersPerBlock;
  /// Dynamic shared memory a block may opt into, in bytes.
  int64_t sharedBytesPerBlock;
};

/// Every chip the compiler supports, the default first.
inline constexpr ChipFacts kSupportedChips[] = {
    {"sm_90a", 90, true, true, true, 65536, 232448},
    {"sm_80", 80, false, false, false, 65536, 166912},
};

/// The supported chip named `name`, or null.
inline const ChipFacts *findChip(std::string_view name) {
  for (const ChipFacts &chip : kSupportedChips)
    if (chip.name == name)
      return &chip;
  return nullptr;
}

} // namespace tegula

#endif // TEGULA_RUNTIME_CHIP_H
