//===- HostSession.cpp - The runners' host-side flow ----------------------===//

#include "tegula/Runtime/HostSession.h"

#include "tegula/Runtime/Strides.h"

#include "tegula/Runtime/File.h"
#include "tegula/Runtime/References.h"
#include "tegula/Runtime/Text.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <new>
#include <set>
#include <unistd.h>

namespace tegula::rt {

int RunReport::finish(int code) {
  data["ok"] = code == 0;
  // Messages quote user input (flags, file contents), which need not be
  // UTF-8; nlohmann would throw on it.
  text = data.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
  if (path.empty())
    return code;
  std::string reason;
  if (!writeFile(path, text + "\n", reason)) {
    std::fflush(stdout);
    std::fprintf(stderr, "error: --json: cannot write '%s': %s\n", path.c_str(),
                 reason.c_str());
    return 1;
  }
  return code;
}

int RunReport::fail(const std::string &message) {
  // Keep stdout and stderr in order when both go to one pipe.
  std::fflush(stdout);
  std::fprintf(stderr, "error: %s\n", message.c_str());
  data["error"] = message;
  return finish(1);
}

bool parseFileArgs(const std::vector<std::string> &args, const char *flag,
                   std::map<std::string, std::string> &out,
                   std::string &error) {
  const char *form =
      std::string_view(flag) == "--scalar" ? "NAME=VALUE" : "NAME=FILE.npy";
  for (const std::string &arg : args) {
    std::string name, file;
    if (!splitAssignment(arg, name, file)) {
      error = std::string(flag) + " expects " + form + ", got '" +
              abbreviate(arg) + "'";
      return false;
    }
    if (!out.emplace(name, file).second) {
      error = std::string(flag) + " names '" + name + "' twice";
      return false;
    }
  }
  return true;
}

namespace {
/// The bytes of a host tensor, its size checked by bindAndCheck.
int64_t tensorBytes(DType dtype, const std::vector<int64_t> &shape) {
  int64_t bytes = int64_t(dtypeSize(dtype));
  for (int64_t d : shape)
    bytes *= d;
  return bytes;
}
} // namespace

uint64_t tensorSeed(uint64_t seed, size_t index) {
  // Decorrelates the per-tensor streams; splitmix64 mixes further.
  return seed * 0x9e3779b97f4a7c15ull + (index + 1) * 0xd1b54a32d192ed03ull;
}

int HostSession::tensorIndex(const std::string &name) const {
  for (size_t i = 0; i < bundle.params.size(); ++i)
    if (bundle.params[i].name == name && bundle.params[i].isTensor)
      return int(i);
  return -1;
}

bool HostSession::bind(const HostOptions &opts, std::string &error) {
  options = opts;
  BindingInputs inputs;
  for (const std::string &d : options.dims)
    if (!parseDimsArg(d, inputs.dims, error))
      return false;
  for (const std::string &s : options.strides)
    if (!parseStridesArg(s, inputs.strides, error))
      return false;
  std::map<std::string, std::string> inFiles;
  if (!parseFileArgs(options.scalars, "--scalar", inputs.scalars, error) ||
      !parseFileArgs(options.ins, "--in", inFiles, error) ||
      !parseFileArgs(options.outs, "--out", outFiles, error) ||
      !parseFileArgs(options.refs, "--ref", refFiles, error))
    return false;

  // Read --in files first: their shapes bind size variables.
  for (const auto &[name, file] : inFiles) {
    const Param *p = bundle.findParam(name);
    if (!p || !p->isTensor) {
      error = "--in names '" + name +
              "', which is not a tensor parameter of '" + bundle.kernel + "'";
      return false;
    }
    // A write tensor may take one too: its initial contents, which the
    // elements the kernel leaves unwritten keep.
    NpyArray array;
    if (!readNpy(file, array, error)) {
      error = "--in " + name + ": " + error;
      return false;
    }
    HostTensor tensor;
    if (!tensorFromNpy(array, p->dtype, tensor, error)) {
      error = "--in " + name + ": '" + file + "' " + error;
      return false;
    }
    inputs.fileShapes[name] = tensor.shape;
    inTensors[name] = std::move(tensor);
  }

  if (!bindAndCheck(bundle, inputs, plan, error))
    return false;
  for (const std::string &v : bundle.sizeVars)
    report.data["dims"][v] = plan.env[v];
  report.data["grid"] = plan.grid;
  return true;
}

bool HostSession::prepareHostTensors(std::string &error) {
  for (const auto &[name, file] : outFiles)
    if (tensorIndex(name) < 0) {
      error = "--out names '" + name +
              "', which is not a tensor parameter of '" + bundle.kernel + "'";
      return false;
    }
  for (const auto &[name, file] : refFiles) {
    int i = tensorIndex(name);
    if (i < 0 || bundle.params[size_t(i)].access == Access::Read) {
      error = "--ref names '" + name + "', which is not an output tensor of '" +
              bundle.kernel + "'";
      return false;
    }
    NpyArray array;
    if (!readNpy(file, array, error)) {
      error = "--ref " + name + ": " + error;
      return false;
    }
    if (array.shape != plan.shapes[size_t(i)]) {
      error = "--ref " + name + ": '" + file + "' has shape " +
              formatShape(array.shape) + " but '" + name + "' is " +
              formatShape(plan.shapes[size_t(i)]);
      return false;
    }
    std::vector<double> values(array.data.size() / npyItemSize(array.descr));
    for (size_t k = 0; k < values.size(); ++k)
      values[k] = npyElement(array, k);
    refs[name] = std::move(values);
  }

  // Sizes the user picked may not fit this machine: a message, not an
  // exception or the OOM killer. bindAndCheck bounded each tensor to 2^40
  // bytes, so the sum cannot overflow.
  int64_t total = 0;
  for (size_t i = 0; i < bundle.params.size(); ++i) {
    const Param &p = bundle.params[i];
    if (p.isTensor && !inTensors.count(p.name))
      total += tensorBytes(p.dtype, plan.shapes[i]);
    // A launcher copies a strided view through a buffer of its span
    // (checkView bounded it like a shape); a dry run makes none.
    if (p.strided && spansOnHost && !options.dryRun)
      total += viewSpan(plan.shapes[i], plan.strides[i]) *
               int64_t(dtypeSize(p.dtype));
  }
  int64_t memory = int64_t(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGE_SIZE);
  if (memory > 0 && total > memory) {
    error = "the tensors need " + std::to_string(total) +
            " bytes of host memory, more than this machine's " +
            std::to_string(memory);
    return false;
  }
  fromFiles.clear();
  for (const auto &[name, tensor] : inTensors)
    fromFiles.insert(name);
  host.assign(bundle.params.size(), HostTensor());
  for (size_t i = 0; i < bundle.params.size(); ++i) {
    const Param &p = bundle.params[i];
    if (!p.isTensor)
      continue;
    if (auto it = inTensors.find(p.name); it != inTensors.end()) {
      host[i] = std::move(it->second);
      continue;
    }
    try {
      host[i] = HostTensor(p.dtype, plan.shapes[i]);
    } catch (const std::bad_alloc &) {
      error = "cannot allocate " +
              std::to_string(tensorBytes(p.dtype, plan.shapes[i])) +
              " bytes of host memory for argument '" + p.name + "'";
      return false;
    }
    if (p.access == Access::Write)
      fillPoison(host[i]);
    else
      fillRandom(host[i], tensorSeed(options.seed, i));
  }
  // A read-only view may alias itself (a stride of 0): its elements become
  // what the kernel will read, the last one written to each address, so
  // that references and the interpreter see the same values as the GPU.
  for (size_t i = 0; i < bundle.params.size(); ++i)
    if (bundle.params[i].strided)
      resolveAliases(host[i], plan.strides[i]);
  // Inputs the reference needs consistent with the others (the attention
  // backward's o, lse, delta): only for --check, as the float64 forward
  // they take costs about as much as the reference itself.
  if (options.check &&
      !deriveReferenceInputs(bundle, plan, host, fromFiles, error))
    return false;
  return true;
}

std::string HostSession::dimsText() {
  std::string text;
  for (const std::string &v : bundle.sizeVars)
    text += " " + v + "=" + std::to_string(plan.env[v]);
  return text;
}

bool HostSession::hasReference() const {
  for (const Param &p : bundle.params)
    if (p.isTensor && p.access != Access::Read &&
        (refs.count(p.name) || !bundle.reference.is_null()))
      return true;
  return false;
}

bool HostSession::dryRun(bool printReferences,
                         const std::string &noReferenceHint,
                         std::string &error) {
  // A run would refuse this after the launch; a dry run says so now.
  if (options.check && !hasReference()) {
    error = "--check: no reference for any output; " + noReferenceHint;
    return false;
  }
  for (const auto &[name, file] : outFiles) {
    int i = tensorIndex(name);
    if (bundle.params[size_t(i)].access == Access::Write &&
        !fromFiles.count(name)) {
      std::printf("note: --out %s skipped: a dry run writes no outputs\n",
                  name.c_str());
      continue;
    }
    if (!writeNpy(file, tensorToNpy(host[size_t(i)]), error)) {
      error = "--out " + name + ": " + error;
      return false;
    }
  }
  // --check validates the bundle's reference configuration too.
  if (options.check && !bundle.reference.is_null()) {
    std::map<std::string, std::vector<double>> hostRefs;
    if (!computeReference(bundle, plan, host, hostRefs, error))
      return false;
    if (printReferences)
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
  return true;
}

bool HostSession::collectOutputs(const FetchFn &fetch, std::string &error) {
  for (size_t i = 0; i < bundle.params.size(); ++i) {
    const Param &p = bundle.params[i];
    bool isOutput = p.isTensor && p.access != Access::Read;
    if (!isOutput && !outFiles.count(p.name))
      continue;
    HostTensor t;
    if (!fetch(i, t, error))
      return false;
    // Only poison tells an unwritten element; an output given by --in
    // keeps its contents where the kernel does not write.
    if (p.access == Access::Write && !fromFiles.count(p.name)) {
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
    if (!writeNpy(file, tensorToNpy(outputs[name]), error)) {
      error = "--out " + name + ": " + error;
      return false;
    }
  return true;
}

bool HostSession::checkOutputs(const std::string &noReferenceHint,
                               std::string &error) {
  if (!options.check)
    return true;
  // --ref files first; the bundle's own reference for the rest.
  bool needHost = false;
  for (const Param &p : bundle.params)
    needHost |= p.isTensor && p.access != Access::Read && !refs.count(p.name);
  if (needHost && !bundle.reference.is_null()) {
    std::map<std::string, std::vector<double>> hostRefs;
    if (!computeReference(bundle, plan, host, hostRefs, error))
      return false;
    for (auto &[name, values] : hostRefs)
      refs.emplace(name, std::move(values));
  }
  std::vector<DType> dtypes;
  for (const Param &p : bundle.params)
    if (p.isTensor)
      dtypes.push_back(p.dtype);
  double tol =
      options.tolerance >= 0 ? options.tolerance : toleranceFor(dtypes);
  bool any = false;
  for (const Param &p : bundle.params) {
    auto ref = refs.find(p.name);
    auto out = outputs.find(p.name);
    if (ref == refs.end() || out == outputs.end())
      continue;
    any = true;
    Comparison c = compare(out->second, ref->second, tol);
    std::printf("check %s: rel_l2 %.3e, max_abs %.3e, tol %.1e: %s\n",
                p.name.c_str(), c.relL2, c.maxAbs, c.tolerance,
                c.pass ? "PASS" : "FAIL");
    if (c.nonFinite)
      std::printf("check %s: %lld non-finite values where the reference "
                  "is finite (first at %s)\n",
                  p.name.c_str(), (long long)c.nonFinite,
                  formatIndex(out->second.shape, c.firstNonFinite).c_str());
    report.data["check"][p.name] = {{"rel_l2", c.relL2},
                                    {"max_abs", c.maxAbs},
                                    {"non_finite", c.nonFinite},
                                    {"tolerance", c.tolerance},
                                    {"pass", c.pass}};
    failed |= !c.pass;
  }
  if (!any) {
    error = "--check: no reference for any output; " + noReferenceHint;
    return false;
  }
  return true;
}

} // namespace tegula::rt
