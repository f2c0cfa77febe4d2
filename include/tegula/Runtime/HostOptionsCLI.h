//===- HostOptionsCLI.h - The runners' shared flags on a CLI11 app -*- C++
//-*-===//
//
// The flags every runner takes (tile-run, tile-interp, tilec --run), declared
// once. Header-only so that only a tool that includes it needs exceptions
// (CLI11 reports malformed command lines by throwing); no MLIR, so tile-run
// builds without it.
//
//===----------------------------------------------------------------------===//

#ifndef TEGULA_RUNTIME_HOSTOPTIONSCLI_H
#define TEGULA_RUNTIME_HOSTOPTIONSCLI_H

#include "tegula/Runtime/HostSession.h"

#include <CLI/CLI.hpp>

#include <cmath>
#include <cstdlib>

namespace tegula::rt {

/// Adds the runners' shared flags to `app`; `group` names the help section
/// ("" for none).
inline void addHostOptions(CLI::App &app, HostOptions &opts,
                           const std::string &group = "") {
  auto add = [&](CLI::Option *o) {
    if (!group.empty())
      o->group(group);
    return o;
  };
  add(app.add_option("--dims", opts.dims, "size variables, N=4096,Z=2,H=8")
          ->allow_extra_args(false));
  add(app.add_option("--scalar", opts.scalars, "scalar parameter, NAME=VALUE")
          ->allow_extra_args(false));
  add(app.add_option("--in", opts.ins, "input tensor from .npy, NAME=FILE")
          ->allow_extra_args(false));
  add(app.add_option("--stride", opts.strides,
                     "strides of a strided tensor in elements, NAME=S0,S1")
          ->allow_extra_args(false));
  add(app.add_option("--out", opts.outs, "save a tensor as .npy, NAME=FILE")
          ->allow_extra_args(false));
  add(app.add_option("--ref", opts.refs, "reference output .npy, NAME=FILE")
          ->allow_extra_args(false));
  add(app.add_flag("--check", opts.check, "compare outputs with a reference"));
  add(app.add_option("--seed", opts.seed, "seed of the random inputs"));
  add(app.add_option("--json", opts.jsonPath, "write results as JSON"));
  // NaN passes a range check (every comparison is false): refuse it apart.
  add(app.add_option("--tol", opts.tolerance,
                     "relative L2 tolerance of --check (default per dtype)")
          ->check(CLI::Range(0.0, 1e300))
          ->check(CLI::Validator(
              [](std::string &text) {
                double value = std::strtod(text.c_str(), nullptr);
                return std::isnan(value) ? std::string("not a number")
                                         : std::string();
              },
              "", "not NaN")));
  add(app.add_flag("--dry-run", opts.dryRun,
                   "run every launch-time check, then stop"));
}

} // namespace tegula::rt

#endif // TEGULA_RUNTIME_HOSTOPTIONSCLI_H
