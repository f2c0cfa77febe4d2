//===- RunOptions.h - tile-run's options for the interpreter ----*- C++ -*-===//
//
// The options `tile-interp` (and `tilec --run`) share with `tile-run`:
// --dims, --scalar, --in, --out, --ref, --check, --tol, --seed, --json and
// --dry-run, plus --reference to name a float64 reference for --check.
// This header needs no MLIR, so a tool's main() can include it next to
// CLI11; CLIOptions.h adds the flags to a CLI::App.
//
//===----------------------------------------------------------------------===//

#ifndef TEGULA_INTERPRETER_RUNOPTIONS_H
#define TEGULA_INTERPRETER_RUNOPTIONS_H

#include "tegula/Runtime/HostSession.h"

#include <string>

namespace tegula::interp {

/// tile-run's options (rt::HostOptions), plus --reference.
struct RunOptions : rt::HostOptions {
  /// The float64 reference for --check: a name ("rotary") or a JSON object
  /// as the bundle's "reference" field takes it. Empty: none.
  std::string reference;
};

/// Parses FILE.mlir, picks `kernel` (or the only `tile.kernel` function),
/// runs it with `options` and prints what tile-run prints. Returns the exit
/// status: 0 when everything passed, 1 after any error.
int runMlirFile(const std::string &path, const std::string &kernel,
                const RunOptions &options);

} // namespace tegula::interp

#endif // TEGULA_INTERPRETER_RUNOPTIONS_H
