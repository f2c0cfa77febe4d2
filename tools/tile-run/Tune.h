//===- Tune.h - tile-run --tune ---------------------------------*- C++ -*-===//
//
// Times every config of a bundle at each --dims on the GPU, after checking
// each against the float64 reference (or, with --against-first, against the
// first config's outputs), and records the winners in KERNEL.tuning.json
// (docs/tuning.md).
//
//===----------------------------------------------------------------------===//

#ifndef TEGULA_TOOLS_TILE_RUN_TUNE_H
#define TEGULA_TOOLS_TILE_RUN_TUNE_H

#include "tegula/Runtime/HostSession.h"

#include <string>
#include <vector>

namespace tegula::rt {

struct TuneOptions : HostOptions {
  /// A bundle directory or one KERNEL.json.
  std::string path;
  int warmup = 10, iters = 100;
  /// Check each config against the first config's outputs at the same
  /// --dims instead of the float64 reference (too slow at large sizes).
  bool againstFirst = false;
};

/// The median of event timings (the mean of the middle two for an even
/// count); `ms` is not empty.
double medianOf(std::vector<float> ms);

/// tile-run --tune: returns the exit status.
int runTune(const TuneOptions &options);

} // namespace tegula::rt

#endif // TEGULA_TOOLS_TILE_RUN_TUNE_H
