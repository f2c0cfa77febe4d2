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

#include <cstdint>
#include <string>
#include <vector>

namespace tegula::interp {

struct RunOptions {
  /// "N=4096,Z=2" (may repeat).
  std::vector<std::string> dims;
  /// NAME=VALUE, NAME=FILE.npy.
  std::vector<std::string> scalars, ins, outs, refs;
  bool check = false;
  bool dryRun = false;
  uint64_t seed = 0;
  std::string jsonPath;
  /// Relative-L2 tolerance of --check; negative means the dtype default.
  double tolerance = -1;
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
