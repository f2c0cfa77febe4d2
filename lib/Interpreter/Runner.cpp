//===- Runner.cpp - tile-run's flow around the interpreter ----------------===//
//
// Describes a kernel function as a bundle, then does what tile-run does
// (bind sizes and scalars, launch-time checks, inputs, poison, unwritten
// outputs, --out, --check, --json) with executeGrid in place of the GPU.
// Everything bundle-independent comes from lib/Runtime.
//
//===----------------------------------------------------------------------===//

#include "tegula/Interpreter/Interpreter.h"

#include "Tile/TileDialect.h"
#include "Tile/TileOps.h"
#include "tegula/Runtime/References.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>

using namespace mlir;
using nlohmann::json;

namespace tegula::interp {

using tile::TileDialect;

void registerInterpreterDialects(DialectRegistry &registry) {
  registry.insert<TileDialect, arith::ArithDialect, math::MathDialect,
                  scf::SCFDialect, func::FuncDialect>();
}

namespace {

/// The bundle dtype name of an element type, or "" if a bundle has none.
std::string dtypeOf(Type type) {
  if (type.isF16())
    return "f16";
  if (type.isBF16())
    return "bf16";
  if (type.isF32())
    return "f32";
  if (type.isInteger(1))
    return "bool";
  if (type.isInteger(32))
    return "i32";
  if (type.isInteger(64))
    return "i64";
  return "";
}

json attrToJson(Attribute attr) {
  if (auto b = dyn_cast<BoolAttr>(attr))
    return b.getValue();
  if (auto i = dyn_cast<IntegerAttr>(attr)) {
    if (i.getType().isInteger(1))
      return i.getValue().getBoolValue();
    return i.getValue().getSExtValue();
  }
  if (auto f = dyn_cast<FloatAttr>(attr))
    return f.getValueAsDouble();
  if (auto s = dyn_cast<StringAttr>(attr))
    return s.getValue().str();
  if (auto t = dyn_cast<TypeAttr>(attr)) {
    std::string name = dtypeOf(t.getValue());
    if (!name.empty())
      return name;
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  attr.print(os);
  return text;
}

json stringArray(Attribute attr) {
  json out = json::array();
  if (auto array = dyn_cast_or_null<ArrayAttr>(attr))
    for (Attribute a : array)
      if (auto s = dyn_cast<StringAttr>(a))
        out.push_back(s.getValue().str());
  return out;
}

uint64_t tensorSeed(uint64_t seed, size_t index) {
  // The same per-tensor streams as tile-run, so that both runners make the
  // same inputs from one --seed.
  return seed * 0x9e3779b97f4a7c15ull + (index + 1) * 0xd1b54a32d192ed03ull;
}

bool parseFileArgs(const std::vector<std::string> &args, const char *flag,
                   std::map<std::string, std::string> &out,
                   std::string &error) {
  for (const std::string &arg : args) {
    std::string name, file;
    if (!rt::splitAssignment(arg, name, file)) {
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

/// Collects the machine-readable report and writes it on every exit path.
struct Report {
  std::string path;
  json data = json::object();
  RunResult *result;

  int finish(int code) {
    data["ok"] = code == 0;
    result->exitCode = code;
    result->json = data.dump(2);
    if (path.empty())
      return code;
    std::ofstream out(path);
    out << result->json << "\n";
    if (!out) {
      std::fprintf(stderr, "error: cannot write '%s'\n", path.c_str());
      return result->exitCode = 1;
    }
    return code;
  }

  int fail(const std::string &message) {
    std::fflush(stdout);
    std::fprintf(stderr, "error: %s\n", message.c_str());
    data["error"] = message;
    return finish(1);
  }
};

} // namespace

bool bundleFromKernel(func::FuncOp kernel, const std::string &reference,
                      rt::Bundle &bundle, std::string &error) {
  std::string kname = kernel.getSymName().str();
  json root = json::object();
  root["kernel"] = kname;
  root["entry"] = kname;
  root["target"] = "sm_90a";
  int64_t warps = 4;
  if (auto w = kernel->getAttrOfType<IntegerAttr>(TileDialect::kWarpsAttrName))
    warps = w.getInt();
  root["threads"] = warps * 32;
  root["shared_bytes"] = 0;
  json tmpl = json::object();
  if (auto t = kernel->getAttrOfType<DictionaryAttr>(
          TileDialect::kTemplateAttrName))
    for (NamedAttribute a : t)
      tmpl[a.getName().str()] = attrToJson(a.getValue());
  root["template"] = tmpl;

  json params = json::array(), sizeVars = json::array();
  for (unsigned i = 0, e = kernel.getNumArguments(); i < e; ++i) {
    Type type = kernel.getArgument(i).getType();
    std::string where = "kernel '" + kname + "' argument " + std::to_string(i);
    if (auto sv = kernel.getArgAttrOfType<StringAttr>(
            i, TileDialect::kSizeVarAttrName)) {
      if (!type.isInteger(32)) {
        error = where + ": a size variable must be i32";
        return false;
      }
      sizeVars.push_back(sv.getValue().str());
      continue;
    }
    std::string name = "arg" + std::to_string(i);
    if (auto n =
            kernel.getArgAttrOfType<StringAttr>(i, TileDialect::kArgNameAttrName))
      name = n.getValue().str();
    json p = {{"name", name}};
    if (auto ptr = dyn_cast<tile::PtrType>(type)) {
      std::string dt = dtypeOf(ptr.getElementType());
      auto dims =
          kernel.getArgAttrOfType<ArrayAttr>(i, TileDialect::kArgDimsAttrName);
      if (dt.empty() || !dims) {
        error = where + " ('" + name +
                "'): a tensor argument needs a tile.dims attribute and an "
                "f16, bf16, f32, i32, i64 or i1 element type";
        return false;
      }
      p["kind"] = "tensor";
      p["dtype"] = dt;
      json jd = json::array();
      for (Attribute d : dims) {
        if (auto s = dyn_cast<StringAttr>(d))
          jd.push_back(s.getValue().str());
        else
          jd.push_back(std::to_string(cast<IntegerAttr>(d).getInt()));
      }
      p["dims"] = jd;
      std::string access = "readwrite";
      if (auto a = kernel.getArgAttrOfType<StringAttr>(
              i, TileDialect::kArgAccessAttrName))
        access = a.getValue().str();
      p["access"] = access;
    } else {
      std::string dt = dtypeOf(type);
      if (dt.empty() || dt == "f16" || dt == "bf16") {
        error = where + " ('" + name +
                "'): a scalar argument must be i32, i64, f32 or i1";
        return false;
      }
      p["kind"] = "scalar";
      p["dtype"] = dt;
    }
    params.push_back(p);
  }
  root["params"] = params;
  root["size_vars"] = sizeVars;
  json grid = stringArray(kernel->getAttr(TileDialect::kGridAttrName));
  if (grid.empty())
    grid = json::array({"1", "1", "1"});
  root["grid"] = grid;
  root["requires"] = stringArray(kernel->getAttr(TileDialect::kRequiresAttrName));
  for (auto [key, attr] : {std::pair{"flops", TileDialect::kFlopsAttrName},
                           std::pair{"bytes", TileDialect::kBytesAttrName}}) {
    if (auto s = kernel->getAttrOfType<StringAttr>(attr))
      root[key] = s.getValue().str();
    else
      root[key] = nullptr;
  }
  if (!reference.empty()) {
    if (reference.front() == '{') {
      json r = json::parse(reference, nullptr, /*allow_exceptions=*/false);
      if (r.is_discarded()) {
        error = "--reference: '" + reference + "' is not valid JSON";
        return false;
      }
      root["reference"] = r;
    } else {
      root["reference"] = reference;
    }
  }
  return rt::parseBundleJson(root.dump(), "@" + kname, bundle, error);
}

RunResult runKernel(func::FuncOp kernel, const RunOptions &opts) {
  using namespace rt;
  RunResult result;
  Report report{opts.jsonPath, json::object(), &result};
  std::string error;

  Bundle bundle;
  if (!bundleFromKernel(kernel, opts.reference, bundle, error))
    return report.fail(error), result;
  report.data["kernel"] = bundle.kernel;
  report.data["interpreter"] = true;

  BindingInputs inputs;
  for (const std::string &d : opts.dims)
    if (!parseDimsArg(d, inputs.dims, error))
      return report.fail(error), result;
  std::map<std::string, std::string> inFiles, outFiles, refFiles;
  if (!parseFileArgs(opts.scalars, "--scalar", inputs.scalars, error) ||
      !parseFileArgs(opts.ins, "--in", inFiles, error) ||
      !parseFileArgs(opts.outs, "--out", outFiles, error) ||
      !parseFileArgs(opts.refs, "--ref", refFiles, error))
    return report.fail(error), result;

  // --in files first: their shapes bind size variables.
  std::map<std::string, HostTensor> inTensors;
  for (const auto &[name, file] : inFiles) {
    const Param *p = bundle.findParam(name);
    if (!p || !p->isTensor)
      return report.fail("--in names '" + name +
                         "', which is not a tensor parameter of '" +
                         bundle.kernel + "'"),
             result;
    if (p->access == Access::Write)
      return report.fail("--in " + name + ": the kernel only writes '" + name +
                         "' (access write), so it takes no input"),
             result;
    NpyArray array;
    if (!readNpy(file, array, error))
      return report.fail("--in " + name + ": " + error), result;
    HostTensor tensor;
    if (!tensorFromNpy(array, p->dtype, tensor, error))
      return report.fail("--in " + name + ": '" + file + "' " + error), result;
    inputs.fileShapes[name] = tensor.shape;
    inTensors[name] = std::move(tensor);
  }

  LaunchPlan plan;
  if (!bindAndCheck(bundle, inputs, plan, error))
    return report.fail(error), result;
  for (const std::string &v : bundle.sizeVars)
    report.data["dims"][v] = plan.env[v];
  report.data["grid"] = plan.grid;

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
                         bundle.kernel + "'"),
             result;
  std::map<std::string, std::vector<double>> refs;
  for (const auto &[name, file] : refFiles) {
    int i = tensorIndex(name);
    if (i < 0 || bundle.params[size_t(i)].access == Access::Read)
      return report.fail("--ref names '" + name +
                         "', which is not an output tensor of '" +
                         bundle.kernel + "'"),
             result;
    NpyArray array;
    if (!readNpy(file, array, error))
      return report.fail("--ref " + name + ": " + error), result;
    if (array.shape != plan.shapes[size_t(i)])
      return report.fail("--ref " + name + ": '" + file + "' has shape " +
                         formatShape(array.shape) + " but '" + name + "' is " +
                         formatShape(plan.shapes[size_t(i)])),
             result;
    std::vector<double> values(array.data.size() / npyItemSize(array.descr));
    for (size_t k = 0; k < values.size(); ++k)
      values[k] = npyElement(array, k);
    refs[name] = std::move(values);
  }

  // Host tensors: the inputs the kernel sees (kept for the references) and
  // the buffers it runs on.
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
  std::printf("kernel %s:%s, grid [%lld, %lld, %lld], interpreted\n",
              bundle.kernel.c_str(), dimsText.c_str(), (long long)plan.grid[0],
              (long long)plan.grid[1], (long long)plan.grid[2]);

  if (opts.dryRun) {
    for (const auto &[name, file] : outFiles) {
      int i = tensorIndex(name);
      if (bundle.params[size_t(i)].access == Access::Write) {
        std::printf("note: --out %s skipped: a dry run writes no outputs\n",
                    name.c_str());
        continue;
      }
      if (!writeNpy(file, tensorToNpy(host[size_t(i)]), error))
        return report.fail("--out " + name + ": " + error), result;
    }
    if (opts.check && !bundle.reference.is_null()) {
      std::map<std::string, std::vector<double>> hostRefs;
      if (!computeReference(bundle, plan, host, hostRefs, error))
        return report.fail(error), result;
    }
    std::printf("dry run: all launch-time checks passed\n");
    report.finish(0);
    return result;
  }

  std::vector<HostTensor> buffers = host;
  if (!executeGrid(kernel, bundle, plan, buffers, error))
    return report.fail(error), result;

  bool failed = false;
  for (size_t i = 0; i < bundle.params.size(); ++i) {
    const Param &p = bundle.params[i];
    bool isOutput = p.isTensor && p.access != Access::Read;
    if (!isOutput && !outFiles.count(p.name))
      continue;
    const HostTensor &t = buffers[i];
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
    result.outputs[p.name] = t;
  }
  for (const auto &[name, file] : outFiles)
    if (!writeNpy(file, tensorToNpy(result.outputs[name]), error))
      return report.fail("--out " + name + ": " + error), result;

  if (opts.check) {
    bool needHost = false;
    for (const Param &p : bundle.params)
      needHost |= p.isTensor && p.access != Access::Read && !refs.count(p.name);
    if (needHost && !bundle.reference.is_null()) {
      std::map<std::string, std::vector<double>> hostRefs;
      if (!computeReference(bundle, plan, host, hostRefs, error))
        return report.fail(error), result;
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
      auto out = result.outputs.find(p.name);
      if (ref == refs.end() || out == result.outputs.end())
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
    if (!any)
      return report.fail("--check: no reference for any output; pass "
                         "--reference NAME or --ref NAME=FILE.npy"),
             result;
  }
  report.finish(failed ? 1 : 0);
  return result;
}

int runMlirFile(const std::string &path, const std::string &kernelName,
                const RunOptions &options) {
  DialectRegistry registry;
  registerInterpreterDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  llvm::SourceMgr sourceMgr;
  std::string includeError;
  if (sourceMgr.AddIncludeFile(path, llvm::SMLoc(), includeError) == 0) {
    std::fprintf(stderr, "error: cannot open '%s'\n", path.c_str());
    return 1;
  }
  // Parse and verifier errors print as FILE:LINE:COL with the source line.
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return 1;
  std::vector<func::FuncOp> kernels;
  func::FuncOp chosen;
  module->walk([&](func::FuncOp f) {
    if (f->hasAttr(TileDialect::kKernelAttrName))
      kernels.push_back(f);
    if (!kernelName.empty() && f.getSymName() == kernelName)
      chosen = f;
  });
  if (!kernelName.empty() && !chosen) {
    std::fprintf(stderr, "error: '%s' has no function '%s'\n", path.c_str(),
                 kernelName.c_str());
    return 1;
  }
  if (!chosen) {
    if (kernels.size() != 1) {
      std::string names;
      for (func::FuncOp k : kernels)
        names += (names.empty() ? "" : ", ") + k.getSymName().str();
      std::fprintf(stderr,
                   "error: '%s' has %zu tile.kernel functions (%s); pick one "
                   "with -k\n",
                   path.c_str(), kernels.size(), names.c_str());
      return 1;
    }
    chosen = kernels.front();
  }
  if (chosen.isExternal()) {
    std::fprintf(stderr, "error: '%s' has no body\n", kernelName.c_str());
    return 1;
  }
  return runKernel(chosen, options).exitCode;
}

} // namespace tegula::interp
