//===- SemaConversion.cpp - Materializing and converting values -------------===//
//
// Literals become constants of the dtype they meet; scalars broadcast into
// tiles; implicit conversions are checked (coerce) and explicit ones built
// (cast).
//
//===----------------------------------------------------------------------===//

#include "Sema.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace tegula;
using namespace tegula::frontend;
using namespace tegula::frontend::sema;

/// `x` as an operand of `/` on the side `right`, parenthesized if needed.
static std::string divOperand(const Expr &x, llvm::StringRef text, bool right) {
  bool loose = x.kind == ExprKind::Ternary ||
               (x.kind == ExprKind::Binary &&
                binaryPrecedence(x.op) < binaryPrecedence(Tok::Slash) + right);
  return loose ? "(" + text.str() + ")" : text.str();
}

void Sema::warnTruncatedDiv(const Val &v, SourceLoc use,
                            const llvm::Twine &how) {
  if (!v.truncatedDiv)
    return;
  const Expr &div = *v.truncatedDiv->div;
  if (!warnedDivisions.insert(div.opLoc.offset).second)
    return;
  const Expr &a = *div.operands[0], &b = *div.operands[1];
  const std::string &values = v.truncatedDiv->values;
  if (values.empty())
    diags.warning(div.opLoc, "integer division '" + src(div) +
                                 "' truncates toward zero before the quotient "
                                 "becomes a float; write cast<f32>(" +
                                 src(a) + ") / cast<f32>(" + src(b) +
                                 ") for a floating-point quotient");
  else
    diags.warning(div.opLoc,
                  "integer division '" + src(div) + "' truncates (" + values +
                      ") before the quotient becomes a float; write " +
                      (a.kind == ExprKind::Int
                           ? src(a) + ".0"
                           : "1.0 * " + divOperand(a, src(a), false)) +
                      " / " + divOperand(b, src(b), true) +
                      " for a floating-point quotient");
  diags.note(use, "the quotient " + how + " here");
}

mlir::Value Sema::constant(DT dt, const Val &lit, SourceLoc l) {
  if (isFloat(dt) && lit.kind == Val::CInt)
    warnTruncatedDiv(lit, l, llvm::Twine("becomes ") + dtName(dt));
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

mlir::Value Sema::spreadAlong(mlir::Value v, DT dt, size_t axis,
                              llvm::ArrayRef<int64_t> shape, SourceLoc l) {
  size_t rank = mlir::cast<mlir::RankedTensorType>(v.getType()).getRank();
  llvm::SmallVector<int64_t> cur(shape.slice(axis, rank));
  for (size_t d = 0; d < axis; ++d) {
    cur.insert(cur.begin(), 1);
    v = tl::ExpandDimsOp::create(builder, loc(l), tileType(cur, dt), v, 0u);
  }
  while (cur.size() < shape.size()) {
    cur.push_back(1);
    v = tl::ExpandDimsOp::create(builder, loc(l), tileType(cur, dt), v,
                                 (uint32_t)(cur.size() - 1));
  }
  if (llvm::ArrayRef<int64_t>(cur) != shape)
    v = tl::BroadcastOp::create(builder, loc(l), tileType(shape, dt), v);
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
  if (!checkShape(result.shape, l))
    return std::nullopt;
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
      if (v.index >= 0 && v.index < (int)kernelState->pipes.size())
        diags.note(kernelState->pipes[v.index].loc,
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
  if (isInt(v.ty.dt) && isFloat(to))
    warnTruncatedDiv(v, l, llvm::Twine("becomes ") + dtName(to));
  return Val::runtime(castValue(v.v, v.ty.dt, to, l), v.ty.withDT(to));
}
