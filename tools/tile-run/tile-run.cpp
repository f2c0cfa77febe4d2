//===- tile-run.cpp - Run a compiled kernel bundle on the GPU -------------===//
//
// tile-run BUNDLE/KERNEL.json [--dims N=4096,Z=2] [--scalar scale=0.088]
//          [--in NAME=F.npy]... [--out NAME=F.npy]... [--ref NAME=F.npy]...
//          [--check] [--bench [--warmup N] [--rep N]] [--seed S] [--json OUT]
//
// Every check that needs no GPU (bundle, shapes, requires, files) runs
// before the driver is loaded, so errors read the same on any machine.
//
//===----------------------------------------------------------------------===//

#include "tegula/Runtime/Binding.h"
#include "tegula/Runtime/Bundle.h"
#include "tegula/Runtime/CudaDriver.h"
#include "tegula/Runtime/Launcher.h"
#include "tegula/Runtime/References.h"
#include "tegula/Runtime/Tensor.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>

using namespace tegula::rt;
using nlohmann::json;

namespace {

struct Options {
  std::string bundlePath;
  std::vector<std::string> dims, scalars, ins, outs, refs;
  bool check = false, bench = false, dryRun = false, probe = false;
  int warmup = 10, rep = 100;
  uint64_t seed = 0;
  std::string jsonPath, eval;
  double tolerance = -1;
};

/// Collects the machine-readable report and writes it on every exit path.
struct Report {
  std::string path;
  json data = json::object();

  int finish(int code) {
    data["ok"] = code == 0;
    if (path.empty())
      return code;
    std::ofstream out(path);
    out << data.dump(2) << "\n";
    if (!out) {
      std::fprintf(stderr, "error: cannot write '%s'\n", path.c_str());
      return 1;
    }
    return code;
  }

  int fail(const std::string &message) {
    // Keep stdout and stderr in order when both go to one pipe.
    std::fflush(stdout);
    std::fprintf(stderr, "error: %s\n", message.c_str());
    data["error"] = message;
    return finish(1);
  }
};

/// Parses repeated NAME=FILE options into a map, rejecting duplicates.
bool parseFileArgs(const std::vector<std::string> &args, const char *flag,
                   std::map<std::string, std::string> &out,
                   std::string &error) {
  for (const std::string &arg : args) {
    std::string name, file;
    if (!splitAssignment(arg, name, file)) {
      error = std::string(flag) + " expects NAME=FILE.npy, got '" + arg + "'";
      return false;
    }
    if (!out.emplace(name, file).second) {
      error = std::string(flag) + " names '" + name + "' twice";
      return false;
    }
  }
  return true;
}

uint64_t tensorSeed(uint64_t seed, size_t index) {
  // Decorrelates the per-tensor streams; splitmix64 mixes further.
  return seed * 0x9e3779b97f4a7c15ull + (index + 1) * 0xd1b54a32d192ed03ull;
}

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
  Report report;
  report.path = opts.jsonPath;
  std::string error;

  Bundle bundle;
  if (!loadBundle(opts.bundlePath, bundle, error))
    return report.fail(error);
  report.data["kernel"] = bundle.kernel;
  report.data["bundle"] = opts.bundlePath;

  BindingInputs inputs;
  for (const std::string &d : opts.dims)
    if (!parseDimsArg(d, inputs.dims, error))
      return report.fail(error);
  std::map<std::string, std::string> inFiles, outFiles, refFiles;
  if (!parseFileArgs(opts.scalars, "--scalar", inputs.scalars, error) ||
      !parseFileArgs(opts.ins, "--in", inFiles, error) ||
      !parseFileArgs(opts.outs, "--out", outFiles, error) ||
      !parseFileArgs(opts.refs, "--ref", refFiles, error))
    return report.fail(error);

  // Read --in files first: their shapes bind size variables.
  std::map<std::string, HostTensor> inTensors;
  for (const auto &[name, file] : inFiles) {
    const Param *p = bundle.findParam(name);
    if (!p || !p->isTensor)
      return report.fail("--in names '" + name +
                         "', which is not a tensor parameter of '" +
                         bundle.kernel + "'");
    if (p->access == Access::Write)
      return report.fail("--in " + name + ": the kernel only writes '" + name +
                         "' (access write), so it takes no input");
    NpyArray array;
    if (!readNpy(file, array, error))
      return report.fail("--in " + name + ": " + error);
    HostTensor tensor;
    if (!tensorFromNpy(array, p->dtype, tensor, error))
      return report.fail("--in " + name + ": '" + file + "' " + error);
    inputs.fileShapes[name] = tensor.shape;
    inTensors[name] = std::move(tensor);
  }

  LaunchPlan plan;
  if (!bindAndCheck(bundle, inputs, plan, error))
    return report.fail(error);
  for (const std::string &v : bundle.sizeVars)
    report.data["dims"][v] = plan.env[v];
  report.data["grid"] = plan.grid;
  report.data["threads"] = bundle.threads;
  report.data["shared_bytes"] = bundle.sharedBytes;

  auto tensorIndex = [&](const std::string &name) -> int {
    for (size_t i = 0; i < bundle.params.size(); ++i)
      if (bundle.params[i].name == name && bundle.params[i].isTensor)
        return int(i);
    return -1;
  };
  for (const auto &[name, file] : outFiles)
    if (tensorIndex(name) < 0)
      return report.fail("--out names '" + name +
                         "', which is not a tensor parameter of '" +
                         bundle.kernel + "'");
  std::map<std::string, std::vector<double>> refs;
  for (const auto &[name, file] : refFiles) {
    int i = tensorIndex(name);
    if (i < 0 || bundle.params[size_t(i)].access == Access::Read)
      return report.fail("--ref names '" + name +
                         "', which is not an output tensor of '" +
                         bundle.kernel + "'");
    NpyArray array;
    if (!readNpy(file, array, error))
      return report.fail("--ref " + name + ": " + error);
    if (array.shape != plan.shapes[size_t(i)])
      return report.fail("--ref " + name + ": '" + file + "' has shape " +
                         formatShape(array.shape) + " but '" + name + "' is " +
                         formatShape(plan.shapes[size_t(i)]));
    std::vector<double> values(array.data.size() / npyItemSize(array.descr));
    for (size_t k = 0; k < values.size(); ++k)
      values[k] = npyElement(array, k);
    refs[name] = std::move(values);
  }

  // Host copies of what the kernel sees; kept for the references.
  std::vector<HostTensor> host(bundle.params.size());
  for (size_t i = 0; i < bundle.params.size(); ++i) {
    const Param &p = bundle.params[i];
    if (!p.isTensor)
      continue;
    if (auto it = inTensors.find(p.name); it != inTensors.end()) {
      host[i] = std::move(it->second);
      continue;
    }
    host[i] = HostTensor(p.dtype, plan.shapes[i]);
    if (p.access == Access::Write)
      fillPoison(host[i]);
    else
      fillRandom(host[i], tensorSeed(opts.seed, i));
  }

  std::string dimsText;
  for (const std::string &v : bundle.sizeVars)
    dimsText += " " + v + "=" + std::to_string(plan.env[v]);
  std::printf("kernel %s:%s, grid [%lld, %lld, %lld] x %lld threads, %lld "
              "bytes shared\n",
              bundle.kernel.c_str(), dimsText.c_str(), (long long)plan.grid[0],
              (long long)plan.grid[1], (long long)plan.grid[2],
              (long long)bundle.threads, (long long)bundle.sharedBytes);

  if (opts.dryRun) {
    for (const auto &[name, file] : outFiles) {
      int i = tensorIndex(name);
      if (bundle.params[size_t(i)].access == Access::Write) {
        std::printf("note: --out %s skipped: a dry run writes no outputs\n",
                    name.c_str());
        continue;
      }
      if (!writeNpy(file, tensorToNpy(host[size_t(i)]), error))
        return report.fail("--out " + name + ": " + error);
    }
    // --check validates the bundle's reference configuration too.
    if (opts.check && !bundle.reference.is_null()) {
      std::map<std::string, std::vector<double>> hostRefs;
      if (!computeReference(bundle, plan, host, hostRefs, error))
        return report.fail(error);
      for (const auto &[name, values] : hostRefs) {
        double sq = 0;
        for (double v : values)
          sq += v * v;
        std::printf("reference %s: %s, rms %.6g\n",
                    bundle.reference["name"].get<std::string>().c_str(),
                    name.c_str(),
                    std::sqrt(sq / double(std::max<size_t>(values.size(), 1))));
      }
    }
    std::printf("dry run: all launch-time checks passed\n");
    return report.finish(0);
  }

  CudaDriver driver;
  GpuDevice device;
  if (!driver.load(error) || !openDevice(driver, device, error))
    return report.fail(error);
  report.data["device"] = device.name;
  report.data["sm"] =
      "sm_" + std::to_string(device.ccMajor) + std::to_string(device.ccMinor);
  std::printf("device: %s (sm_%d%d, %d SMs)\n", device.name.c_str(),
              device.ccMajor, device.ccMinor, device.smCount);

  Launcher launcher(driver, device, bundle, plan);
  if (!launcher.load(error) || !launcher.upload(host, error) ||
      !launcher.launch(error))
    return report.fail(error);
  report.data["registers"] = launcher.info().numRegs;

  bool failed = false;
  std::map<std::string, HostTensor> outputs;
  for (size_t i = 0; i < bundle.params.size(); ++i) {
    const Param &p = bundle.params[i];
    bool isOutput = p.isTensor && p.access != Access::Read;
    if (!isOutput && !outFiles.count(p.name))
      continue;
    HostTensor t(p.dtype, plan.shapes[i]);
    if (!launcher.download(i, t, error))
      return report.fail(error);
    if (p.access == Access::Write) {
      int64_t first;
      int64_t count = countPoison(t, first);
      report.data["unwritten"][p.name] = {{"count", count}, {"first", first}};
      if (count) {
        std::fflush(stdout);
        std::fprintf(stderr,
                     "error: output '%s': %lld of %lld elements were not "
                     "written (first at %s)\n",
                     p.name.c_str(), (long long)count, (long long)t.numel(),
                     formatIndex(t.shape, first).c_str());
        failed = true;
      }
    }
    outputs[p.name] = std::move(t);
  }
  for (const auto &[name, file] : outFiles)
    if (!writeNpy(file, tensorToNpy(outputs[name]), error))
      return report.fail("--out " + name + ": " + error);

  if (opts.check) {
    // --ref files first; the bundle's own reference for the rest.
    bool needHost = false;
    for (const Param &p : bundle.params)
      needHost |= p.isTensor && p.access != Access::Read && !refs.count(p.name);
    if (needHost && !bundle.reference.is_null()) {
      std::map<std::string, std::vector<double>> hostRefs;
      if (!computeReference(bundle, plan, host, hostRefs, error))
        return report.fail(error);
      for (auto &[name, values] : hostRefs)
        refs.emplace(name, std::move(values));
    }
    std::vector<DType> dtypes;
    for (const Param &p : bundle.params)
      if (p.isTensor)
        dtypes.push_back(p.dtype);
    double tol = opts.tolerance >= 0 ? opts.tolerance : toleranceFor(dtypes);
    bool any = false;
    for (const Param &p : bundle.params) {
      auto ref = refs.find(p.name);
      if (ref == refs.end() || !outputs.count(p.name))
        continue;
      any = true;
      Comparison c = compare(outputs[p.name], ref->second, tol);
      std::printf("check %s: rel_l2 %.3e, max_abs %.3e, tol %.1e: %s\n",
                  p.name.c_str(), c.relL2, c.maxAbs, c.tolerance,
                  c.pass ? "PASS" : "FAIL");
      if (c.nonFinite)
        std::printf(
            "check %s: %lld non-finite values where the reference "
            "is finite (first at %s)\n",
            p.name.c_str(), (long long)c.nonFinite,
            formatIndex(outputs[p.name].shape, c.firstNonFinite).c_str());
      report.data["check"][p.name] = {{"rel_l2", c.relL2},
                                      {"max_abs", c.maxAbs},
                                      {"non_finite", c.nonFinite},
                                      {"tolerance", c.tolerance},
                                      {"pass", c.pass}};
      failed |= !c.pass;
    }
    if (!any)
      return report.fail("--check: no reference for any output; the bundle "
                         "names none, so pass --ref NAME=FILE.npy");
  }

  if (opts.bench) {
    std::vector<float> ms;
    if (!launcher.bench(opts.warmup, opts.rep, ms, error))
      return report.fail(error);
    std::vector<float> sorted = ms;
    std::sort(sorted.begin(), sorted.end());
    size_t n = sorted.size();
    double median = n % 2 ? sorted[n / 2]
                          : 0.5 * (double(sorted[n / 2 - 1]) + sorted[n / 2]);
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
  return report.finish(failed ? 1 : 0);
}

} // namespace

int main(int argc, char **argv) {
  CLI::App app{"tile-run: run a compiled Tegula kernel bundle on the GPU"};
  Options opts;
  app.add_option("bundle", opts.bundlePath, "BUNDLE_DIR/KERNEL.json");
  app.add_option("--dims", opts.dims, "size variables, N=4096,Z=2,H=8")
      ->allow_extra_args(false);
  app.add_option("--scalar", opts.scalars, "scalar parameter, NAME=VALUE")
      ->allow_extra_args(false);
  app.add_option("--in", opts.ins, "input tensor from .npy, NAME=FILE")
      ->allow_extra_args(false);
  app.add_option("--out", opts.outs, "save a tensor as .npy, NAME=FILE")
      ->allow_extra_args(false);
  app.add_option("--ref", opts.refs, "reference output .npy, NAME=FILE")
      ->allow_extra_args(false);
  app.add_flag("--check", opts.check, "compare outputs with a reference");
  auto *bench = app.add_flag("--bench", opts.bench, "time the kernel");
  app.add_option("--warmup", opts.warmup, "launches before timing")
      ->needs(bench)
      ->check(CLI::Range(0, 1000000));
  app.add_option("--rep", opts.rep, "timed launches")
      ->needs(bench)
      ->check(CLI::Range(1, 1000000));
  app.add_option("--seed", opts.seed, "seed of the random inputs");
  app.add_option("--json", opts.jsonPath, "write results as JSON");
  app.add_option("--tol", opts.tolerance,
                 "relative L2 tolerance of --check (default per dtype)")
      ->check(CLI::Range(0.0, 1e300));
  app.add_flag("--dry-run", opts.dryRun,
               "run every check that needs no GPU, then stop");
  app.add_flag("--probe", opts.probe, "report the GPU and driver, then stop");
  app.add_option("--eval", opts.eval,
                 "evaluate an integer expression over --dims, then stop");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    return app.exit(e);
  }
  if (opts.probe)
    return probe();
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
