//===- tilec.cpp - The Tegula compiler driver -----------------------------===//
//
// tilec FILE.tile [-k KERNEL] [-D NAME=VALUE]... [--target sm_80|sm_90a]
//       [--emit ast|tile] [-o PATH]
//
//===----------------------------------------------------------------------===//

#include "tegula/Frontend/Frontend.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/MLIRContext.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <CLI/CLI.hpp>

using namespace tegula::frontend;

int main(int argc, char **argv) {
  CLI::App app{"tilec: the Tegula tile-language compiler"};
  std::string input, kernel, target = "sm_90a", emit = "tile", output = "-";
  std::vector<std::string> defines;
  app.add_option("file", input, "the .tile source file")->required();
  app.add_option("-k,--kernel", kernel, "compile only this kernel");
  app.add_option("-D", defines, "set a template parameter: -D NAME=VALUE")
      ->allow_extra_args(false);
  app.add_option("--target", target, "sm_90a (default) or sm_80")
      ->check(CLI::IsMember({"sm_80", "sm_90a"}));
  app.add_option("--emit", emit, "stop after a stage and print it: ast or tile")
      ->check(CLI::IsMember({"ast", "tile"}));
  app.add_option("-o", output, "output file (default: stdout)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    int code = app.exit(e);
    return code == 0 ? 0 : 1;
  }

  CompileOptions options;
  options.kernel = kernel;
  options.target = target;
  for (const std::string &d : defines) {
    size_t eq = d.find('=');
    if (eq == std::string::npos || eq == 0) {
      llvm::errs() << "tilec: error: -D expects NAME=VALUE, got '" << d << "'\n";
      return 1;
    }
    options.defines.emplace_back(d.substr(0, eq), d.substr(eq + 1));
  }

  auto buffer = llvm::MemoryBuffer::getFileOrSTDIN(input);
  if (!buffer) {
    llvm::errs() << "tilec: error: cannot read '" << input
                 << "': " << buffer.getError().message() << "\n";
    return 1;
  }
  DiagEngine diags(input, (*buffer)->getBuffer().str(), llvm::errs());
  Program program = parseProgram(diags);

  // Checks run whatever --emit asks for: the AST is printed only for a
  // program that compiles.
  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  if (!diags.hasErrors())
    module = compileProgram(program, diags, context, options);
  if (diags.hasErrors() || !module)
    return 1;

  std::error_code ec;
  llvm::ToolOutputFile out(output, ec, llvm::sys::fs::OF_Text);
  if (ec) {
    llvm::errs() << "tilec: error: cannot write '" << output
                 << "': " << ec.message() << "\n";
    return 1;
  }
  if (emit == "ast") {
    dumpAST(program, out.os());
  } else {
    mlir::OpPrintingFlags flags;
    flags.enableDebugInfo(/*enable=*/false);
    module->print(out.os(), flags);
  }
  out.keep();
  return 0;
}
