//===- Sema.h - The elaborator's state, shared by its parts -----*- C++ -*-===//
//
// One walk over the AST per kernel does both jobs: it evaluates the
// compile-time part of the program (template values, static if, lets, slice
// lengths, fn inlining), infers and checks every type and shape, reports
// user errors with source positions, and, for what survives, emits tile
// dialect IR. Every check runs before the op it guards is built, so the
// verifier only ever sees IR that the checks accepted; a verifier failure
// is a compiler bug and is reported as an internal error.
//
// The class is one, its definitions are spread by job, as clang's Sema is:
// SemaConstant (compile-time evaluation), SemaConversion (materializing and
// converting values), SemaExpr (operators), SemaBuiltins (the builtin table
// and its handlers: loads, stores, pipelines, dot), SemaMemory (tensor
// blocks, masks, indices, atomics), SemaInline (fn calls), SemaStmt
// (statements), SemaSignature (a kernel's template values and parameters)
// and SemaKernel (kernels and their launch description). Types and values
// are in SemaValues.h; what belongs to one kernel lives in a KernelState
// (KernelState.h) made fresh for each.
// Private to lib/Frontend.
//
//===----------------------------------------------------------------------===//

#ifndef TEGULA_LIB_FRONTEND_SEMA_SEMA_H
#define TEGULA_LIB_FRONTEND_SEMA_SEMA_H

#include "tegula/Frontend/Frontend.h"
#include "tegula/Target/TargetInfo.h"

#include "../Builtins.h"
#include "KernelState.h"
#include "SemaValues.h"

#include "Tile/TileDialect.h"
#include "Tile/TileOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace mlir::func {
class FuncOp;
} // namespace mlir::func

namespace tegula::frontend::sema {

namespace tl = tegula::tile;

//===----------------------------------------------------------------------===//
// The elaborator
//===----------------------------------------------------------------------===//

class Sema {
public:
  Sema(const Program &program, DiagEngine &diags, mlir::MLIRContext &context,
       const CompileOptions &options);

  mlir::OwningOpRef<mlir::ModuleOp> run();

private:
  // Locations and errors.
  mlir::Location loc(SourceLoc l) {
    return mlir::FileLineColLoc::get(ctx, diags.getFileName(), l.line, l.col);
  }
  Val error(SourceLoc l, const llvm::Twine &message) {
    diags.error(l, message);
    return Val::invalid();
  }
  std::string src(const Expr &e) { return diags.slice(e.range).str(); }
  bool budget(SourceLoc l) {
    if (kernelState->aborted)
      return false;
    if (++kernelState->work > kMaxWork) {
      diags.error(l, "the kernel is too large after inlining and unrolling "
                     "compile-time branches (over " +
                         llvm::Twine(kMaxWork) + " steps)");
      kernelState->aborted = true;
      return false;
    }
    return true;
  }

  // Scopes.
  Binding *lookup(llvm::StringRef name) {
    std::deque<llvm::StringMap<Binding>> &scopes = kernelState->scopes;
    for (auto it = scopes.rbegin(); it != scopes.rend(); ++it) {
      auto found = it->find(name);
      if (found != it->end())
        return &found->second;
    }
    return nullptr;
  }
  void bind(llvm::StringRef name, Val val, SourceLoc l, bool isVar = false) {
    kernelState->scopes.back()[name] =
        Binding{std::move(val), isVar, l, kernelState->runtimeDepth};
  }
  struct ScopeGuard {
    Sema &s;
    explicit ScopeGuard(Sema &s) : s(s) {
      s.kernelState->scopes.emplace_back();
    }
    ~ScopeGuard() { s.kernelState->scopes.pop_back(); }
  };

  // Types.
  mlir::Type mlirDT(DT dt) {
    switch (dt) {
    case DT::I1:
      return builder.getI1Type();
    case DT::I32:
      return builder.getI32Type();
    case DT::I64:
      return builder.getI64Type();
    case DT::F16:
      return builder.getF16Type();
    case DT::BF16:
      return builder.getBF16Type();
    case DT::F32:
      return builder.getF32Type();
    }
    return builder.getI32Type();
  }
  mlir::Type mlirType(const Ty &ty) {
    if (ty.kind == Ty::Scalar)
      return mlirDT(ty.dt);
    return mlir::RankedTensorType::get(ty.shape, mlirDT(ty.dt));
  }
  mlir::RankedTensorType tileType(llvm::ArrayRef<int64_t> shape, DT dt) {
    return mlir::RankedTensorType::get(shape, mlirDT(dt));
  }

  // Compile-time evaluation.
  std::optional<Val> tryConst(const Expr &e);
  void collectDivisibility(const Expr &e,
                           std::map<std::string, int64_t> &divisors);
  std::string renderValues(const Expr &e);
  bool checkExtent(int64_t extent, SourceLoc l, llvm::StringRef what);
  bool checkShape(llvm::ArrayRef<int64_t> shape, SourceLoc l);
  bool evalShape(const std::vector<ExprPtr> &dims, SourceLoc l,
                 llvm::SmallVectorImpl<int64_t> &shape,
                 std::vector<Origin> &origins);
  std::optional<int64_t> evalConstInt(const Expr &e, llvm::StringRef what,
                                      Origin *origin = nullptr);
  std::optional<DT> evalDType(const Expr &e);
  std::optional<Ty> resolveType(const TypeExpr &t);
  /// Reports the first undefined name of `e`; true if it reported one.
  bool findUndefined(const Expr &e);

  // Values.
  /// Warns, once per division, that `v` (a truncated integer quotient)
  /// becomes a float at `use`; `how` says how ("becomes f32").
  void warnTruncatedDiv(const Val &v, SourceLoc use, const llvm::Twine &how);
  mlir::Value constant(DT dt, const Val &lit, SourceLoc l);
  mlir::Value materialize(const Val &v, const Ty &to, SourceLoc l);
  Val toRuntime(const Val &v, SourceLoc l, std::optional<DT> dt = std::nullopt);
  mlir::Value broadcastTo(mlir::Value v, const Ty &from,
                          llvm::ArrayRef<int64_t> shape, SourceLoc l);
  /// The tile `v` of `dt` laid along dimensions `axis`, `axis + 1`, ... of
  /// `shape` (one per dimension of `v`) and broadcast over the others.
  mlir::Value spreadAlong(mlir::Value v, DT dt, size_t axis,
                          llvm::ArrayRef<int64_t> shape, SourceLoc l);
  std::optional<Ty> broadcastShapes(const Ty &a, const Ty &b, SourceLoc l,
                                    const Expr *ea, const Expr *eb);
  std::optional<DT> commonDT(const Val &a, const Val &b, SourceLoc l,
                             const char *what);
  Val coerce(const Val &v, const Ty &to, SourceLoc l, const llvm::Twine &what,
             SourceLoc declLoc);
  Val castTo(const Val &v, DT to, SourceLoc l);
  mlir::Value castValue(mlir::Value v, DT from, DT to, SourceLoc l);

  // Expressions.
  Val eval(const Expr &e);
  Val evalName(const Expr &e);
  Val evalUnary(const Expr &e);
  Val evalBinary(const Expr &e);
  Val binaryOp(Tok op, Val a, Val b, SourceLoc l, const Expr *ea,
               const Expr *eb);
  Val foldConst(Tok op, const Val &a, const Val &b, SourceLoc l,
                const Expr *whole);
  Val evalTernary(const Expr &e);
  Val evalCall(const Expr &e);
  Val evalMethod(const Expr &e);
  Val evalIndex(const Expr &e);
  Val elementwise(llvm::StringRef name, const Expr &e, Val x);
  Val reduce(llvm::StringRef name, const Expr &e);
  /// The tile `name(x, axis = k)` reduces (or scans: `verb`) and its axis,
  /// checked (a tile, not bool, the axis a constant in range); none after
  /// an error. The caller has checked that the axis is given.
  std::optional<std::pair<Val, int64_t>>
  reduceOperand(llvm::StringRef name, const Expr &e,
                llvm::StringRef verb = "reduce",
                llvm::StringRef axisWhat = "the reduction axis");
  /// `x` reduced along `axis` by `kind`: a tile of one rank less, or a
  /// scalar.
  Val reduceAlong(const Val &x, int64_t axis, tile::ReduceKind kind,
                  SourceLoc l);
  /// The tile operand of builtin `name` ("'name' VERB a tile, but ...").
  std::optional<Val> tileOperand(llvm::StringRef name, const Expr &e,
                                 llvm::StringRef verb);
  /// The integers of a parenthesized list of constants, `what` of `name`.
  std::optional<llvm::SmallVector<int64_t>> constList(const Expr &list,
                                                      llvm::StringRef name,
                                                      llvm::StringRef what,
                                                      llvm::StringRef example);
  Val callFunction(const Function &fn, const Expr &e);
  /// Reports a recursive call or arguments that do not fit `fn`.
  bool checkCall(const Function &fn, const Expr &e);
  /// The explicit template arguments of call `e`; none after an error.
  std::optional<std::vector<Val>> explicitTemplateArgs(const Function &fn,
                                                       const Expr &e);
  /// Binds the template parameters of `fn`: given, inferred from `args`
  /// or defaults. False after an error.
  bool bindFnTemplateParams(const Function &fn, const Expr &e,
                            llvm::ArrayRef<Val> explicitArgs,
                            llvm::ArrayRef<Val> args);
  /// Binds the parameters of `fn` to `args`, converted to their types.
  bool bindFnParams(const Function &fn, const Expr &e,
                    llvm::ArrayRef<Val> args);
  const Expr *firstUnbound(const Expr &e);
  /// Reports a name in `t` (a type of `fn`) that is not one of its template
  /// parameters, with the declaration to write; false if it reported.
  bool checkFnTypeNames(const Function &fn, const TypeExpr &t);
  /// The block T[...] names; `writer` names what writes it (for the error
  /// when T is read-only).
  /// `padded`: the call gives `other =` or `mask =`, so elements past a
  /// fixed extent may be meant (padding a block to a power of two).
  /// A block of scalar indices as a one-element block ([1]): each index
  /// splat in its own integer type (an i64 index stays i64).
  void asOneElementBlock(Block &block, SourceLoc l);
  std::optional<Block> evalBlock(const Expr &e, bool forStore,
                                 llvm::StringRef writer = "store",
                                 bool padded = false);
  /// Refuses an index of dimension `dim` of `t` whose compile-time range
  /// [start, start + length) lies outside its fixed extent (or, with a
  /// runtime start, a slice at least twice that extent); see
  /// docs/frontend.md. False after an error.
  bool checkIndexRange(const TensorParam &t, size_t dim, const Expr &ix,
                       std::optional<int64_t> start, int64_t length,
                       bool forStore, bool padded);
  /// Index `ix` of dimension `dim` of `t` in a block, checked; none after
  /// an error.
  std::optional<BlockIndex> blockIndex(const TensorParam &t, size_t dim,
                                       const Expr &ix, bool forStore,
                                       bool padded);
  std::optional<BlockIndex> sliceIndex(const TensorParam &t, size_t dim,
                                       const Expr &ix, bool forStore,
                                       bool padded);
  Linear linearize(const Expr &x);
  std::optional<mlir::Value> evalMask(const Expr &e, const Block &b);
  std::optional<mlir::Value> evalOther(const Expr &e, const Block &b, DT dt);
  const NamedArg *namedArg(const Expr &e, llvm::StringRef name);
  /// The value of `e`'s `precision = ...` argument, one of `options` (the
  /// first when absent), or none after an error that names them all.
  std::optional<llvm::StringRef>
  precisionArg(const Expr &e, llvm::ArrayRef<llvm::StringRef> options);
  bool checkArgs(const Expr &e, size_t minArgs, size_t maxArgs,
                 llvm::ArrayRef<llvm::StringRef> named);
  bool checkArgs(const Expr &e, const BuiltinSignature &signature);
  /// The dtype and shape of zeros<DT>[S...] and the like, written as `form`.
  std::optional<Ty> templateTile(const Expr &e, llvm::StringRef form);

public:
  // Builtins, one handler each (the table is in SemaBuiltins.cpp).
  Val builtinGridIndex(const Expr &e);
  Val builtinArange(const Expr &e);
  Val builtinZeros(const Expr &e);
  Val builtinFull(const Expr &e);
  Val builtinPipeline(const Expr &e);
  Val builtinCast(const Expr &e);
  Val builtinTrans(const Expr &e);
  Val builtinWhere(const Expr &e);
  Val builtinReduceOrMinMax(const Expr &e);
  Val builtinArgExtreme(const Expr &e);
  Val builtinCumsum(const Expr &e);
  Val builtinReshape(const Expr &e);
  Val builtinPermute(const Expr &e);
  Val builtinMath(const Expr &e);
  Val builtinPow(const Expr &e);
  Val builtinDivision(const Expr &e);
  Val builtinCdiv(const Expr &e);
  Val builtinLoad(const Expr &e);
  Val builtinStore(const Expr &e);
  Val builtinAtomic(const Expr &e);
  Val dot(const Expr &e);
  std::pair<Val, Val> splitBf16(const Val &x, SourceLoc l);
  Val dotBf16x3(const Val &a, const Val &b, mlir::Value acc, const Ty &accTy,
                SourceLoc l);

private:
  // Statements.
  void stmts(llvm::ArrayRef<StmtPtr> body);
  void stmt(const Stmt &s);
  /// A runtime scf.if over `cond` that yields every outer var either arm
  /// assigns (the hidden exit flags included).
  void runtimeIf(SourceLoc l, mlir::Value cond, llvm::ArrayRef<StmtPtr> then,
                 llvm::ArrayRef<StmtPtr> otherwise);
  void returnStmt(const Stmt &s);
  void breakStmt(const Stmt &s);
  void deviceAssertStmt(const Stmt &s);
  /// Whether `s` may leave the rest of its block unexecuted: it holds a
  /// kernel `return` or a `break` of the innermost loop.
  bool mayExit(const Stmt &s);
  /// The i1 "no return and no break of the innermost loop yet".
  mlir::Value stillRunning(SourceLoc l);
  void setFlag(llvm::StringRef name, SourceLoc l);
  void letStmt(const Stmt &s);
  void assignStmt(const Stmt &s);
  void forStmt(const Stmt &s);
  std::optional<LoopHeader> loopHeader(const Stmt &s);
  /// A loop bound (`dflt` when absent) as an i32 value.
  Val loopBound(const Expr *x, int64_t dflt, SourceLoc l);
  /// How much the loop `s` with `step` counts down by (0: it counts up),
  /// or none after an error.
  std::optional<int64_t> loopReverseStep(const Stmt &s, const Val &step);
  void ifStmt(const Stmt &s);

  // Kernels, in the order Sema::kernel takes the steps.
  void kernel(const Kernel &k);
  /// Binds the template parameters; their values for the func's attribute.
  mlir::DictionaryAttr bindTemplateParams(const Kernel &k);
  /// The value the -D options give `tp`: none if none names it, invalid
  /// after an error.
  std::optional<Val> definedValue(const TemplateParam &tp);
  /// The default of `tp` (it has one); invalid after an error.
  Val defaultValue(const TemplateParam &tp);
  /// Fills `sig` from the parameters, reporting what is wrong with them.
  void declareParams(const Kernel &k, KernelSignature &sig);
  void declareTensorParam(const Param &p, KernelSignature &sig);
  /// Dimension `d` of tensor `p`: a size variable, an expression over them
  /// or a fixed extent; clears `info.ok` after an error.
  void declareTensorDim(const Param &p, const Expr &d, ParamInfo &info,
                        KernelSignature &sig);
  /// The fixed extent `d` (dimension `index` of `p`), checked.
  std::optional<int64_t> fixedTensorDim(const Param &p, const Expr &d,
                                        size_t index);
  /// A tensor dimension over size variables (`2 * N`, `M + 1`): nothing if
  /// `dim` names no unbound variable (a fixed dim); else its launch text,
  /// with its variables added to `sig`, or "" after an error.
  std::optional<std::string> sizeExpression(const Expr &dim,
                                            const std::string &tensor,
                                            KernelSignature &sig);
  void checkSizeVarsBound(const KernelSignature &sig);
  void checkParamBytes(const Kernel &k, const KernelSignature &sig);
  /// The kernel's func, with the builder at the start of its body.
  mlir::func::FuncOp createKernelFunc(const Kernel &k,
                                      const KernelSignature &sig);
  /// Binds the parameters and size variables to the func's arguments;
  /// false after an error.
  bool bindParams(const Kernel &k, const KernelSignature &sig,
                  mlir::func::FuncOp func);
  bool bindTensorParam(const ParamInfo &p, size_t i, const KernelSignature &sig,
                       mlir::func::FuncOp func, size_t &nextStride);
  /// The launch description: warps, grid, requires, flops, bytes and the
  /// template values, as attributes of `func`.
  void describeLaunch(const Kernel &k, const KernelSignature &sig,
                      mlir::func::FuncOp func,
                      mlir::DictionaryAttr templateValues);
  void setWarps(const Kernel &k, mlir::func::FuncOp func);
  /// `blocks_per_sm`, after setWarps: its bound depends on the warps.
  void setBlocksPerSm(const Kernel &k, mlir::func::FuncOp func);
  void setGrid(const Kernel &k, mlir::func::FuncOp func);
  void setRequires(const Kernel &k, const KernelSignature &sig,
                   mlir::func::FuncOp func);
  /// The statements, then the pipeline counting rule over them.
  void elaborateBody(const Kernel &k);
  /// How the body used each tensor: read, write or readwrite.
  void setArgAccess(const KernelSignature &sig, mlir::func::FuncOp func);
  std::optional<std::string> renderLaunch(const Expr &e, int parentPrec,
                                          bool right);
  /// Whether `e` reads a size variable or a scalar parameter.
  bool dependsOnLaunch(const Expr &e);
  void countPipelines(const std::vector<Effect> &effects,
                      std::map<int, int> &state);
  void addSharedBytes(int64_t bytes, SourceLoc l, const llvm::Twine &what);
  void checkGridExtent(const Expr &extent, size_t axis);
  const TargetInfo &targetInfo() const { return options.target; }

  const Program &program;
  DiagEngine &diags;
  mlir::MLIRContext *ctx;
  mlir::OpBuilder builder;
  const CompileOptions &options;
  llvm::StringMap<const Function *> functions;
  llvm::StringSet<> usedDefines;

  /// The kernel being elaborated; set only inside Sema::kernel.
  std::optional<KernelState> kernelState;
  std::set<uint32_t> warnedDivisions; ///< for the whole program
  mlir::OwningOpRef<mlir::ModuleOp> module;
  static constexpr uint64_t kMaxWork = 200000;
};

/// A builtin: its signature and the Sema member that elaborates a call.
struct Builtin {
  BuiltinSignature signature;
  Val (Sema::*handler)(const Expr &e);
  /// The handler checks the arguments itself, in an order of its own.
  bool checksItself = false;
};

/// The builtin called `name`, or null.
const Builtin *findBuiltin(llvm::StringRef name);

/// Whether `body` holds a statement of `kind` (a Break only when it is not
/// inside a nested loop).
bool contains(llvm::ArrayRef<StmtPtr> body, StmtKind kind);

} // namespace tegula::frontend::sema

#endif // TEGULA_LIB_FRONTEND_SEMA_SEMA_H
