//===- SemaConstant.cpp - Compile-time evaluation ---------------------------===//
//
// Folding of compile-time values (template parameters, literals, lets),
// the messages that show how a value was computed, and the checks of
// extents, shapes and types written in the source.
//
//===----------------------------------------------------------------------===//

#include "Sema.h"

using namespace tegula;
using namespace tegula::frontend;
using namespace tegula::frontend::sema;

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
    // A truncated quotient stays one through further integer arithmetic.
    v.truncatedDiv = a.truncatedDiv ? a.truncatedDiv : b.truncatedDiv;
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
      if (op == Tok::Slash && x % y != 0 && whole) {
        Val q = withOrigin(Val::cint(x / y));
        q.truncatedDiv = std::make_shared<const TruncatedDiv>(TruncatedDiv{
            whole, renderValues(*whole) + " = " + std::to_string(x / y)});
        return q;
      }
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
    warnTruncatedDiv(a.kind == Val::CInt ? a : b, l, "meets a float literal");
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
    if (e.op == Tok::Minus && x->kind == Val::CInt && x->i != INT64_MIN) {
      Val negated = Val::cint(-x->i);
      negated.truncatedDiv = x->truncatedDiv;
      return negated;
    }
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
  // Each thread holds its share of a tile in registers, as straight-line
  // code. Past 1024 values a thread it spills wholesale and ptxas takes
  // superlinear time (2048 a thread: 29 s; 8192: 286 s); tilec itself stays
  // linear (emitPTX skips LLVM's quadratic strength reduction on big
  // functions).
  constexpr int64_t kMaxElementsPerThread = 1024;
  int64_t threads = 32 * kernelState->warps;
  if (n > kMaxElementsPerThread * threads) {
    diags.error(l, "tile " + shapeStr(shape) + " holds " + std::to_string(n) +
                       " elements, " + std::to_string(n / threads) +
                       " for each of the " + std::to_string(threads) +
                       " threads of " + std::to_string(kernelState->warps) +
                       (kernelState->warps == 1 ? " warp" : " warps") +
                       "; a thread may hold at most " +
                       std::to_string(kMaxElementsPerThread) +
                       " elements of one tile: use more warps or smaller "
                       "blocks");
    return false;
  }
  if (shape.size() > 8) {
    diags.error(l, "tile " + shapeStr(shape) + " has more than 8 dimensions");
    return false;
  }
  return true;
}

bool Sema::findUndefined(const Expr &e) {
  if (e.kind == ExprKind::Name && !lookup(e.name) && !parseDT(e.name)) {
    diags.error(e.loc(), "use of undefined name '" + e.name + "'");
    return true;
  }
  for (const ExprPtr &op : e.operands)
    if (op && findUndefined(*op))
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
  if (findUndefined(e))
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
