//===- Sema.cpp - Semantic analysis and tile-dialect generation ----------===//
//
// One walk over the AST per kernel does both jobs: it evaluates the
// compile-time part of the program (template values, static if, lets, slice
// lengths, fn inlining), infers and checks every type and shape, reports
// user errors with source positions, and, for what survives, emits tile
// dialect IR. Every check runs before the op it guards is built, so the
// verifier only ever sees IR that the checks accepted; a verifier failure
// is a compiler bug and is reported as an internal error.
//
//===----------------------------------------------------------------------===//

#include "tegula/Frontend/Frontend.h"
#include "tegula/Target/TargetInfo.h"

#include "Tile/TileDialect.h"
#include "Tile/TileOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <deque>
#include <functional>
#include <map>
#include <set>
#include <optional>

using namespace tegula;
using namespace tegula::frontend;
namespace tl = tegula::tile;

void tegula::frontend::registerFrontendDialects(mlir::MLIRContext &context) {
  context.loadDialect<tl::TileDialect, mlir::arith::ArithDialect,
                      mlir::func::FuncDialect, mlir::math::MathDialect,
                      mlir::scf::SCFDialect>();
}

namespace {

//===----------------------------------------------------------------------===//
// Types and values
//===----------------------------------------------------------------------===//

enum class DT { I1, I32, I64, F16, BF16, F32 };

bool isFloat(DT dt) { return dt == DT::F16 || dt == DT::BF16 || dt == DT::F32; }
bool isInt(DT dt) { return dt == DT::I32 || dt == DT::I64; }
int64_t dtBytes(DT dt) {
  switch (dt) {
  case DT::I1: return 1;
  case DT::F16: case DT::BF16: return 2;
  case DT::I32: case DT::F32: return 4;
  case DT::I64: return 8;
  }
  return 4;
}
const char *dtName(DT dt) {
  switch (dt) {
  case DT::I1: return "i1";
  case DT::I32: return "i32";
  case DT::I64: return "i64";
  case DT::F16: return "f16";
  case DT::BF16: return "bf16";
  case DT::F32: return "f32";
  }
  return "?";
}
std::optional<DT> parseDT(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<DT>>(name)
      .Case("i1", DT::I1)
      .Case("bool", DT::I1)
      .Case("i32", DT::I32)
      .Case("i64", DT::I64)
      .Case("f16", DT::F16)
      .Case("bf16", DT::BF16)
      .Case("f32", DT::F32)
      .Default(std::nullopt);
}

/// How one compile-time integer was computed, for messages.
struct Origin {
  std::string text; ///< "DK = D * EXPAND / 2 = 16 * 1 / 2"; empty if literal
  SourceLoc loc;
};

struct Ty {
  enum Kind { Scalar, Tile, Pipeline, Tensor } kind = Scalar;
  DT dt = DT::I32;
  llvm::SmallVector<int64_t> shape;
  std::vector<Origin> origins; ///< per extent; may be empty
  unsigned stages = 0;
  bool isMutable = false;

  static Ty scalar(DT dt) {
    Ty t;
    t.dt = dt;
    return t;
  }
  static Ty tile(DT dt, llvm::ArrayRef<int64_t> shape,
                 std::vector<Origin> origins = {}) {
    if (shape.empty())
      return scalar(dt);
    Ty t;
    t.kind = Tile;
    t.dt = dt;
    t.shape.assign(shape.begin(), shape.end());
    t.origins = std::move(origins);
    t.origins.resize(shape.size());
    return t;
  }
  Ty withDT(DT newDT) const {
    Ty t = *this;
    t.dt = newDT;
    return t;
  }
  bool isScalar() const { return kind == Scalar; }
  bool isTile() const { return kind == Tile; }
  int64_t rank() const { return shape.size(); }
  int64_t elements() const {
    int64_t n = 1;
    for (int64_t e : shape)
      n *= e;
    return n;
  }
  bool sameValueType(const Ty &o) const {
    return kind == o.kind && dt == o.dt && shape == o.shape;
  }
  std::string str() const {
    std::string s;
    llvm::raw_string_ostream os(s);
    if (kind == Scalar) {
      os << dtName(dt);
      return s;
    }
    os << (kind == Tile ? "tile" : kind == Pipeline ? "pipeline" : "tensor")
       << "<" << dtName(dt) << ">[";
    llvm::interleaveComma(shape, os);
    os << "]";
    return s;
  }
};

std::string shapeStr(llvm::ArrayRef<int64_t> shape) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "[";
  llvm::interleaveComma(shape, os);
  os << "]";
  return s;
}

/// What an expression evaluates to.
struct Val {
  enum Kind {
    Invalid, ///< an error was reported already
    Void,
    CInt,    ///< compile-time integer: takes any numeric dtype it meets
    CFloat,  ///< float literal: takes any float dtype it meets
    CBool,
    DType,
    Runtime, ///< an SSA scalar or tile
    Tensor,  ///< a tensor parameter
    Pipe,    ///< a pipeline handle
    Tuple,
  } kind = Invalid;
  int64_t i = 0;
  double f = 0;
  bool b = false;
  DT dt = DT::I32;
  Origin origin;
  Ty ty;
  mlir::Value v;
  int index = -1; ///< tensor parameter or pipeline id
  std::vector<Val> elements;

  static Val invalid() { return Val(); }
  static Val voidVal() {
    Val x;
    x.kind = Void;
    return x;
  }
  static Val cint(int64_t value, Origin origin = {}) {
    Val x;
    x.kind = CInt;
    x.i = value;
    x.origin = std::move(origin);
    return x;
  }
  static Val cfloat(double value) {
    Val x;
    x.kind = CFloat;
    x.f = value;
    return x;
  }
  static Val cbool(bool value) {
    Val x;
    x.kind = CBool;
    x.b = value;
    return x;
  }
  static Val dtype(DT dt) {
    Val x;
    x.kind = DType;
    x.dt = dt;
    return x;
  }
  static Val runtime(mlir::Value v, Ty ty) {
    Val x;
    x.kind = Runtime;
    x.v = v;
    x.ty = std::move(ty);
    return x;
  }
  bool ok() const { return kind != Invalid; }
  bool isConst() const {
    return kind == CInt || kind == CFloat || kind == CBool || kind == DType;
  }
  /// A literal-like value with no dtype of its own yet.
  bool isLiteral() const { return kind == CInt || kind == CFloat; }
  bool isValue() const { return kind == Runtime || isLiteral() || kind == CBool; }
};

struct Binding {
  Val val;
  bool isVar = false;
  SourceLoc loc;
  /// How many runtime ifs and loops enclose the declaration.
  unsigned runtimeDepth = 0;
};

/// Push/pop events of pipelines, in program order, for the counting rule.
struct Effect {
  enum Kind { Push, Pop, If, Loop } kind;
  int pipe = -1;
  SourceLoc loc;
  std::vector<Effect> first, second;
};

struct PipeInfo {
  std::string name;
  SourceLoc loc;
  unsigned stages;
  Ty ty;
};

/// One inlined fn call in progress.
struct Frame {
  const Function *fn = nullptr;
  SourceLoc callLoc;
  bool returned = false;
  Val result;
  unsigned runtimeNesting = 0;
};

/// A tensor block addressed by T[I0, ..., In].
struct Block {
  int tensor = -1;
  llvm::SmallVector<int64_t> shape;
  std::vector<Origin> origins;
  llvm::SmallVector<mlir::Value> indices;
};

struct TensorParam {
  std::string name;
  SourceLoc loc;
  Ty ty;
  mlir::Value value;
  bool read = false, written = false;
};

/// Names the statements assign, for loop-carried values and if results.
void collectAssigned(const std::vector<StmtPtr> &body,
                     llvm::SmallVectorImpl<std::string> &names) {
  for (const StmtPtr &stmt : body) {
    if (stmt->kind == StmtKind::Assign &&
        !llvm::is_contained(names, stmt->names[0]))
      names.push_back(stmt->names[0]);
    collectAssigned(stmt->body, names);
    collectAssigned(stmt->elseBody, names);
  }
}

std::string opText(Tok kind) {
  std::string s = tokSpelling(kind);
  return s.substr(1, s.size() - 2);
}

bool isPow2(int64_t x) { return x > 0 && (x & (x - 1)) == 0; }

//===----------------------------------------------------------------------===//
// The elaborator
//===----------------------------------------------------------------------===//

class Sema {
public:
  Sema(const Program &program, DiagEngine &diags, mlir::MLIRContext &context,
       const CompileOptions &options)
      : program(program), diags(diags), ctx(&context), builder(&context),
        options(options) {
    llvm::StringMap<const Kernel *> kernels;
    for (const auto &k : program.kernels) {
      // PTX identifiers that start with '_' need a second character.
      if (k->name == "_")
        diags.error(k->loc, "a kernel cannot be named '_': the PTX name of a "
                            "kernel that starts with '_' needs a second "
                            "character");
      auto [it, inserted] = kernels.try_emplace(k->name, k.get());
      if (!inserted) {
        diags.error(k->loc, "redefinition of kernel '" + k->name + "'");
        diags.note(it->second->loc, "previous definition is here");
      }
    }
    for (const auto &fn : program.functions) {
      if (functions.count(fn->name)) {
        diags.error(fn->loc, "redefinition of fn '" + fn->name + "'");
        diags.note(functions[fn->name]->loc, "previous definition is here");
        continue;
      }
      functions[fn->name] = fn.get();
    }
  }

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
    if (aborted)
      return false;
    if (++work > kMaxWork) {
      diags.error(l, "the kernel is too large after inlining and unrolling "
                     "compile-time branches (over " +
                         llvm::Twine(kMaxWork) + " steps)");
      aborted = true;
      return false;
    }
    return true;
  }

  // Scopes.
  Binding *lookup(llvm::StringRef name) {
    for (auto it = scopes.rbegin(); it != scopes.rend(); ++it) {
      auto found = it->find(name);
      if (found != it->end())
        return &found->second;
    }
    return nullptr;
  }
  void bind(llvm::StringRef name, Val val, SourceLoc l, bool isVar = false) {
    scopes.back()[name] = Binding{std::move(val), isVar, l, runtimeDepth};
  }
  struct ScopeGuard {
    Sema &s;
    explicit ScopeGuard(Sema &s) : s(s) { s.scopes.emplace_back(); }
    ~ScopeGuard() { s.scopes.pop_back(); }
  };

  // Types.
  mlir::Type mlirDT(DT dt) {
    switch (dt) {
    case DT::I1: return builder.getI1Type();
    case DT::I32: return builder.getI32Type();
    case DT::I64: return builder.getI64Type();
    case DT::F16: return builder.getF16Type();
    case DT::BF16: return builder.getBF16Type();
    case DT::F32: return builder.getF32Type();
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

  // Values.
  mlir::Value constant(DT dt, const Val &lit, SourceLoc l);
  mlir::Value materialize(const Val &v, const Ty &to, SourceLoc l);
  Val toRuntime(const Val &v, SourceLoc l, std::optional<DT> dt = std::nullopt);
  mlir::Value broadcastTo(mlir::Value v, const Ty &from,
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
  Val evalBuiltin(const Expr &e, bool &handled);
  Val evalMethod(const Expr &e);
  Val evalIndex(const Expr &e);
  Val elementwise(llvm::StringRef name, const Expr &e, Val x);
  Val reduce(llvm::StringRef name, const Expr &e);
  Val dot(const Expr &e);
  Val callFunction(const Function &fn, const Expr &e);
  std::optional<Block> evalBlock(const Expr &e, bool forStore);
  std::optional<mlir::Value> evalMask(const Expr &e, const Block &b);
  std::optional<mlir::Value> evalOther(const Expr &e, const Block &b, DT dt);
  const NamedArg *namedArg(const Expr &e, llvm::StringRef name);
  bool checkArgs(const Expr &e, size_t minArgs, size_t maxArgs,
                 std::initializer_list<llvm::StringRef> named);

  // Statements.
  void stmts(const std::vector<StmtPtr> &body);
  void stmt(const Stmt &s);
  void letStmt(const Stmt &s);
  void assignStmt(const Stmt &s);
  void forStmt(const Stmt &s);
  void ifStmt(const Stmt &s);

  // Kernels.
  void kernel(const Kernel &k);
  std::optional<std::string> renderLaunch(const Expr &e, int parentPrec,
                                          bool right);
  /// Whether `e` reads a size variable or a scalar parameter.
  bool dependsOnLaunch(const Expr &e);
  void countPipelines(const std::vector<Effect> &effects,
                      std::map<int, int> &state);
  void addSharedBytes(int64_t bytes, SourceLoc l, const llvm::Twine &what);
  void checkParamBytes(const Kernel &k, size_t numParams, size_t numSizeVars,
                       llvm::function_ref<int64_t(size_t)> paramBytes);
  void checkGridExtent(const Expr &extent, size_t axis);
  /// The target's limits; unknown targets are refused by the driver, so they
  /// fall back to the default.
  TargetInfo targetInfo() const {
    std::optional<TargetInfo> target = TargetInfo::lookup(options.target);
    return target ? *target : *TargetInfo::lookup("sm_90a");
  }

  const Program &program;
  DiagEngine &diags;
  mlir::MLIRContext *ctx;
  mlir::OpBuilder builder;
  const CompileOptions &options;
  llvm::StringMap<const Function *> functions;
  llvm::StringSet<> usedDefines;

  // Per kernel.
  // A deque: bindings are referenced across scope pushes.
  std::deque<llvm::StringMap<Binding>> scopes;
  std::vector<TensorParam> tensors;
  llvm::StringSet<> sizeVars;
  llvm::StringSet<> scalarParams;
  std::vector<PipeInfo> pipes;
  std::vector<Effect> *effects = nullptr;
  std::vector<Frame> frames;
  unsigned runtimeDepth = 0; ///< runtime ifs and loops around the statement
  std::vector<int64_t> loopLoadBytes; ///< open pipelined loops
  int64_t sharedBytes = 0;
  bool sharedReported = false;
  int64_t warps = 4;
  bool aborted = false;
  uint64_t work = 0;
  std::set<uint32_t> reportedPipeErrors;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  static constexpr uint64_t kMaxWork = 200000;
};

} // namespace

//===----------------------------------------------------------------------===//
// Compile-time evaluation
//===----------------------------------------------------------------------===//

std::string Sema::renderValues(const Expr &e) {
  switch (e.kind) {
  case ExprKind::Name: {
    Binding *b = lookup(e.name);
    if (b && !b->isVar && b->val.kind == Val::CInt)
      return std::to_string(b->val.i);
    if (b && !b->isVar && b->val.kind == Val::CBool)
      return b->val.b ? "true" : "false";
    return e.name;
  }
  case ExprKind::Unary:
    return opText(e.op) + renderValues(*e.operands[0]);
  case ExprKind::Binary: {
    int prec = binaryPrecedence(e.op);
    auto side = [&](const Expr &child, bool right) {
      std::string text = renderValues(child);
      if (child.kind == ExprKind::Binary) {
        int childPrec = binaryPrecedence(child.op);
        if (childPrec < prec || (right && childPrec == prec))
          return "(" + text + ")";
      }
      if (child.kind == ExprKind::Ternary)
        return "(" + text + ")";
      return text;
    };
    return side(*e.operands[0], false) + " " + opText(e.op) + " " +
           side(*e.operands[1], true);
  }
  case ExprKind::Call: {
    std::string text = e.name + "(";
    for (size_t i = 0; i < e.operands.size(); ++i)
      text += (i ? ", " : "") + renderValues(*e.operands[i]);
    return text + ")";
  }
  default:
    return src(e);
  }
}

Val Sema::foldConst(Tok op, const Val &a, const Val &b, SourceLoc l,
                    const Expr *whole) {
  auto withOrigin = [&](Val v) {
    if (whole && v.kind == Val::CInt) {
      std::string text = src(*whole), values = renderValues(*whole);
      if (text != values)
        v.origin = {text + " = " + values, whole->loc()};
    }
    return v;
  };
  bool report = whole != nullptr || true;
  (void)report;
  if (a.kind == Val::DType && b.kind == Val::DType &&
      (op == Tok::EqEq || op == Tok::Ne))
    return Val::cbool((a.dt == b.dt) == (op == Tok::EqEq));
  if (a.kind == Val::CBool && b.kind == Val::CBool) {
    switch (op) {
    case Tok::AmpAmp: case Tok::Amp: return Val::cbool(a.b && b.b);
    case Tok::PipePipe: case Tok::Pipe: return Val::cbool(a.b || b.b);
    case Tok::Caret: case Tok::Ne: return Val::cbool(a.b != b.b);
    case Tok::EqEq: return Val::cbool(a.b == b.b);
    default:
      return error(l, "operator '" + opText(op) + "' does not apply to bool values");
    }
  }
  if (a.kind == Val::CInt && b.kind == Val::CInt) {
    int64_t x = a.i, y = b.i, r = 0;
    switch (op) {
    case Tok::Plus:
      if (__builtin_add_overflow(x, y, &r))
        return error(l, "compile-time integer overflow in " + std::to_string(x) + " + " + std::to_string(y));
      return withOrigin(Val::cint(r));
    case Tok::Minus:
      if (__builtin_sub_overflow(x, y, &r))
        return error(l, "compile-time integer overflow in " + std::to_string(x) + " - " + std::to_string(y));
      return withOrigin(Val::cint(r));
    case Tok::Star:
      if (__builtin_mul_overflow(x, y, &r))
        return error(l, "compile-time integer overflow in " + std::to_string(x) + " * " + std::to_string(y));
      return withOrigin(Val::cint(r));
    case Tok::Slash:
    case Tok::Percent:
      if (y == 0)
        return error(l, "division by zero in compile-time expression " +
                            (whole ? renderValues(*whole) : std::string()));
      if (x == INT64_MIN && y == -1)
        return error(l, "compile-time integer overflow in division");
      return withOrigin(Val::cint(op == Tok::Slash ? x / y : x % y));
    case Tok::Amp: return withOrigin(Val::cint(x & y));
    case Tok::Pipe: return withOrigin(Val::cint(x | y));
    case Tok::Caret: return withOrigin(Val::cint(x ^ y));
    case Tok::Shl:
    case Tok::Shr:
      if (y < 0 || y > 63)
        return error(l, "shift amount " + std::to_string(y) + " is out of range 0..63");
      return withOrigin(Val::cint(op == Tok::Shl ? (int64_t)((uint64_t)x << y) : x >> y));
    case Tok::EqEq: return Val::cbool(x == y);
    case Tok::Ne: return Val::cbool(x != y);
    case Tok::Lt: return Val::cbool(x < y);
    case Tok::Le: return Val::cbool(x <= y);
    case Tok::Gt: return Val::cbool(x > y);
    case Tok::Ge: return Val::cbool(x >= y);
    default:
      return error(l, "operator '" + opText(op) + "' does not apply to integers");
    }
  }
  if (a.isLiteral() && b.isLiteral()) {
    double x = a.kind == Val::CInt ? (double)a.i : a.f;
    double y = b.kind == Val::CInt ? (double)b.i : b.f;
    switch (op) {
    case Tok::Plus: return Val::cfloat(x + y);
    case Tok::Minus: return Val::cfloat(x - y);
    case Tok::Star: return Val::cfloat(x * y);
    case Tok::Slash: return Val::cfloat(x / y);
    case Tok::EqEq: return Val::cbool(x == y);
    case Tok::Ne: return Val::cbool(x != y);
    case Tok::Lt: return Val::cbool(x < y);
    case Tok::Le: return Val::cbool(x <= y);
    case Tok::Gt: return Val::cbool(x > y);
    case Tok::Ge: return Val::cbool(x >= y);
    default:
      return error(l, "operator '" + opText(op) + "' does not apply to float values");
    }
  }
  return error(l, "invalid operands to '" + opText(op) + "'");
}

std::optional<Val> Sema::tryConst(const Expr &e) {
  switch (e.kind) {
  case ExprKind::Int:
    if (e.intValue > (uint64_t)INT64_MAX)
      return std::nullopt;
    return Val::cint((int64_t)e.intValue);
  case ExprKind::Float:
    return Val::cfloat(e.floatValue);
  case ExprKind::Bool:
    return Val::cbool(e.boolValue);
  case ExprKind::Name: {
    if (Binding *b = lookup(e.name)) {
      if (!b->isVar && b->val.isConst())
        return b->val;
      return std::nullopt;
    }
    if (auto dt = parseDT(e.name))
      return Val::dtype(*dt);
    return std::nullopt;
  }
  case ExprKind::Unary: {
    auto x = tryConst(*e.operands[0]);
    if (!x)
      return std::nullopt;
    if (e.op == Tok::Bang && x->kind == Val::CBool)
      return Val::cbool(!x->b);
    if (e.op == Tok::Minus && x->kind == Val::CInt && x->i != INT64_MIN)
      return Val::cint(-x->i);
    if (e.op == Tok::Minus && x->kind == Val::CFloat)
      return Val::cfloat(-x->f);
    return std::nullopt;
  }
  case ExprKind::Binary: {
    auto a = tryConst(*e.operands[0]);
    if (!a)
      return std::nullopt;
    // Short-circuit: `false && x` is compile-time whatever x is.
    if (a->kind == Val::CBool && e.op == Tok::AmpAmp && !a->b)
      return Val::cbool(false);
    if (a->kind == Val::CBool && e.op == Tok::PipePipe && a->b)
      return Val::cbool(true);
    auto b = tryConst(*e.operands[1]);
    if (!b)
      return std::nullopt;
    unsigned before = diags.getNumErrors();
    (void)before;
    // Avoid reporting from the silent path: check the failing cases first.
    if (a->kind == Val::CInt && b->kind == Val::CInt) {
      int64_t r;
      if ((e.op == Tok::Slash || e.op == Tok::Percent) &&
          (b->i == 0 || (a->i == INT64_MIN && b->i == -1)))
        return std::nullopt;
      if (e.op == Tok::Plus && __builtin_add_overflow(a->i, b->i, &r))
        return std::nullopt;
      if (e.op == Tok::Minus && __builtin_sub_overflow(a->i, b->i, &r))
        return std::nullopt;
      if (e.op == Tok::Star && __builtin_mul_overflow(a->i, b->i, &r))
        return std::nullopt;
      if ((e.op == Tok::Shl || e.op == Tok::Shr) && (b->i < 0 || b->i > 63))
        return std::nullopt;
      if (e.op == Tok::AmpAmp || e.op == Tok::PipePipe)
        return std::nullopt;
    } else if (a->kind == Val::CBool && b->kind == Val::CBool) {
      if (e.op != Tok::AmpAmp && e.op != Tok::PipePipe && e.op != Tok::Amp &&
          e.op != Tok::Pipe && e.op != Tok::Caret && e.op != Tok::EqEq &&
          e.op != Tok::Ne)
        return std::nullopt;
    } else if (a->kind == Val::DType && b->kind == Val::DType) {
      if (e.op != Tok::EqEq && e.op != Tok::Ne)
        return std::nullopt;
    } else if (a->isLiteral() && b->isLiteral()) {
      if (e.op != Tok::Plus && e.op != Tok::Minus && e.op != Tok::Star &&
          e.op != Tok::Slash && !isComparison(e.op))
        return std::nullopt;
    } else {
      return std::nullopt;
    }
    return foldConst(e.op, *a, *b, e.opLoc, &e);
  }
  case ExprKind::Ternary: {
    auto c = tryConst(*e.operands[0]);
    if (!c || c->kind != Val::CBool)
      return std::nullopt;
    return tryConst(*e.operands[c->b ? 1 : 2]);
  }
  case ExprKind::Call: {
    if (e.name == "abs" && !e.hasTemplateArgs && e.operands.size() == 1 &&
        e.namedArgs.empty()) {
      auto x = tryConst(*e.operands[0]);
      if (x && x->kind == Val::CInt && x->i != INT64_MIN)
        return Val::cint(x->i < 0 ? -x->i : x->i);
      if (x && x->kind == Val::CFloat)
        return Val::cfloat(std::fabs(x->f));
      return std::nullopt;
    }
    if ((e.name != "cdiv" && e.name != "min" && e.name != "max") ||
        e.hasTemplateArgs || e.operands.size() != 2 || !e.namedArgs.empty())
      return std::nullopt;
    auto a = tryConst(*e.operands[0]);
    auto b = tryConst(*e.operands[1]);
    if (!a || !b || a->kind != Val::CInt || b->kind != Val::CInt)
      return std::nullopt;
    int64_t x = a->i, y = b->i;
    if (e.name == "cdiv") {
      if (y == 0 || (x == INT64_MIN && y == -1))
        return std::nullopt;
      int64_t q = x / y;
      if ((x % y != 0) && ((x < 0) == (y < 0)))
        ++q;
      Val v = Val::cint(q);
      std::string text = src(e), values = renderValues(e);
      if (text != values)
        v.origin = {text + " = " + values, e.loc()};
      return v;
    }
    return Val::cint(e.name == "min" ? std::min(x, y) : std::max(x, y));
  }
  default:
    return std::nullopt;
  }
}

bool Sema::checkExtent(int64_t extent, SourceLoc l, llvm::StringRef what) {
  if (!isPow2(extent)) {
    diags.error(l, what + " extent " + llvm::Twine(extent) +
                       " is not a power of two; tile extents must be powers "
                       "of two (1, 2, 4, ..., 1048576)");
    return false;
  }
  if (extent > tl::kMaxTileElements) {
    diags.error(l, what + " extent " + llvm::Twine(extent) +
                       " is more than 2^20 = 1048576, the most elements a "
                       "tile holds; split it into smaller blocks");
    return false;
  }
  return true;
}

bool Sema::checkShape(llvm::ArrayRef<int64_t> shape, SourceLoc l) {
  int64_t n = 1;
  for (int64_t e : shape) {
    if (!isPow2(e)) {
      diags.error(l, "tile extent " + llvm::Twine(e) +
                         " is not a power of two; tile extents must be powers "
                         "of two (1, 2, 4, ..., 1048576)");
      return false;
    }
    if (__builtin_mul_overflow(n, e, &n) || n > tl::kMaxTileElements) {
      diags.error(l, "tile " + shapeStr(shape) +
                         " holds more than 2^20 = 1048576 elements; split it "
                         "into smaller blocks");
      return false;
    }
  }
  if (shape.size() > 8) {
    diags.error(l, "tile " + shapeStr(shape) + " has more than 8 dimensions");
    return false;
  }
  return true;
}

/// Reports the first undefined name of `e`; true if it reported one.
static bool findUndefined(const Expr &e,
                          llvm::function_ref<bool(llvm::StringRef)> defined,
                          DiagEngine &diags) {
  if (e.kind == ExprKind::Name && !defined(e.name) && !parseDT(e.name)) {
    diags.error(e.loc(), "use of undefined name '" + e.name + "'");
    return true;
  }
  for (const ExprPtr &op : e.operands)
    if (op && findUndefined(*op, defined, diags))
      return true;
  return false;
}

std::optional<int64_t> Sema::evalConstInt(const Expr &e, llvm::StringRef what,
                                          Origin *origin) {
  std::optional<Val> v = tryConst(e);
  if (v && v->kind == Val::CInt) {
    if (origin)
      *origin = v->origin;
    return v->i;
  }
  if (v) {
    diags.error(e.loc(), what + " must be a compile-time integer, but '" +
                             src(e) + "' is not an integer");
    return std::nullopt;
  }
  if (findUndefined(e, [&](llvm::StringRef n) { return lookup(n) != nullptr; },
                    diags))
    return std::nullopt;
  if (builder.getInsertionBlock()) {
    // Evaluate for real, to report division by zero and the like precisely.
    unsigned before = diags.getNumErrors();
    Val full = eval(e);
    if (diags.getNumErrors() != before || !full.ok())
      return std::nullopt;
  }
  diags.error(e.loc(), what + " must be a compile-time integer, but '" +
                           src(e) +
                           "' depends on values known only at run time");
  return std::nullopt;
}

std::optional<DT> Sema::evalDType(const Expr &e) {
  if (e.kind == ExprKind::Name) {
    if (Binding *b = lookup(e.name)) {
      if (b->val.kind == Val::DType)
        return b->val.dt;
      // A template parameter whose value was already reported (a bad -D).
      if (!b->val.ok())
        return std::nullopt;
    } else if (auto dt = parseDT(e.name)) {
      return dt;
    }
  }
  diags.error(e.loc(), "'" + src(e) +
                           "' is not a dtype; expected i1, bool, i32, i64, "
                           "f16, bf16, f32 or a dtype template parameter");
  return std::nullopt;
}

bool Sema::evalShape(const std::vector<ExprPtr> &dims, SourceLoc l,
                     llvm::SmallVectorImpl<int64_t> &shape,
                     std::vector<Origin> &origins) {
  if (dims.empty()) {
    diags.error(l, "a tile needs at least one extent");
    return false;
  }
  for (const ExprPtr &d : dims) {
    Origin origin;
    auto v = evalConstInt(*d, "a tile extent", &origin);
    if (!v)
      return false;
    if (!checkExtent(*v, d->loc(), "tile")) {
      if (!origin.text.empty())
        diags.note(origin.loc, "the extent comes from " + origin.text);
      return false;
    }
    shape.push_back(*v);
    origins.push_back(origin);
  }
  return checkShape(shape, l);
}

std::optional<Ty> Sema::resolveType(const TypeExpr &t) {
  switch (t.kind) {
  case TypeKind::Scalar: {
    auto dt = evalDType(*t.dtype);
    if (!dt)
      return std::nullopt;
    return Ty::scalar(*dt);
  }
  case TypeKind::Tile:
  case TypeKind::Pipeline: {
    auto dt = evalDType(*t.dtype);
    if (!dt)
      return std::nullopt;
    llvm::SmallVector<int64_t> shape;
    std::vector<Origin> origins;
    if (!evalShape(t.dims, t.range.begin, shape, origins))
      return std::nullopt;
    Ty ty = Ty::tile(*dt, shape, origins);
    if (t.kind == TypeKind::Pipeline)
      ty.kind = Ty::Pipeline;
    return ty;
  }
  case TypeKind::Tensor:
    diags.error(t.range.begin, "tensor types are only allowed for kernel "
                               "parameters");
    return std::nullopt;
  case TypeKind::Tuple:
    diags.error(t.range.begin, "tuple types are only allowed as fn results");
    return std::nullopt;
  }
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// Materializing values
//===----------------------------------------------------------------------===//

mlir::Value Sema::constant(DT dt, const Val &lit, SourceLoc l) {
  mlir::Type type = mlirDT(dt);
  mlir::TypedAttr attr;
  if (dt == DT::I1)
    attr = builder.getBoolAttr(lit.kind == Val::CBool ? lit.b : lit.i != 0);
  else if (isInt(dt))
    attr = builder.getIntegerAttr(type, lit.kind == Val::CInt ? lit.i : (int64_t)lit.f);
  else
    attr = builder.getFloatAttr(type, lit.kind == Val::CInt ? (double)lit.i : lit.f);
  return mlir::arith::ConstantOp::create(builder, loc(l), attr);
}

/// Builds `v` as a value of type `to` (a scalar or tile of the same dtype),
/// splatting scalars and broadcasting tiles. The caller checked that this
/// is possible.
mlir::Value Sema::materialize(const Val &v, const Ty &to, SourceLoc l) {
  if (v.kind == Val::CInt || v.kind == Val::CFloat || v.kind == Val::CBool) {
    if (to.isScalar())
      return constant(to.dt, v, l);
    mlir::Value scalar = constant(to.dt, v, l);
    auto attr = llvm::cast<mlir::TypedAttr>(
        scalar.getDefiningOp<mlir::arith::ConstantOp>().getValue());
    scalar.getDefiningOp()->erase();
    auto type = tileType(to.shape, to.dt);
    return mlir::arith::ConstantOp::create(
        builder, loc(l), mlir::DenseElementsAttr::get(type, attr));
  }
  return broadcastTo(v.v, v.ty, to.shape, l);
}

mlir::Value Sema::broadcastTo(mlir::Value v, const Ty &from,
                              llvm::ArrayRef<int64_t> shape, SourceLoc l) {
  if (shape.empty())
    return v;
  if (from.isScalar())
    return tl::SplatOp::create(builder, loc(l), tileType(shape, from.dt), v);
  llvm::SmallVector<int64_t> cur(from.shape);
  while (cur.size() < shape.size()) {
    cur.insert(cur.begin(), 1);
    v = tl::ExpandDimsOp::create(builder, loc(l), tileType(cur, from.dt), v,
                                 0u);
  }
  if (llvm::ArrayRef<int64_t>(cur) != shape)
    v = tl::BroadcastOp::create(builder, loc(l), tileType(shape, from.dt), v);
  return v;
}

Val Sema::toRuntime(const Val &v, SourceLoc l, std::optional<DT> dt) {
  if (v.kind == Val::Runtime || !v.ok())
    return v;
  DT to = dt ? *dt
             : v.kind == Val::CFloat ? DT::F32
             : v.kind == Val::CBool  ? DT::I1
                                     : DT::I32;
  if (v.kind == Val::CInt && to == DT::I32 &&
      (v.i > INT32_MAX || v.i < INT32_MIN))
    return error(l, "integer " + std::to_string(v.i) +
                        " does not fit in i32; write cast<i64>(...) or use "
                        "a smaller value");
  if (!v.isValue())
    return error(l, "expected a value");
  Ty ty = Ty::scalar(to);
  return Val::runtime(constant(to, v, l), ty);
}

std::optional<Ty> Sema::broadcastShapes(const Ty &a, const Ty &b, SourceLoc l,
                                        const Expr *ea, const Expr *eb) {
  if (a.isScalar())
    return b.withDT(a.dt);
  if (b.isScalar())
    return a;
  size_t rank = std::max(a.shape.size(), b.shape.size());
  Ty result = Ty::tile(a.dt, llvm::SmallVector<int64_t>(rank, 1));
  for (size_t i = 0; i < rank; ++i) {
    int64_t ia = (int64_t)i - (int64_t)(rank - a.shape.size());
    int64_t ib = (int64_t)i - (int64_t)(rank - b.shape.size());
    int64_t x = ia >= 0 ? a.shape[ia] : 1, y = ib >= 0 ? b.shape[ib] : 1;
    if (x != y && x != 1 && y != 1) {
      std::string what;
      if (ea && eb)
        what = " ('" + src(*ea) + "' is " + a.str() + ", '" + src(*eb) +
               "' is " + b.str() + ")";
      diags.error(l, "shapes " + shapeStr(a.shape) + " and " +
                         shapeStr(b.shape) + " do not broadcast: extent " +
                         std::to_string(x) + " vs " + std::to_string(y) +
                         what + "; use [:, None] or [None, :] to add unit "
                         "dimensions");
      return std::nullopt;
    }
    result.shape[i] = std::max(x, y);
    if (x == result.shape[i] && ia >= 0 && ia < (int64_t)a.origins.size())
      result.origins[i] = a.origins[ia];
    if (result.origins[i].text.empty() && ib >= 0 &&
        ib < (int64_t)b.origins.size() && y == result.shape[i])
      result.origins[i] = b.origins[ib];
  }
  return result;
}

std::optional<DT> Sema::commonDT(const Val &a, const Val &b, SourceLoc l,
                                 const char *what) {
  auto literalInto = [&](const Val &lit, DT dt) -> std::optional<DT> {
    if (lit.kind == Val::CBool) {
      if (dt == DT::I1)
        return dt;
      diags.error(l, llvm::Twine("a bool cannot combine with ") + dtName(dt) +
                         " in " + what);
      return std::nullopt;
    }
    if (lit.kind == Val::CFloat && !isFloat(dt)) {
      diags.error(l, llvm::Twine("the float literal cannot take the dtype ") +
                         dtName(dt) + " of the other operand of " + what +
                         "; use cast<f32>(...) on that operand first");
      return std::nullopt;
    }
    if (dt == DT::I1) {
      diags.error(l, llvm::Twine("a number cannot combine with a bool (i1) in ") +
                         what);
      return std::nullopt;
    }
    if (lit.kind == Val::CInt && dt == DT::I32 &&
        (lit.i > INT32_MAX || lit.i < INT32_MIN)) {
      diags.error(l, "integer " + std::to_string(lit.i) +
                         " does not fit in i32");
      return std::nullopt;
    }
    return dt;
  };
  if (a.kind == Val::Runtime && b.kind == Val::Runtime) {
    if (a.ty.dt == b.ty.dt)
      return a.ty.dt;
    diags.error(l, llvm::Twine("mismatched dtypes in ") + what + ": " +
                       a.ty.str() + " and " + b.ty.str() +
                       "; convert one with cast<" + dtName(a.ty.dt) +
                       ">(...) or cast<" + dtName(b.ty.dt) + ">(...)");
    return std::nullopt;
  }
  if (a.kind == Val::Runtime)
    return literalInto(b, a.ty.dt);
  if (b.kind == Val::Runtime)
    return literalInto(a, b.ty.dt);
  if (a.kind == Val::CBool || b.kind == Val::CBool)
    return DT::I1;
  if (a.kind == Val::CFloat || b.kind == Val::CFloat)
    return DT::F32;
  return DT::I32;
}

/// Converts `v` for a place of type `to` (a var, a parameter, a result):
/// literals take its dtype, scalars splat, tiles broadcast; nothing else
/// converts implicitly.
Val Sema::coerce(const Val &v, const Ty &to, SourceLoc l,
                 const llvm::Twine &what, SourceLoc declLoc) {
  if (!v.ok())
    return v;
  std::string whatText = what.str();
  if (to.kind == Ty::Pipeline) {
    if (v.kind != Val::Pipe) {
      diags.error(l, whatText + " expects " + to.str() + ", got " +
                         (v.kind == Val::Runtime ? v.ty.str() : std::string("a non-pipeline value")));
      diags.note(declLoc, "declared here");
      return Val::invalid();
    }
    if (v.ty.dt != to.dt || v.ty.shape != to.shape) {
      diags.error(l, whatText + " expects " + to.str() + ", but is given " +
                         v.ty.str() + "; pipeline types must match exactly "
                         "(dtype and block shape)");
      diags.note(declLoc, "the expected type " + to.str() + " is declared here");
      if (v.index >= 0 && v.index < (int)pipes.size())
        diags.note(pipes[v.index].loc,
                   "the " + v.ty.str() + " pipeline is created here");
      return Val::invalid();
    }
    return v;
  }
  if (v.kind == Val::Pipe || v.kind == Val::Tensor || v.kind == Val::Tuple ||
      v.kind == Val::DType || v.kind == Val::Void) {
    diags.error(l, whatText + " expects a value of type " + to.str());
    diags.note(declLoc, "declared here");
    return Val::invalid();
  }
  if (v.kind != Val::Runtime) {
    std::optional<DT> dt = commonDT(Val::runtime({}, to), v, l, whatText.c_str());
    if (!dt)
      return Val::invalid();
    return Val::runtime(materialize(v, to, l), to);
  }
  bool shapeOk = v.ty.isScalar() || v.ty.shape == to.shape;
  if (!shapeOk && v.ty.isTile() && to.isTile() && v.ty.rank() <= to.rank()) {
    shapeOk = true;
    for (int64_t i = 0; i < v.ty.rank(); ++i) {
      int64_t x = v.ty.shape[v.ty.rank() - 1 - i];
      if (x != 1 && x != to.shape[to.rank() - 1 - i])
        shapeOk = false;
    }
  }
  if (v.ty.dt != to.dt || !shapeOk || (v.ty.isTile() && to.isScalar())) {
    diags.error(l, whatText + " expects " + to.str() + ", but is given " +
                       v.ty.str() +
                       (v.ty.dt != to.dt ? std::string("; convert with cast<") +
                                               dtName(to.dt) + ">(...)"
                                         : std::string()));
    diags.note(declLoc, "the type " + to.str() + " is declared here");
    return Val::invalid();
  }
  Ty result = to;
  if (v.ty.isTile() && v.ty.shape == to.shape)
    result.origins = v.ty.origins;
  return Val::runtime(broadcastTo(v.v, v.ty, to.shape, l), result);
}

mlir::Value Sema::castValue(mlir::Value v, DT from, DT to, SourceLoc l) {
  if (from == to)
    return v;
  auto ty = [&](DT dt) -> mlir::Type {
    if (auto tile = llvm::dyn_cast<mlir::RankedTensorType>(v.getType()))
      return tile.clone(mlirDT(dt));
    return mlirDT(dt);
  };
  mlir::Location at = loc(l);
  if ((from == DT::F16 && to == DT::BF16) || (from == DT::BF16 && to == DT::F16))
    return castValue(castValue(v, from, DT::F32, l), DT::F32, to, l);
  if (isFloat(from) && isFloat(to)) {
    if (dtBytes(to) > dtBytes(from))
      return mlir::arith::ExtFOp::create(builder, at, ty(to), v);
    return mlir::arith::TruncFOp::create(builder, at, ty(to), v);
  }
  if (from == DT::I1) {
    if (isFloat(to))
      return mlir::arith::UIToFPOp::create(builder, at, ty(to), v);
    return mlir::arith::ExtUIOp::create(builder, at, ty(to), v);
  }
  if (to == DT::I1) {
    mlir::Value zero;
    Ty zt = Ty::scalar(from);
    if (auto tile = llvm::dyn_cast<mlir::RankedTensorType>(v.getType()))
      zt = Ty::tile(from, tile.getShape());
    zero = materialize(Val::cint(0), zt, l);
    if (isFloat(from))
      return mlir::arith::CmpFOp::create(builder, at,
                                         mlir::arith::CmpFPredicate::UNE, v, zero);
    return mlir::arith::CmpIOp::create(builder, at, mlir::arith::CmpIPredicate::ne,
                                       v, zero);
  }
  if (isInt(from) && isInt(to)) {
    if (dtBytes(to) > dtBytes(from))
      return mlir::arith::ExtSIOp::create(builder, at, ty(to), v);
    return mlir::arith::TruncIOp::create(builder, at, ty(to), v);
  }
  if (isInt(from))
    return mlir::arith::SIToFPOp::create(builder, at, ty(to), v);
  return mlir::arith::FPToSIOp::create(builder, at, ty(to), v);
}

Val Sema::castTo(const Val &v, DT to, SourceLoc l) {
  if (!v.ok())
    return v;
  if (v.kind == Val::CInt || v.kind == Val::CFloat || v.kind == Val::CBool) {
    Val lit = v;
    if (v.kind == Val::CFloat && !isFloat(to)) {
      if (!std::isfinite(v.f))
        return error(l, "cannot convert an infinite value to " +
                            llvm::Twine(dtName(to)));
      lit = Val::cint((int64_t)v.f);
    }
    return toRuntime(lit, l, to);
  }
  if (v.kind != Val::Runtime)
    return error(l, "cast<" + llvm::Twine(dtName(to)) +
                        "> needs a scalar or tile value");
  return Val::runtime(castValue(v.v, v.ty.dt, to, l), v.ty.withDT(to));
}

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

Val Sema::eval(const Expr &e) {
  if (!budget(e.loc()))
    return Val::invalid();
  switch (e.kind) {
  case ExprKind::Int:
    if (e.intValue > (uint64_t)INT64_MAX)
      return error(e.loc(), "integer literal " + src(e) + " is too large");
    return Val::cint((int64_t)e.intValue);
  case ExprKind::Float:
    return Val::cfloat(e.floatValue);
  case ExprKind::Bool:
    return Val::cbool(e.boolValue);
  case ExprKind::Name:
    return evalName(e);
  case ExprKind::Unary:
    return evalUnary(e);
  case ExprKind::Binary:
    return evalBinary(e);
  case ExprKind::Ternary:
    return evalTernary(e);
  case ExprKind::Call:
    return evalCall(e);
  case ExprKind::Method:
    return evalMethod(e);
  case ExprKind::Index:
    return evalIndex(e);
  case ExprKind::Tuple: {
    Val t;
    t.kind = Val::Tuple;
    for (const ExprPtr &op : e.operands) {
      Val x = eval(*op);
      if (!x.ok())
        return x;
      if (x.kind == Val::Tuple)
        return error(op->loc(), "tuples cannot nest");
      t.elements.push_back(x);
    }
    return t;
  }
  case ExprKind::Slice:
    return error(e.loc(), "a slice 'a : b' is only allowed as a tensor index");
  case ExprKind::NoneIndex:
    return error(e.loc(), "'None' is only allowed inside [...] to add a unit "
                          "dimension");
  }
  return Val::invalid();
}

Val Sema::evalName(const Expr &e) {
  if (Binding *b = lookup(e.name))
    return b->val;
  if (auto dt = parseDT(e.name))
    return Val::dtype(*dt);
  diags.error(e.loc(), "use of undefined name '" + e.name + "'");
  // Report each undefined name once per kernel.
  bind(e.name, Val::invalid(), e.loc());
  return Val::invalid();
}

Val Sema::evalUnary(const Expr &e) {
  Val x = eval(*e.operands[0]);
  if (!x.ok())
    return x;
  if (e.op == Tok::Minus) {
    if (x.kind == Val::CInt) {
      if (x.i == INT64_MIN)
        return error(e.loc(), "compile-time integer overflow in negation");
      return Val::cint(-x.i);
    }
    if (x.kind == Val::CFloat)
      return Val::cfloat(-x.f);
    if (x.kind != Val::Runtime || x.ty.dt == DT::I1)
      return error(e.loc(), "unary '-' needs a number");
    if (isFloat(x.ty.dt))
      return Val::runtime(mlir::arith::NegFOp::create(builder, loc(e.loc()), x.v),
                          x.ty);
    return binaryOp(Tok::Minus, Val::cint(0), x, e.loc(), nullptr, nullptr);
  }
  if (x.kind == Val::CBool)
    return Val::cbool(!x.b);
  if (x.kind != Val::Runtime || x.ty.dt != DT::I1)
    return error(e.loc(), "'!' needs a bool, but '" + src(*e.operands[0]) +
                              "' is " +
                              (x.kind == Val::Runtime ? x.ty.str()
                                                      : std::string("not a bool")));
  return binaryOp(Tok::Caret, x, Val::cbool(true), e.loc(), nullptr, nullptr);
}

Val Sema::evalBinary(const Expr &e) {
  Val a = eval(*e.operands[0]);
  if (!a.ok())
    return a;
  // `&&` and `||` on compile-time bools short-circuit, like static if.
  if (a.kind == Val::CBool && e.op == Tok::AmpAmp && !a.b)
    return Val::cbool(false);
  if (a.kind == Val::CBool && e.op == Tok::PipePipe && a.b)
    return Val::cbool(true);
  Val b = eval(*e.operands[1]);
  if (!b.ok())
    return b;
  if (a.isConst() && b.isConst())
    return foldConst(e.op, a, b, e.opLoc, &e);
  return binaryOp(e.op, a, b, e.opLoc, e.operands[0].get(), e.operands[1].get());
}

Val Sema::binaryOp(Tok op, Val a, Val b, SourceLoc l, const Expr *ea,
                   const Expr *eb) {
  if (!a.ok() || !b.ok())
    return Val::invalid();
  std::string opName = "'" + opText(op) + "'";
  for (const Val *x : {&a, &b})
    if (!x->isValue())
      return error(l, "invalid operand to " + opName + ": " +
                          (x->kind == Val::Tensor ? "a tensor can only be indexed inside load, store or push"
                           : x->kind == Val::Pipe ? "a pipeline is not a value"
                           : x->kind == Val::DType ? "a dtype is not a value"
                           : x->kind == Val::Tuple ? "a tuple must be destructured with let (a, b) = ..."
                                                   : "not a value"));
  if (a.isConst() && b.isConst())
    return foldConst(op, a, b, l, nullptr);
  std::optional<DT> dt = commonDT(a, b, l, opName.c_str());
  if (!dt)
    return Val::invalid();
  Ty ta = a.kind == Val::Runtime ? a.ty : Ty::scalar(*dt);
  Ty tb = b.kind == Val::Runtime ? b.ty : Ty::scalar(*dt);
  std::optional<Ty> shape = broadcastShapes(ta, tb, l, ea, eb);
  if (!shape)
    return Val::invalid();
  Ty operandTy = shape->withDT(*dt);
  bool isCompare = isComparison(op);
  bool isLogical = op == Tok::AmpAmp || op == Tok::PipePipe;
  bool isBitwise = op == Tok::Amp || op == Tok::Pipe || op == Tok::Caret;
  bool isShift = op == Tok::Shl || op == Tok::Shr;
  if (isLogical && *dt != DT::I1)
    return error(l, opName + " needs bool operands, got " + operandTy.str());
  if (isBitwise && isFloat(*dt))
    return error(l, opName + " needs integer or bool operands, got " +
                        operandTy.str());
  if (isShift && !isInt(*dt))
    return error(l, opName + " needs integer operands, got " + operandTy.str());
  if (!isCompare && !isLogical && !isBitwise && !isShift && *dt == DT::I1)
    return error(l, opName + " does not apply to bool values");
  if (op == Tok::Percent && isFloat(*dt))
    return error(l, "'%' needs integer operands, got " + operandTy.str());
  mlir::Value x = materialize(a, operandTy, l);
  mlir::Value y = materialize(b, operandTy, l);
  mlir::Location at = loc(l);
  using namespace mlir::arith;
  if (isCompare) {
    Ty resultTy = operandTy.withDT(DT::I1);
    mlir::Value r;
    if (isFloat(*dt)) {
      CmpFPredicate p = op == Tok::EqEq ? CmpFPredicate::OEQ
                        : op == Tok::Ne ? CmpFPredicate::UNE
                        : op == Tok::Lt ? CmpFPredicate::OLT
                        : op == Tok::Le ? CmpFPredicate::OLE
                        : op == Tok::Gt ? CmpFPredicate::OGT
                                        : CmpFPredicate::OGE;
      r = CmpFOp::create(builder, at, p, x, y);
    } else {
      CmpIPredicate p = op == Tok::EqEq ? CmpIPredicate::eq
                        : op == Tok::Ne ? CmpIPredicate::ne
                        : op == Tok::Lt ? CmpIPredicate::slt
                        : op == Tok::Le ? CmpIPredicate::sle
                        : op == Tok::Gt ? CmpIPredicate::sgt
                                        : CmpIPredicate::sge;
      r = CmpIOp::create(builder, at, p, x, y);
    }
    return Val::runtime(r, resultTy);
  }
  mlir::Value r;
  bool f = isFloat(*dt);
  switch (op) {
  case Tok::Plus: r = f ? (mlir::Value)AddFOp::create(builder, at, x, y) : AddIOp::create(builder, at, x, y); break;
  case Tok::Minus: r = f ? (mlir::Value)SubFOp::create(builder, at, x, y) : SubIOp::create(builder, at, x, y); break;
  case Tok::Star: r = f ? (mlir::Value)MulFOp::create(builder, at, x, y) : MulIOp::create(builder, at, x, y); break;
  case Tok::Slash: r = f ? (mlir::Value)DivFOp::create(builder, at, x, y) : DivSIOp::create(builder, at, x, y); break;
  case Tok::Percent: r = RemSIOp::create(builder, at, x, y); break;
  case Tok::Amp: case Tok::AmpAmp: r = AndIOp::create(builder, at, x, y); break;
  case Tok::Pipe: case Tok::PipePipe: r = OrIOp::create(builder, at, x, y); break;
  case Tok::Caret: r = XOrIOp::create(builder, at, x, y); break;
  case Tok::Shl: r = ShLIOp::create(builder, at, x, y); break;
  case Tok::Shr: r = ShRSIOp::create(builder, at, x, y); break;
  default:
    return error(l, "unsupported operator " + opName);
  }
  return Val::runtime(r, operandTy);
}

Val Sema::evalTernary(const Expr &e) {
  Val c = eval(*e.operands[0]);
  if (!c.ok())
    return c;
  if (c.kind == Val::CBool)
    return eval(*e.operands[c.b ? 1 : 2]);
  if (c.kind != Val::Runtime || !c.ty.isScalar() || c.ty.dt != DT::I1)
    return error(e.operands[0]->loc(),
                 "the condition of '?:' must be a scalar bool, but '" +
                     src(*e.operands[0]) + "' is " +
                     (c.kind == Val::Runtime ? c.ty.str() : std::string("not a bool")) +
                     (c.kind == Val::Runtime && c.ty.isTile() ? "; use where(c, a, b) for tiles" : ""));
  Val a = eval(*e.operands[1]);
  Val b = eval(*e.operands[2]);
  if (!a.ok() || !b.ok())
    return Val::invalid();
  if (!a.isValue() || !b.isValue())
    return error(e.loc(), "both arms of '?:' must be values");
  std::optional<DT> dt = commonDT(a, b, e.operands[1]->loc(), "'?:'");
  if (!dt)
    return Val::invalid();
  Ty ta = a.kind == Val::Runtime ? a.ty : Ty::scalar(*dt);
  Ty tb = b.kind == Val::Runtime ? b.ty : Ty::scalar(*dt);
  auto shape = broadcastShapes(ta, tb, e.operands[1]->loc(), e.operands[1].get(), e.operands[2].get());
  if (!shape)
    return Val::invalid();
  Ty ty = shape->withDT(*dt);
  mlir::Value x = materialize(a, ty, e.loc()), y = materialize(b, ty, e.loc());
  return Val::runtime(
      mlir::arith::SelectOp::create(builder, loc(e.loc()), c.v, x, y), ty);
}

//===----------------------------------------------------------------------===//
// Calls and builtins
//===----------------------------------------------------------------------===//

const NamedArg *Sema::namedArg(const Expr &e, llvm::StringRef name) {
  for (const NamedArg &arg : e.namedArgs)
    if (arg.name == name)
      return &arg;
  return nullptr;
}

bool Sema::checkArgs(const Expr &e, size_t minArgs, size_t maxArgs,
                     std::initializer_list<llvm::StringRef> named) {
  if (!e.hasCallArgs) {
    diags.error(e.loc(), "'" + e.name + "' must be called with (...)");
    return false;
  }
  if (e.operands.size() < minArgs || e.operands.size() > maxArgs) {
    std::string expected = minArgs == maxArgs
                               ? std::to_string(minArgs)
                               : std::to_string(minArgs) + " to " +
                                     std::to_string(maxArgs);
    diags.error(e.loc(), "'" + e.name + "' takes " + expected +
                             " argument" + (maxArgs == 1 ? "" : "s") +
                             ", but " + std::to_string(e.operands.size()) +
                             " were given");
    return false;
  }
  for (const NamedArg &arg : e.namedArgs) {
    if (!llvm::is_contained(named, arg.name)) {
      diags.error(arg.loc, "'" + e.name + "' has no argument named '" +
                               arg.name + "'");
      return false;
    }
    int count = 0;
    for (const NamedArg &other : e.namedArgs)
      count += other.name == arg.name;
    if (count > 1) {
      diags.error(arg.loc, "argument '" + arg.name + "' is given twice");
      return false;
    }
  }
  if (e.hasTemplateArgs && e.name != "zeros" && e.name != "full" &&
      e.name != "cast" && e.name != "pipeline") {
    diags.error(e.loc(), "'" + e.name + "' takes no template arguments");
    return false;
  }
  return true;
}

namespace {
/// A sum of runtime terms with integer coefficients plus a constant, used to
/// find slice lengths where the runtime parts of both ends cancel.
struct Linear {
  std::map<std::string, int64_t> terms;
  int64_t constant = 0;
  bool ok = true;
};
} // namespace

static std::string canonical(llvm::StringRef text) {
  std::string out;
  for (char c : text)
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
      out.push_back(c);
  return out;
}

Val Sema::evalCall(const Expr &e) {
  auto fn = functions.find(e.name);
  if (fn != functions.end())
    return callFunction(*fn->second, e);
  bool handled = false;
  Val v = evalBuiltin(e, handled);
  if (handled)
    return v;
  if (Binding *b = lookup(e.name)) {
    (void)b;
    return error(e.loc(), "'" + e.name + "' is not a function");
  }
  return error(e.loc(), "use of undefined function '" + e.name + "'");
}

Val Sema::elementwise(llvm::StringRef name, const Expr &e, Val x) {
  if (!x.ok())
    return x;
  // abs keeps a literal a literal, so that abs(-3) is an integer that takes
  // the dtype it meets, as -3 itself would.
  if (name == "abs" && x.kind == Val::CInt) {
    if (x.i == INT64_MIN)
      return error(e.loc(), "compile-time integer overflow in abs(" +
                                std::to_string(x.i) + ")");
    return Val::cint(x.i < 0 ? -x.i : x.i);
  }
  if (name == "abs" && x.kind == Val::CFloat)
    return Val::cfloat(std::fabs(x.f));
  if (x.kind == Val::CFloat || x.kind == Val::CInt)
    x = toRuntime(x, e.loc(), DT::F32);
  if (x.kind != Val::Runtime)
    return error(e.loc(), "'" + name + "' needs a scalar or tile value");
  mlir::Location at = loc(e.loc());
  if (name == "abs" && isInt(x.ty.dt))
    return Val::runtime(mlir::math::AbsIOp::create(builder, at, x.v), x.ty);
  if (!isFloat(x.ty.dt))
    return error(e.operands[0]->loc(),
                 "'" + name + "' needs a float operand, but '" +
                     src(*e.operands[0]) + "' is " + x.ty.str() +
                     "; convert it with cast<f32>(...)");
  mlir::Value r;
  using namespace mlir::math;
  if (name == "exp") r = ExpOp::create(builder, at, x.v);
  else if (name == "exp2") r = Exp2Op::create(builder, at, x.v);
  else if (name == "log") r = LogOp::create(builder, at, x.v);
  else if (name == "log2") r = Log2Op::create(builder, at, x.v);
  else if (name == "sqrt") r = SqrtOp::create(builder, at, x.v);
  else if (name == "rsqrt") r = RsqrtOp::create(builder, at, x.v);
  else if (name == "sin") r = SinOp::create(builder, at, x.v);
  else if (name == "cos") r = CosOp::create(builder, at, x.v);
  else r = AbsFOp::create(builder, at, x.v);
  return Val::runtime(r, x.ty);
}

Val Sema::reduce(llvm::StringRef name, const Expr &e) {
  const NamedArg *axisArg = namedArg(e, "axis");
  Val x = eval(*e.operands[0]);
  if (!x.ok())
    return x;
  if (x.kind != Val::Runtime || !x.ty.isTile())
    return error(e.operands[0]->loc(), "'" + name + "' reduces a tile, but '" +
                                           src(*e.operands[0]) + "' is " +
                                           (x.kind == Val::Runtime ? x.ty.str() : std::string("not a tile")));
  auto axis = evalConstInt(*axisArg->value, "the reduction axis");
  if (!axis)
    return Val::invalid();
  if (*axis < 0 || *axis >= x.ty.rank())
    return error(axisArg->value->loc(),
                 "axis " + std::to_string(*axis) + " is out of range for " +
                     x.ty.str() + "; expected 0 to " +
                     std::to_string(x.ty.rank() - 1));
  if (x.ty.dt == DT::I1)
    return error(e.loc(), "'" + name + "' does not reduce bool tiles; cast<i32>(...) them first");
  llvm::SmallVector<int64_t> shape(x.ty.shape);
  std::vector<Origin> origins = x.ty.origins;
  shape.erase(shape.begin() + *axis);
  origins.erase(origins.begin() + *axis);
  Ty ty = Ty::tile(x.ty.dt, shape, origins);
  tl::ReduceKind kind = name == "sum"   ? tl::ReduceKind::Sum
                        : name == "max" ? tl::ReduceKind::Max
                                        : tl::ReduceKind::Min;
  mlir::Value r = tl::ReduceOp::create(builder, loc(e.loc()), mlirType(ty),
                                       kind, x.v, (uint32_t)*axis);
  return Val::runtime(r, ty);
}

Val Sema::dot(const Expr &e) {
  Val a = eval(*e.operands[0]);
  Val b = eval(*e.operands[1]);
  if (!a.ok() || !b.ok())
    return Val::invalid();
  for (int i = 0; i < 2; ++i) {
    const Val &x = i ? b : a;
    const Expr &ex = *e.operands[i];
    if (x.kind != Val::Runtime || x.ty.rank() != 2)
      return error(ex.loc(), "dot needs 2-D tiles, but '" + src(ex) + "' is " +
                                 (x.kind == Val::Runtime ? x.ty.str() : std::string("not a tile")));
    if (x.ty.dt != DT::F16 && x.ty.dt != DT::BF16)
      return error(ex.loc(), "dot operands must be f16 or bf16, but '" +
                                 src(ex) + "' is " + x.ty.str() +
                                 "; convert it with cast<bf16>(...) or cast<f16>(...)");
  }
  if (a.ty.dt != b.ty.dt)
    return error(e.loc(), "dot operands must have one dtype, but '" +
                              src(*e.operands[0]) + "' is " + a.ty.str() +
                              " and '" + src(*e.operands[1]) + "' is " +
                              b.ty.str() + "; cast one to the other's dtype");
  int64_t m = a.ty.shape[0], k = a.ty.shape[1], kb = b.ty.shape[0],
          n = b.ty.shape[1];
  if (k != kb)
    return error(e.loc(), "dot contracts " + a.ty.str() + " with " +
                              b.ty.str() + ": K differs (" +
                              std::to_string(k) + " vs " + std::to_string(kb) +
                              "); a is [M, K] and b must be [K, N]");
  struct Extent {
    const char *name;
    int64_t value;
    Origin origin;
  } extents[] = {{"M", m, a.ty.origins[0]},
                 {"N", n, b.ty.origins[1]},
                 {"K", k, a.ty.origins[1].text.empty() ? b.ty.origins[0] : a.ty.origins[1]}};
  for (const Extent &x : extents) {
    if (x.value >= 16)
      continue;
    std::string how;
    if (!x.origin.text.empty())
      how = "; " + std::string(x.name) + " = " + std::to_string(x.value) +
            " comes from " + x.origin.text;
    diags.error(e.loc(), "dot " + std::string(x.name) + " = " +
                             std::to_string(x.value) +
                             " is below 16: tensor-core dot needs M, N and K "
                             "of at least 16 (a is " + a.ty.str() + ", b is " +
                             b.ty.str() + ")" + how +
                             "; choose template values or tile sizes that "
                             "make it at least 16");
    if (!x.origin.text.empty())
      diags.note(x.origin.loc, std::string(x.name) + " = " +
                                   std::to_string(x.value) + " is computed here");
    return Val::invalid();
  }
  // Check 5: the warps must split over the [M, N] result.
  bool splits = false;
  std::string options;
  for (int64_t wm = 1; wm <= warps; wm *= 2) {
    int64_t wn = warps / wm;
    if (m >= 16 * wm && n >= 8 * wn)
      splits = true;
    options += (options.empty() ? "" : ", ") + std::to_string(wm) + "x" +
               std::to_string(wn) + " gives " + std::to_string(m / wm) +
               " rows x " + std::to_string(n / wn) + " columns";
  }
  if (!splits)
    return error(e.loc(), "dot of [" + std::to_string(m) + ", " +
                              std::to_string(n) + "] cannot be split over " +
                              std::to_string(warps) +
                              " warps: each warp needs at least 16 rows and "
                              "8 columns, but " + options +
                              " per warp; use fewer warps or a larger tile");
  Ty accTy = Ty::tile(DT::F32, {m, n}, {a.ty.origins[0], b.ty.origins[1]});
  mlir::Value acc;
  if (e.operands.size() == 3) {
    Val c = eval(*e.operands[2]);
    if (!c.ok())
      return c;
    if (c.kind == Val::Runtime && (c.ty.dt != DT::F32 || c.ty.shape != accTy.shape))
      return error(e.operands[2]->loc(),
                   "the dot accumulator must be " + accTy.str() + ", but '" +
                       src(*e.operands[2]) + "' is " + c.ty.str());
    Val cc = coerce(c, accTy, e.operands[2]->loc(), "the dot accumulator",
                    e.loc());
    if (!cc.ok())
      return cc;
    acc = cc.v;
  } else {
    acc = materialize(Val::cint(0), accTy, e.loc());
  }
  mlir::Value r = tl::DotOp::create(builder, loc(e.loc()), mlirType(accTy),
                                    a.v, b.v, acc);
  return Val::runtime(r, accTy);
}

Val Sema::evalBuiltin(const Expr &e, bool &handled) {
  handled = true;
  llvm::StringRef name = e.name;
  SourceLoc l = e.loc();
  if (name == "program_id" || name == "num_programs") {
    if (!checkArgs(e, 1, 1, {}))
      return Val::invalid();
    auto axis = evalConstInt(*e.operands[0], "the grid axis");
    if (!axis)
      return Val::invalid();
    if (*axis < 0 || *axis > 2)
      return error(e.operands[0]->loc(), "grid axis " + std::to_string(*axis) +
                                             " is out of range; expected 0, 1 or 2");
    mlir::Value r;
    if (name == "program_id")
      r = tl::ProgramIdOp::create(builder, loc(l), (uint32_t)*axis);
    else
      r = tl::NumProgramsOp::create(builder, loc(l), (uint32_t)*axis);
    return Val::runtime(r, Ty::scalar(DT::I32));
  }
  if (name == "arange") {
    if (!checkArgs(e, 1, 1, {}))
      return Val::invalid();
    Origin origin;
    auto n = evalConstInt(*e.operands[0], "the arange extent", &origin);
    if (!n || !checkExtent(*n, e.operands[0]->loc(), "arange"))
      return Val::invalid();
    Ty ty = Ty::tile(DT::I32, {*n}, {origin});
    return Val::runtime(tl::ArangeOp::create(builder, loc(l), mlirType(ty)), ty);
  }
  if (name == "zeros" || name == "full" || name == "pipeline") {
    if (!e.hasTemplateArgs || e.templateArgs.size() != 1 || !e.hasShape) {
      return error(l, "'" + name + "' is written " + name +
                          (name == "zeros"  ? "<DT>[S0, ...]"
                           : name == "full" ? "<DT>[S0, ...](VALUE)"
                                            : "<DT>[S0, S1](stages = N)"));
    }
    auto dt = evalDType(*e.templateArgs[0]);
    if (!dt)
      return Val::invalid();
    llvm::SmallVector<int64_t> shape;
    std::vector<Origin> origins;
    if (!evalShape(e.shape, l, shape, origins))
      return Val::invalid();
    Ty ty = Ty::tile(*dt, shape, origins);
    if (name == "zeros") {
      if (e.hasCallArgs)
        return error(l, "'zeros' takes no arguments; write zeros<DT>[S0, ...]");
      return Val::runtime(materialize(Val::cint(0), ty, l), ty);
    }
    if (name == "full") {
      if (!checkArgs(e, 1, 1, {}))
        return Val::invalid();
      Val v = eval(*e.operands[0]);
      if (!v.ok())
        return v;
      if (v.kind == Val::Runtime && !v.ty.isScalar())
        return error(e.operands[0]->loc(), "the value of 'full' must be a scalar, but '" +
                                               src(*e.operands[0]) + "' is " + v.ty.str());
      return coerce(v, ty, e.operands[0]->loc(), "the value of 'full'", l);
    }
    if (!checkArgs(e, 0, 0, {"stages"}))
      return Val::invalid();
    const NamedArg *stagesArg = namedArg(e, "stages");
    if (!stagesArg)
      return error(l, "a pipeline needs its stage count: pipeline<" +
                          llvm::Twine(dtName(*dt)) + ">" + shapeStr(shape) +
                          "(stages = 2)");
    auto stages = evalConstInt(*stagesArg->value, "the pipeline stage count");
    if (!stages)
      return Val::invalid();
    if (*stages < 1 || *stages > 16)
      return error(stagesArg->value->loc(), "a pipeline needs 1 to 16 stages, got " +
                                                std::to_string(*stages));
    ty.kind = Ty::Pipeline;
    ty.stages = *stages;
    int64_t stageBytes = ty.elements() * dtBytes(*dt);
    addSharedBytes(*stages * stageBytes, l,
                   "this pipeline needs " + std::to_string(*stages) + " x " +
                       std::to_string(stageBytes) + " = " +
                       std::to_string(*stages * stageBytes) + " bytes");
    auto type = tl::PipelineType::get(ctx, shape, mlirDT(*dt), *stages);
    Val p;
    p.kind = Val::Pipe;
    p.ty = ty;
    p.v = tl::PipelineCreateOp::create(builder, loc(l), type);
    p.index = pipes.size();
    pipes.push_back({"", l, (unsigned)*stages, ty});
    return p;
  }
  if (name == "cast") {
    if (!e.hasTemplateArgs || e.templateArgs.size() != 1)
      return error(l, "'cast' is written cast<DT>(x)");
    if (!checkArgs(e, 1, 1, {}))
      return Val::invalid();
    auto dt = evalDType(*e.templateArgs[0]);
    if (!dt)
      return Val::invalid();
    return castTo(eval(*e.operands[0]), *dt, l);
  }
  if (name == "dot") {
    if (!checkArgs(e, 2, 3, {}))
      return Val::invalid();
    return dot(e);
  }
  if (name == "trans") {
    if (!checkArgs(e, 1, 1, {}))
      return Val::invalid();
    Val x = eval(*e.operands[0]);
    if (!x.ok())
      return x;
    if (x.kind != Val::Runtime || x.ty.rank() != 2)
      return error(e.operands[0]->loc(), "'trans' needs a 2-D tile, but '" +
                                             src(*e.operands[0]) + "' is " +
                                             (x.kind == Val::Runtime ? x.ty.str() : std::string("not a tile")));
    Ty ty = Ty::tile(x.ty.dt, {x.ty.shape[1], x.ty.shape[0]},
                     {x.ty.origins[1], x.ty.origins[0]});
    return Val::runtime(tl::TransOp::create(builder, loc(l), mlirType(ty), x.v), ty);
  }
  if (name == "where") {
    if (!checkArgs(e, 3, 3, {}))
      return Val::invalid();
    Val c = eval(*e.operands[0]);
    Val a = eval(*e.operands[1]);
    Val b = eval(*e.operands[2]);
    if (!c.ok() || !a.ok() || !b.ok())
      return Val::invalid();
    if (c.kind == Val::CBool)
      c = toRuntime(c, l, DT::I1);
    if (c.kind != Val::Runtime || c.ty.dt != DT::I1)
      return error(e.operands[0]->loc(), "the condition of 'where' must be bool, but '" +
                                             src(*e.operands[0]) + "' is " +
                                             (c.kind == Val::Runtime ? c.ty.str() : std::string("not a bool")));
    if (!a.isValue() || !b.isValue())
      return error(l, "'where' selects between two values");
    std::optional<DT> dt = commonDT(a, b, e.operands[1]->loc(), "'where'");
    if (!dt)
      return Val::invalid();
    Ty ta = a.kind == Val::Runtime ? a.ty : Ty::scalar(*dt);
    Ty tb = b.kind == Val::Runtime ? b.ty : Ty::scalar(*dt);
    auto s1 = broadcastShapes(ta, tb, l, e.operands[1].get(), e.operands[2].get());
    if (!s1)
      return Val::invalid();
    auto s2 = broadcastShapes(c.ty, s1->withDT(DT::I1), l, e.operands[0].get(), e.operands[1].get());
    if (!s2)
      return Val::invalid();
    Ty ty = s2->withDT(*dt);
    mlir::Value cv = broadcastTo(c.v, c.ty, ty.shape, l);
    mlir::Value x = materialize(a, ty, l), y = materialize(b, ty, l);
    return Val::runtime(mlir::arith::SelectOp::create(builder, loc(l), cv, x, y), ty);
  }
  if (name == "sum" || name == "max" || name == "min") {
    if (namedArg(e, "axis") || name == "sum") {
      if (!checkArgs(e, 1, 1, {"axis"}))
        return Val::invalid();
      if (!namedArg(e, "axis"))
        return error(l, "'" + name + "' needs the axis to reduce: " + name +
                            "(x, axis = 0)");
      return reduce(name, e);
    }
    if (!checkArgs(e, 2, 2, {}))
      return Val::invalid();
    Val a = eval(*e.operands[0]);
    Val b = eval(*e.operands[1]);
    if (!a.ok() || !b.ok())
      return Val::invalid();
    if (a.kind == Val::CInt && b.kind == Val::CInt)
      return Val::cint(name == "max" ? std::max(a.i, b.i) : std::min(a.i, b.i));
    if (a.isLiteral() && b.isLiteral()) {
      double x = a.kind == Val::CInt ? a.i : a.f, y = b.kind == Val::CInt ? b.i : b.f;
      return Val::cfloat(name == "max" ? std::max(x, y) : std::min(x, y));
    }
    if (!a.isValue() || !b.isValue())
      return error(l, "'" + name + "' takes two values, or a tile and axis = k");
    std::optional<DT> dt = commonDT(a, b, l, name == "max" ? "'max'" : "'min'");
    if (!dt)
      return Val::invalid();
    if (*dt == DT::I1)
      return error(l, "'" + name + "' does not apply to bool values");
    Ty ta = a.kind == Val::Runtime ? a.ty : Ty::scalar(*dt);
    Ty tb = b.kind == Val::Runtime ? b.ty : Ty::scalar(*dt);
    auto s = broadcastShapes(ta, tb, l, e.operands[0].get(), e.operands[1].get());
    if (!s)
      return Val::invalid();
    Ty ty = s->withDT(*dt);
    mlir::Value x = materialize(a, ty, l), y = materialize(b, ty, l);
    mlir::Value r;
    using namespace mlir::arith;
    if (isFloat(*dt))
      r = name == "max" ? (mlir::Value)MaximumFOp::create(builder, loc(l), x, y)
                        : MinimumFOp::create(builder, loc(l), x, y);
    else
      r = name == "max" ? (mlir::Value)MaxSIOp::create(builder, loc(l), x, y)
                        : MinSIOp::create(builder, loc(l), x, y);
    return Val::runtime(r, ty);
  }
  if (name == "exp" || name == "exp2" || name == "log" || name == "log2" ||
      name == "sqrt" || name == "rsqrt" || name == "sin" || name == "cos" ||
      name == "abs") {
    if (!checkArgs(e, 1, 1, {}))
      return Val::invalid();
    return elementwise(name, e, eval(*e.operands[0]));
  }
  if (name == "cdiv") {
    if (!checkArgs(e, 2, 2, {}))
      return Val::invalid();
    if (auto c = tryConst(e))
      return *c;
    Val a = eval(*e.operands[0]);
    Val b = eval(*e.operands[1]);
    if (!a.ok() || !b.ok())
      return Val::invalid();
    if (a.kind == Val::CInt && b.kind == Val::CInt)
      return error(l, b.i == 0 ? "division by zero in cdiv"
                               : "compile-time integer overflow in cdiv(" +
                                     std::to_string(a.i) + ", " +
                                     std::to_string(b.i) + ")");
    if (!a.isValue() || !b.isValue())
      return error(l, "'cdiv' needs integer operands");
    std::optional<DT> dt = commonDT(a, b, l, "'cdiv'");
    if (!dt)
      return Val::invalid();
    if (!isInt(*dt))
      return error(l, "'cdiv' needs integer operands, got " + llvm::Twine(dtName(*dt)));
    Ty ta = a.kind == Val::Runtime ? a.ty : Ty::scalar(*dt);
    Ty tb = b.kind == Val::Runtime ? b.ty : Ty::scalar(*dt);
    auto s = broadcastShapes(ta, tb, l, e.operands[0].get(), e.operands[1].get());
    if (!s)
      return Val::invalid();
    Ty ty = s->withDT(*dt);
    mlir::Value x = materialize(a, ty, l), y = materialize(b, ty, l);
    return Val::runtime(mlir::arith::CeilDivSIOp::create(builder, loc(l), x, y), ty);
  }
  if (name == "load") {
    if (!checkArgs(e, 1, 1, {"other", "mask"}))
      return Val::invalid();
    auto block = evalBlock(*e.operands[0], false);
    if (!block)
      return Val::invalid();
    TensorParam &t = tensors[block->tensor];
    bool scalar = block->shape.empty();
    if (scalar) {
      block->shape.push_back(1);
      block->origins.emplace_back();
      for (mlir::Value &index : block->indices)
        index = broadcastTo(index, Ty::scalar(DT::I32), block->shape, l);
    }
    auto mask = evalMask(e, *block);
    auto other = evalOther(e, *block, t.ty.dt);
    if (!mask || !other)
      return Val::invalid();
    Ty ty = Ty::tile(t.ty.dt, block->shape, block->origins);
    mlir::Value r = tl::LoadOp::create(builder, loc(l), mlirType(ty), t.value,
                                       block->indices, *mask, *other);
    t.read = true;
    for (int64_t &bytes : loopLoadBytes)
      bytes += ty.elements() * dtBytes(ty.dt);
    if (scalar) {
      Ty sty = Ty::scalar(t.ty.dt);
      return Val::runtime(tl::ReduceOp::create(builder, loc(l), mlirType(sty),
                                               tl::ReduceKind::Sum, r, 0u),
                          sty);
    }
    return Val::runtime(r, ty);
  }
  if (name == "store") {
    if (!checkArgs(e, 2, 2, {"mask"}))
      return Val::invalid();
    auto block = evalBlock(*e.operands[0], true);
    if (!block)
      return Val::invalid();
    TensorParam &t = tensors[block->tensor];
    Val v = eval(*e.operands[1]);
    if (!v.ok())
      return v;
    if (!v.isValue())
      return error(e.operands[1]->loc(), "store needs a value to store");
    if (v.kind == Val::Runtime && v.ty.dt != t.ty.dt)
      return error(e.operands[1]->loc(),
                   "store of " + v.ty.str() + " values into tensor '" + t.name +
                       "' of " + dtName(t.ty.dt) + "; convert them with cast<" +
                       dtName(t.ty.dt) + ">(...)");
    if (block->shape.empty()) {
      block->shape.push_back(1);
      block->origins.emplace_back();
      for (mlir::Value &index : block->indices)
        index = broadcastTo(index, Ty::scalar(DT::I32), block->shape, l);
    }
    Ty blockTy = Ty::tile(t.ty.dt, block->shape, block->origins);
    if (v.kind == Val::Runtime && v.ty.isTile()) {
      auto s = broadcastShapes(v.ty, blockTy, e.operands[1]->loc(), e.operands[1].get(), e.operands[0].get());
      if (!s)
        return Val::invalid();
      if (s->shape != blockTy.shape)
        return error(e.operands[1]->loc(), "store of a " + v.ty.str() +
                                               " value into a " + blockTy.str() +
                                               " block; the value must broadcast to the block's shape");
    }
    Val value = coerce(v, blockTy, e.operands[1]->loc(), "the stored value", e.operands[0]->loc());
    auto mask = evalMask(e, *block);
    if (!value.ok() || !mask)
      return Val::invalid();
    tl::StoreOp::create(builder, loc(l), t.value, block->indices, value.v, *mask);
    t.written = true;
    return Val::voidVal();
  }
  handled = false;
  return Val::invalid();
}

std::optional<mlir::Value> Sema::evalMask(const Expr &e, const Block &b) {
  const NamedArg *arg = namedArg(e, "mask");
  if (!arg)
    return mlir::Value();
  Val m = eval(*arg->value);
  if (!m.ok())
    return std::nullopt;
  if (m.kind == Val::CBool)
    m = toRuntime(m, arg->loc, DT::I1);
  if (m.kind != Val::Runtime || m.ty.dt != DT::I1) {
    diags.error(arg->value->loc(), "the mask must be bool, but '" +
                                       src(*arg->value) + "' is " +
                                       (m.kind == Val::Runtime ? m.ty.str() : std::string("not a bool")));
    return std::nullopt;
  }
  Ty blockTy = Ty::tile(DT::I1, b.shape);
  auto s = broadcastShapes(m.ty, blockTy, arg->value->loc(), arg->value.get(), nullptr);
  if (!s)
    return std::nullopt;
  if (s->shape != blockTy.shape) {
    diags.error(arg->value->loc(), "the mask " + m.ty.str() +
                                       " does not broadcast to the block " +
                                       shapeStr(b.shape));
    return std::nullopt;
  }
  return broadcastTo(m.v, m.ty, b.shape, arg->value->loc());
}

std::optional<mlir::Value> Sema::evalOther(const Expr &e, const Block &b, DT dt) {
  const NamedArg *arg = namedArg(e, "other");
  if (!arg)
    return mlir::Value();
  Val o = eval(*arg->value);
  if (!o.ok())
    return std::nullopt;
  Ty blockTy = Ty::tile(dt, b.shape);
  if (o.kind == Val::Runtime && o.ty.isTile()) {
    auto s = broadcastShapes(o.ty, blockTy, arg->value->loc(), arg->value.get(), nullptr);
    if (!s)
      return std::nullopt;
  }
  Val v = coerce(o, blockTy, arg->value->loc(), "'other'", e.loc());
  if (!v.ok())
    return std::nullopt;
  return v.v;
}

std::optional<Block> Sema::evalBlock(const Expr &e, bool forStore) {
  Val base;
  if (e.kind == ExprKind::Index)
    base = eval(*e.operands[0]);
  if (e.kind != ExprKind::Index || (base.ok() && base.kind != Val::Tensor)) {
    diags.error(e.loc(), "expected an indexed tensor parameter T[...], got '" +
                             src(e) + "'");
    return std::nullopt;
  }
  if (!base.ok())
    return std::nullopt;
  TensorParam &t = tensors[base.index];
  Block block;
  block.tensor = base.index;
  size_t rank = t.ty.shape.size();
  size_t given = e.operands.size() - 1;
  if (given != rank) {
    diags.error(e.loc(), "tensor '" + t.name + "' has rank " +
                             std::to_string(rank) + " but is indexed with " +
                             std::to_string(given) + " index" +
                             (given == 1 ? "" : "es") +
                             "; give exactly one index per dimension");
    diags.note(t.loc, "'" + t.name + "' is declared here");
    return std::nullopt;
  }
  if (forStore && !t.ty.isMutable) {
    diags.error(e.loc(), "store needs a mut tensor, but '" + t.name +
                             "' is read-only; declare it 'mut tensor<...>'");
    diags.note(t.loc, "'" + t.name + "' is declared here");
    return std::nullopt;
  }
  struct Item {
    Val v;
    bool tile;
  };
  std::vector<Item> items;
  std::function<Linear(const Expr &)> linearize = [&](const Expr &x) -> Linear {
    Linear lin;
    if (auto c = tryConst(x)) {
      if (c->kind == Val::CInt) {
        lin.constant = c->i;
        return lin;
      }
    }
    if (x.kind == ExprKind::Unary && x.op == Tok::Minus) {
      lin = linearize(*x.operands[0]);
      for (auto &term : lin.terms)
        term.second = -term.second;
      if (lin.constant == INT64_MIN)
        lin.ok = false;
      lin.constant = -lin.constant;
      return lin;
    }
    if (x.kind == ExprKind::Binary && (x.op == Tok::Plus || x.op == Tok::Minus)) {
      Linear a = linearize(*x.operands[0]), b = linearize(*x.operands[1]);
      int64_t sign = x.op == Tok::Plus ? 1 : -1;
      lin = a;
      for (auto &term : b.terms)
        lin.terms[term.first] += sign * term.second;
      lin.ok = a.ok && b.ok &&
               !__builtin_add_overflow(a.constant, sign * b.constant, &lin.constant);
      return lin;
    }
    if (x.kind == ExprKind::Binary && x.op == Tok::Star) {
      for (int side = 0; side < 2; ++side) {
        auto c = tryConst(*x.operands[side]);
        if (c && c->kind == Val::CInt) {
          lin = linearize(*x.operands[1 - side]);
          for (auto &term : lin.terms)
            if (__builtin_mul_overflow(term.second, c->i, &term.second))
              lin.ok = false;
          if (__builtin_mul_overflow(lin.constant, c->i, &lin.constant))
            lin.ok = false;
          return lin;
        }
      }
    }
    lin.terms[canonical(diags.slice(x.range))] = 1;
    return lin;
  };
  for (size_t i = 1; i < e.operands.size(); ++i) {
    const Expr &ix = *e.operands[i];
    if (ix.kind == ExprKind::Slice) {
      if (ix.operands.empty()) {
        diags.error(ix.loc(), "':' alone is not a tensor index; write a "
                              "slice 'START : END' of compile-time length");
        return std::nullopt;
      }
      Linear a = linearize(*ix.operands[0]), b = linearize(*ix.operands[1]);
      bool constant = a.ok && b.ok;
      for (auto &term : b.terms)
        a.terms[term.first] -= term.second;
      for (auto &term : a.terms)
        constant &= term.second == 0;
      int64_t length = 0;
      if (!constant || __builtin_sub_overflow(b.constant, a.constant, &length)) {
        diags.error(ix.loc(), "the length of slice '" + src(ix) +
                                  "' is not a compile-time constant; write "
                                  "both ends so that END - START is known "
                                  "(for example 'n0 : n0 + BLOCK')");
        return std::nullopt;
      }
      if (!isPow2(length) || length > tl::kMaxTileElements) {
        diags.error(ix.loc(), "slice '" + src(ix) + "' has length " +
                                  std::to_string(length) +
                                  ", which is not a power of two; tile "
                                  "extents must be powers of two");
        return std::nullopt;
      }
      Origin origin;
      auto startConst = tryConst(*ix.operands[0]);
      if (startConst && startConst->kind == Val::CInt && startConst->i == 0)
        if (auto endConst = tryConst(*ix.operands[1]))
          origin = endConst->origin;
      Val start = eval(*ix.operands[0]);
      if (!start.ok())
        return std::nullopt;
      if (!(start.kind == Val::CInt ||
            (start.kind == Val::Runtime && start.ty.isScalar() && isInt(start.ty.dt)))) {
        diags.error(ix.operands[0]->loc(), "a slice start must be a scalar integer");
        return std::nullopt;
      }
      Ty ty = Ty::tile(DT::I32, {length}, {origin});
      mlir::Value r = tl::ArangeOp::create(builder, loc(ix.loc()), mlirType(ty));
      if (!(start.kind == Val::CInt && start.i == 0)) {
        if (start.kind == Val::Runtime && start.ty.dt == DT::I64)
          start = castTo(start, DT::I32, ix.loc());
        Val sum = binaryOp(Tok::Plus, start, Val::runtime(r, ty), ix.loc(), nullptr, nullptr);
        if (!sum.ok())
          return std::nullopt;
        r = sum.v;
      }
      items.push_back({Val::runtime(r, ty), true});
      continue;
    }
    if (ix.kind == ExprKind::NoneIndex) {
      diags.error(ix.loc(), "'None' is not a tensor index");
      return std::nullopt;
    }
    Val v = eval(ix);
    if (!v.ok())
      return std::nullopt;
    if (v.kind == Val::CInt) {
      v = toRuntime(v, ix.loc(), DT::I32);
      if (!v.ok())
        return std::nullopt;
    }
    if (v.kind != Val::Runtime || !isInt(v.ty.dt) || v.ty.rank() > 1) {
      diags.error(ix.loc(), "a tensor index must be a scalar integer, a 1-D "
                            "integer tile or a slice 'START : END', but '" +
                                src(ix) + "' is " +
                                (v.kind == Val::Runtime ? v.ty.str() : std::string("not an integer")));
      return std::nullopt;
    }
    items.push_back({v, v.ty.isTile()});
  }
  for (const Item &item : items)
    if (item.tile) {
      block.shape.push_back(item.v.ty.shape[0]);
      block.origins.push_back(item.v.ty.origins[0]);
    }
  if (!checkShape(block.shape, e.loc()))
    return std::nullopt;
  size_t position = 0;
  size_t blockRank = block.shape.size();
  for (const Item &item : items) {
    mlir::Value v = item.v.v;
    if (!item.tile) {
      block.indices.push_back(broadcastTo(v, item.v.ty, block.shape, e.loc()));
      continue;
    }
    llvm::SmallVector<int64_t> cur{item.v.ty.shape[0]};
    DT dt = item.v.ty.dt;
    for (size_t axis = 0; axis < position; ++axis) {
      cur.insert(cur.begin(), 1);
      v = tl::ExpandDimsOp::create(builder, loc(e.loc()), tileType(cur, dt), v, 0u);
    }
    while (cur.size() < blockRank) {
      cur.push_back(1);
      v = tl::ExpandDimsOp::create(builder, loc(e.loc()), tileType(cur, dt), v,
                                   (uint32_t)(cur.size() - 1));
    }
    if (llvm::ArrayRef<int64_t>(cur) != llvm::ArrayRef<int64_t>(block.shape))
      v = tl::BroadcastOp::create(builder, loc(e.loc()), tileType(block.shape, dt), v);
    block.indices.push_back(v);
    ++position;
  }
  return block;
}

Val Sema::evalIndex(const Expr &e) {
  Val base = eval(*e.operands[0]);
  if (!base.ok())
    return base;
  if (base.kind == Val::Tensor)
    return error(e.loc(), "an indexed tensor may only appear in load, store "
                          "and push; write load(" + src(e) + ")");
  if (base.kind != Val::Runtime || !base.ty.isTile())
    return error(e.loc(), "only tiles and tensors can be indexed, but '" +
                              src(*e.operands[0]) + "' is " +
                              (base.kind == Val::Runtime ? base.ty.str() : std::string("not a tile")));
  size_t slices = 0;
  for (size_t i = 1; i < e.operands.size(); ++i) {
    const Expr &ix = *e.operands[i];
    if (ix.kind == ExprKind::Slice && ix.operands.empty())
      ++slices;
    else if (ix.kind != ExprKind::NoneIndex)
      return error(ix.loc(), "a tile can only be indexed with ':' and 'None' "
                             "(as in x[:, None]) to add unit dimensions");
  }
  if ((int64_t)slices != base.ty.rank())
    return error(e.loc(), "'" + src(*e.operands[0]) + "' is " + base.ty.str() +
                              " and needs one ':' per dimension, got " +
                              std::to_string(slices));
  Ty ty = base.ty;
  mlir::Value v = base.v;
  for (size_t i = 1; i < e.operands.size(); ++i) {
    if (e.operands[i]->kind != ExprKind::NoneIndex)
      continue;
    uint32_t axis = i - 1;
    ty.shape.insert(ty.shape.begin() + axis, 1);
    ty.origins.insert(ty.origins.begin() + axis, Origin());
    v = tl::ExpandDimsOp::create(builder, loc(e.loc()), mlirType(ty), v, axis);
  }
  if (!checkShape(ty.shape, e.loc()))
    return Val::invalid();
  return Val::runtime(v, ty);
}

Val Sema::evalMethod(const Expr &e) {
  Val recv = eval(*e.operands[0]);
  if (!recv.ok())
    return recv;
  if (recv.kind != Val::Pipe)
    return error(e.loc(), "'." + e.name + "(...)' applies to pipelines, but '" +
                              src(*e.operands[0]) + "' is not a pipeline");
  // A copy: evaluating the pushed block may inline fn calls that create
  // pipelines and so grow `pipes`.
  const PipeInfo info = pipes[recv.index];
  std::string pipeName = info.name.empty() ? src(*e.operands[0]) : info.name;
  SourceLoc l = e.loc();
  if (e.name == "push") {
    if (e.operands.size() != 2) {
      return error(l, "push takes one indexed tensor, as in " + pipeName +
                          ".push(k[z, h, n0 : n0 + BLOCK_N, 0 : D])");
    }
    for (const NamedArg &arg : e.namedArgs)
      if (arg.name != "mask" && arg.name != "other")
        return error(arg.loc, "push has no argument named '" + arg.name + "'");
    auto block = evalBlock(*e.operands[1], false);
    if (!block)
      return Val::invalid();
    TensorParam &t = tensors[block->tensor];
    Ty blockTy = Ty::tile(t.ty.dt, block->shape, block->origins);
    if (blockTy.dt != recv.ty.dt || blockTy.shape != recv.ty.shape) {
      diags.error(e.operands[1]->loc(),
                  "push of a " + blockTy.str() + " block into pipeline '" +
                      pipeName + "' of type " + recv.ty.str() +
                      "; push needs a block of exactly the pipeline's dtype "
                      "and shape");
      diags.note(info.loc, "'" + pipeName + "' is created here as " +
                               recv.ty.str());
      return Val::invalid();
    }
    auto mask = evalMask(e, *block);
    auto other = evalOther(e, *block, t.ty.dt);
    if (!mask || !other)
      return Val::invalid();
    tl::PipelinePushOp::create(builder, loc(l), recv.v, t.value, block->indices,
                               *mask, *other);
    t.read = true;
    if (effects)
      effects->push_back({Effect::Push, recv.index, l, {}, {}});
    return Val::voidVal();
  }
  if (e.name == "pop") {
    if (!e.operands.empty() || e.operands.size() != 1 || !e.namedArgs.empty())
      if (e.operands.size() != 1 || !e.namedArgs.empty())
        return error(l, "pop takes no arguments");
    Ty ty = recv.ty;
    ty.kind = Ty::Tile;
    mlir::Value r = tl::PipelinePopOp::create(builder, loc(l), mlirType(ty), recv.v);
    if (effects)
      effects->push_back({Effect::Pop, recv.index, l, {}, {}});
    return Val::runtime(r, ty);
  }
  return error(l, "pipelines have no method '" + e.name + "'; use push or pop");
}

//===----------------------------------------------------------------------===//
// fn inlining
//===----------------------------------------------------------------------===//

Val Sema::callFunction(const Function &fn, const Expr &e) {
  for (const Frame &f : frames)
    if (f.fn == &fn) {
      std::string chain;
      for (const Frame &g : frames)
        chain += g.fn->name + " -> ";
      diags.error(e.loc(), "recursive call to fn '" + fn.name + "' (" + chain +
                               fn.name + "); fn calls are inlined, so "
                               "recursion is not allowed");
      diags.note(fn.loc, "'" + fn.name + "' is defined here");
      return Val::invalid();
    }
  if (!e.hasCallArgs)
    return error(e.loc(), "fn '" + fn.name + "' must be called with (...)");
  if (!e.namedArgs.empty())
    return error(e.namedArgs[0].loc, "fn arguments are positional");
  if (e.templateArgs.size() > fn.templateParams.size())
    return error(e.loc(), "fn '" + fn.name + "' takes " +
                              std::to_string(fn.templateParams.size()) +
                              " template arguments, but " +
                              std::to_string(e.templateArgs.size()) +
                              " were given");
  if (e.operands.size() != fn.params.size()) {
    diags.error(e.loc(), "fn '" + fn.name + "' takes " +
                             std::to_string(fn.params.size()) +
                             " arguments, but " +
                             std::to_string(e.operands.size()) + " were given");
    diags.note(fn.loc, "'" + fn.name + "' is defined here");
    return Val::invalid();
  }
  // Arguments and explicit template arguments, in the caller's scope.
  std::vector<Val> explicitArgs;
  for (size_t i = 0; i < e.templateArgs.size(); ++i) {
    const TemplateParam &tp = fn.templateParams[i];
    const Expr &arg = *e.templateArgs[i];
    if (tp.kind == TemplateKind::DType) {
      auto dt = evalDType(arg);
      if (!dt)
        return Val::invalid();
      explicitArgs.push_back(Val::dtype(*dt));
    } else {
      std::optional<Val> c = tryConst(arg);
      bool good = c && (tp.kind == TemplateKind::Int ? c->kind == Val::CInt
                                                     : c->kind == Val::CBool);
      if (!good)
        return error(arg.loc(), "template argument '" + src(arg) + "' for '" +
                                    tp.name + "' must be a compile-time " +
                                    (tp.kind == TemplateKind::Int ? "int" : "bool"));
      explicitArgs.push_back(*c);
    }
  }
  std::vector<Val> args;
  for (const ExprPtr &arg : e.operands) {
    Val v = eval(*arg);
    if (!v.ok())
      return v;
    if (v.kind == Val::Tensor || v.kind == Val::Tuple || v.kind == Val::DType ||
        v.kind == Val::Void)
      return error(arg->loc(), "an fn argument must be a scalar, a tile or a pipeline");
    args.push_back(v);
  }
  // The callee sees only its own template parameters and parameters.
  std::deque<llvm::StringMap<Binding>> saved;
  std::swap(saved, scopes);
  scopes.emplace_back();
  llvm::scope_exit restore([&] { std::swap(saved, scopes); });
  llvm::StringSet<> bound;
  for (size_t i = 0; i < explicitArgs.size(); ++i) {
    bind(fn.templateParams[i].name, explicitArgs[i], fn.templateParams[i].loc);
    bound.insert(fn.templateParams[i].name);
  }
  auto isUnbound = [&](llvm::StringRef name, TemplateKind kind) {
    for (const TemplateParam &tp : fn.templateParams)
      if (tp.name == name && tp.kind == kind && !bound.contains(name))
        return true;
    return false;
  };
  // Infer the rest by unifying parameter types with the arguments' types.
  for (size_t i = 0; i < fn.params.size(); ++i) {
    const TypeExpr &t = *fn.params[i].type;
    const Val &arg = args[i];
    if (arg.kind != Val::Runtime && arg.kind != Val::Pipe)
      continue;
    if (t.dtype && t.dtype->kind == ExprKind::Name &&
        isUnbound(t.dtype->name, TemplateKind::DType)) {
      bind(t.dtype->name, Val::dtype(arg.ty.dt), fn.templateParams[0].loc);
      bound.insert(t.dtype->name);
    }
    if ((t.kind == TypeKind::Tile || t.kind == TypeKind::Pipeline) &&
        t.dims.size() == arg.ty.shape.size())
      for (size_t d = 0; d < t.dims.size(); ++d)
        if (t.dims[d]->kind == ExprKind::Name &&
            isUnbound(t.dims[d]->name, TemplateKind::Int)) {
          Origin origin = d < arg.ty.origins.size() ? arg.ty.origins[d] : Origin();
          bind(t.dims[d]->name, Val::cint(arg.ty.shape[d], origin), fn.loc);
          bound.insert(t.dims[d]->name);
        }
  }
  for (const TemplateParam &tp : fn.templateParams) {
    if (bound.contains(tp.name))
      continue;
    if (!tp.defaultValue) {
      diags.error(e.loc(), "cannot infer template parameter '" + tp.name +
                               "' of fn '" + fn.name +
                               "' from the arguments; give it explicitly, as " +
                               fn.name + "<...>(...)");
      diags.note(tp.loc, "'" + tp.name + "' is declared here");
      return Val::invalid();
    }
    std::optional<Val> v = tp.kind == TemplateKind::DType
                               ? std::optional<Val>()
                               : tryConst(*tp.defaultValue);
    if (tp.kind == TemplateKind::DType)
      if (auto dt = evalDType(*tp.defaultValue))
        v = Val::dtype(*dt);
    if (!v)
      return error(tp.defaultValue->loc(), "the default of '" + tp.name +
                                               "' must be compile-time");
    bind(tp.name, *v, tp.loc);
    bound.insert(tp.name);
  }
  for (size_t i = 0; i < fn.params.size(); ++i) {
    const Param &p = fn.params[i];
    std::optional<Ty> ty = resolveType(*p.type);
    if (!ty)
      return Val::invalid();
    Val v = coerce(args[i], *ty, e.operands[i]->loc(),
                   "argument '" + p.name + "' of fn '" + fn.name + "'", p.loc);
    if (!v.ok())
      return v;
    if (ty->isTile() && v.kind == Val::Runtime && args[i].kind == Val::Runtime &&
        args[i].ty.shape == ty->shape)
      v.ty.origins = args[i].ty.origins;
    bind(p.name, v, p.loc);
  }
  if (frames.size() >= 64)
    return error(e.loc(), "fn calls nest too deeply (more than 64)");
  Frame frame;
  frame.fn = &fn;
  frame.callLoc = e.loc();
  frames.push_back(frame);
  scopes.emplace_back();
  stmts(fn.body);
  scopes.pop_back();
  Frame done = frames.back();
  frames.pop_back();
  if (fn.result && !done.returned && !aborted) {
    diags.error(fn.loc, "fn '" + fn.name + "' must end with 'return' of its "
                        "result on every compile-time path");
    diags.note(e.loc(), "called here");
    return Val::invalid();
  }
  return fn.result ? done.result : Val::voidVal();
}

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

void Sema::stmts(const std::vector<StmtPtr> &body) {
  for (const StmtPtr &s : body) {
    if (aborted || (!frames.empty() && frames.back().returned))
      return;
    if (!budget(s->range.begin))
      return;
    stmt(*s);
  }
}

void Sema::stmt(const Stmt &s) {
  switch (s.kind) {
  case StmtKind::Let:
  case StmtKind::Var:
    return letStmt(s);
  case StmtKind::Assign:
    return assignStmt(s);
  case StmtKind::For:
    return forStmt(s);
  case StmtKind::If:
    return ifStmt(s);
  case StmtKind::Expr: {
    Val v = eval(*s.value);
    if (v.ok() && v.kind != Val::Void && s.value->kind != ExprKind::Call &&
        s.value->kind != ExprKind::Method)
      diags.error(s.range.begin, "expression result unused");
    return;
  }
  case StmtKind::StaticAssert: {
    std::optional<Val> c = tryConst(*s.value);
    if (!c || c->kind != Val::CBool) {
      if (findUndefined(*s.value, [&](llvm::StringRef n) { return lookup(n) != nullptr; }, diags))
        return;
      // Evaluate for real, to report division by zero and the like precisely.
      unsigned before = diags.getNumErrors();
      (void)eval(*s.value);
      if (diags.getNumErrors() == before)
        diags.error(s.value->loc(), "static_assert needs a compile-time bool "
                                    "condition, but '" + src(*s.value) +
                                    "' is not one");
      return;
    }
    if (!c->b) {
      std::string values = renderValues(*s.value);
      diags.error(s.range.begin, "static_assert failed: " +
                                     (s.message.empty() ? src(*s.value) : s.message) +
                                     " (" + src(*s.value) +
                                     (values != src(*s.value) ? " is " + values : std::string()) +
                                     ")");
    }
    return;
  }
  case StmtKind::Return: {
    if (frames.empty()) {
      diags.error(s.range.begin, "'return' is only allowed in an fn");
      return;
    }
    if (frames.back().runtimeNesting) {
      diags.error(s.range.begin, "'return' inside a runtime 'if' or loop is not "
                                 "supported; assign a var and return it at the end");
      return;
    }
    // Evaluating the returned expression may inline further calls, which grow
    // `frames`: the frame is addressed by index and marked returned only once
    // its value is known, so no reference into the vector outlives a call.
    size_t frameIndex = frames.size() - 1;
    const Function &fn = *frames[frameIndex].fn;
    auto finish = [&](Val result) {
      frames[frameIndex].returned = true;
      frames[frameIndex].result = result;
    };
    if (!fn.result) {
      if (s.value)
        diags.error(s.value->loc(), "fn '" + fn.name + "' declares no result "
                                    "but returns a value; add '-> TYPE'");
      return finish(Val::voidVal());
    }
    if (!s.value) {
      diags.error(s.range.begin, "fn '" + fn.name + "' must return a value");
      return finish(Val::invalid());
    }
    Val v = eval(*s.value);
    if (!v.ok())
      return finish(Val::invalid());
    if (fn.result->kind == TypeKind::Tuple) {
      if (v.kind != Val::Tuple || v.elements.size() != fn.result->elements.size()) {
        diags.error(s.value->loc(), "fn '" + fn.name + "' returns a tuple of " +
                                        std::to_string(fn.result->elements.size()) +
                                        " values; return (a, b, ...)");
        return finish(Val::invalid());
      }
      Val t;
      t.kind = Val::Tuple;
      for (size_t i = 0; i < v.elements.size(); ++i) {
        auto ty = resolveType(*fn.result->elements[i]);
        if (!ty)
          return finish(Val::invalid());
        Val x = coerce(v.elements[i], *ty, s.value->operands[i]->loc(),
                       "result " + std::to_string(i) + " of fn '" + fn.name + "'",
                       fn.result->elements[i]->range.begin);
        if (!x.ok())
          return finish(Val::invalid());
        t.elements.push_back(x);
      }
      return finish(t);
    }
    auto ty = resolveType(*fn.result);
    if (!ty)
      return finish(Val::invalid());
    return finish(coerce(v, *ty, s.value->loc(),
                         "the result of fn '" + fn.name + "'",
                         fn.result->range.begin));
  }
  }
}

void Sema::letStmt(const Stmt &s) {
  Val v = eval(*s.value);
  bool isVar = s.kind == StmtKind::Var;
  if (s.destructure) {
    if (!v.ok()) {
      for (size_t i = 0; i < s.names.size(); ++i)
        bind(s.names[i], Val::invalid(), s.nameLocs[i]);
      return;
    }
    if (v.kind != Val::Tuple || v.elements.size() != s.names.size()) {
      diags.error(s.value->loc(), "cannot destructure '" + src(*s.value) +
                                      "' into " + std::to_string(s.names.size()) +
                                      " names: it is not a tuple of " +
                                      std::to_string(s.names.size()) + " values");
      for (size_t i = 0; i < s.names.size(); ++i)
        bind(s.names[i], Val::invalid(), s.nameLocs[i]);
      return;
    }
    for (size_t i = 0; i < s.names.size(); ++i)
      bind(s.names[i], v.elements[i], s.nameLocs[i]);
    return;
  }
  const std::string &name = s.names[0];
  if (v.ok() && s.type) {
    auto ty = resolveType(*s.type);
    if (!ty)
      v = Val::invalid();
    else if (!(ty->isScalar() && v.isConst() && !isVar && v.kind != Val::DType))
      v = coerce(v, *ty, s.value->loc(), "'" + name + "'", s.type->range.begin);
    else
      v = coerce(v, *ty, s.value->loc(), "'" + name + "'", s.type->range.begin);
  }
  if (v.ok()) {
    if (v.kind == Val::Void || v.kind == Val::Tuple || v.kind == Val::Tensor) {
      diags.error(s.value->loc(), "'" + src(*s.value) + "' " +
                                      (v.kind == Val::Tuple ? "is a tuple; destructure it with let (a, b) = ..."
                                       : v.kind == Val::Tensor ? "is a tensor; tensors cannot be rebound"
                                                               : "has no value"));
      v = Val::invalid();
    } else if (isVar && v.kind == Val::DType) {
      diags.error(s.value->loc(), "a var cannot hold a dtype");
      v = Val::invalid();
    } else if (isVar && v.isValue()) {
      v = toRuntime(v, s.value->loc());
    } else if (v.kind == Val::CInt) {
      v.origin = {name + " = " + (v.origin.text.empty() ? std::to_string(v.i) : v.origin.text),
                  s.range.begin};
    }
  }
  if (v.kind == Val::Pipe && pipes[v.index].name.empty())
    pipes[v.index].name = name;
  bind(name, v, s.nameLocs[0], isVar);
}

void Sema::assignStmt(const Stmt &s) {
  const std::string &name = s.names[0];
  Binding *b = lookup(name);
  if (!b) {
    diags.error(s.nameLocs[0], "use of undefined name '" + name + "'");
    eval(*s.value);
    return;
  }
  if (!b->isVar) {
    if (b->val.ok()) {
      diags.error(s.nameLocs[0], "cannot assign to '" + name +
                                     "': it is not a var; declare it with "
                                     "'var " + name + " = ...'");
      diags.note(b->loc, "'" + name + "' is declared here");
    }
    return;
  }
  Val v = eval(*s.value);
  if (!v.ok() || !b->val.ok())
    return;
  if (s.op != Tok::Assign) {
    Tok op = s.op == Tok::PlusEq    ? Tok::Plus
             : s.op == Tok::MinusEq ? Tok::Minus
             : s.op == Tok::StarEq  ? Tok::Star
                                    : Tok::Slash;
    v = binaryOp(op, b->val, v, s.nameLocs[0], nullptr, s.value.get());
    if (!v.ok())
      return;
  }
  // Which ring a push or pop uses is decided at compile time (the stage
  // counts and the shared-memory plan depend on it): a pipeline var may name
  // another ring only outside the runtime ifs and loops it was declared
  // outside of.
  if (b->val.kind == Val::Pipe && v.kind == Val::Pipe &&
      v.index != b->val.index && runtimeDepth > b->runtimeDepth) {
    diags.error(s.nameLocs[0],
                "pipeline var '" + name + "' is assigned another pipeline "
                "inside a runtime 'if' or loop; which pipeline a var names "
                "must be known at compile time");
    diags.note(b->loc, "'" + name + "' is declared here");
    return;
  }
  Ty target = b->val.ty;
  Val c = coerce(v, target, s.value->loc(), "assignment to var '" + name + "'",
                 b->loc);
  if (!c.ok())
    return;
  b = lookup(name);
  b->val = c;
}

void Sema::forStmt(const Stmt &s) {
  auto bound = [&](const Expr *x, int64_t dflt) -> Val {
    if (!x)
      return toRuntime(Val::cint(dflt), s.range.begin);
    Val v = eval(*x);
    if (!v.ok())
      return v;
    if (v.kind == Val::CInt)
      return toRuntime(v, x->loc(), DT::I32);
    if (v.kind != Val::Runtime || !v.ty.isScalar() || v.ty.dt != DT::I32)
      return error(x->loc(), "loop bounds must be i32 scalars, but '" + src(*x) +
                                 "' is " + (v.kind == Val::Runtime ? v.ty.str() : std::string("not an integer")));
    return v;
  };
  Val lo = bound(s.start.get(), 0), hi = bound(s.end.get(), 0),
      step = bound(s.step.get(), 1);
  if (s.step)
    if (auto c = tryConst(*s.step))
      if (c->kind == Val::CInt && c->i <= 0) {
        diags.error(s.step->loc(), "the loop step must be positive, got " +
                                       std::to_string(c->i));
        return;
      }
  std::optional<int64_t> stages;
  if (s.stages) {
    stages = evalConstInt(*s.stages, "the pipelined stage count");
    if (!stages)
      return;
    if (*stages < 1 || *stages > 16) {
      diags.error(s.stages->loc(), "pipelined(S) needs 1 to 16 stages, got " +
                                       std::to_string(*stages));
      return;
    }
  }
  if (!lo.ok() || !hi.ok() || !step.ok())
    return;
  // Loop-carried values: outer vars the body assigns.
  llvm::SmallVector<std::string> assigned;
  llvm::SmallVector<Binding *> carried;
  collectAssigned(s.body, assigned);
  llvm::SmallVector<mlir::Value> inits;
  for (const std::string &name : assigned) {
    Binding *b = lookup(name);
    if (b && b->isVar && b->val.ok() && b->val.v) {
      carried.push_back(b);
      inits.push_back(b->val.v);
    }
  }
  auto forOp = mlir::scf::ForOp::create(builder, loc(s.range.begin), lo.v, hi.v,
                                        step.v, inits);
  if (stages)
    forOp->setAttr(tl::TileDialect::kPipelineStagesAttrName,
                   builder.getI32IntegerAttr(*stages));
  std::vector<Effect> body;
  std::vector<Effect> *savedEffects = effects;
  effects = &body;
  if (stages)
    loopLoadBytes.push_back(0);
  {
    mlir::OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToStart(forOp.getBody());
    ScopeGuard scope(*this);
    for (auto [i, b] : llvm::enumerate(carried))
      b->val.v = forOp.getRegionIterArgs()[i];
    bind(s.names[0], Val::runtime(forOp.getInductionVar(), Ty::scalar(DT::I32)),
         s.nameLocs[0]);
    if (!frames.empty())
      ++frames.back().runtimeNesting;
    ++runtimeDepth;
    stmts(s.body);
    --runtimeDepth;
    if (!frames.empty())
      --frames.back().runtimeNesting;
    llvm::SmallVector<mlir::Value> yields;
    for (Binding *b : carried)
      yields.push_back(b->val.v);
    // The body of an scf.for built with iter_args has no terminator yet.
    if (forOp.getBody()->empty() ||
        !forOp.getBody()->back().hasTrait<mlir::OpTrait::IsTerminator>())
      mlir::scf::YieldOp::create(builder, loc(s.range.begin), yields);
  }
  for (auto [i, b] : llvm::enumerate(carried))
    b->val.v = forOp.getResult(i);
  effects = savedEffects;
  if (effects)
    effects->push_back({Effect::Loop, -1, s.range.begin, std::move(body), {}});
  if (stages) {
    int64_t perIteration = loopLoadBytes.back();
    loopLoadBytes.pop_back();
    addSharedBytes(*stages * perIteration, s.range.begin,
                   "this pipelined(" + std::to_string(*stages) +
                       ") loop needs " + std::to_string(*stages) + " x " +
                       std::to_string(perIteration) + " = " +
                       std::to_string(*stages * perIteration) +
                       " bytes for the loads of one iteration");
  }
}

void Sema::ifStmt(const Stmt &s) {
  Val c = eval(*s.value);
  if (!c.ok())
    return;
  if (c.kind == Val::CBool) {
    ScopeGuard scope(*this);
    stmts(c.b ? s.body : s.elseBody);
    return;
  }
  if (c.kind != Val::Runtime || !c.ty.isScalar() || c.ty.dt != DT::I1) {
    diags.error(s.value->loc(), "the condition of 'if' must be a scalar bool, "
                                "but '" + src(*s.value) + "' is " +
                                (c.kind == Val::Runtime ? c.ty.str() : std::string("not a bool")));
    return;
  }
  llvm::SmallVector<std::string> assigned;
  llvm::SmallVector<Binding *> results;
  collectAssigned(s.body, assigned);
  collectAssigned(s.elseBody, assigned);
  llvm::SmallVector<mlir::Type> types;
  llvm::SmallVector<Val> before;
  for (const std::string &name : assigned) {
    Binding *b = lookup(name);
    if (b && b->isVar && b->val.ok() && b->val.v) {
      results.push_back(b);
      types.push_back(b->val.v.getType());
      before.push_back(b->val);
    }
  }
  auto ifOp = mlir::scf::IfOp::create(builder, loc(s.range.begin), types, c.v,
                                      /*withElseRegion=*/true);
  std::vector<Effect> arms[2];
  std::vector<Effect> *savedEffects = effects;
  if (!frames.empty())
    ++frames.back().runtimeNesting;
  ++runtimeDepth;
  for (int arm = 0; arm < 2; ++arm) {
    mlir::Block *block = arm == 0 ? ifOp.thenBlock() : ifOp.elseBlock();
    mlir::OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToStart(block);
    for (auto [i, b] : llvm::enumerate(results))
      b->val = before[i];
    effects = &arms[arm];
    {
      ScopeGuard scope(*this);
      stmts(arm == 0 ? s.body : s.elseBody);
    }
    llvm::SmallVector<mlir::Value> yields;
    for (Binding *b : results)
      yields.push_back(b->val.v);
    if (block->empty() || !block->back().hasTrait<mlir::OpTrait::IsTerminator>())
      mlir::scf::YieldOp::create(builder, loc(s.range.begin), yields);
    else
      block->back().setOperands(yields);
  }
  --runtimeDepth;
  if (!frames.empty())
    --frames.back().runtimeNesting;
  effects = savedEffects;
  for (auto [i, b] : llvm::enumerate(results)) {
    b->val = before[i];
    b->val.v = ifOp.getResult(i);
  }
  if (effects)
    effects->push_back({Effect::If, -1, s.range.begin, std::move(arms[0]),
                        std::move(arms[1])});
}

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

void Sema::checkGridExtent(const Expr &extent, size_t axis) {
  std::optional<Val> c = tryConst(extent);
  if (!c || c->kind != Val::CInt)
    return;
  // CUDA's limits: 2^31 - 1 programs along x, 65535 along y and z.
  int64_t most = axis == 0 ? INT32_MAX : 65535;
  if (c->i >= 1 && c->i <= most)
    return;
  std::string text = src(extent), value = std::to_string(c->i);
  std::string range = "1 to " + std::to_string(most);
  if (text == value)
    diags.error(extent.loc(), "grid extent " + value + " along axis " +
                                  std::to_string(axis) + " must be " + range);
  else
    diags.error(extent.loc(), "grid extent '" + text + "' along axis " +
                                  std::to_string(axis) + " is " + value +
                                  " (" + renderValues(extent) +
                                  "); it must be " + range);
}

void Sema::checkParamBytes(const Kernel &k, size_t numParams,
                           size_t numSizeVars,
                           llvm::function_ref<int64_t(size_t)> paramBytes) {
  // The kernel's PTX signature: each parameter in order, naturally aligned
  // (pointers and i64 take 8 bytes; i32, f32 and bool 4), then one i32 per
  // size variable.
  int64_t bytes = 0;
  auto add = [&](int64_t size) { bytes = llvm::alignTo(bytes, size) + size; };
  for (size_t i = 0; i < numParams; ++i)
    add(paramBytes(i));
  for (size_t i = 0; i < numSizeVars; ++i)
    add(4);
  int64_t limit = targetInfo().maxParamBytes;
  if (bytes > limit)
    diags.error(k.loc, "kernel '" + k.name + "' takes " +
                           std::to_string(bytes) + " bytes of parameters (" +
                           std::to_string(numParams) + " parameters and " +
                           std::to_string(numSizeVars) +
                           " size variables); a kernel may take at most " +
                           std::to_string(limit) + " bytes");
}

void Sema::addSharedBytes(int64_t bytes, SourceLoc l, const llvm::Twine &what) {
  int64_t limit = targetInfo().maxSharedBytes;
  sharedBytes += bytes;
  if (sharedBytes > limit && !sharedReported) {
    sharedReported = true;
    diags.error(l, "shared memory exceeded: " + what +
                       ", bringing the kernel's total to " +
                       std::to_string(sharedBytes) + " bytes, over the " +
                       std::to_string(limit) + " bytes available on " +
                       options.target +
                       "; use fewer stages or smaller blocks");
  }
}

void Sema::countPipelines(const std::vector<Effect> &list,
                          std::map<int, int> &state) {
  for (const Effect &e : list) {
    switch (e.kind) {
    case Effect::Push: {
      int &n = state[e.pipe];
      const PipeInfo &p = pipes[e.pipe];
      if (n + 1 > (int)p.stages) {
        if (reportedPipeErrors.insert(e.loc.offset).second) {
          diags.error(e.loc, "push to pipeline '" + p.name + "' can leave " +
                                 std::to_string(n + 1) +
                                 " pushes outstanding, more than its " +
                                 std::to_string(p.stages) +
                                 " stages; pop before pushing again, or "
                                 "give it more stages");
          diags.note(p.loc, "'" + p.name + "' is created here with stages = " +
                                std::to_string(p.stages));
        }
        n = p.stages; // report once, keep counting from the limit
      } else {
        ++n;
      }
      break;
    }
    case Effect::Pop: {
      int &n = state[e.pipe];
      const PipeInfo &p = pipes[e.pipe];
      if (n == 0) {
        if (reportedPipeErrors.insert(e.loc.offset).second) {
          diags.error(e.loc, "pop from pipeline '" + p.name +
                                 "' with no push outstanding; push a block "
                                 "before popping it");
          diags.note(p.loc, "'" + p.name + "' is created here");
        }
      } else {
        --n;
      }
      break;
    }
    case Effect::If: {
      std::map<int, int> a = state, b = state;
      countPipelines(e.first, a);
      countPipelines(e.second, b);
      for (auto &[pipe, n] : b)
        a[pipe] = std::max(a[pipe], n);
      state = a;
      break;
    }
    case Effect::Loop: {
      // Iterate to a fixed point: the state at the loop head is the upper
      // bound over zero or more iterations.
      std::map<int, int> head = state;
      for (int iteration = 0; iteration < 64; ++iteration) {
        std::map<int, int> out = head;
        countPipelines(e.first, out);
        bool changed = false;
        for (auto &[pipe, n] : out)
          if (n > head[pipe]) {
            head[pipe] = n;
            changed = true;
          }
        if (!changed)
          break;
      }
      state = head;
      break;
    }
    }
  }
}

bool Sema::dependsOnLaunch(const Expr &e) {
  if (e.kind == ExprKind::Name &&
      (sizeVars.contains(e.name) || scalarParams.contains(e.name)))
    return true;
  return llvm::any_of(e.operands, [&](const ExprPtr &operand) {
    return operand && dependsOnLaunch(*operand);
  });
}

std::optional<std::string> Sema::renderLaunch(const Expr &e, int parentPrec,
                                              bool right) {
  if (auto c = tryConst(e)) {
    if (c->kind == Val::CInt)
      return c->i < 0 && parentPrec > 0 ? "(" + std::to_string(c->i) + ")"
                                        : std::to_string(c->i);
    if (c->kind == Val::CBool)
      return std::string(c->b ? "1" : "0");
  }
  if (!dependsOnLaunch(e)) {
    // Compile-time but not foldable (4 / B with B = 0, an overflow):
    // evaluate it for real to report why.
    unsigned before = diags.getNumErrors();
    (void)eval(e);
    if (diags.getNumErrors() != before)
      return std::nullopt;
  }
  switch (e.kind) {
  case ExprKind::Name:
    if (sizeVars.contains(e.name) || scalarParams.contains(e.name))
      return e.name;
    if (!lookup(e.name))
      diags.error(e.loc(), "use of undefined name '" + e.name + "'");
    else
      diags.error(e.loc(), "'" + e.name + "' cannot appear in a launch "
                           "expression: only size variables, scalar "
                           "parameters and template parameters can");
    return std::nullopt;
  case ExprKind::Unary: {
    auto x = renderLaunch(*e.operands[0], 11, false);
    if (!x)
      return std::nullopt;
    return opText(e.op) + *x;
  }
  case ExprKind::Binary: {
    Tok op = e.op;
    if (op == Tok::Amp || op == Tok::Pipe || op == Tok::Caret ||
        op == Tok::Shl || op == Tok::Shr) {
      diags.error(e.opLoc, "operator '" + opText(op) + "' is not allowed in a "
                           "launch expression; use + - * / % comparisons && || "
                           "cdiv min max");
      return std::nullopt;
    }
    int prec = binaryPrecedence(op);
    auto a = renderLaunch(*e.operands[0], prec, false);
    auto b = renderLaunch(*e.operands[1], prec, true);
    if (!a || !b)
      return std::nullopt;
    if ((op == Tok::Slash || op == Tok::Percent) && *b == "0") {
      diags.error(e.opLoc, "division by zero in launch expression '" +
                               src(e) + "' (" + renderValues(e) + ")");
      return std::nullopt;
    }
    std::string text = *a + " " + opText(op) + " " + *b;
    if (prec < parentPrec || (right && prec == parentPrec))
      text = "(" + text + ")";
    return text;
  }
  case ExprKind::Call:
    if ((e.name == "cdiv" || e.name == "min" || e.name == "max") &&
        e.operands.size() == 2 && !e.hasTemplateArgs && e.namedArgs.empty()) {
      auto a = renderLaunch(*e.operands[0], 0, false);
      auto b = renderLaunch(*e.operands[1], 0, false);
      if (!a || !b)
        return std::nullopt;
      if (e.name == "cdiv" && *b == "0") {
        diags.error(e.loc(), "division by zero in launch expression '" +
                                 src(e) + "' (" + renderValues(e) + ")");
        return std::nullopt;
      }
      return e.name + "(" + *a + ", " + *b + ")";
    }
    [[fallthrough]];
  default:
    diags.error(e.loc(), "'" + src(e) + "' is not allowed in a launch "
                         "expression; use + - * / % comparisons && || cdiv "
                         "min max over size variables, scalar parameters and "
                         "template parameters");
    return std::nullopt;
  }
}

static std::optional<Val> parseDefine(llvm::StringRef text, TemplateKind kind) {
  text = text.trim();
  if (kind == TemplateKind::Bool) {
    if (text == "true" || text == "1")
      return Val::cbool(true);
    if (text == "false" || text == "0")
      return Val::cbool(false);
    return std::nullopt;
  }
  if (kind == TemplateKind::DType) {
    if (auto dt = parseDT(text))
      return Val::dtype(*dt);
    return std::nullopt;
  }
  int64_t value;
  if (text.getAsInteger(10, value))
    return std::nullopt;
  return Val::cint(value);
}

void Sema::kernel(const Kernel &k) {
  scopes.clear();
  scopes.emplace_back();
  tensors.clear();
  sizeVars.clear();
  scalarParams.clear();
  pipes.clear();
  frames.clear();
  loopLoadBytes.clear();
  reportedPipeErrors.clear();
  sharedBytes = 0;
  sharedReported = false;
  aborted = false;
  work = 0;
  warps = 4;
  builder.clearInsertionPoint();
  unsigned errorsBefore = diags.getNumErrors();

  // Template parameters: -D, else the default, else an error.
  llvm::SmallVector<mlir::NamedAttribute> templateAttrs;
  for (const TemplateParam &tp : k.templateParams) {
    if (lookup(tp.name)) {
      diags.error(tp.loc, "redefinition of template parameter '" + tp.name + "'");
      continue;
    }
    std::optional<Val> v;
    const char *kindName = tp.kind == TemplateKind::Int    ? "int"
                           : tp.kind == TemplateKind::Bool ? "bool"
                                                           : "dtype";
    for (const auto &[name, text] : options.defines)
      if (name == tp.name) {
        usedDefines.insert(name);
        v = parseDefine(text, tp.kind);
        if (!v) {
          diags.error(tp.loc, "-D " + name + "=" + text + " is not a valid " +
                                  kindName + " for template parameter '" +
                                  tp.name + "'");
          v = Val::invalid();
        } else if (v->kind == Val::CInt) {
          v->origin = {"template parameter " + tp.name + " = " + std::to_string(v->i) +
                           " (from -D " + name + "=" + text + ")",
                       tp.loc};
        }
      }
    if (!v && tp.defaultValue) {
      std::optional<Val> d = tryConst(*tp.defaultValue);
      bool good = d && ((tp.kind == TemplateKind::Int && d->kind == Val::CInt) ||
                        (tp.kind == TemplateKind::Bool && d->kind == Val::CBool) ||
                        (tp.kind == TemplateKind::DType && d->kind == Val::DType));
      if (!good) {
        if (!findUndefined(*tp.defaultValue, [&](llvm::StringRef n) { return lookup(n) != nullptr; }, diags))
          diags.error(tp.defaultValue->loc(),
                      "the default of template parameter '" + tp.name +
                          "' must be a compile-time " + kindName +
                          " over earlier template parameters");
        v = Val::invalid();
      } else {
        v = *d;
        if (v->kind == Val::CInt)
          v->origin = {tp.name + " = " + (d->origin.text.empty() ? std::to_string(d->i) : d->origin.text),
                       tp.loc};
      }
    }
    if (!v) {
      diags.error(tp.loc, "template parameter '" + tp.name + "' of kernel '" +
                              k.name + "' has no value; pass -D " + tp.name +
                              "=VALUE or give it a default");
      v = Val::invalid();
    }
    if (v->ok()) {
      mlir::Attribute attr;
      if (v->kind == Val::CInt)
        attr = builder.getI64IntegerAttr(v->i);
      else if (v->kind == Val::CBool)
        attr = builder.getBoolAttr(v->b);
      else
        attr = builder.getStringAttr(dtName(v->dt));
      templateAttrs.push_back(builder.getNamedAttr(tp.name, attr));
    }
    bind(tp.name, *v, tp.loc);
  }

  // Parameters and size variables.
  llvm::SmallVector<mlir::Type> argTypes;
  llvm::SmallVector<std::string> sizeVarOrder;
  struct ParamInfo {
    const Param *param;
    Ty ty;
    llvm::SmallVector<mlir::Attribute> dims;
    llvm::SmallVector<int> dimSizeVar; ///< index into sizeVarOrder or -1
    bool ok = true;
  };
  std::vector<ParamInfo> params;
  llvm::StringMap<SourceLoc> paramNames;
  for (const Param &p : k.params) {
    if (paramNames.count(p.name) || lookup(p.name)) {
      diags.error(p.loc, "redefinition of '" + p.name + "'");
      continue;
    }
    paramNames[p.name] = p.loc;
    if (p.type->kind == TypeKind::Scalar) {
      auto dt = evalDType(*p.type->dtype);
      if (dt && (*dt == DT::F16 || *dt == DT::BF16)) {
        diags.error(p.type->range.begin, "scalar parameters are i32, i64, f32 "
                                         "or bool, not " + llvm::Twine(dtName(*dt)));
        dt.reset();
      }
      ParamInfo info{&p, Ty::scalar(dt.value_or(DT::I32)), {}, {}, dt.has_value()};
      if (dt)
        scalarParams.insert(p.name);
      params.push_back(info);
    }
  }
  // Size variables may not name scalar parameters.
  for (const Param &p : k.params) {
    if (p.type->kind != TypeKind::Tensor) {
      if (p.type->kind != TypeKind::Scalar)
        diags.error(p.type->range.begin,
                    "kernel parameters are scalars or tensors; '" + p.name +
                        "' cannot be a " +
                        (p.type->kind == TypeKind::Tile ? "tile" : p.type->kind == TypeKind::Pipeline ? "pipeline" : "tuple"));
      continue;
    }
    ParamInfo info{&p, Ty(), {}, {}, true};
    auto dt = evalDType(*p.type->dtype);
    info.ok = dt.has_value();
    info.ty.kind = Ty::Tensor;
    info.ty.dt = dt.value_or(DT::F32);
    info.ty.isMutable = p.type->isMutable;
    if (p.type->dims.empty()) {
      diags.error(p.type->range.begin, "tensor '" + p.name + "' needs at least one dimension");
      info.ok = false;
    }
    for (const ExprPtr &d : p.type->dims) {
      Binding *b = d->kind == ExprKind::Name ? lookup(d->name) : nullptr;
      if (d->kind == ExprKind::Name && !b) {
        if (scalarParams.contains(d->name) || paramNames.count(d->name)) {
          diags.error(d->loc(), "dimension '" + d->name + "' of tensor '" +
                                    p.name + "' names the parameter '" +
                                    d->name + "'; size variables must be "
                                    "new names, bound from the tensor at launch");
          diags.note(paramNames[d->name], "'" + d->name + "' is declared here");
          info.ok = false;
          continue;
        }
        auto it = llvm::find(sizeVarOrder, d->name);
        int index = it - sizeVarOrder.begin();
        if (it == sizeVarOrder.end()) {
          sizeVarOrder.push_back(d->name);
          sizeVars.insert(d->name);
        }
        info.ty.shape.push_back(mlir::ShapedType::kDynamic);
        info.dims.push_back(builder.getStringAttr(d->name));
        info.dimSizeVar.push_back(index);
        continue;
      }
      auto v = evalConstInt(*d, "a fixed tensor dimension");
      if (!v) {
        info.ok = false;
        continue;
      }
      if (*v < 1) {
        diags.error(d->loc(), "tensor dimension " + std::to_string(*v) +
                                  " must be positive");
        info.ok = false;
        continue;
      }
      // Indices, size variables and bounds masks are i32.
      if (*v > INT32_MAX) {
        diags.error(d->loc(), "tensor dimension " + std::to_string(*v) +
                                  " is more than 2^31 - 1 = 2147483647; "
                                  "dimensions and indices are i32");
        info.ok = false;
        continue;
      }
      info.ty.shape.push_back(*v);
      info.dims.push_back(builder.getI64IntegerAttr(*v));
      info.dimSizeVar.push_back(-1);
    }
    params.push_back(info);
  }
  // Keep declaration order.
  std::sort(params.begin(), params.end(), [](const ParamInfo &a, const ParamInfo &b) {
    return a.param < b.param;
  });
  bool paramsOk = llvm::all_of(params, [](const ParamInfo &p) { return p.ok; });
  if (!paramsOk || diags.getNumErrors() != errorsBefore)
    return;
  checkParamBytes(k, params.size(), sizeVarOrder.size(), [&](size_t i) {
    const Ty &ty = params[i].ty;
    return ty.kind == Ty::Tensor || ty.dt == DT::I64 ? 8 : 4;
  });

  for (const ParamInfo &p : params)
    argTypes.push_back(p.ty.kind == Ty::Tensor
                           ? (mlir::Type)tl::PtrType::get(ctx, mlirDT(p.ty.dt))
                           : mlirDT(p.ty.dt));
  for (size_t i = 0; i < sizeVarOrder.size(); ++i)
    argTypes.push_back(builder.getI32Type());
  auto func = mlir::func::FuncOp::create(builder, loc(k.loc), k.name,
                                         builder.getFunctionType(argTypes, {}));
  module->push_back(func);
  mlir::Block *entry = func.addEntryBlock();
  builder.setInsertionPointToStart(entry);

  for (size_t i = 0; i < sizeVarOrder.size(); ++i) {
    mlir::Value arg = entry->getArgument(params.size() + i);
    bind(sizeVarOrder[i], Val::runtime(arg, Ty::scalar(DT::I32)), k.loc);
    func.setArgAttr(params.size() + i, tl::TileDialect::kSizeVarAttrName,
                    builder.getStringAttr(sizeVarOrder[i]));
  }
  for (auto [i, p] : llvm::enumerate(params)) {
    mlir::Value arg = entry->getArgument(i);
    func.setArgAttr(i, tl::TileDialect::kArgNameAttrName,
                    builder.getStringAttr(p.param->name));
    if (p.ty.kind != Ty::Tensor) {
      bind(p.param->name, Val::runtime(arg, p.ty), p.param->loc);
      continue;
    }
    func.setArgAttr(i, tl::TileDialect::kArgDimsAttrName, builder.getArrayAttr(p.dims));
    llvm::SmallVector<mlir::Value> dynamic;
    for (int index : p.dimSizeVar)
      if (index >= 0)
        dynamic.push_back(entry->getArgument(params.size() + index));
    auto type = tl::GlobalTensorType::get(ctx, p.ty.shape, mlirDT(p.ty.dt),
                                          p.ty.isMutable);
    mlir::Value tensor =
        tl::MakeTensorOp::create(builder, loc(p.param->loc), type, arg, dynamic);
    Val v;
    v.kind = Val::Tensor;
    v.index = tensors.size();
    v.ty = p.ty;
    tensors.push_back({p.param->name, p.param->loc, p.ty, tensor});
    bind(p.param->name, v, p.param->loc);
  }

  // Launch description.
  func->setAttr(tl::TileDialect::kKernelAttrName, builder.getUnitAttr());
  if (k.warps) {
    auto w = evalConstInt(*k.warps, "'warps'");
    if (w && *w != 1 && *w != 2 && *w != 4 && *w != 8 && *w != 16)
      diags.error(k.warps->loc(), "warps must be 1, 2, 4, 8 or 16, got " +
                                      std::to_string(*w));
    else if (w)
      warps = *w;
  }
  func->setAttr(tl::TileDialect::kWarpsAttrName,
                builder.getI32IntegerAttr(warps));
  if (k.grid.empty() || k.grid.size() > 3)
    diags.error(k.gridLoc, "grid needs 1 to 3 extents, got " +
                               std::to_string(k.grid.size()));
  llvm::SmallVector<mlir::Attribute> grid;
  for (auto [axis, g] : llvm::enumerate(k.grid)) {
    checkGridExtent(*g, axis);
    if (auto text = renderLaunch(*g, 0, false))
      grid.push_back(builder.getStringAttr(*text));
  }
  while (grid.size() < 3)
    grid.push_back(builder.getStringAttr("1"));
  grid.resize(3);
  func->setAttr(tl::TileDialect::kGridAttrName, builder.getArrayAttr(grid));
  llvm::SmallVector<mlir::Attribute> requires;
  for (const ExprPtr &r : k.requires_) {
    if (auto c = tryConst(*r)) {
      if (c->kind != Val::CBool) {
        diags.error(r->loc(), "a requires condition must be a bool");
        continue;
      }
      if (!c->b) {
        std::string values = renderValues(*r);
        diags.error(r->loc(), "requirement '" + src(*r) + "' of kernel '" +
                                  k.name + "' failed" +
                                  (values != src(*r) ? " (" + values + ")" : std::string()) +
                                  "; choose template values that satisfy it");
      }
      continue;
    }
    if (auto text = renderLaunch(*r, 0, false))
      requires.push_back(builder.getStringAttr(*text));
  }
  func->setAttr(tl::TileDialect::kRequiresAttrName, builder.getArrayAttr(requires));
  if (k.flops)
    if (auto text = renderLaunch(*k.flops, 0, false))
      func->setAttr(tl::TileDialect::kFlopsAttrName, builder.getStringAttr(*text));
  if (k.bytes)
    if (auto text = renderLaunch(*k.bytes, 0, false))
      func->setAttr(tl::TileDialect::kBytesAttrName, builder.getStringAttr(*text));
  func->setAttr(tl::TileDialect::kTemplateAttrName,
                builder.getDictionaryAttr(templateAttrs));

  // The body.
  std::vector<Effect> top;
  effects = &top;
  scopes.emplace_back();
  stmts(k.body);
  scopes.pop_back();
  effects = nullptr;
  mlir::func::ReturnOp::create(builder, loc(k.loc));
  std::map<int, int> state;
  countPipelines(top, state);

  for (auto [i, p] : llvm::enumerate(params)) {
    if (p.ty.kind != Ty::Tensor)
      continue;
    const TensorParam *t = nullptr;
    for (const TensorParam &candidate : tensors)
      if (candidate.name == p.param->name)
        t = &candidate;
    llvm::StringRef access = "read";
    if (t && t->written)
      access = t->read ? "readwrite" : "write";
    else if (p.ty.isMutable && !(t && t->read))
      access = "readwrite";
    func.setArgAttr(i, tl::TileDialect::kArgAccessAttrName,
                    builder.getStringAttr(access));
  }
  builder.clearInsertionPoint();
}

mlir::OwningOpRef<mlir::ModuleOp> Sema::run() {
  module = mlir::ModuleOp::create(builder, loc(SourceLoc{}));
  bool found = options.kernel.empty();
  for (const auto &k : program.kernels) {
    if (!options.kernel.empty() && k->name != options.kernel)
      continue;
    found = true;
    kernel(*k);
  }
  if (!found)
    diags.errorNoLoc("no kernel named '" + options.kernel + "' in " +
                     diags.getFileName());
  for (const auto &[name, text] : options.defines)
    if (!usedDefines.contains(name) && !diags.hasErrors()) {
      bool known = false;
      for (const auto &k : program.kernels)
        for (const TemplateParam &tp : k->templateParams)
          known |= tp.name == name;
      if (!known)
        diags.errorNoLoc("-D " + name + "=" + text +
                         " names no template parameter of any kernel");
    }
  if (diags.hasErrors())
    return nullptr;
  // Generated IR that fails to verify is a compiler bug, not a user error.
  std::string message;
  llvm::raw_string_ostream os(message);
  mlir::ScopedDiagnosticHandler handler(ctx, [&](mlir::Diagnostic &d) {
    os << d.getLocation() << ": " << d.str() << "\n";
    return mlir::success();
  });
  if (mlir::failed(mlir::verify(*module))) {
    diags.errorNoLoc("internal compiler error: the generated tile IR does not "
                     "verify (please report this bug):\n" + message);
    return nullptr;
  }
  return std::move(module);
}

mlir::OwningOpRef<mlir::ModuleOp>
tegula::frontend::compileProgram(const Program &program, DiagEngine &diags,
                                 mlir::MLIRContext &context,
                                 const CompileOptions &options) {
  registerFrontendDialects(context);
  if (options.target != "sm_90a" && options.target != "sm_80") {
    diags.errorNoLoc("unknown target '" + options.target +
                     "'; expected sm_80 or sm_90a");
    return nullptr;
  }
  Sema sema(program, diags, context, options);
  return sema.run();
}
