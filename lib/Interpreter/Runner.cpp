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
#include "tegula/Target/KernelDescription.h"

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

namespace tegula::interp {

using tile::TileDialect;

void registerInterpreterDialects(DialectRegistry &registry) {
  registry.insert<TileDialect, arith::ArithDialect, math::MathDialect,
                  scf::SCFDialect, func::FuncDialect>();
}

bool bundleFromKernel(func::FuncOp kernel, const std::string &reference,
                      rt::Bundle &bundle, std::string &error) {
  // The description tilec writes, read back, so the interpreter binds and
  // checks its inputs exactly as tile-run does.
  std::optional<rt::Bundle> description =
      target::describeKernel(kernel, reference, error);
  if (!description)
    return false;
  return rt::parseBundleJson(rt::writeBundleJson(*description),
                             "@" + kernel.getSymName().str(), bundle, error);
}

/// How the interpreter's --check can get a reference.
static const char *const kNoReferenceHint =
    "pass --reference NAME or --ref NAME=FILE.npy";

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
    if (!session.dryRun(/*printReferences=*/false, kNoReferenceHint, error))
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
      !session.checkOutputs(kNoReferenceHint, error))
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
