//===- tile-run.cpp - Run a compiled kernel bundle on the GPU -------------===//
//
// tile-run BUNDLE/KERNEL.json [--dims N=4096,Z=2] [--scalar scale=0.088]
//          [--in NAME=F.npy]... [--out NAME=F.npy]... [--ref NAME=F.npy]...
//          [--check] [--bench [--warmup N] [--rep N]] [--seed S] [--json OUT]
// tile-run --tune BUNDLE_DIR_OR_JSON --dims M=4096,... [--dims ...]
//          [--against-first]
//
// A bundle with configs runs the one TEGULA_CONFIG pins, else its tuning
// table's winner for this GPU and shape, else the first (docs/tuning.md);
// --tune (Tune.cpp) writes the table.
//
// Every check that needs no GPU (bundle, shapes, requires, files) runs
// before the driver is loaded, so errors read the same on any machine. The
// host side (inputs, binding, outputs, --check, --json) is rt::HostSession,
// shared with the interpreter's runner.
//
//===----------------------------------------------------------------------===//

#include "tegula/Runtime/Binding.h"
#include "tegula/Runtime/Bundle.h"
#include "tegula/Runtime/CudaDriver.h"
#include "tegula/Runtime/HostOptionsCLI.h"
#include "tegula/Runtime/HostSession.h"
#include "tegula/Runtime/Launcher.h"
#include "tegula/Runtime/Tensor.h"
#include "tegula/Runtime/Tuning.h"

#include "Tune.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>

using namespace tegula::rt;
using nlohmann::json;

namespace {

struct Options : HostOptions {
  std::string bundlePath;
  bool bench = false, probe = false;
  int warmup = 10, rep = 100;
  std::string eval;
  /// A dry run's stand-ins for the GPU's name and architecture ("sm_90"),
  /// for tuned configs.
  std::string device, deviceArch;
  std::string tune;
  bool againstFirst = false;
};

/// How tile-run's --check can get a reference the bundle lacks.
const char *const kNoReferenceHint =
    "the bundle names none, so pass --ref NAME=FILE.npy";

std::string formatMs(double ms) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.4f", ms);
  return buf;
}

int probe() {
  CudaDriver driver;
  GpuDevice device;
  std::string error;
  if (!driver.load(error) || !openDevice(driver, device, error)) {
    std::fprintf(stderr, "error: %s\n", error.c_str());
    return 1;
  }
  std::printf("device: %s (sm_%d%d, %d SMs, %d bytes shared opt-in, driver "
              "%d.%d)\n",
              device.name.c_str(), device.ccMajor, device.ccMinor,
              device.smCount, device.sharedOptin, device.driverVersion / 1000,
              device.driverVersion % 1000 / 10);
  return 0;
}

int evalOnly(const Options &opts) {
  std::map<std::string, int64_t> dims;
  std::string error;
  for (const std::string &d : opts.dims)
    if (!parseDimsArg(d, dims, error)) {
      std::fprintf(stderr, "error: %s\n", error.c_str());
      return 1;
    }
  Env env(dims.begin(), dims.end());
  int64_t value;
  if (!evalExpr(opts.eval, env, value, error)) {
    std::fprintf(stderr, "error: %s\n", error.c_str());
    return 1;
  }
  std::printf("%lld\n", (long long)value);
  return 0;
}

int run(const Options &opts) {
  HostSession session(opts.jsonPath);
  session.spansOnHost = true; // Launcher::upload
  RunReport &report = session.report;
  const Bundle &bundle = session.bundle;
  const LaunchPlan &plan = session.plan;
  std::string error;

  if (!loadBundle(opts.bundlePath, session.bundle, error))
    return report.fail(error);
  report.data["kernel"] = bundle.kernel;
  report.data["bundle"] = opts.bundlePath;

  if (!session.bind(opts, error))
    return report.fail(error);

  // The config (docs/tuning.md): pinned, tuned for this GPU and shape, or
  // the first. Only a tuning table needs the GPU's name before the launch.
  CudaDriver driver;
  GpuDevice device;
  bool opened = false;
  std::string deviceName = opts.device, deviceArch = opts.deviceArch;
  if (bundle.listsConfigs && !bundle.tuning.empty() && !opts.dryRun) {
    if (!driver.load(error) || !openDevice(driver, device, error))
      return report.fail(error);
    opened = true;
    deviceName = device.name;
    deviceArch = tegula::archName(device.ccMajor, device.ccMinor);
  }
  ConfigChoice choice;
  if (!chooseConfig(bundle, plan.env, deviceName, deviceArch,
                    std::getenv("TEGULA_CONFIG"), choice, error) ||
      !applyConfig(bundle, choice.config, session.plan, error))
    return report.fail(error);
  report.data["grid"] = plan.grid;
  report.data["threads"] = bundle.threadsOf(plan.config);
  report.data["shared_bytes"] = bundle.sharedBytesOf(plan.config, plan.variant);
  if (!session.prepareHostTensors(error))
    return report.fail(error);

  std::printf("kernel %s:%s, grid [%lld, %lld, %lld] x %lld threads, %lld "
              "bytes shared\n",
              bundle.kernel.c_str(), session.dimsText().c_str(),
              (long long)plan.grid[0], (long long)plan.grid[1],
              (long long)plan.grid[2], (long long)bundle.threadsOf(plan.config),
              (long long)bundle.sharedBytesOf(plan.config, plan.variant));
  if (bundle.listsConfigs) {
    std::printf("config: %s %s\n", bundle.configName(plan.config).c_str(),
                choice.describe().c_str());
    report.data["config"] = bundle.configName(plan.config);
    report.data["config_source"] = choice.sourceName();
    if (choice.source == ConfigChoice::Source::Tuned)
      report.data["config_bucket"] = choice.bucket;
    if (!choice.tunedOn.empty())
      report.data["config_tuned_on"] = choice.tunedOn;
  }
  // Which build runs is visible: specialized variants are chosen here.
  const Config &config = bundle.configs[size_t(plan.config)];
  report.data["variant"] = bundle.variantName(plan.config, plan.variant);
  if (!config.variants.empty()) {
    std::string why;
    if (plan.variant >= 0)
      for (const Expr &when : config.variants[size_t(plan.variant)].when)
        why += (why.empty() ? " (" : ", ") + when.text();
    std::printf("variant: %s%s\n",
                bundle.variantName(plan.config, plan.variant).c_str(),
                why.empty() ? "" : (why + ")").c_str());
  }

  if (opts.dryRun) {
    if (!session.dryRun(/*printReferences=*/true, kNoReferenceHint, error))
      return report.fail(error);
    return report.finish(0);
  }

  if (!opened && (!driver.load(error) || !openDevice(driver, device, error)))
    return report.fail(error);
  report.data["device"] = device.name;
  report.data["sm"] = tegula::archName(device.ccMajor, device.ccMinor);
  std::printf("device: %s (sm_%d%d, %d SMs)\n", device.name.c_str(),
              device.ccMajor, device.ccMinor, device.smCount);

  Launcher launcher(driver, device, bundle, plan);
  if (!launcher.load(error))
    return report.fail(error);
  // Which image the driver runs: the cubin skips the PTX JIT.
  const LoadedKernel &loaded = launcher.loaded();
  report.data["image"] = loaded.loadedCubin() ? "cubin" : "ptx";
  if (loaded.cubinRefusal().empty())
    std::printf("image: %s\n", loaded.imageName());
  else
    std::printf("image: %s; the driver refused the cubin: %s\n",
                loaded.imageName(), loaded.cubinRefusal().c_str());
  if (!launcher.upload(session.host, error) || !launcher.launch(error))
    return report.fail(error);
  report.data["registers"] = launcher.info().numRegs;

  auto download = [&](size_t i, HostTensor &t, std::string &message) {
    t = HostTensor(bundle.params[i].dtype, plan.shapes[i]);
    return launcher.download(i, t, message);
  };
  if (!session.collectOutputs(download, error) ||
      !session.checkOutputs(kNoReferenceHint, error))
    return report.fail(error);

  if (opts.bench) {
    std::vector<float> ms;
    if (!launcher.bench(opts.warmup, opts.rep, ms, error))
      return report.fail(error);
    std::vector<float> sorted = ms;
    std::sort(sorted.begin(), sorted.end());
    double median = medianOf(ms);
    json b = {{"median_ms", median},     {"min_ms", sorted.front()},
              {"max_ms", sorted.back()}, {"warmup", opts.warmup},
              {"rep", opts.rep},         {"times_ms", ms}};
    std::string line = "bench: median " + formatMs(median) + " ms, min " +
                       formatMs(sorted.front()) + " ms, max " +
                       formatMs(sorted.back()) + " ms";
    char buf[64];
    if (plan.flops) {
      double tflops = double(*plan.flops) / (median * 1e-3) / 1e12;
      std::snprintf(buf, sizeof(buf), ", %.2f TFLOP/s", tflops);
      line += buf;
      b["flops"] = *plan.flops;
      b["tflops"] = tflops;
    }
    if (plan.bytes) {
      double gbps = double(*plan.bytes) / (median * 1e-3) / 1e9;
      std::snprintf(buf, sizeof(buf), ", %.1f GB/s", gbps);
      line += buf;
      b["bytes"] = *plan.bytes;
      b["gbps"] = gbps;
    }
    std::printf("%s (warmup %d, rep %d)\n", line.c_str(), opts.warmup,
                opts.rep);
    report.data["bench"] = b;
  }
  return report.finish(session.failed ? 1 : 0);
}

} // namespace

int main(int argc, char **argv) {
  CLI::App app{"tile-run: run a compiled Tegula kernel bundle on the GPU"};
  Options opts;
  app.add_option("bundle", opts.bundlePath, "BUNDLE_DIR/KERNEL.json");
  addHostOptions(app, opts);
  app.add_flag("--bench", opts.bench, "time the kernel");
  app.add_option("--warmup", opts.warmup, "launches before timing")
      ->check(CLI::Range(0, 1000000));
  app.add_option("--rep,--iters", opts.rep, "timed launches")
      ->check(CLI::Range(1, 1000000));
  app.add_option("--tune", opts.tune,
                 "time every config of BUNDLE_DIR or KERNEL.json at each "
                 "--dims and write KERNEL.tuning.json (docs/tuning.md)");
  app.add_flag("--against-first", opts.againstFirst,
               "with --tune: check each config against the first config's "
               "outputs instead of the float64 reference");
  app.add_option("--device", opts.device,
                 "with --dry-run: the GPU name whose tuned configs to choose");
  app.add_option("--device-arch", opts.deviceArch,
                 "with --dry-run: that GPU's architecture (sm_90), whose "
                 "other GPUs' tuned configs apply when it has none");
  app.add_flag("--probe", opts.probe, "report the GPU and driver, then stop");
  app.add_option("--eval", opts.eval,
                 "evaluate an integer expression over --dims, then stop");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    return app.exit(e);
  }
  for (const char *flag : {"--warmup", "--rep"})
    if (app.count(flag) && !opts.bench && opts.tune.empty()) {
      std::fprintf(stderr, "error: %s requires --bench or --tune\n", flag);
      return 1;
    }
  if (opts.againstFirst && opts.tune.empty()) {
    std::fprintf(stderr, "error: --against-first requires --tune\n");
    return 1;
  }
  for (const char *flag : {"--device", "--device-arch"})
    if (app.count(flag) && !opts.dryRun) {
      std::fprintf(stderr,
                   "error: %s names a GPU for --dry-run only; a run uses the "
                   "GPU it finds\n",
                   flag);
      return 1;
    }
  // A GPU's architecture, as archName writes it: a chip name, no suffix.
  auto arch = tegula::parseChipName(opts.deviceArch);
  if (app.count("--device-arch") && (!arch || !arch->suffix.empty())) {
    std::fprintf(stderr,
                 "error: --device-arch takes an architecture such as sm_90, "
                 "got '%s'\n",
                 opts.deviceArch.c_str());
    return 1;
  }
  if (opts.probe)
    return probe();
  if (!opts.tune.empty()) {
    if (!opts.bundlePath.empty()) {
      std::fprintf(stderr, "error: --tune takes the bundle itself: tile-run "
                           "--tune BUNDLE_DIR_OR_JSON --dims ...\n");
      return 1;
    }
    TuneOptions tune;
    static_cast<HostOptions &>(tune) = opts;
    tune.path = opts.tune;
    tune.warmup = opts.warmup;
    tune.iters = opts.rep;
    tune.againstFirst = opts.againstFirst;
    try {
      return runTune(tune);
    } catch (const std::exception &e) {
      std::fprintf(stderr, "error: internal error: %s\n", e.what());
      return 1;
    }
  }
  if (!opts.eval.empty())
    return evalOnly(opts);
  if (opts.bundlePath.empty()) {
    std::fprintf(stderr, "error: no bundle given (tile-run "
                         "BUNDLE_DIR/KERNEL.json ...; see --help)\n");
    return 1;
  }
  try {
    return run(opts);
  } catch (const std::exception &e) {
    // A last line of defence: report, never crash.
    std::fprintf(stderr, "error: internal error: %s\n", e.what());
    return 1;
  }
}
