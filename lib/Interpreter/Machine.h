//===- Machine.h - The interpreter's state and op table ---------*- C++ -*-===//
//
// One Machine runs a kernel over its grid; the ops it executes are handlers
// in an OpTable, one file an op family (ExecArith, ExecControl, ExecMemory,
// ExecTile) each adding its ops, so that adding an op is one handler and
// one line. An op without a handler is an error when it is reached.
//
//===----------------------------------------------------------------------===//

#ifndef TEGULA_LIB_INTERPRETER_MACHINE_H
#define TEGULA_LIB_INTERPRETER_MACHINE_H

#include "Values.h"

#include "tegula/Runtime/Binding.h"
#include "tegula/Runtime/Bundle.h"
#include "tegula/Runtime/Tensor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Operation.h"
#include "mlir/Support/TypeID.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/Twine.h"

#include <array>
#include <cassert>
#include <deque>
#include <functional>
#include <type_traits>

namespace tegula::interp {

class Machine;

/// Executes one op; false after an error reported with Machine::fail.
using Handler = std::function<bool(Machine &, mlir::Operation &)>;

/// The handler of every op the interpreter executes, by the op's TypeID.
class OpTable {
public:
  /// Registers the handler of OpTy. It takes the op as OpTy or as
  /// `Operation &` (a handler shared by several ops).
  template <typename OpTy, typename Fn> void add(Fn handler) {
    if constexpr (std::is_invocable_r_v<bool, Fn, Machine &, mlir::Operation &>)
      insert(mlir::TypeID::get<OpTy>(), OpTy::getOperationName(),
             Handler(std::move(handler)));
    else
      insert(mlir::TypeID::get<OpTy>(), OpTy::getOperationName(),
             [handler](Machine &m, mlir::Operation &op) {
               return handler(m, llvm::cast<OpTy>(op));
             });
  }

  /// The handler of `op`, or null.
  const Handler *lookup(mlir::Operation &op) const;

private:
  void insert(mlir::TypeID id, llvm::StringRef name, Handler handler);

  llvm::DenseMap<mlir::TypeID, Handler> handlers;
};

/// The op families; each adds its ops to the table.
void registerArithOps(OpTable &table);   // ExecArith.cpp
void registerControlOps(OpTable &table); // ExecControl.cpp
void registerMemoryOps(OpTable &table);  // ExecMemory.cpp
void registerTileOps(OpTable &table);    // ExecTile.cpp

class Machine {
public:
  Machine(mlir::func::FuncOp kernel, const rt::Bundle &bundle,
          const rt::LaunchPlan &plan, std::vector<rt::HostTensor> &tensors)
      : kernel(kernel), bundle(bundle), plan(plan), tensors(tensors) {}

  /// Runs every program of the grid; on an error, `error` says what.
  bool run(std::string &error);

  //===--------------------------------------------------------------------===//
  // For the op handlers
  //===--------------------------------------------------------------------===//

  /// Reports an error at `op` (the first one wins); returns false.
  bool fail(mlir::Operation *op, const llvm::Twine &message);
  bool fail(mlir::Operation &op, const llvm::Twine &message) {
    return fail(&op, message);
  }

  /// Refuses, before they run, ops of dialects the interpreter lacks.
  bool checkSupported(mlir::Operation *root);
  /// Runs the region's block with `args`; `results` are its terminator's
  /// operands.
  bool execRegion(mlir::Region &region, llvm::ArrayRef<RtValue> args,
                  llvm::SmallVectorImpl<RtValue> &results);
  bool execOp(mlir::Operation &op);

  /// Lookups never insert: a reference into `env` stays valid until the
  /// next value is set, and a value read before it is set is an interpreter
  /// bug, not an empty entry.
  const RtValue &get(mlir::Value v) const {
    auto it = env.find(v);
    assert(it != env.end() && "value read before it was set");
    return it->second;
  }
  const Data &data(mlir::Value v) const {
    const RtValue &r = get(v);
    assert(r.data && "numbers read from a tensor, pointer or pipeline");
    return *r.data;
  }
  void set(mlir::Value v, RtValue r) { env[v] = std::move(r); }
  void setData(mlir::Value v, Data d) {
    RtValue r;
    r.kind = RtValue::Numbers;
    r.data = std::make_shared<const Data>(std::move(d));
    set(v, std::move(r));
  }
  /// Sets an op's results from a region's (as many as both have).
  void setResults(mlir::ValueRange results, llvm::ArrayRef<RtValue> values) {
    for (auto [r, v] : llvm::zip(results, values))
      set(r, v);
  }

  mlir::func::FuncOp kernel;
  const rt::Bundle &bundle;
  const rt::LaunchPlan &plan;
  std::vector<rt::HostTensor> &tensors;

  // The running program's state.
  std::vector<std::deque<DataP>> rings;
  std::vector<unsigned> ringStages;
  std::array<int64_t, 3> pid{};
  int callDepth = 0;

private:
  bool bindArguments();

  llvm::DenseMap<mlir::Value, RtValue> env;
  std::string error;
};

} // namespace tegula::interp

#endif // TEGULA_LIB_INTERPRETER_MACHINE_H
