//===- HostSession.h - The runners' host-side flow --------------*- C++ -*-===//
//
// What tile-run and the interpreter's runner (lib/Interpreter/Runner.cpp)
// both do around running a kernel: read --in files, bind size variables,
// make host tensors (seeded random inputs, poisoned write tensors), check
// outputs for unwritten elements, write --out files, run --check against
// --ref files or the bundle's float64 reference, and keep the --json
// report. Only the run itself (a GPU launch, or the interpreter) differs.
// docs/runtime.md describes the flow.
//
//===----------------------------------------------------------------------===//

#ifndef TEGULA_RUNTIME_HOSTSESSION_H
#define TEGULA_RUNTIME_HOSTSESSION_H

#include "tegula/Runtime/Binding.h"
#include "tegula/Runtime/Bundle.h"
#include "tegula/Runtime/Tensor.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace tegula::rt {

/// The options every runner takes (tile-run, tile-interp, tilec --run).
struct HostOptions {
  /// "N=4096,Z=2" (may repeat).
  std::vector<std::string> dims;
  /// NAME=VALUE, NAME=FILE.npy.
  std::vector<std::string> scalars, ins, outs, refs;
  /// NAME=S0,S1,...: a strided tensor's strides (default row-major).
  std::vector<std::string> strides;
  bool check = false;
  bool dryRun = false;
  uint64_t seed = 0;
  std::string jsonPath;
  /// Relative-L2 tolerance of --check; negative means the dtype default.
  double tolerance = -1;
};

/// Collects the machine-readable report and writes it on every exit path.
struct RunReport {
  /// Where --json writes it; empty: nowhere.
  std::string path;
  nlohmann::json data = nlohmann::json::object();
  /// The report as finish() last wrote it (data.dump(2)).
  std::string text;

  /// Sets "ok", writes the report and returns `code` (1 if it cannot be
  /// written).
  int finish(int code);
  /// Prints "error: MESSAGE" to stderr, records it as "error" and
  /// finishes with 1.
  int fail(const std::string &message);
};

/// Parses repeated NAME=FILE options of `flag` into `out`, rejecting
/// malformed ones and names given twice.
bool parseFileArgs(const std::vector<std::string> &args, const char *flag,
                   std::map<std::string, std::string> &out, std::string &error);

/// The seed of parameter `index`'s random values under --seed `seed`, so
/// that every runner makes the same inputs from one --seed.
uint64_t tensorSeed(uint64_t seed, size_t index);

/// One run's host side. A runner fills `bundle`, then calls bind(),
/// prepareHostTensors(), and either dryRun() or, after running the kernel
/// on `host`, collectOutputs() and checkOutputs(). A call that returns
/// false leaves the message in `error`; the runner passes it to
/// `report.fail`.
class HostSession {
public:
  explicit HostSession(std::string jsonPath) { report.path = jsonPath; }

  RunReport report;
  Bundle bundle;
  LaunchPlan plan;
  /// Per parameter, the tensor the kernel sees before it runs (empty for
  /// scalars); kept for the references.
  std::vector<HostTensor> host;
  /// Output tensors (write/readwrite, and any named by --out) by name.
  std::map<std::string, HostTensor> outputs;
  /// Set by an unwritten output or a failed comparison.
  bool failed = false;
  /// The runner copies strided views through host buffers of their span
  /// (tile-run's Launcher): prepareHostTensors counts those bytes too.
  bool spansOnHost = false;

  /// Parses --dims, --scalar, --in, --out and --ref, reads the --in files
  /// (their shapes bind size variables), binds and runs every launch-time
  /// check, and reports "dims" and "grid".
  bool bind(const HostOptions &options, std::string &error);
  /// Checks --out and --ref names, reads the --ref files, and makes `host`:
  /// --in files, seeded random values, poison for write tensors.
  bool prepareHostTensors(std::string &error);
  /// " N=4096 Z=2": the size variables as bound, for the first line.
  std::string dimsText();
  /// A dry run's outputs: --out saves the inputs made (write tensors are
  /// skipped with a note); with --check, computes the bundle's reference,
  /// which validates it, printing each output's rms if `printReferences`.
  /// --check with no reference at all fails as checkOutputs does.
  bool dryRun(bool printReferences, const std::string &noReferenceHint,
              std::string &error);

  /// Fills `tensor` with parameter `index`'s contents after the run.
  using FetchFn =
      std::function<bool(size_t index, HostTensor &tensor, std::string &error)>;
  /// Fetches the outputs (and tensors named by --out) into `outputs`,
  /// reports write tensors with unwritten elements, writes --out files.
  bool collectOutputs(const FetchFn &fetch, std::string &error);
  /// With --check, compares each output with its --ref file or the bundle's
  /// reference and reports the result. No reference at all is an error:
  /// "--check: no reference for any output; " + `noReferenceHint`.
  bool checkOutputs(const std::string &noReferenceHint, std::string &error);

private:
  HostOptions options;
  std::map<std::string, std::string> outFiles, refFiles;
  std::map<std::string, HostTensor> inTensors;
  /// The tensors read from --in files (write tensors among them are not
  /// poisoned).
  std::set<std::string> fromFiles;
  std::map<std::string, std::vector<double>> refs;

  /// The index of tensor parameter `name`, or -1.
  int tensorIndex(const std::string &name) const;
  /// Whether --check has a reference for some output: a --ref file or
  /// the bundle's own.
  bool hasReference() const;
};

} // namespace tegula::rt

#endif // TEGULA_RUNTIME_HOSTSESSION_H
