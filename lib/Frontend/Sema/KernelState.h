//===- KernelState.h - What belongs to one kernel ---------------*- C++ -*-===//
//
// The elaboration state of one kernel (KernelState), made fresh by
// Sema::kernel for each, and what its steps learn of the parameters
// (KernelSignature). Private to lib/Frontend.
//
//===----------------------------------------------------------------------===//

#ifndef TEGULA_LIB_FRONTEND_SEMA_KERNELSTATE_H
#define TEGULA_LIB_FRONTEND_SEMA_KERNELSTATE_H

#include "SemaValues.h"

#include "mlir/IR/Attributes.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <deque>
#include <set>

namespace tegula::frontend::sema {

/// An open loop, for `break` and the pipelined loads of its iterations.
struct LoopInfo {
  size_t frameDepth; ///< frames.size() where the loop is
  bool hasBreak;     ///< it has its own $broken flag
  bool pipelined;
  std::optional<SourceLoc> breakLoc; ///< the first break, for errors
};

/// A `for` header, checked: bounds and step as i32 values, the direction,
/// and pipelined(S).
struct LoopHeader {
  Val lo, hi, step;
  int64_t reverseStep = 0; ///< counts down by this much; 0 counts up
  std::optional<int64_t> stages;
};

/// Everything that belongs to the elaboration of one kernel. Sema::kernel
/// constructs it fresh for each kernel and drops it when the kernel is
/// done, so nothing one kernel binds, counts or reports reaches the next.
struct KernelState {
  // A deque: bindings are referenced across scope pushes.
  std::deque<llvm::StringMap<Binding>> scopes;
  std::vector<TensorParam> tensors;
  llvm::StringSet<> sizeVars;
  llvm::StringSet<> scalarParams;
  std::vector<PipeInfo> pipes;
  /// Where pipeline pushes and pops are recorded: the body's list, or
  /// that of the runtime if or loop being elaborated.
  std::vector<Effect> *effects = nullptr;
  std::vector<Frame> frames;
  unsigned runtimeDepth = 0; ///< runtime ifs and loops around the statement
  /// Early exits (docs/language-extensions.md): a `return` outside runtime
  /// control ends the kernel's elaboration; one under it, and `break`, set
  /// hidden vars ($returned, $broken) that guard what follows.
  bool kernelReturned = false;
  bool blockExited = false; ///< the rest of the current block is dead
  std::vector<LoopInfo> loops;
  std::vector<int64_t> loopLoadBytes; ///< open pipelined loops
  int64_t sharedBytes = 0;
  bool sharedReported = false;
  int64_t warps = 4;
  /// The work budget: steps taken, and whether it ran out.
  uint64_t work = 0;
  bool aborted = false;
  std::set<uint32_t> reportedPipeErrors;
  std::set<uint32_t> reportedFnTypeNames;

  /// The innermost loop when it is in the fn (or kernel body) being
  /// elaborated, so that a `break` here leaves it; else null.
  LoopInfo *loopOfThisFrame() {
    if (loops.empty() || loops.back().frameDepth != frames.size())
      return nullptr;
    return &loops.back();
  }
  /// Around the body of a runtime if or loop.
  void enterRuntimeControl() {
    if (!frames.empty())
      ++frames.back().runtimeNesting;
    ++runtimeDepth;
  }
  void leaveRuntimeControl() {
    --runtimeDepth;
    if (!frames.empty())
      --frames.back().runtimeNesting;
  }
};

/// A kernel parameter as declared: its type and, for a tensor, its dims as
/// the func's attribute records them.
struct ParamInfo {
  static constexpr int kFixed = -1;          ///< a fixed dim
  static constexpr int kSizeExpression = -2; ///< computed from size variables
  const Param *param;
  Ty ty;
  llvm::SmallVector<mlir::Attribute> dims;
  /// Per dim: its index into KernelSignature::sizeVarOrder, or kFixed, or
  /// kSizeExpression.
  llvm::SmallVector<int> dimSizeVar;
  bool ok = true;
};

/// What the steps of Sema::kernel learn of the parameters before the func
/// exists, and hand on to build and describe it.
struct KernelSignature {
  std::vector<ParamInfo> params; ///< in declaration order
  /// Size variables by first appearance: the i32 arguments after params.
  llvm::SmallVector<std::string> sizeVarOrder;
  llvm::StringMap<SourceLoc> paramNames;
  /// Size variables seen as a whole dimension, and the first dimension
  /// expression (2 * N) each appears in.
  llvm::StringSet<> boundAlone;
  llvm::StringMap<const Expr *> inExpression;

  /// Strides of strided tensors: the i64 arguments after the size variables.
  size_t numStrides() const;
};

} // namespace tegula::frontend::sema

#endif // TEGULA_LIB_FRONTEND_SEMA_KERNELSTATE_H
