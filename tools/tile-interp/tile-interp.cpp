//===- tile-interp.cpp - Run a tile-dialect kernel on the host ------------===//
//
// tile-interp FILE.mlir [-k KERNEL] [--dims N=4096,Z=2] [--scalar s=0.5]
//             [--in NAME=F.npy]... [--out NAME=F.npy]... [--ref NAME=F.npy]...
//             [--check [--reference NAME] [--tol X]] [--seed S] [--json OUT]
//             [--dry-run]
//
// The options mean what they mean to tile-run; docs/interpreter.md.
//
//===----------------------------------------------------------------------===//

#include "tegula/Interpreter/CLIOptions.h"
#include "tegula/Interpreter/RunOptions.h"

#include <cstdio>

int main(int argc, char **argv) {
  CLI::App app{"tile-interp: run a tile-dialect kernel on the host"};
  std::string input, kernel;
  tegula::interp::RunOptions opts;
  app.add_option("file", input, "the .mlir file (tile dialect)")->required();
  app.add_option("-k,--kernel", kernel,
                 "the kernel to run (default: the only tile.kernel function)");
  tegula::interp::addRunOptions(app, opts);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    return app.exit(e);
  }
  try {
    return tegula::interp::runMlirFile(input, kernel, opts);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "error: internal error: %s\n", e.what());
    return 1;
  }
}
