//===- tilec.cpp - The Tegula compiler driver -----------------------------===//
//
// tilec FILE.tile [-k KERNEL] [-D NAME=VALUE]... [--target TARGET]
//       [--emit ast|tile|gpu|llvm|ptx|bundle] [-o PATH] [--reference REF] [-g]
//       [--variant NAME] [--run [tile-run's options]]
//
// The options, then one chain of stages: the source checked and compiled
// to tile IR, then (kStages) laid out and lowered to NVVM-level MLIR
// ("gpu"), to LLVM IR, to PTX. `--emit X` stops after stage X and writes
// what it holds. The bundle stage (Bundles.cpp) takes each kernel of each
// -D config through the same lowering, ptxas and the bundle writer.
//
//===----------------------------------------------------------------------===//

#include "Bundles.h"
#include "Driver.h"

#include "tegula/Frontend/Frontend.h"
#include "tegula/Interpreter/CLIOptions.h"
#include "tegula/Interpreter/Interpreter.h"
#include "tegula/Target/KernelDescription.h"
#include "tegula/Target/Target.h"
#include "tegula/Target/Variants.h"

#include "Tile/TileOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <CLI/CLI.hpp>
#include <new>

using namespace tegula;
using namespace tegula::frontend;
using namespace tegula::tilec;

namespace {

/// tilec's command line.
struct Options {
  std::string input, kernel, emit = "bundle", output, variant;
  std::string target = TargetInfo::defaultTarget().chip.str();
  std::vector<std::string> defines;
  bool run = false, noCubin = false, debug = false;
  interp::RunOptions runOptions;
};

/// What the stages hand on, from the checked program to PTX.
struct Compilation {
  const Options &options;
  const Program &program;
  mlir::ModuleOp module;
  std::optional<TargetInfo> targetInfo;
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule;
  std::string ptx;
};

std::string printModule(mlir::ModuleOp module) {
  std::string text;
  llvm::raw_string_ostream os(text);
  mlir::OpPrintingFlags flags;
  flags.enableDebugInfo(/*enable=*/false);
  module->print(os, flags);
  return text;
}

/// Tile IR, laid out and lowered to NVVM-level MLIR. The kernels are
/// described first, so that a kernel no bundle can carry fails here too.
bool toGPU(Compilation &c) {
  std::string error;
  if (!target::describeKernels(c.module, c.options.runOptions.reference, error))
    return fail(error), false;
  return succeeded(target::lowerToGPU(c.module));
}

/// NVVM-level MLIR to LLVM IR, for the target the module names.
bool toLLVM(Compilation &c) {
  if (failed(target::lowerToLLVMDialect(c.module)))
    return false;
  mlir::FailureOr<TargetInfo> targetInfo = tile::getTarget(c.module);
  if (failed(targetInfo))
    return false;
  c.targetInfo = *targetInfo;
  auto llvmModule =
      target::translateToLLVMIR(c.module, c.llvmContext, *c.targetInfo);
  if (!llvmModule)
    return fail(llvm::toString(llvmModule.takeError())), false;
  c.llvmModule = std::move(*llvmModule);
  return true;
}

bool toPTX(Compilation &c) {
  llvm::Expected<std::string> ptx =
      target::emitPTX(*c.llvmModule, *c.targetInfo);
  if (!ptx)
    return fail(llvm::toString(ptx.takeError())), false;
  c.ptx = std::move(*ptx);
  return true;
}

/// One stage of the chain: its --emit name, what it does (nothing for the
/// stages the front end already reached) and what --emit writes after it.
struct Stage {
  const char *name;
  bool (*run)(Compilation &);
  std::string (*print)(Compilation &);
};

const Stage kStages[] = {
    {"ast", nullptr,
     [](Compilation &c) {
       std::string text;
       llvm::raw_string_ostream os(text);
       dumpAST(c.program, os);
       return text;
     }},
    {"tile", nullptr, [](Compilation &c) { return printModule(c.module); }},
    {"gpu", toGPU, [](Compilation &c) { return printModule(c.module); }},
    {"llvm", toLLVM,
     [](Compilation &c) {
       std::string text;
       llvm::raw_string_ostream os(text);
       c.llvmModule->print(os, nullptr);
       return text;
     }},
    {"ptx", toPTX, [](Compilation &c) { return c.ptx; }},
};

/// Every --emit: the chain's stages, then the bundle.
std::vector<std::string> emitNames() {
  std::vector<std::string> names;
  for (const Stage &stage : kStages)
    names.push_back(stage.name);
  names.push_back("bundle");
  return names;
}

/// Parses the command line into `options`; an exit code when tilec is
/// done (--help, --list-builtins, a bad option).
std::optional<int> parseOptions(int argc, char **argv, Options &options) {
  CLI::App app{"tilec: the Tegula tile-language compiler"};
  app.add_option("file", options.input, "the .tile source file")->required();
  app.add_option("-k,--kernel", options.kernel, "compile only this kernel");
  app.add_option("-D", options.defines,
                 "set a template parameter: -D NAME=VALUE")
      ->allow_extra_args(false);
  app.add_option("--target", options.target,
                 "the GPU target (default " + options.target + ")")
      ->check(CLI::IsMember(TargetInfo::names()));
  app.add_option("--emit", options.emit,
                 "stop after a stage: ast, tile, gpu, llvm, ptx, or bundle "
                 "(default: KERNEL.ptx and KERNEL.json in the -o directory)")
      ->check(CLI::IsMember(emitNames()));
  app.add_option("-o", options.output,
                 "output file (default: stdout), or the bundle directory "
                 "(default: .)");
  app.add_flag("--no-cubin", options.noCubin,
               "write no KERNEL.cubin beside KERNEL.ptx (by default ptxas "
               "assembles one for --target when it is on PATH)");
  app.add_flag("-g", options.debug,
               "compile device_assert into the GPU code (a failing assert "
               "reports its message, block and thread and fails the launch; "
               "without -g it is left out, and the interpreter checks it "
               "either way)");
  app.add_option("--variant", options.variant,
                 "take a specialized variant of the one kernel (div16, "
                 "div16_unit, unit) through --emit's stages or --run, in "
                 "place of its general code (docs/runtime.md)");
  app.add_flag("--run", options.run,
               "run the kernel in the tile-IR interpreter instead of "
               "compiling it for the GPU");
  app.add_flag_callback(
      "--list-builtins",
      [] {
        for (const std::string &name : builtinNames())
          llvm::outs() << name << "\n";
        llvm::outs().flush();
        throw CLI::Success();
      },
      "print the names of the builtin functions, one a line, and exit");
  interp::addRunOptions(app, options.runOptions, "--run options (as tile-run)");
  // --reference (from the run options) also names the bundle's reference.
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    int code = app.exit(e);
    return code == 0 ? 0 : 1;
  }
  return std::nullopt;
}

/// Runs the module's one kernel in the tile-IR interpreter (--run).
int runInInterpreter(mlir::ModuleOp module, const Options &options) {
  std::vector<std::string> names;
  module.walk([&](mlir::func::FuncOp func) {
    if (func->hasAttr(tile::TileDialect::kKernelAttrName))
      names.push_back(func.getSymName().str());
  });
  if (names.size() != 1)
    return fail("--run needs exactly one kernel; pick one with -k");
  mlir::func::FuncOp func = module.lookupSymbol<mlir::func::FuncOp>(names[0]);
  interp::RunOptions withReference = options.runOptions;
  if (withReference.reference.empty())
    withReference.reference = target::defaultReference(names[0]);
  // The interpreter holds host copies of every tensor: a size that fits
  // the runner's check can still exhaust memory here.
  try {
    return interp::runKernel(func, withReference).exitCode;
  } catch (const std::bad_alloc &) {
    return fail("out of host memory running the kernel in the interpreter; "
                "use smaller --dims");
  }
}

/// Makes the variant `name` of the module's one kernel the kernel
/// (--variant): its function takes the kernel's name and the general code's
/// place, so that every stage and the interpreter see it.
bool selectVariant(mlir::ModuleOp module, const std::string &name) {
  std::vector<mlir::func::FuncOp> kernels;
  module.walk([&](mlir::func::FuncOp func) {
    if (func->hasAttr(tile::TileDialect::kKernelAttrName))
      kernels.push_back(func);
  });
  if (kernels.size() != 1)
    return fail("--variant needs exactly one kernel; pick one with -k"), false;
  std::string kernel = kernels[0].getSymName().str(), names;
  std::vector<target::KernelVariant> variants =
      target::addDivisibilityVariants(module);
  mlir::func::FuncOp chosen;
  for (const target::KernelVariant &variant : variants) {
    names += (names.empty() ? "" : ", ") + variant.name;
    auto func = module.lookupSymbol<mlir::func::FuncOp>(variant.function);
    if (variant.name == name)
      chosen = func;
    else
      func.erase();
  }
  if (!chosen)
    return fail("kernel '" + kernel + "' has no variant '" + name + "' (" +
                (names.empty() ? "it has none" : "variants: " + names) + ")"),
           false;
  kernels[0].erase();
  chosen.setSymName(kernel);
  return true;
}

/// The chain after the front end: --run, the stages up to --emit, or the
/// bundle stage.
int runStages(Compilation &c, BundleRequest request) {
  const Options &options = c.options;
  if (!options.variant.empty()) {
    if (!options.run && options.emit == "bundle")
      return fail("--variant takes a variant through --emit's stages or "
                  "--run; a bundle carries every variant");
    if (!selectVariant(c.module, options.variant))
      return 1;
  }
  if (options.run)
    return runInInterpreter(c.module, options);
  if (options.emit == "bundle")
    return writeBundles(c.module, request);
  std::string output = options.output.empty() ? "-" : options.output;
  for (const Stage &stage : kStages) {
    if (stage.run && !stage.run(c))
      return 1;
    if (options.emit == stage.name)
      return writeFile(output, stage.print(c)) ? 0 : 1;
  }
  llvm_unreachable("the parser checks --emit against emitNames()");
}

int compile(int argc, char **argv) {
  Options options;
  if (std::optional<int> done = parseOptions(argc, argv, options))
    return *done;
  Sweep sweep;
  if (!parseSweep(options.defines, sweep))
    return 1;
  if (configCount(sweep) > 1 && (options.emit != "bundle" || options.run))
    return fail("a comma list in -D makes configs of a bundle: it needs "
                "--emit bundle and no --run");
  CompileOptions compileOptions;
  compileOptions.kernel = options.kernel;
  compileOptions.debug = options.debug;
  compileOptions.defines = configDefines(sweep, 0);
  // The front half compiles for --target (checked against
  // TargetInfo::names() by the parser) and records it in the module's
  // tile.target, which every later stage reads.
  compileOptions.target = *TargetInfo::lookup(options.target);

  auto buffer = llvm::MemoryBuffer::getFileOrSTDIN(options.input);
  if (!buffer)
    return fail("cannot read '" + options.input +
                "': " + buffer.getError().message());
  DiagEngine diags(options.input, (*buffer)->getBuffer().str(), llvm::errs());
  Program program = parseProgram(diags);

  // Checks run whatever --emit asks for: the AST is printed only for a
  // program that compiles.
  mlir::MLIRContext context;
  target::registerLowering(context);
  mlir::OwningOpRef<mlir::ModuleOp> module;
  if (!diags.hasErrors())
    module = compileProgram(program, diags, context, compileOptions);
  if (diags.hasErrors() || !module)
    return 1;

  // Errors from the lowering (shared memory past the target's limit once
  // conversion scratch is counted, say) print like the frontend's: the
  // location, the source line and a caret.
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(
                                   (*buffer)->getBuffer(), options.input),
                               llvm::SMLoc());
  mlir::SourceMgrDiagnosticHandler lowering(sourceMgr, &context);
  context.printOpOnDiagnostic(false);

  Compilation c{options, program, *module, {}, {}, {}, {}};
  return runStages(c, {program, diags, context, compileOptions, sweep,
                       options.runOptions.reference, options.output,
                       options.noCubin});
}

} // namespace

int main(int argc, char **argv) {
  int code = compile(argc, argv);
  return flushStdout() ? code : 1;
}
