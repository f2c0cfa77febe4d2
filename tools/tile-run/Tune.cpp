//===- Tune.cpp - tile-run --tune -----------------------------------------===//
//
// For each --dims, for each config in declared order: apply it to the
// binding (one that cannot bind is a failure), launch once on poisoned
// outputs and check against the reference as --check does (one that fails
// never wins), then time it as --bench does. The winner is the first
// config within 2% of the fastest, so that noise does not flip winners
// between runs. Entries of the same device and bucket are replaced.
//
// With --against-first the float64 reference, which takes minutes at the
// sizes kernels are tuned for, is replaced by agreement: at each --dims the
// first config that runs gives the outputs every later one is compared
// with (the caller checks each config against float64 at a small size).
//
//===----------------------------------------------------------------------===//

#include "Tune.h"

#include "tegula/Runtime/Bundle.h"
#include "tegula/Runtime/File.h"
#include "tegula/Runtime/Launcher.h"
#include "tegula/Runtime/References.h"
#include "tegula/Runtime/Tuning.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <optional>

namespace tegula::rt {

using nlohmann::json;

double medianOf(std::vector<float> ms) {
  std::sort(ms.begin(), ms.end());
  size_t n = ms.size();
  return n % 2 ? ms[n / 2] : 0.5 * (double(ms[n / 2 - 1]) + ms[n / 2]);
}

namespace {

/// Winners within this fraction of the fastest go to the earliest config.
constexpr double kWinnerMargin = 0.02;

int fail(const std::string &message) {
  std::fflush(stdout);
  std::fprintf(stderr, "error: %s\n", message.c_str());
  return 1;
}

std::string utcNow() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

/// The dtypes of the tensors, in order without repeats ("bf16,f32").
std::string dtypeSummary(const Bundle &bundle) {
  std::vector<std::string> seen;
  for (const Param &p : bundle.params)
    if (p.isTensor &&
        std::find(seen.begin(), seen.end(), dtypeName(p.dtype)) == seen.end())
      seen.push_back(dtypeName(p.dtype));
  std::string text;
  for (const std::string &s : seen)
    text += (text.empty() ? "" : ",") + s;
  return text;
}

std::string dimsText(const Bundle &bundle, const Env &env) {
  std::string text;
  for (const std::string &var : bundle.sizeVars)
    text += (text.empty() ? "" : ",") + var + "=" + std::to_string(env.at(var));
  return text;
}

struct Counter {
  size_t done = 0, total = 0;
};

/// The outputs of the first config that ran at this --dims
/// (--against-first): the reference of the configs after it.
using Baseline = std::map<std::string, std::vector<double>>;

/// --against-first: the first config's outputs become `baseline` (they must
/// be finite); later ones are compared with them at --check's tolerance.
bool agreesWithFirst(const TuneOptions &opts, HostSession &session,
                     Baseline &baseline, std::string &why) {
  if (baseline.empty()) {
    for (const auto &[name, tensor] : session.outputs) {
      std::vector<double> values = tensor.toDoubles();
      if (!std::all_of(values.begin(), values.end(),
                       [](double v) { return std::isfinite(v); })) {
        why = "output '" + name + "' is not finite";
        baseline.clear();
        return false;
      }
      baseline[name] = std::move(values);
    }
    return true;
  }
  std::vector<DType> dtypes;
  for (const Param &p : session.bundle.params)
    if (p.isTensor)
      dtypes.push_back(p.dtype);
  double tol = opts.tolerance >= 0 ? opts.tolerance : toleranceFor(dtypes);
  for (const auto &[name, tensor] : session.outputs) {
    Comparison c = compare(tensor, baseline.at(name), tol);
    if (!c.pass) {
      char text[160];
      std::snprintf(text, sizeof(text),
                    "output '%s' differs from the first config's: rel_l2 "
                    "%.3e, tol %.1e",
                    name.c_str(), c.relL2, c.tolerance);
      why = text;
      return false;
    }
  }
  return true;
}

/// Runs config `config` on `session`'s inputs: its median in µs, or the
/// reason it cannot win.
std::optional<double> measure(const TuneOptions &opts, const CudaDriver &driver,
                              const GpuDevice &device, HostSession &session,
                              Baseline &baseline, int config,
                              std::string &why) {
  const Bundle &bundle = session.bundle;
  if (!applyConfig(bundle, config, session.plan, why)) {
    why = "cannot bind: " + why;
    return std::nullopt;
  }
  Launcher launcher(driver, device, bundle, session.plan);
  if (!launcher.load(why) || !launcher.upload(session.host, why) ||
      !launcher.launch(why))
    return std::nullopt;
  auto download = [&](size_t i, HostTensor &t, std::string &message) {
    t = HostTensor(bundle.params[i].dtype, session.plan.shapes[i]);
    return launcher.download(i, t, message);
  };
  session.failed = false;
  if (!session.collectOutputs(download, why))
    return std::nullopt;
  if (opts.againstFirst) {
    if (session.failed) {
      why = "unwritten outputs";
      return std::nullopt;
    }
    if (!agreesWithFirst(opts, session, baseline, why))
      return std::nullopt;
  } else if (!session.checkOutputs("the bundle names none, so pass --ref "
                                   "NAME=FILE.npy",
                                   why)) {
    return std::nullopt;
  }
  if (session.failed) {
    why = "wrong results (the check failed)";
    return std::nullopt;
  }
  std::vector<float> ms;
  if (!launcher.bench(opts.warmup, opts.iters, ms, why))
    return std::nullopt;
  // Nanoseconds are the events' resolution at best: no float noise.
  return std::round(medianOf(ms) * 1e6) / 1e3;
}

/// Tunes one kernel at every --dims; false after a failure that stops the
/// tuning (bad --dims, an unwritable table). `missed` counts the shapes
/// where no config passed.
bool tuneKernel(const TuneOptions &opts, const CudaDriver &driver,
                const GpuDevice &device, const Bundle &bundle, Counter &counter,
                int &missed, std::string &error) {
  std::string sm = archName(device.ccMajor, device.ccMinor);
  // The table the results merge into, validated before any timing: a
  // malformed one stops here; entries of other size variables (the kernel
  // was rebuilt) can never apply again and are dropped.
  std::string base = bundle.jsonPath;
  if (base.size() > 5 && base.compare(base.size() - 5, 5, ".json") == 0)
    base.resize(base.size() - 5);
  std::string tablePath =
      bundle.tuningPath.empty() ? base + ".tuning.json" : bundle.tuningPath;
  json table = {{"kernel", bundle.kernel}, {"entries", json::array()}};
  std::error_code exists;
  if (std::filesystem::exists(tablePath, exists)) {
    json old;
    std::vector<TuningEntry> parsed;
    if (!readTuningTable(tablePath, bundle, old, parsed, error)) {
      error = "--tune: " + error + "; fix or remove it";
      return false;
    }
    size_t dropped = 0;
    for (size_t i = 0; i < parsed.size(); ++i)
      if (parsed[i].otherSizeVars)
        ++dropped;
      else
        table["entries"].push_back(old["entries"][i]);
    if (dropped)
      std::printf("note: %zu entries of '%s' were tuned for other size "
                  "variables; they are dropped\n",
                  dropped, tablePath.c_str());
  }
  std::vector<json> entries;
  for (const std::string &dims : opts.dims) {
    HostOptions host = opts;
    host.dims = {dims};
    // --against-first needs no reference, nor the inputs derived for one.
    host.check = !opts.againstFirst;
    host.outs.clear();
    host.jsonPath.clear();
    HostSession session("");
    session.spansOnHost = true; // Launcher::upload
    session.bundle = bundle;
    if (!session.bind(host, error) || !session.prepareHostTensors(error)) {
      error = "kernel '" + bundle.kernel + "' at --dims " + dims + ": " + error;
      return false;
    }
    const Env env = session.plan.env;
    std::vector<int64_t> bucket = bucketOf(bundle, env);
    json timings = json::object(), hashes = json::object();
    std::vector<std::optional<double>> medians;
    Baseline baseline;
    for (size_t c = 0; c < bundle.configs.size(); ++c) {
      const Config &config = bundle.configs[c];
      std::string why;
      std::optional<double> us =
          measure(opts, driver, device, session, baseline, int(c), why);
      medians.push_back(us);
      hashes[config.name] = config.ptxSha256;
      char figure[64];
      if (us) {
        std::snprintf(figure, sizeof(figure), "%.1f us (ok)", *us);
        timings[config.name] = *us;
      } else {
        std::snprintf(figure, sizeof(figure), "failed");
        timings[config.name] = "failed: " + why;
      }
      std::printf("[%zu/%zu] %s %s: %s%s\n", ++counter.done, counter.total,
                  config.name.c_str(), dimsText(bundle, env).c_str(), figure,
                  us ? "" : (" (" + why + ")").c_str());
      std::fflush(stdout);
    }
    std::optional<double> best;
    for (const auto &m : medians)
      if (m && (!best || *m < *best))
        best = m;
    if (!best) {
      std::printf("%s %s: no config passed; no entry written\n",
                  bundle.kernel.c_str(), dimsText(bundle, env).c_str());
      ++missed;
      continue;
    }
    size_t winner = 0;
    while (!medians[winner] || *medians[winner] > *best * (1 + kWinnerMargin))
      ++winner;
    std::printf("%s %s: winner %s (bucket %s)\n", bundle.kernel.c_str(),
                dimsText(bundle, env).c_str(),
                bundle.configs[winner].name.c_str(),
                formatBucket(bundle, bucket).c_str());
    json bucketJson = json::object(), dimsJson = json::object();
    for (size_t i = 0; i < bundle.sizeVars.size(); ++i) {
      bucketJson[bundle.sizeVars[i]] = bucket[i];
      dimsJson[bundle.sizeVars[i]] = env.at(bundle.sizeVars[i]);
    }
    const char *checkedAgainst = opts.againstFirst ? "first config" : "float64";
    entries.push_back({{"device", device.name},
                       {"cc", sm},
                       {"dtype", dtypeSummary(bundle)},
                       {"bucket", bucketJson},
                       {"dims", dimsJson},
                       {"winner", bundle.configs[winner].name},
                       {"check", checkedAgainst},
                       {"timings_us", timings},
                       {"ptx_sha256", hashes},
                       {"date", utcNow()},
                       {"seed", opts.seed},
                       {"warmup", opts.warmup},
                       {"iters", opts.iters}});
  }

  // Merge: an entry of the same device and bucket is replaced in place
  // (validated entries: "device" is a string, "bucket" an object).
  std::string text, reason;
  for (json &entry : entries) {
    bool replaced = false;
    for (json &old : table["entries"])
      if (old["device"] == device.name && old["bucket"] == entry["bucket"] &&
          !replaced) {
        old = entry;
        replaced = true;
      }
    if (!replaced)
      table["entries"].push_back(entry);
  }
  if (!writeFile(tablePath, table.dump(2) + "\n", reason)) {
    error = "cannot write the tuning table '" + tablePath + "': " + reason;
    return false;
  }
  // KERNEL.json names the table (the file beside it).
  json root;
  if (!readFile(bundle.jsonPath, text, reason) ||
      !parseUserJson(text, root, reason)) {
    error = "cannot read '" + bundle.jsonPath + "' again: " + reason;
    return false;
  }
  std::string fileName = std::filesystem::path(tablePath).filename().string();
  if (root.value("tuning", json()) != fileName) {
    root["tuning"] = fileName;
    if (!writeFile(bundle.jsonPath, root.dump(2) + "\n", reason)) {
      error = "cannot write '" + bundle.jsonPath + "': " + reason;
      return false;
    }
  }
  std::printf("wrote %s (%zu entries)\n", tablePath.c_str(),
              table["entries"].size());
  return true;
}

} // namespace

int runTune(const TuneOptions &opts) {
  namespace fs = std::filesystem;
  std::vector<std::string> paths;
  std::error_code ec;
  if (fs::is_directory(opts.path, ec)) {
    for (fs::directory_iterator it(opts.path, ec), end; !ec && it != end;
         it.increment(ec)) {
      std::string name = it->path().filename().string();
      if (it->path().extension() == ".json" &&
          name.find(".tuning.json") == std::string::npos)
        paths.push_back(it->path().string());
    }
    if (ec)
      return fail("--tune: cannot list '" + opts.path + "': " + ec.message());
    std::sort(paths.begin(), paths.end());
  } else {
    paths.push_back(opts.path);
  }
  if (opts.dims.empty())
    return fail("--tune needs at least one --dims (each is a shape to tune)");
  if (opts.dryRun || !opts.outs.empty() || !opts.jsonPath.empty())
    return fail("--tune takes no --dry-run, --out or --json: its results go "
                "to KERNEL.tuning.json");

  std::vector<Bundle> bundles;
  for (const std::string &path : paths) {
    Bundle bundle;
    std::string error;
    if (!loadBundle(path, bundle, error))
      return fail(error);
    if (!bundle.listsConfigs) {
      std::printf("%s: one config, nothing to tune (compile it with a "
                  "comma list in -D)\n",
                  bundle.kernel.c_str());
      continue;
    }
    bundles.push_back(std::move(bundle));
  }
  if (bundles.empty())
    return fail("--tune: no bundle in '" + opts.path + "' lists configs");

  CudaDriver driver;
  GpuDevice device;
  std::string error;
  if (!driver.load(error) || !openDevice(driver, device, error))
    return fail("--tune times kernels on a GPU: " + error);
  std::printf("device: %s (sm_%d%d, %d SMs)\n", device.name.c_str(),
              device.ccMajor, device.ccMinor, device.smCount);
  if (opts.againstFirst)
    std::printf("checking each config against the first config's outputs "
                "(--against-first)\n");

  Counter counter;
  for (const Bundle &bundle : bundles)
    counter.total += bundle.configs.size() * opts.dims.size();
  int missed = 0;
  for (const Bundle &bundle : bundles)
    if (!tuneKernel(opts, driver, device, bundle, counter, missed, error))
      return fail(error);
  return missed ? 1 : 0;
}

} // namespace tegula::rt
