//===- tile_fuzzer.cpp - libFuzzer target over the frontend ---------------===//
//
// Feeds arbitrary bytes to the lexer, parser, semantic analysis and IR
// generation. Any crash, hang or sanitizer report is a bug: malformed input
// must only ever produce diagnostics.
//
//===----------------------------------------------------------------------===//

#include "tegula/Frontend/Frontend.h"

#include "mlir/IR/MLIRContext.h"

#include "llvm/Support/raw_ostream.h"

#include <cstdlib>

using namespace tegula::frontend;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static mlir::MLIRContext *context = [] {
    auto *c = new mlir::MLIRContext(mlir::MLIRContext::Threading::DISABLED);
    registerFrontendDialects(*c);
    return c;
  }();
  std::string text(reinterpret_cast<const char *>(data), size);
  std::string messages;
  llvm::raw_string_ostream os(messages);
  DiagEngine diags("fuzz.tile", text, os);
  Program program = parseProgram(diags);
  if (diags.hasErrors())
    return 0;
  CompileOptions options;
  options.defines = {{"D", "64"}};
  (void)compileProgram(program, diags, *context, options);
  // Generated IR that fails to verify is a frontend bug: make it a crash.
  if (messages.find("internal compiler error") != std::string::npos) {
    llvm::errs() << messages;
    abort();
  }
  return 0;
}
