//===- Ptxas.h - Assembling PTX into a cubin with ptxas ---------*- C++ -*-===//
//
// tilec runs NVIDIA's ptxas, when it is on PATH, so that a bundle carries a
// cubin for its target and a launch on that GPU needs no PTX JIT
// (docs/runtime.md, "cubin"). It lives in the driver, not lib/Target: it
// runs an external program and reports as tilec, while lib/Target is the
// in-process lowering every tool shares.
//
//===----------------------------------------------------------------------===//

#ifndef TEGULA_TOOLS_TILEC_PTXAS_H
#define TEGULA_TOOLS_TILEC_PTXAS_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>

namespace tegula::tilec {

/// What `ptxas -v` reports of a kernel (docs/tuning.md).
struct PtxasStats {
  std::optional<int64_t> registers, spillBytes;
};

/// The first integer before `word` on a line of `log` holding `key`.
std::optional<int64_t> numberBefore(llvm::StringRef log, llvm::StringRef key,
                                    llvm::StringRef word);

/// Assembles `ptxPath` into `cubinPath` for `chip` with ptxas (its path is
/// `ptxas`). Without ptxas, or when it fails, warns and returns false: the
/// bundle then ships PTX only, which every launcher can JIT. With `stats`,
/// runs `ptxas -v` and reads registers and spills from its log.
bool assembleCubin(llvm::StringRef ptxas, llvm::StringRef chip,
                   llvm::StringRef ptxPath, llvm::StringRef cubinPath,
                   PtxasStats *stats = nullptr);

} // namespace tegula::tilec

#endif // TEGULA_TOOLS_TILEC_PTXAS_H
