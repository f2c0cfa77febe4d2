//===- SemaBuiltins.cpp - Builtin calls -------------------------------------===//
//
// Calls of builtins and of fns: one table of every builtin (name, arity,
// named arguments, template form, handler) and the handlers.
//
//===----------------------------------------------------------------------===//

#include "Sema.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace tegula;
using namespace tegula::frontend;
using namespace tegula::frontend::sema;

std::optional<llvm::StringRef>
Sema::precisionArg(const Expr &e, llvm::ArrayRef<llvm::StringRef> options) {
  const NamedArg *precision = namedArg(e, "precision");
  if (!precision)
    return options.front();
  const Expr &value = *precision->value;
  if (value.kind == ExprKind::Name)
    for (llvm::StringRef option : options)
      if (value.name == option)
        return option;
  std::string names;
  for (size_t i = 0; i < options.size(); ++i)
    names += (i == 0 ? "" : i + 1 == options.size() ? " or " : ", ") +
             options[i].str();
  error(value.loc(), "the precision of '" + e.name + "' is " + names +
                         ", but '" + src(value) + "' was given");
  return std::nullopt;
}

static std::string precisionHint(llvm::StringRef argName);

const NamedArg *Sema::namedArg(const Expr &e, llvm::StringRef name) {
  for (const NamedArg &arg : e.namedArgs)
    if (arg.name == name)
      return &arg;
  return nullptr;
}

bool Sema::checkArgs(const Expr &e, size_t minArgs, size_t maxArgs,
                     llvm::ArrayRef<llvm::StringRef> named) {
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
                               arg.name + "'" + precisionHint(arg.name));
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
  const Builtin *builtin = findBuiltin(e.name);
  if (e.hasTemplateArgs &&
      (!builtin || builtin->signature.templateArgs == BuiltinTemplate::None)) {
    diags.error(e.loc(), "'" + e.name + "' takes no template arguments");
    return false;
  }
  return true;
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
  else if (name == "tanh") r = TanhOp::create(builder, at, x.v);
  else if (name == "erf") r = ErfOp::create(builder, at, x.v);
  else if (name == "floor") r = FloorOp::create(builder, at, x.v);
  else if (name == "ceil") r = CeilOp::create(builder, at, x.v);
  else if (name == "log1p") r = Log1pOp::create(builder, at, x.v);
  else if (name == "sigmoid") r = tl::SigmoidOp::create(builder, at, x.v);
  else r = AbsFOp::create(builder, at, x.v);
  return Val::runtime(r, x.ty);
}

std::optional<std::pair<Val, int64_t>>
Sema::reduceOperand(llvm::StringRef name, const Expr &e, llvm::StringRef verb,
                    llvm::StringRef axisWhat) {
  const NamedArg *axisArg = namedArg(e, "axis");
  std::optional<Val> operand = tileOperand(name, e, (verb + "s").str());
  if (!operand)
    return std::nullopt;
  Val x = *operand;
  auto axis = evalConstInt(*axisArg->value, axisWhat);
  if (!axis)
    return std::nullopt;
  if (*axis < 0 || *axis >= x.ty.rank()) {
    error(axisArg->value->loc(), "axis " + std::to_string(*axis) +
                                     " is out of range for " + x.ty.str() +
                                     "; expected 0 to " +
                                     std::to_string(x.ty.rank() - 1));
    return std::nullopt;
  }
  if (x.ty.dt == DT::I1) {
    error(e.loc(), "'" + name + "' does not " + verb +
                       " bool tiles; cast<i32>(...) them first");
    return std::nullopt;
  }
  return std::make_pair(x, *axis);
}

Val Sema::reduceAlong(const Val &x, int64_t axis, tl::ReduceKind kind,
                      SourceLoc l) {
  llvm::SmallVector<int64_t> shape(x.ty.shape);
  std::vector<Origin> origins = x.ty.origins;
  shape.erase(shape.begin() + axis);
  origins.erase(origins.begin() + axis);
  Ty ty = Ty::tile(x.ty.dt, shape, origins);
  mlir::Value r = tl::ReduceOp::create(builder, loc(l), mlirType(ty), kind, x.v,
                                       (uint32_t)axis);
  return Val::runtime(r, ty);
}

Val Sema::reduce(llvm::StringRef name, const Expr &e) {
  auto operand = reduceOperand(name, e);
  if (!operand)
    return Val::invalid();
  tl::ReduceKind kind = name == "sum"   ? tl::ReduceKind::Sum
                        : name == "max" ? tl::ReduceKind::Max
                                        : tl::ReduceKind::Min;
  return reduceAlong(operand->first, operand->second, kind, e.loc());
}

/// argmax(x, axis = k) and argmin: the first index along the axis of the
/// maximum (minimum), as i32; a NaN counts as the extreme, so its first
/// index wins (as in numpy). Built from the max (min) reduction, a
/// comparison and a min reduction of indices: the interpreter and the GPU
/// share every step with ops they already agree on.
Val Sema::builtinArgExtreme(const Expr &e) {
  llvm::StringRef name = e.name;
  SourceLoc l = e.loc();
  if (!checkArgs(e, 1, 1, {"axis"}))
    return Val::invalid();
  if (!namedArg(e, "axis"))
    return error(l, "'" + name + "' needs the axis to reduce: " + name +
                        "(x, axis = 0)");
  auto operand = reduceOperand(name, e);
  if (!operand)
    return Val::invalid();
  auto [x, axis] = *operand;
  llvm::ArrayRef<int64_t> shape = x.ty.shape;
  // Compare in f32 (exact for f16 and bf16) or the integer type.
  DT work = isFloat(x.ty.dt) ? DT::F32 : x.ty.dt;
  Val xs = x.ty.dt == work ? x : castTo(x, work, l);
  Val extreme = reduceAlong(
      xs, axis, name == "argmax" ? tl::ReduceKind::Max : tl::ReduceKind::Min,
      l);
  // The extreme back along the axis, then over the whole tile.
  mlir::Value back = extreme.v;
  if (extreme.ty.isScalar()) {
    back = tl::SplatOp::create(builder, loc(l), tileType(shape, work), back);
  } else {
    llvm::SmallVector<int64_t> kept(shape);
    kept[axis] = 1;
    back = tl::ExpandDimsOp::create(builder, loc(l), tileType(kept, work), back,
                                    (uint32_t)axis);
    back =
        tl::BroadcastOp::create(builder, loc(l), tileType(shape, work), back);
  }
  mlir::Value hit;
  if (isFloat(work)) {
    using mlir::arith::CmpFPredicate;
    hit = mlir::arith::OrIOp::create(
        builder, loc(l),
        mlir::arith::CmpFOp::create(builder, loc(l), CmpFPredicate::OEQ, xs.v,
                                    back),
        mlir::arith::CmpFOp::create(builder, loc(l), CmpFPredicate::UNO, xs.v,
                                    xs.v));
  } else {
    hit = mlir::arith::CmpIOp::create(
        builder, loc(l), mlir::arith::CmpIPredicate::eq, xs.v, back);
  }
  // Each element's index along the axis, or the extent where it misses.
  mlir::Value index = spreadAlong(
      tl::ArangeOp::create(builder, loc(l), tileType({shape[axis]}, DT::I32)),
      DT::I32, axis, shape, l);
  mlir::Value miss =
      tl::SplatOp::create(builder, loc(l), tileType(shape, DT::I32),
                          constant(DT::I32, Val::cint(shape[axis]), l));
  Val candidates = Val::runtime(
      mlir::arith::SelectOp::create(builder, loc(l), hit, index, miss),
      x.ty.withDT(DT::I32));
  return reduceAlong(candidates, axis, tl::ReduceKind::Min, l);
}

Val Sema::builtinGridIndex(const Expr &e) {
  llvm::StringRef name = e.name;
  SourceLoc l = e.loc();
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

Val Sema::builtinArange(const Expr &e) {
  SourceLoc l = e.loc();
  Origin origin;
  auto n = evalConstInt(*e.operands[0], "the arange extent", &origin);
  if (!n || !checkExtent(*n, e.operands[0]->loc(), "arange"))
    return Val::invalid();
  Ty ty = Ty::tile(DT::I32, {*n}, {origin});
  return Val::runtime(tl::ArangeOp::create(builder, loc(l), mlirType(ty)), ty);
}

Val Sema::builtinCast(const Expr &e) {
  SourceLoc l = e.loc();
  if (!e.hasTemplateArgs || e.templateArgs.size() != 1)
    return error(l, "'cast' is written cast<DT>(x)");
  if (!checkArgs(e, 1, 1, {}))
    return Val::invalid();
  auto dt = evalDType(*e.templateArgs[0]);
  if (!dt)
    return Val::invalid();
  return castTo(eval(*e.operands[0]), *dt, l);
}

Val Sema::builtinTrans(const Expr &e) {
  SourceLoc l = e.loc();
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

Val Sema::builtinWhere(const Expr &e) {
  SourceLoc l = e.loc();
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

/// sum(x, axis = k), and max and min both as reductions and elementwise.
Val Sema::builtinReduceOrMinMax(const Expr &e) {
  llvm::StringRef name = e.name;
  SourceLoc l = e.loc();
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

Val Sema::builtinCdiv(const Expr &e) {
  SourceLoc l = e.loc();
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

Val Sema::builtinLoad(const Expr &e) {
  SourceLoc l = e.loc();
  auto block = evalBlock(*e.operands[0], false, "store",
                         namedArg(e, "other") || namedArg(e, "mask"));
  if (!block)
    return Val::invalid();
  TensorParam &t = kernelState->tensors[block->tensor];
  bool scalar = block->shape.empty();
  if (scalar)
    asOneElementBlock(*block, l);
  auto mask = evalMask(e, *block);
  auto other = evalOther(e, *block, t.ty.dt);
  if (!mask || !other)
    return Val::invalid();
  Ty ty = Ty::tile(t.ty.dt, block->shape, block->origins);
  mlir::Value r = tl::LoadOp::create(builder, loc(l), mlirType(ty), t.value,
                                     block->indices, *mask, *other);
  t.read = true;
  for (int64_t &bytes : kernelState->loopLoadBytes)
    bytes += ty.elements() * dtBytes(ty.dt);
  if (scalar) {
    Ty sty = Ty::scalar(t.ty.dt);
    return Val::runtime(tl::ReduceOp::create(builder, loc(l), mlirType(sty),
                                             tl::ReduceKind::Sum, r, 0u),
                        sty);
  }
  return Val::runtime(r, ty);
}

Val Sema::builtinStore(const Expr &e) {
  llvm::StringRef name = e.name;
  SourceLoc l = e.loc();
  auto block = evalBlock(*e.operands[0], true, "store", namedArg(e, "mask"));
  if (!block)
    return Val::invalid();
  TensorParam &t = kernelState->tensors[block->tensor];
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
  if (block->shape.empty())
    asOneElementBlock(*block, l);
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

std::optional<Ty> Sema::templateTile(const Expr &e, llvm::StringRef form) {
  if (!e.hasTemplateArgs || e.templateArgs.size() != 1 || !e.hasShape) {
    diags.error(e.loc(), "'" + e.name + "' is written " + e.name + form);
    return std::nullopt;
  }
  auto dt = evalDType(*e.templateArgs[0]);
  if (!dt)
    return std::nullopt;
  llvm::SmallVector<int64_t> shape;
  std::vector<Origin> origins;
  if (!evalShape(e.shape, e.loc(), shape, origins))
    return std::nullopt;
  return Ty::tile(*dt, shape, origins);
}

Val Sema::builtinZeros(const Expr &e) {
  std::optional<Ty> ty = templateTile(e, "<DT>[S0, ...]");
  if (!ty)
    return Val::invalid();
  if (e.hasCallArgs)
    return error(e.loc(), "'zeros' takes no arguments; write zeros<DT>[S0, ...]");
  return Val::runtime(materialize(Val::cint(0), *ty, e.loc()), *ty);
}

Val Sema::builtinFull(const Expr &e) {
  std::optional<Ty> ty = templateTile(e, "<DT>[S0, ...](VALUE)");
  if (!ty || !checkArgs(e, findBuiltin(e.name)->signature))
    return Val::invalid();
  Val v = eval(*e.operands[0]);
  if (!v.ok())
    return v;
  if (v.kind == Val::Runtime && !v.ty.isScalar())
    return error(e.operands[0]->loc(), "the value of 'full' must be a scalar, but '" +
                                           src(*e.operands[0]) + "' is " + v.ty.str());
  return coerce(v, *ty, e.operands[0]->loc(), "the value of 'full'", e.loc());
}

Val Sema::builtinPipeline(const Expr &e) {
  SourceLoc l = e.loc();
  std::optional<Ty> tile = templateTile(e, "<DT>[S0, S1](stages = N)");
  if (!tile || !checkArgs(e, findBuiltin(e.name)->signature))
    return Val::invalid();
  Ty ty = *tile;
  const NamedArg *stagesArg = namedArg(e, "stages");
  if (!stagesArg)
    return error(l, "a pipeline needs its stage count: pipeline<" +
                        llvm::Twine(dtName(ty.dt)) + ">" + shapeStr(ty.shape) +
                        "(stages = 2)");
  auto stages = evalConstInt(*stagesArg->value, "the pipeline stage count");
  if (!stages)
    return Val::invalid();
  if (*stages < 1 || *stages > 16)
    return error(stagesArg->value->loc(), "a pipeline needs 1 to 16 stages, got " +
                                              std::to_string(*stages));
  ty.kind = Ty::Pipeline;
  ty.stages = *stages;
  int64_t stageBytes = ty.elements() * dtBytes(ty.dt);
  addSharedBytes(*stages * stageBytes, l,
                 "this pipeline needs " + std::to_string(*stages) + " x " +
                     std::to_string(stageBytes) + " = " +
                     std::to_string(*stages * stageBytes) + " bytes");
  auto type = tl::PipelineType::get(ctx, ty.shape, mlirDT(ty.dt), *stages);
  Val p;
  p.kind = Val::Pipe;
  p.ty = ty;
  p.v = tl::PipelineCreateOp::create(builder, loc(l), type);
  p.index = kernelState->pipes.size();
  kernelState->pipes.push_back({"", l, (unsigned)*stages, ty});
  return p;
}

/// Marks the op that computes `r` as an approximate function
/// (fastmath<afn>): the lowering then picks its fast f32 form.
static void markFast(const Val &r) {
  if (r.kind != Val::Runtime)
    return;
  auto op = r.v.getDefiningOp<mlir::arith::ArithFastMathInterface>();
  op->setAttr(op.getFastMathAttrName(),
              mlir::arith::FastMathFlagsAttr::get(
                  op->getContext(), mlir::arith::FastMathFlags::afn));
}

Val Sema::builtinMath(const Expr &e) {
  // erf, tanh and sigmoid(x, precision = fast): f32 forms of 2 ulp instead
  // of the correctly rounded f64 evaluation (docs/language-extensions.md,
  // Math builtins). Only their signatures take `precision`.
  std::optional<llvm::StringRef> precision = precisionArg(e, {"exact", "fast"});
  if (!precision)
    return Val::invalid();
  Val r = elementwise(e.name, e, eval(*e.operands[0]));
  if (*precision == "fast")
    markFast(r);
  return r;
}

/// div(a, b) and reciprocal(x) = div(1, x): float division as `/` computes
/// it (numpy broadcasting, a literal takes the other operand's dtype), with
/// `precision = fast` for div.full.f32 (2 ulp) or rcp.approx.f32 (1 ulp)
/// instead of the IEEE quotient.
Val Sema::builtinDivision(const Expr &e) {
  std::optional<llvm::StringRef> precision = precisionArg(e, {"exact", "fast"});
  if (!precision)
    return Val::invalid();
  bool reciprocal = e.name == "reciprocal";
  const Expr *numerator = reciprocal ? nullptr : e.operands[0].get();
  const Expr *denominator = e.operands.back().get();
  Val a = reciprocal ? Val::cfloat(1) : eval(*numerator);
  Val b = eval(*denominator);
  if (!a.ok() || !b.ok())
    return Val::invalid();
  for (auto [x, operand] : {std::pair(&a, numerator), {&b, denominator}}) {
    // Integer literals divide as floats: div(1, 2) is 0.5.
    if (x->kind == Val::CInt)
      *x = Val::cfloat(double(x->i));
    if (x->kind == Val::Runtime && !isFloat(x->ty.dt))
      return error(operand->loc(),
                   "'" + e.name + "' needs " +
                       (reciprocal ? "a float operand" : "float operands") +
                       ", but '" + src(*operand) + "' is " + x->ty.str() +
                       "; convert it with cast<f32>(...)");
    if (!x->isValue() || x->kind == Val::CBool)
      return error(e.loc(), "'" + e.name + "' takes float values");
  }
  Val r = binaryOp(Tok::Slash, a, b, e.loc(), numerator, denominator);
  if (*precision == "fast")
    markFast(r);
  return r;
}

/// pow(x, y): elementwise on floats with numpy broadcasting, C's pow.
Val Sema::builtinPow(const Expr &e) {
  SourceLoc l = e.loc();
  Val a = eval(*e.operands[0]);
  Val b = eval(*e.operands[1]);
  if (!a.ok() || !b.ok())
    return Val::invalid();
  if (a.isLiteral() && b.isLiteral())
    return Val::cfloat(std::pow(a.kind == Val::CInt ? double(a.i) : a.f,
                                b.kind == Val::CInt ? double(b.i) : b.f));
  if (!a.isValue() || !b.isValue() || a.kind == Val::CBool ||
      b.kind == Val::CBool)
    return error(l, "'pow' takes two float values");
  // Literals alone take f32, as the other math builtins do.
  if (a.isLiteral() && b.kind == Val::Runtime && !isFloat(b.ty.dt))
    a = toRuntime(a, l, DT::F32);
  std::optional<DT> dt = commonDT(a, b, l, "'pow'");
  if (!dt)
    return Val::invalid();
  if (!isFloat(*dt))
    for (int i = 0; i < 2; ++i) {
      const Val &x = i ? b : a;
      if (x.kind == Val::Runtime && !isFloat(x.ty.dt))
        return error(e.operands[i]->loc(),
                     "'pow' needs float operands, but '" +
                         src(*e.operands[i]) + "' is " + x.ty.str() +
                         "; convert it with cast<f32>(...)");
    }
  Ty ta = a.kind == Val::Runtime ? a.ty : Ty::scalar(*dt);
  Ty tb = b.kind == Val::Runtime ? b.ty : Ty::scalar(*dt);
  auto s = broadcastShapes(ta, tb, l, e.operands[0].get(), e.operands[1].get());
  if (!s)
    return Val::invalid();
  Ty ty = s->withDT(*dt);
  mlir::Value x = materialize(a, ty, l), y = materialize(b, ty, l);
  return Val::runtime(mlir::math::PowFOp::create(builder, loc(l), x, y), ty);
}

//===----------------------------------------------------------------------===//
// The builtin table
//===----------------------------------------------------------------------===//

namespace {
using Tmpl = BuiltinTemplate;
/// Every builtin, once: its signature (for argument checks, the parser's
/// template arguments and the fuzzer's dictionary) and its handler. A
/// handler marked `checksItself` calls checkArgs where its own order of
/// messages needs it (after the template form, or per form for max/min).
const Builtin kBuiltins[] = {
    {{"program_id", Tmpl::None, 1, 1, {}}, &Sema::builtinGridIndex},
    {{"num_programs", Tmpl::None, 1, 1, {}}, &Sema::builtinGridIndex},
    {{"arange", Tmpl::None, 1, 1, {}}, &Sema::builtinArange},
    {{"zeros", Tmpl::DTypeShape, 0, 0, {}}, &Sema::builtinZeros, true},
    {{"full", Tmpl::DTypeShape, 1, 1, {}}, &Sema::builtinFull, true},
    {{"pipeline", Tmpl::DTypeShape, 0, 0, {"stages"}},
     &Sema::builtinPipeline,
     true},
    {{"cast", Tmpl::DType, 1, 1, {}}, &Sema::builtinCast, true},
    {{"dot", Tmpl::None, 2, 3, {"precision"}}, &Sema::dot},
    {{"trans", Tmpl::None, 1, 1, {}}, &Sema::builtinTrans},
    {{"permute", Tmpl::None, 2, 2, {}}, &Sema::builtinPermute},
    {{"reshape", Tmpl::None, 2, 2, {}}, &Sema::builtinReshape},
    {{"where", Tmpl::None, 3, 3, {}}, &Sema::builtinWhere},
    {{"sum", Tmpl::None, 1, 1, {"axis"}}, &Sema::builtinReduceOrMinMax, true},
    {{"max", Tmpl::None, 1, 2, {"axis"}}, &Sema::builtinReduceOrMinMax, true},
    {{"min", Tmpl::None, 1, 2, {"axis"}}, &Sema::builtinReduceOrMinMax, true},
    {{"argmax", Tmpl::None, 1, 1, {"axis"}}, &Sema::builtinArgExtreme, true},
    {{"argmin", Tmpl::None, 1, 1, {"axis"}}, &Sema::builtinArgExtreme, true},
    {{"cumsum", Tmpl::None, 1, 1, {"axis"}}, &Sema::builtinCumsum},
    {{"exp", Tmpl::None, 1, 1, {}}, &Sema::builtinMath},
    {{"exp2", Tmpl::None, 1, 1, {}}, &Sema::builtinMath},
    {{"log", Tmpl::None, 1, 1, {}}, &Sema::builtinMath},
    {{"log2", Tmpl::None, 1, 1, {}}, &Sema::builtinMath},
    {{"sqrt", Tmpl::None, 1, 1, {}}, &Sema::builtinMath},
    {{"rsqrt", Tmpl::None, 1, 1, {}}, &Sema::builtinMath},
    {{"sin", Tmpl::None, 1, 1, {}}, &Sema::builtinMath},
    {{"cos", Tmpl::None, 1, 1, {}}, &Sema::builtinMath},
    {{"abs", Tmpl::None, 1, 1, {}}, &Sema::builtinMath},
    {{"tanh", Tmpl::None, 1, 1, {"precision"}}, &Sema::builtinMath},
    {{"erf", Tmpl::None, 1, 1, {"precision"}}, &Sema::builtinMath},
    {{"sigmoid", Tmpl::None, 1, 1, {"precision"}}, &Sema::builtinMath},
    {{"floor", Tmpl::None, 1, 1, {}}, &Sema::builtinMath},
    {{"ceil", Tmpl::None, 1, 1, {}}, &Sema::builtinMath},
    {{"log1p", Tmpl::None, 1, 1, {}}, &Sema::builtinMath},
    {{"pow", Tmpl::None, 2, 2, {}}, &Sema::builtinPow},
    {{"div", Tmpl::None, 2, 2, {"precision"}}, &Sema::builtinDivision},
    {{"reciprocal", Tmpl::None, 1, 1, {"precision"}}, &Sema::builtinDivision},
    {{"cdiv", Tmpl::None, 2, 2, {}}, &Sema::builtinCdiv},
    {{"load", Tmpl::None, 1, 1, {"other", "mask"}}, &Sema::builtinLoad},
    {{"store", Tmpl::None, 2, 2, {"mask"}}, &Sema::builtinStore},
    {{"atomic_add", Tmpl::None, 2, 2, {"mask"}}, &Sema::builtinAtomic},
    {{"atomic_max", Tmpl::None, 2, 2, {"mask"}}, &Sema::builtinAtomic},
};
} // namespace

const Builtin *sema::findBuiltin(llvm::StringRef name) {
  for (const Builtin &b : kBuiltins)
    if (b.signature.name == name)
      return &b;
  return nullptr;
}

const BuiltinSignature *tegula::frontend::lookupBuiltin(llvm::StringRef name) {
  const Builtin *b = findBuiltin(name);
  return b ? &b->signature : nullptr;
}

std::vector<std::string> tegula::frontend::builtinNames() {
  std::vector<std::string> names;
  for (const Builtin &b : kBuiltins)
    names.push_back(b.signature.name.str());
  return names;
}

/// For `precision` given to a builtin without one: the builtins that take
/// it, from the table ("; only dot, tanh, ... take 'precision'").
static std::string precisionHint(llvm::StringRef argName) {
  if (argName != "precision")
    return "";
  llvm::SmallVector<llvm::StringRef> names;
  for (const Builtin &b : kBuiltins)
    for (const char *named : b.signature.named)
      if (named && argName == named)
        names.push_back(b.signature.name);
  std::string list;
  for (size_t i = 0; i < names.size(); ++i)
    list += (i == 0                  ? ""
             : i + 1 == names.size() ? " and "
                                     : ", ") +
            names[i].str();
  return "; only " + list + " take '" + argName.str() + "'";
}

bool Sema::checkArgs(const Expr &e, const BuiltinSignature &signature) {
  llvm::SmallVector<llvm::StringRef, 2> named;
  for (const char *name : signature.named)
    if (name)
      named.push_back(name);
  return checkArgs(e, signature.minArgs, signature.maxArgs, named);
}

Val Sema::evalCall(const Expr &e) {
  auto fn = functions.find(e.name);
  if (fn != functions.end())
    return callFunction(*fn->second, e);
  if (const Builtin *b = findBuiltin(e.name)) {
    if (!b->checksItself && !checkArgs(e, b->signature))
      return Val::invalid();
    return (this->*b->handler)(e);
  }
  if (lookup(e.name))
    return error(e.loc(), "'" + e.name + "' is not a function");
  std::string names;
  for (const Builtin &b : kBuiltins)
    names += (names.empty() ? "" : ", ") + b.signature.name.str();
  return error(e.loc(), "use of undefined function '" + e.name +
                            "': it is neither an fn of this file nor a "
                            "builtin (" +
                            names + ")");
}
