//===- CLIOptions.h - tile-run's flags on a CLI11 app -----------*- C++ -*-===//
//
// Header-only so that only the tool that includes it needs exceptions
// (CLI11 reports malformed command lines by throwing).
//
//===----------------------------------------------------------------------===//

#ifndef TEGULA_INTERPRETER_CLIOPTIONS_H
#define TEGULA_INTERPRETER_CLIOPTIONS_H

#include "tegula/Interpreter/RunOptions.h"

#include "tegula/Runtime/HostOptionsCLI.h"

#include <CLI/CLI.hpp>

namespace tegula::interp {

/// Adds the runners' shared flags (rt::addHostOptions, as tile-run has them)
/// to `app`, plus --reference; `group` names the help section.
inline void addRunOptions(CLI::App &app, RunOptions &opts,
                          const std::string &group = "") {
  rt::addHostOptions(app, opts, group);
  CLI::Option *reference = app.add_option(
      "--reference", opts.reference,
      "float64 reference for --check: a name from docs/runtime.md's "
      "References (attention_fwd, matmul, rmsnorm, ...), or a JSON object "
      "as in a bundle's \"reference\" field");
  if (!group.empty())
    reference->group(group);
}

} // namespace tegula::interp

#endif // TEGULA_INTERPRETER_CLIOPTIONS_H
