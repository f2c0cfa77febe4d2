//===- tilec.cpp - The Tegula compiler driver -----------------------------===//
//
// tilec FILE.tile [-k KERNEL] [-D NAME=VALUE]... [--target TARGET]
//       [--emit ast|tile|gpu|llvm|ptx|bundle] [-o PATH] [--reference REF]
//       [--run [tile-run's options]]
//
//===----------------------------------------------------------------------===//

#include "tegula/Frontend/Frontend.h"
#include "tegula/Interpreter/CLIOptions.h"
#include "tegula/Interpreter/Interpreter.h"
#include "tegula/Target/KernelDescription.h"
#include "tegula/Target/Target.h"
#include "tegula/Target/Variants.h"

#include "Tile/TileOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <CLI/CLI.hpp>
#include <new>

using namespace tegula;
using namespace tegula::frontend;

namespace {

int fail(const llvm::Twine &message) {
  llvm::errs() << "tilec: error: " << message << "\n";
  return 1;
}

/// Writes `text` to `path` ("-" is stdout).
bool writeFile(llvm::StringRef path, llvm::StringRef text) {
  std::error_code ec;
  llvm::ToolOutputFile out(path, ec, llvm::sys::fs::OF_Text);
  if (ec) {
    fail("cannot write '" + path + "': " + ec.message());
    return false;
  }
  out.os() << text;
  out.keep();
  return true;
}

std::string printModule(mlir::ModuleOp module) {
  std::string text;
  llvm::raw_string_ostream os(text);
  mlir::OpPrintingFlags flags;
  flags.enableDebugInfo(/*enable=*/false);
  module->print(os, flags);
  return text;
}

/// The names of the kernels (tile.kernel functions) of `module`.
std::vector<std::string> kernelNames(mlir::ModuleOp module) {
  std::vector<std::string> names;
  module.walk([&](mlir::func::FuncOp func) {
    if (func->hasAttr(tile::TileDialect::kKernelAttrName))
      names.push_back(func.getSymName().str());
  });
  return names;
}

/// The LLVM-dialect module with only kernel `keep` left.
mlir::OwningOpRef<mlir::ModuleOp> onlyKernel(mlir::ModuleOp llvmModule,
                                             llvm::StringRef keep) {
  mlir::OwningOpRef<mlir::ModuleOp> copy = llvmModule.clone();
  llvm::SmallVector<mlir::LLVM::LLVMFuncOp> others;
  copy->walk([&](mlir::LLVM::LLVMFuncOp func) {
    if (func.getSymName() != keep &&
        func->hasAttr(tile::TileDialect::kKernelAttrName))
      others.push_back(func);
  });
  for (auto func : others)
    func.erase();
  return copy;
}

/// Assembles `ptxPath` into `cubinPath` for `chip` with ptxas, so that a
/// launch on that GPU needs no PTX JIT (docs/runtime.md, "cubin"). Without
/// ptxas, or when it fails, warns and returns false: the bundle then ships
/// PTX only, which every launcher can JIT. `ptxas` is its path.
bool assembleCubin(llvm::StringRef ptxas, llvm::StringRef chip,
                   llvm::StringRef ptxPath, llvm::StringRef cubinPath) {
  auto warn = [&](const llvm::Twine &why) {
    llvm::sys::fs::remove(cubinPath);
    llvm::errs() << "tilec: warning: " << why << "; '" << ptxPath
                 << "' ships without a cubin\n";
    return false;
  };
  llvm::SmallString<128> log;
  if (llvm::sys::fs::createTemporaryFile("tilec-ptxas", "log", log))
    return warn("cannot create a temporary file for ptxas's output");
  std::string arch = ("-arch=" + chip).str();
  llvm::StringRef args[] = {ptxas, arch, "-o", cubinPath, ptxPath};
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, log.str(),
                                                log.str()};
  std::string error;
  int code =
      llvm::sys::ExecuteAndWait(ptxas, args, std::nullopt, redirects,
                                /*SecondsToWait=*/0, /*MemoryLimit=*/0, &error);
  std::string output;
  if (auto text = llvm::MemoryBuffer::getFile(log))
    output = llvm::StringRef((*text)->getBuffer()).trim().str();
  llvm::sys::fs::remove(log);
  if (code == 0)
    return true;
  if (size_t newline = output.find('\n'); newline != std::string::npos)
    output.resize(newline);
  return warn("ptxas failed" +
              (code < 0 ? llvm::Twine(" (") + error + ")"
                        : llvm::Twine(" (exit ") + llvm::Twine(code) + ")") +
              (output.empty() ? "" : ": " + output));
}

} // namespace

int main(int argc, char **argv) {
  CLI::App app{"tilec: the Tegula tile-language compiler"};
  std::string input, kernel, emit = "bundle", output;
  std::string target = TargetInfo::defaultTarget().chip.str();
  std::vector<std::string> defines;
  bool run = false;
  interp::RunOptions runOptions;
  app.add_option("file", input, "the .tile source file")->required();
  app.add_option("-k,--kernel", kernel, "compile only this kernel");
  app.add_option("-D", defines, "set a template parameter: -D NAME=VALUE")
      ->allow_extra_args(false);
  app.add_option("--target", target, "the GPU target (default " + target + ")")
      ->check(CLI::IsMember(TargetInfo::names()));
  app.add_option("--emit", emit,
                 "stop after a stage: ast, tile, gpu, llvm, ptx, or bundle "
                 "(default: KERNEL.ptx and KERNEL.json in the -o directory)")
      ->check(CLI::IsMember({"ast", "tile", "gpu", "llvm", "ptx", "bundle"}));
  app.add_option("-o", output,
                 "output file (default: stdout), or the bundle directory "
                 "(default: .)");
  bool noCubin = false;
  app.add_flag("--no-cubin", noCubin,
               "write no KERNEL.cubin beside KERNEL.ptx (by default ptxas "
               "assembles one for --target when it is on PATH)");
  app.add_flag("--run", run,
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
  interp::addRunOptions(app, runOptions, "--run options (as tile-run)");
  // --reference (from the run options) also names the bundle's reference.
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    int code = app.exit(e);
    return code == 0 ? 0 : 1;
  }

  CompileOptions options;
  options.kernel = kernel;
  for (const std::string &d : defines) {
    size_t eq = d.find('=');
    if (eq == std::string::npos || eq == 0)
      return fail("-D expects NAME=VALUE, got '" + d + "'");
    options.defines.emplace_back(d.substr(0, eq), d.substr(eq + 1));
  }
  // --target was checked against TargetInfo::names() by the parser.
  std::optional<TargetInfo> targetInfo = TargetInfo::lookup(target);
  options.target = *targetInfo;

  auto buffer = llvm::MemoryBuffer::getFileOrSTDIN(input);
  if (!buffer)
    return fail("cannot read '" + input + "': " + buffer.getError().message());
  DiagEngine diags(input, (*buffer)->getBuffer().str(), llvm::errs());
  Program program = parseProgram(diags);

  // Checks run whatever --emit asks for: the AST is printed only for a
  // program that compiles.
  mlir::MLIRContext context;
  target::registerLowering(context);
  mlir::OwningOpRef<mlir::ModuleOp> module;
  if (!diags.hasErrors())
    module = compileProgram(program, diags, context, options);
  if (diags.hasErrors() || !module)
    return 1;

  // Errors from the lowering (shared memory past the target's limit once
  // conversion scratch is counted, say) print like the frontend's: the
  // location, the source line and a caret.
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy((*buffer)->getBuffer(), input),
      llvm::SMLoc());
  mlir::SourceMgrDiagnosticHandler lowering(sourceMgr, &context);
  context.printOpOnDiagnostic(false);

  if (run) {
    std::vector<std::string> names = kernelNames(*module);
    if (names.size() != 1)
      return fail("--run needs exactly one kernel; pick one with -k");
    mlir::func::FuncOp func =
        module->lookupSymbol<mlir::func::FuncOp>(names[0]);
    interp::RunOptions withReference = runOptions;
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

  if (emit == "ast") {
    std::string text;
    llvm::raw_string_ostream os(text);
    dumpAST(program, os);
    return writeFile(output.empty() ? "-" : output, text) ? 0 : 1;
  }
  if (emit == "tile")
    return writeFile(output.empty() ? "-" : output, printModule(*module)) ? 0
                                                                          : 1;

  std::string describeError;
  std::optional<std::map<std::string, std::string>> described =
      target::describeKernels(*module, runOptions.reference, describeError);
  if (!described)
    return fail(describeError);
  std::map<std::string, std::string> &descriptions = *described;
  // A bundle carries, beside each kernel's general code, a build that
  // assumes its sizes are multiples of 16 (chosen at launch when they are).
  std::vector<target::KernelVariant> variants;
  if (emit == "bundle")
    variants = target::addDivisibilityVariants(*module);
  if (failed(target::lowerToGPU(*module)))
    return 1;
  if (emit == "gpu")
    return writeFile(output.empty() ? "-" : output, printModule(*module)) ? 0
                                                                          : 1;
  std::map<std::string, int64_t> sharedBytes;
  module->walk([&](mlir::func::FuncOp func) {
    if (auto bytes = func->getAttrOfType<mlir::IntegerAttr>(
            tile::TileDialect::kSharedBytesAttrName))
      sharedBytes[func.getSymName().str()] = bytes.getInt();
  });
  if (failed(target::lowerToLLVMDialect(*module)))
    return 1;

  std::string error;
  if (emit == "llvm" || emit == "ptx") {
    llvm::LLVMContext llvmContext;
    auto llvmModule =
        target::translateToLLVMIR(*module, llvmContext, *targetInfo, error);
    if (!llvmModule)
      return fail(error);
    std::string text;
    if (emit == "llvm") {
      llvm::raw_string_ostream os(text);
      llvmModule->print(os, nullptr);
    } else {
      text = target::emitPTX(*llvmModule, *targetInfo, error);
      if (text.empty())
        return fail(error);
    }
    return writeFile(output.empty() ? "-" : output, text) ? 0 : 1;
  }

  // The bundle: one KERNEL.ptx with a single .entry and KERNEL.json each.
  std::string directory = output.empty() ? "." : output;
  if (std::error_code ec = llvm::sys::fs::create_directories(directory))
    return fail("cannot create '" + directory + "': " + ec.message());
  // PTX of kernel function `function` under the entry name `entry`.
  auto emitKernel = [&](llvm::StringRef function,
                        llvm::StringRef entry) -> std::optional<std::string> {
    mlir::OwningOpRef<mlir::ModuleOp> single = onlyKernel(*module, function);
    if (function != entry)
      single->lookupSymbol<mlir::LLVM::LLVMFuncOp>(function).setSymName(entry);
    llvm::LLVMContext llvmContext;
    auto llvmModule =
        target::translateToLLVMIR(*single, llvmContext, *targetInfo, error);
    if (!llvmModule)
      return std::nullopt;
    std::string ptx = target::emitPTX(*llvmModule, *targetInfo, error);
    if (ptx.empty())
      return std::nullopt;
    return ptx;
  };
  std::string ptxas;
  if (!noCubin) {
    if (llvm::ErrorOr<std::string> found =
            llvm::sys::findProgramByName("ptxas"))
      ptxas = *found;
    else
      llvm::errs() << "tilec: warning: no ptxas on PATH: the bundle ships "
                      "PTX only (no KERNEL.cubin)\n";
  }
  // KERNEL.cubin beside FILE.ptx when ptxas assembles it, else "".
  auto cubinFor = [&](llvm::StringRef ptxPath) -> std::string {
    if (ptxas.empty())
      return "";
    llvm::SmallString<256> cubinPath(ptxPath);
    llvm::sys::path::replace_extension(cubinPath, "cubin");
    if (!assembleCubin(ptxas, targetInfo->chip, ptxPath, cubinPath))
      return "";
    return llvm::sys::path::filename(cubinPath).str();
  };
  for (const auto &[name, description] : descriptions) {
    std::optional<std::string> ptx = emitKernel(name, name);
    if (!ptx)
      return fail(error);
    llvm::SmallString<256> ptxPath(directory), jsonPath(directory);
    llvm::sys::path::append(ptxPath, name + ".ptx");
    llvm::sys::path::append(jsonPath, name + ".json");
    if (!writeFile(ptxPath, *ptx))
      return 1;
    std::string cubin = cubinFor(ptxPath);
    nlohmann::json described = nlohmann::json::array();
    for (const target::KernelVariant &variant : variants) {
      if (variant.kernel != name)
        continue;
      std::optional<std::string> variantPtx =
          emitKernel(variant.function, name);
      if (!variantPtx)
        return fail(error);
      // A variant whose code came out the same is not worth a choice.
      if (*variantPtx == *ptx)
        continue;
      std::string file = name + "." + variant.name + ".ptx";
      llvm::SmallString<256> variantPath(directory);
      llvm::sys::path::append(variantPath, file);
      if (!writeFile(variantPath, *variantPtx))
        return 1;
      described.push_back({{"name", variant.name},
                           {"ptx", file},
                           {"when", variant.when},
                           {"shared_bytes", sharedBytes[variant.function]}});
      if (std::string variantCubin = cubinFor(variantPath);
          !variantCubin.empty())
        described.back()["cubin"] = variantCubin;
    }
    std::string finished =
        target::finishDescription(description, sharedBytes[name], described);
    if (!cubin.empty()) {
      nlohmann::json withCubin = nlohmann::json::parse(finished);
      withCubin["cubin"] = cubin;
      finished = withCubin.dump(2) + "\n";
    }
    if (!writeFile(jsonPath, finished))
      return 1;
  }
  return 0;
}
