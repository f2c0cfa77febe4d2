//===- tile_fuzzer.cpp - libFuzzer targets over tilec ---------------------===//
//
// Feeds arbitrary bytes to tilec's stages. Any crash, hang, sanitizer report
// or internal error is a bug: malformed input must only ever produce
// diagnostics. Two targets are built from this file:
//  - tile-fuzzer: lexer, parser, semantic analysis and IR generation, each
//    input compiled twice, with no -D (template defaults only) and with
//    -D D=64 (the shipped kernels' parameter);
//  - tile-fuzzer-lower (TEGULA_FUZZ_LOWER): programs that compile go on
//    through layouts, the conversion to NVVM, LLVM IR and NVPTX to PTX. The
//    input's length picks the target (sm_90a or sm_80) and whether -D D=64
//    is set, so both the defaults-only path and the shipped kernels' one
//    reach the back end without spending two lowerings on each input.
//
//===----------------------------------------------------------------------===//

#include "tegula/Frontend/Frontend.h"
#ifdef TEGULA_FUZZ_LOWER
#include "tegula/Target/Target.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#endif

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include "llvm/Support/raw_ostream.h"

#include <cstdlib>

using namespace tegula;
using namespace tegula::frontend;

namespace {

/// Messages that only a compiler bug prints.
bool isInternal(const std::string &messages) {
  return messages.find("internal compiler error") != std::string::npos ||
         messages.find("please report") != std::string::npos ||
         messages.find("failed to legalize") != std::string::npos;
}

[[noreturn]] void crash(const std::string &messages) {
  llvm::errs() << messages;
  abort();
}

mlir::MLIRContext &fuzzContext() {
  static mlir::MLIRContext *context = [] {
    auto *c = new mlir::MLIRContext(mlir::MLIRContext::Threading::DISABLED);
#ifdef TEGULA_FUZZ_LOWER
    target::registerLowering(*c);
#endif
    registerFrontendDialects(*c);
    return c;
  }();
  return *context;
}

void compileOnce(const std::string &text,
                 std::vector<std::pair<std::string, std::string>> defines,
                 const TargetInfo &target) {
  mlir::MLIRContext &context = fuzzContext();
  std::string messages;
  llvm::raw_string_ostream os(messages);
  DiagEngine diags("fuzz.tile", text, os);
  Program program = parseProgram(diags);
  if (diags.hasErrors())
    return;
  CompileOptions options;
  options.defines = std::move(defines);
  options.target = target;
  mlir::OwningOpRef<mlir::ModuleOp> module =
      compileProgram(program, diags, context, options);
  if (isInternal(messages))
    crash(messages);
#ifdef TEGULA_FUZZ_LOWER
  if (!module)
    return;
  // Lowering errors (a shared-memory plan over the budget) are user errors;
  // only internal ones are findings.
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &d) {
    os << d.str() << "\n";
    return mlir::success();
  });
  if (failed(target::lowerToGPU(*module)) ||
      failed(target::lowerToLLVMDialect(*module))) {
    if (isInternal(messages))
      crash(messages);
    return;
  }
  llvm::LLVMContext llvmContext;
  std::string error;
  auto llvmModule =
      target::translateToLLVMIR(*module, llvmContext, target, error);
  if (!llvmModule)
    crash("translation to LLVM IR failed: " + error);
  if (target::emitPTX(*llvmModule, target, error).empty())
    crash("PTX emission failed: " + error);
#else
  (void)module;
#endif
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
#ifdef TEGULA_FUZZ_LOWER
  TargetInfo target = size % 2 ? *TargetInfo::lookup("sm_80")
                                : TargetInfo::defaultTarget();
  if (size / 2 % 2)
    compileOnce(text, {{"D", "64"}}, target);
  else
    compileOnce(text, {}, target);
#else
  TargetInfo target = TargetInfo::defaultTarget();
  compileOnce(text, {}, target);
  compileOnce(text, {{"D", "64"}}, target);
#endif
  return 0;
}
