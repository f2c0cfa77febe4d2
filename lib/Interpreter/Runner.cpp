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
#include "tegula/Runtime/HostSession.h"

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

#include <cstdio>

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
  rt::HostSession session(opts.jsonPath);
  rt::RunReport &report = session.report;
  const rt::Bundle &bundle = session.bundle;
  const rt::LaunchPlan &plan = session.plan;
  std::string error;
  // Every exit finishes the report; the result takes its status, its text
  // and whatever outputs were fetched by then.
  RunResult result;
  auto finish = [&](int code) {
    result.exitCode = code;
    result.json = report.text;
    result.outputs = std::move(session.outputs);
    return std::move(result);
  };
  auto fail = [&](const std::string &message) {
    return finish(report.fail(message));
  };

  if (!bundleFromKernel(kernel, opts.reference, session.bundle, error))
    return fail(error);
  report.data["kernel"] = bundle.kernel;
  report.data["interpreter"] = true;

  if (!session.bind(opts, error) || !session.prepareHostTensors(error))
    return fail(error);

  std::printf("kernel %s:%s, grid [%lld, %lld, %lld], interpreted\n",
              bundle.kernel.c_str(), session.dimsText().c_str(),
              (long long)plan.grid[0], (long long)plan.grid[1],
              (long long)plan.grid[2]);

  if (opts.dryRun) {
    if (!session.dryRun(/*printReferences=*/false, error))
      return fail(error);
    return finish(report.finish(0));
  }

  // The interpreter runs on copies; `session.host` stays as the inputs the
  // references see.
  std::vector<rt::HostTensor> buffers = session.host;
  if (!executeGrid(kernel, bundle, plan, buffers, error))
    return fail(error);

  auto take = [&](size_t i, rt::HostTensor &t, std::string &) {
    t = std::move(buffers[i]);
    return true;
  };
  if (!session.collectOutputs(take, error) ||
      !session.checkOutputs("pass --reference NAME or --ref NAME=FILE.npy",
                            error))
    return fail(error);
  return finish(report.finish(session.failed ? 1 : 0));
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
