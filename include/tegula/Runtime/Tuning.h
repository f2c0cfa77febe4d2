//===- Tuning.h - Choosing a bundle's config at launch ----------*- C++ -*-===//
//
// A bundle may hold several configs of one kernel (docs/tuning.md). The
// launch runs, in this order: the one TEGULA_CONFIG pins, the winner of the
// tuning table's entry for this device and the nearest shape bucket, else
// of an entry tuned on another GPU of the same architecture (an H100's on
// an H200), or config 0. The same bundle, device and sizes always give the
// same config.
//
//===----------------------------------------------------------------------===//

#ifndef TEGULA_RUNTIME_TUNING_H
#define TEGULA_RUNTIME_TUNING_H

#include "tegula/Runtime/Binding.h"
#include "tegula/Runtime/Bundle.h"
#include "tegula/Runtime/Chip.h"

#include <string>
#include <vector>

namespace tegula::rt {

struct ConfigChoice {
  enum class Source { Default, Pinned, Tuned };
  int config = 0;
  Source source = Source::Default;
  /// Tuned: the entry's bucket ("M=4096,N=4096") and whether it is the
  /// launch's own bucket (else the nearest).
  std::string bucket;
  bool exact = false;
  /// Tuned on another GPU of this one's architecture: its name and the
  /// architecture ("sm_90"); empty when tuned on this GPU.
  std::string tunedOn, arch;

  /// "(default)", "(pinned by TEGULA_CONFIG)", "(tuned: bucket M=...)",
  /// "(tuned on 'NVIDIA H100 80GB HBM3', also sm_90: bucket M=...)".
  std::string describe() const;
  const char *sourceName() const;
};

/// Reads and validates the tuning table at `path` for `bundle`: `root` is
/// its JSON, `entries` its entries in order. Malformed input is an error
/// ("tuning table 'P': entries[2] needs ..."); entries tuned for other code
/// or other size variables are kept, marked stale.
bool readTuningTable(const std::string &path, const Bundle &bundle,
                     nlohmann::json &root, std::vector<TuningEntry> &entries,
                     std::string &error);

/// Reads the tuning table a loaded bundle names (`tuningPath`, beside it)
/// into `tuning`, marking entries whose PTX hashes are not the bundle's as
/// stale; loadBundle calls it. The path becomes the full one.
bool loadTuningTable(Bundle &bundle, std::string &error);

/// Each size variable of a bound launch rounded up to a power of two, in
/// the bundle's order.
std::vector<int64_t> bucketOf(const Bundle &bundle, const Env &env);
/// "M=4096,N=64" for a bucket.
std::string formatBucket(const Bundle &bundle,
                         const std::vector<int64_t> &bucket);

/// Chooses the config of a launch bound in `env` on the GPU named
/// `device` (as cuDeviceGetName gives it; "" when unknown: no tuned
/// choice) of architecture `arch` (archName; "" when unknown: only this
/// device's entries apply). `pin` is TEGULA_CONFIG's value, or null. A pin
/// naming no config is an error listing them; stale entries of the table
/// for this device are skipped, with one warning on stderr per bundle.
/// Without a fresh entry for this device, the fresh entries of other GPUs
/// whose "cc" is `arch` apply, the same way.
bool chooseConfig(const Bundle &bundle, const Env &env,
                  const std::string &device, const std::string &arch,
                  const char *pin, ConfigChoice &choice, std::string &error);

} // namespace tegula::rt

#endif // TEGULA_RUNTIME_TUNING_H
