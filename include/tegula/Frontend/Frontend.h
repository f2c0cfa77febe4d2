//===- Frontend.h - Source to tile-dialect IR -------------------*- C++ -*-===//
//
// The frontend entry points: parse a `.tile` buffer, check it, and generate
// verified tile-dialect IR for its kernels.
//
//===----------------------------------------------------------------------===//

#ifndef TEGULA_FRONTEND_FRONTEND_H
#define TEGULA_FRONTEND_FRONTEND_H

#include "tegula/Frontend/AST.h"
#include "tegula/Target/TargetInfo.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"

#include <string>
#include <utility>
#include <vector>

namespace tegula::frontend {

struct CompileOptions {
  /// Compile only this kernel; empty compiles every kernel of the file.
  std::string kernel;
  /// `-D NAME=VALUE` template parameter values, in command-line order.
  std::vector<std::pair<std::string, std::string>> defines;
  /// The target: sets the shared-memory and parameter budgets.
  TargetInfo target = TargetInfo::defaultTarget();
  /// `tilec -g`: compile device_assert into the GPU code (the module gets
  /// `tile.debug`). The interpreter checks device_assert either way.
  bool debug = false;
};

/// Loads the dialects the frontend generates into `context`.
void registerFrontendDialects(mlir::MLIRContext &context);

/// The names of every builtin function, for tools such as the fuzzer's
/// dictionary.
std::vector<std::string> builtinNames();

/// Semantic analysis and IR generation of `program`. Every user error is
/// reported to `diags`; the module is returned only when there were none
/// and it verifies. A verifier failure is reported as an internal error.
mlir::OwningOpRef<mlir::ModuleOp> compileProgram(const Program &program,
                                                 DiagEngine &diags,
                                                 mlir::MLIRContext &context,
                                                 const CompileOptions &options);

} // namespace tegula::frontend

#endif // TEGULA_FRONTEND_FRONTEND_H
