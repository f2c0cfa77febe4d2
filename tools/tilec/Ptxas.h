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
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tegula::tilec {

/// What `ptxas -v` reports of one function of a cubin (docs/tuning.md).
struct PtxasStats {
  std::string function;
  /// Entry functions only: ptxas gives a called function no count.
  std::optional<int64_t> registers;
  int64_t spillStores = 0, spillLoads = 0;
  /// Why ptxas serializes the function's wgmma instructions (each waits
  /// for the one before), after ptxas's code ("C7515: ..."), or none.
  std::optional<std::string> wgmmaSerialized;

  bool spills() const { return spillStores > 0 || spillLoads > 0; }
};

/// Every function `log` (the output of `ptxas -v`) describes, in its
/// order: "Compiling entry function 'F'", "Function properties for F"
/// with its spill stores and loads, "Used N registers" of the entry, and
/// "(C7515) ... wgmma.mma_async instructions are serialized due to WHY in
/// the function 'F'".
std::vector<PtxasStats> parsePtxasLog(llvm::StringRef log);

/// Assembles `ptxPath` into `cubinPath` for `chip` with ptxas (its path is
/// `ptxas`), with `-v`, and returns what it reports of each function. When
/// ptxas fails, removes `cubinPath` and returns why; the caller says what
/// ships instead (a bundle without a cubin, or the build before a retry).
llvm::Expected<std::vector<PtxasStats>>
assembleCubin(llvm::StringRef ptxas, llvm::StringRef chip,
              llvm::StringRef ptxPath, llvm::StringRef cubinPath);

/// `ptx` with `.minnctapersm blocks` after the `.maxntid` directive of its
/// entry, or none when it has no `.maxntid` or already says how many blocks
/// (a kernel's `blocks_per_sm`). ptxas then keeps registers for `blocks`
/// resident blocks instead of the count it would pick.
std::optional<std::string> withMinBlocksPerSm(llvm::StringRef ptx,
                                              int64_t blocks);

} // namespace tegula::tilec

#endif // TEGULA_TOOLS_TILEC_PTXAS_H
