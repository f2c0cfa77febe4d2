//===- CLIOptions.h - tile-run's flags on a CLI11 app -----------*- C++ -*-===//
//
// Header-only so that only the tool that includes it needs exceptions
// (CLI11 reports malformed command lines by throwing).
//
//===----------------------------------------------------------------------===//

#ifndef TEGULA_INTERPRETER_CLIOPTIONS_H
#define TEGULA_INTERPRETER_CLIOPTIONS_H

#include "tegula/Interpreter/RunOptions.h"

#include <CLI/CLI.hpp>

namespace tegula::interp {

/// Adds tile-run's options (same names, same meaning) to `app`, plus
/// --reference; `group` names the help section ("" for none).
inline void addRunOptions(CLI::App &app, RunOptions &opts,
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
  add(app.add_option("--out", opts.outs, "save a tensor as .npy, NAME=FILE")
          ->allow_extra_args(false));
  add(app.add_option("--ref", opts.refs, "reference output .npy, NAME=FILE")
          ->allow_extra_args(false));
  add(app.add_flag("--check", opts.check, "compare outputs with a reference"));
  add(app.add_option("--reference", opts.reference,
                     "float64 reference for --check: attention_fwd, "
                     "linear_attention, rotary, or a JSON object as in a "
                     "bundle's \"reference\" field"));
  add(app.add_option("--seed", opts.seed, "seed of the random inputs"));
  add(app.add_option("--json", opts.jsonPath, "write results as JSON"));
  add(app.add_option("--tol", opts.tolerance,
                     "relative L2 tolerance of --check (default per dtype)")
          ->check(CLI::Range(0.0, 1e300)));
  add(app.add_flag("--dry-run", opts.dryRun,
                   "run every launch-time check, then stop"));
}

} // namespace tegula::interp

#endif // TEGULA_INTERPRETER_CLIOPTIONS_H
