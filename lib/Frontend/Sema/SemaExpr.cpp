//===- SemaExpr.cpp - Expressions -------------------------------------------===//
//
// Names, unary, binary and ternary operators.
//
//===----------------------------------------------------------------------===//

#include "Sema.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace tegula;
using namespace tegula::frontend;
using namespace tegula::frontend::sema;

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
    // A None index item in a tensor index (x[None]).
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
  // Outside an index, None parses as a name.
  if (e.name == "None")
    return error(e.loc(), "'None' is only allowed inside [...] to add a unit "
                          "dimension");
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
      Val negated = Val::cint(-x.i);
      negated.truncatedDiv = x.truncatedDiv;
      return negated;
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
  Val r =
      binaryOp(e.op, a, b, e.opLoc, e.operands[0].get(), e.operands[1].get());
  // A runtime integer quotient: whether it truncates is not known, so only
  // a cast of it to a float is warned about.
  if (e.op == Tok::Slash && r.kind == Val::Runtime && isInt(r.ty.dt))
    r.truncatedDiv =
        std::make_shared<const TruncatedDiv>(TruncatedDiv{&e, std::string()});
  return r;
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
