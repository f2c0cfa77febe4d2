//===- Bundles.h - tilec's bundle stage -------------------------*- C++ -*-===//
//
// The last stage of tilec's chain: every config of the -D sweep compiled,
// each kernel lowered on its own to PTX (and its variants), assembled into
// a cubin by ptxas when it is there, and written as one bundle per kernel
// (KERNEL.json through rt::writeBundleJson, KERNEL.ptx and the rest beside
// it).
//
//===----------------------------------------------------------------------===//

#ifndef TEGULA_TOOLS_TILEC_BUNDLES_H
#define TEGULA_TOOLS_TILEC_BUNDLES_H

#include "Driver.h"

#include "tegula/Frontend/Frontend.h"

#include "mlir/IR/BuiltinOps.h"

namespace tegula::tilec {

/// What the bundle stage needs beyond the first config's module.
struct BundleRequest {
  const frontend::Program &program;
  frontend::DiagEngine &diags;
  mlir::MLIRContext &context;
  /// The first config's options; the others change only the defines.
  frontend::CompileOptions options;
  const Sweep &sweep;
  /// --reference: a name, a JSON object, or empty for each kernel's own.
  std::string reference;
  /// The bundle directory ("" is ".").
  std::string output;
  bool noCubin = false;
};

/// Compiles every config of the sweep (the first is `first`, already
/// compiled) and writes one bundle per kernel. Returns tilec's exit code.
int writeBundles(mlir::ModuleOp first, const BundleRequest &request);

} // namespace tegula::tilec

#endif // TEGULA_TOOLS_TILEC_BUNDLES_H
