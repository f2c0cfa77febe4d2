//===- Interpreter.h - Running tile-dialect kernels on the host -*- C++ -*-===//
//
// Executes a `tile.kernel` function over its grid on host buffers, one
// program after another, with the numerics of the GPU code: f16/bf16 values
// are rounded wherever they are produced, `tile.dot` accumulates in f32,
// and out-of-bounds elements of loads, stores and pipeline pushes are
// masked as the language specifies. docs/interpreter.md has the details.
//
//===----------------------------------------------------------------------===//

#ifndef TEGULA_INTERPRETER_INTERPRETER_H
#define TEGULA_INTERPRETER_INTERPRETER_H

#include "tegula/Interpreter/RunOptions.h"
#include "tegula/Runtime/Binding.h"
#include "tegula/Runtime/Bundle.h"
#include "tegula/Runtime/Tensor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <map>
#include <string>
#include <vector>

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace tegula::interp {

/// Registers every dialect the interpreter executes (tile, arith, math, scf,
/// func).
void registerInterpreterDialects(mlir::DialectRegistry &registry);

/// Describes `kernel` as a bundle would (tools.md): parameters from the
/// argument attributes tile.name/tile.dims/tile.access/tile.size_var, grid,
/// requires, flops, bytes and template from the function attributes, and
/// `reference` (a name or a JSON object; may be empty) as the bundle's
/// "reference" field. The result goes through the runtime's own bundle
/// validation.
bool bundleFromKernel(mlir::func::FuncOp kernel, const std::string &reference,
                      rt::Bundle &bundle, std::string &error);

/// Runs every program of `plan.grid` in order (x fastest, then y, then z).
/// `tensors[i]` is the host buffer of parameter i (empty for scalars);
/// stores update it. On a runtime error (an empty pipeline popped, a store
/// into a read-only tensor, an integer division by zero, ...) returns false
/// with a message naming the op's location and the program.
bool executeGrid(mlir::func::FuncOp kernel, const rt::Bundle &bundle,
                 const rt::LaunchPlan &plan, std::vector<rt::HostTensor> &tensors,
                 std::string &error);

/// What runKernel found.
struct RunResult {
  int exitCode = 1;
  /// The --json report (also written to options.jsonPath when set).
  std::string json;
  /// Output tensors (write/readwrite, and any named by --out) by name.
  std::map<std::string, rt::HostTensor> outputs;
};

/// tile-run's whole flow with the interpreter in place of the GPU: binds
/// and checks, makes inputs, runs, reports unwritten outputs, writes --out
/// files, runs --check, writes --json. Prints as tile-run does.
RunResult runKernel(mlir::func::FuncOp kernel, const RunOptions &options);

} // namespace tegula::interp

#endif // TEGULA_INTERPRETER_INTERPRETER_H
