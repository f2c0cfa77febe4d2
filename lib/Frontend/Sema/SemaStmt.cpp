//===- SemaStmt.cpp - Statements --------------------------------------------===//
//
// let, var and assignments, loops (scf.for with carried vars), runtime
// and compile-time ifs, static_assert and return.
//
//===----------------------------------------------------------------------===//

#include "Sema.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace tegula;
using namespace tegula::frontend;
using namespace tegula::frontend::sema;

namespace {
constexpr llvm::StringLiteral kReturned = "$returned";
constexpr llvm::StringLiteral kBroken = "$broken";

/// Names the statements assign, for loop-carried values and if results:
/// vars, and the hidden exit flags that `return` and `break` (of the loop
/// whose body this is, not of nested loops) set.
void collectAssigned(llvm::ArrayRef<StmtPtr> body,
                     llvm::SmallVectorImpl<std::string> &names,
                     bool nestedLoop = false) {
  auto add = [&](llvm::StringRef name) {
    if (!llvm::is_contained(names, name))
      names.push_back(name.str());
  };
  for (const StmtPtr &stmt : body) {
    if (stmt->kind == StmtKind::Assign)
      add(stmt->names[0]);
    if (stmt->kind == StmtKind::Return)
      add(kReturned);
    if (stmt->kind == StmtKind::Break && !nestedLoop)
      add(kBroken);
    bool nested = nestedLoop || stmt->kind == StmtKind::For;
    collectAssigned(stmt->body, names, nested);
    collectAssigned(stmt->elseBody, names, nested);
  }
}

/// Whether `s` holds a `return` (kind Return) or a `break` of the loop
/// around it (kind Break: not inside a nested loop).
bool holds(const Stmt &s, StmtKind kind) {
  if (s.kind == kind)
    return true;
  if (kind == StmtKind::Break && s.kind == StmtKind::For)
    return false;
  for (const auto *body : {&s.body, &s.elseBody})
    for (const StmtPtr &inner : *body)
      if (holds(*inner, kind))
        return true;
  return false;
}
} // namespace

bool sema::contains(llvm::ArrayRef<StmtPtr> body, StmtKind kind) {
  return llvm::any_of(body, [&](const StmtPtr &s) { return holds(*s, kind); });
}

void Sema::stmts(llvm::ArrayRef<StmtPtr> body) {
  for (size_t i = 0; i < body.size(); ++i) {
    const StmtPtr &s = body[i];
    if (kernelState->aborted || kernelState->kernelReturned ||
        (!kernelState->frames.empty() && kernelState->frames.back().returned))
      return;
    if (!budget(s->range.begin))
      return;
    stmt(*s);
    if (kernelState->blockExited) {
      // A return or break at this level: what follows never runs.
      kernelState->blockExited = false;
      return;
    }
    // What follows runs only while no return or break has happened.
    if (i + 1 < body.size() && mayExit(*s)) {
      runtimeIf(body[i + 1]->range.begin, stillRunning(s->range.begin),
                body.drop_front(i + 1), {});
      return;
    }
  }
}

bool Sema::mayExit(const Stmt &s) {
  if (kernelState->frames.empty() && lookup(kReturned) &&
      holds(s, StmtKind::Return))
    return true;
  LoopInfo *loop = kernelState->loopOfThisFrame();
  return loop && loop->hasBreak && holds(s, StmtKind::Break);
}

mlir::Value Sema::stillRunning(SourceLoc l) {
  mlir::Location at = loc(l);
  mlir::Value running;
  auto notSet = [&](llvm::StringRef name) {
    Binding *b = lookup(name);
    if (!b || !b->val.v)
      return;
    mlir::Value one = mlir::arith::ConstantIntOp::create(builder, at, 1, 1);
    mlir::Value clear = mlir::arith::XOrIOp::create(builder, at, b->val.v, one);
    running = running ? mlir::arith::AndIOp::create(builder, at, running, clear)
                            .getResult()
                      : clear;
  };
  if (kernelState->frames.empty())
    notSet(kReturned);
  if (LoopInfo *loop = kernelState->loopOfThisFrame(); loop && loop->hasBreak)
    notSet(kBroken);
  if (!running)
    running = mlir::arith::ConstantIntOp::create(builder, at, 1, 1);
  return running;
}

void Sema::setFlag(llvm::StringRef name, SourceLoc l) {
  Binding *b = lookup(name);
  if (!b)
    return;
  b->val =
      Val::runtime(mlir::arith::ConstantIntOp::create(builder, loc(l), 1, 1),
                   Ty::scalar(DT::I1));
}

/// `return;` in a kernel: the program ends here. Every runtime condition is
/// a scalar, one value for the whole program, so all threads of the block
/// leave together and none waits at a barrier the others skip.
void Sema::returnStmt(const Stmt &s) {
  if (s.value) {
    diags.error(s.value->loc(), "a kernel returns nothing; write 'return;' "
                                "to end the program early");
    return;
  }
  if (kernelState->runtimeDepth == 0) {
    // Outside runtime control: the rest of the kernel is not compiled.
    kernelState->kernelReturned = true;
    return;
  }
  if (!kernelState->pipes.empty()) {
    diags.error(s.range.begin,
                "'return' under a runtime 'if' or in a loop is not supported "
                "after a pipeline is created (its copies in flight and stage "
                "counts must reach the end of the kernel); return before "
                "creating pipelines");
    diags.note(kernelState->pipes.front().loc, "a pipeline is created here");
    return;
  }
  setFlag(kReturned, s.range.begin);
  kernelState->blockExited = true;
}

void Sema::breakStmt(const Stmt &s) {
  LoopInfo *loop = kernelState->loopOfThisFrame();
  if (!loop) {
    diags.error(s.range.begin, kernelState->frames.empty()
                                   ? "'break' is only allowed inside a loop"
                                   : "'break' is only allowed inside a loop "
                                     "of the same fn");
    return;
  }
  if (loop->pipelined) {
    diags.error(s.range.begin,
                "'break' in a pipelined(S) loop is not supported: the loop "
                "fetches the blocks of later iterations ahead; remove "
                "pipelined(S) from the loop");
    return;
  }
  if (!loop->breakLoc)
    loop->breakLoc = s.range.begin;
  setFlag(kBroken, s.range.begin);
  kernelState->blockExited = true;
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
      if (findUndefined(*s.value))
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
  case StmtKind::Break:
    return breakStmt(s);
  case StmtKind::DeviceAssert:
    return deviceAssertStmt(s);
  case StmtKind::Return: {
    if (kernelState->frames.empty())
      return returnStmt(s);
    if (kernelState->frames.back().runtimeNesting) {
      diags.error(s.range.begin, "'return' inside a runtime 'if' or loop is not "
                                 "supported; assign a var and return it at the end");
      return;
    }
    // Evaluating the returned expression may inline further calls, which grow
    // `frames`: the frame is addressed by index and marked returned only once
    // its value is known, so no reference into the vector outlives a call.
    size_t frameIndex = kernelState->frames.size() - 1;
    const Function &fn = *kernelState->frames[frameIndex].fn;
    auto finish = [&](Val result) {
      kernelState->frames[frameIndex].returned = true;
      kernelState->frames[frameIndex].result = result;
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
    if (!v.ok() || !checkFnTypeNames(fn, *fn.result))
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

/// device_assert(COND, "message"): checked at run time, by every program,
/// on every element of a bool tile. The interpreter always checks it; the
/// GPU code only under `tilec -g` (the lowering reads tile.debug).
void Sema::deviceAssertStmt(const Stmt &s) {
  Val c = eval(*s.value);
  if (!c.ok())
    return;
  if (c.kind == Val::CBool) {
    if (!c.b)
      diags.error(s.value->loc(),
                  "device_assert condition '" + src(*s.value) +
                      "' is false at compile time; use static_assert for "
                      "compile-time conditions");
    return;
  }
  if (c.kind != Val::Runtime || c.ty.dt != DT::I1) {
    diags.error(
        s.value->loc(),
        "the condition of device_assert must be a bool scalar or "
        "tile, but '" +
            src(*s.value) + "' is " +
            (c.kind == Val::Runtime ? c.ty.str() : std::string("not a bool")));
    return;
  }
  tl::AssertOp::create(builder, loc(s.range.begin), c.v, s.message,
                       src(*s.value));
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
  if (v.kind == Val::Pipe && kernelState->pipes[v.index].name.empty())
    kernelState->pipes[v.index].name = name;
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
      v.index != b->val.index && kernelState->runtimeDepth > b->runtimeDepth) {
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

/// Whether the runtime i32 `v` is positive whatever the launch:
/// num_programs, a positive constant, or a max with one of those. (Sums
/// and products of them may wrap.)
static bool isKnownPositive(mlir::Value v, int depth = 0) {
  if (depth > 8)
    return false;
  if (v.getDefiningOp<tl::NumProgramsOp>())
    return true;
  if (auto c = v.getDefiningOp<mlir::arith::ConstantIntOp>())
    return c.value() > 0;
  if (auto max = v.getDefiningOp<mlir::arith::MaxSIOp>())
    return isKnownPositive(max.getLhs(), depth + 1) ||
           isKnownPositive(max.getRhs(), depth + 1);
  return false;
}

Val Sema::loopBound(const Expr *x, int64_t dflt, SourceLoc l) {
  if (!x)
    return toRuntime(Val::cint(dflt), l);
  Val v = eval(*x);
  if (!v.ok())
    return v;
  if (v.kind == Val::CInt)
    return toRuntime(v, x->loc(), DT::I32);
  if (v.kind != Val::Runtime || !v.ty.isScalar() || v.ty.dt != DT::I32)
    return error(x->loc(),
                 "loop bounds must be i32 scalars, but '" + src(*x) + "' is " +
                     (v.kind == Val::Runtime ? v.ty.str()
                                             : std::string("not an integer")));
  return v;
}

std::optional<int64_t> Sema::loopReverseStep(const Stmt &s, const Val &step) {
  std::optional<Val> c = tryConst(*s.step);
  if (c && c->kind == Val::CInt && c->i == 0) {
    diags.error(s.step->loc(), "the loop step must not be 0; use 1 to count "
                               "up or -1 to count down");
    return std::nullopt;
  }
  if (c && c->kind == Val::CInt && c->i < 0)
    return -c->i;
  if (c || isKnownPositive(step.v))
    return 0;
  // Operands of the suggested arithmetic, parenthesized unless simple.
  auto term = [&](const Expr &x) {
    bool simple = x.kind == ExprKind::Name || x.kind == ExprKind::Int ||
                  x.kind == ExprKind::Call;
    return simple ? src(x) : "(" + src(x) + ")";
  };
  std::string a = s.start ? term(*s.start) : "0", b = term(*s.end),
              k = term(*s.step);
  diags.error(s.step->loc(),
              "the sign of the loop step '" + src(*s.step) +
                  "' is not known at compile time, so the loop cannot "
                  "tell whether to count up or down; write a constant "
                  "step (range(" +
                  (s.start ? src(*s.start) : "0") + ", " + src(*s.end) +
                  ", 4), or a negative "
                  "one to count down) or loop over a count: for t in "
                  "range(0, cdiv(" +
                  b + " - " + a + ", " + k + ")) with the index " + a +
                  " + t * " + k);
  return std::nullopt;
}

std::optional<LoopHeader> Sema::loopHeader(const Stmt &s) {
  LoopHeader h;
  h.lo = loopBound(s.start.get(), 0, s.range.begin);
  h.hi = loopBound(s.end.get(), 0, s.range.begin);
  h.step = loopBound(s.step.get(), 1, s.range.begin);
  // A negative step counts down (reverseStep), as Python's range does.
  if (s.step && h.step.ok()) {
    std::optional<int64_t> reverseStep = loopReverseStep(s, h.step);
    if (!reverseStep)
      return std::nullopt;
    h.reverseStep = *reverseStep;
  }
  if (s.stages) {
    h.stages = evalConstInt(*s.stages, "the pipelined stage count");
    if (!h.stages)
      return std::nullopt;
    if (*h.stages < 1 || *h.stages > 16) {
      diags.error(s.stages->loc(), "pipelined(S) needs 1 to 16 stages, got " +
                                       std::to_string(*h.stages));
      return std::nullopt;
    }
  }
  if (!h.lo.ok() || !h.hi.ok() || !h.step.ok())
    return std::nullopt;
  return h;
}

/// Whether `effects` push or pop a pipeline.
static bool usesPipelines(const std::vector<Effect> &effects) {
  return llvm::any_of(effects, [&](const Effect &e) {
    return e.kind == Effect::Push || e.kind == Effect::Pop ||
           usesPipelines(e.first) || usesPipelines(e.second);
  });
}

void Sema::forStmt(const Stmt &s) {
  std::optional<LoopHeader> header = loopHeader(s);
  if (!header)
    return;
  Val &lo = header->lo, &hi = header->hi, &step = header->step;
  int64_t reverseStep = header->reverseStep;
  std::optional<int64_t> stages = header->stages;
  // A loop with a break of its own carries a $broken flag, bound in a scope
  // around the loop; once set, the remaining iterations do nothing.
  bool hasBreak = contains(s.body, StmtKind::Break);
  std::optional<ScopeGuard> flagScope;
  if (hasBreak) {
    flagScope.emplace(*this);
    bind(kBroken,
         Val::runtime(mlir::arith::ConstantIntOp::create(
                          builder, loc(s.range.begin), 0, 1),
                      Ty::scalar(DT::I1)),
         s.range.begin, /*isVar=*/true);
  }
  bool guarded =
      hasBreak || (kernelState->frames.empty() && lookup(kReturned) &&
                   contains(s.body, StmtKind::Return));
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
  // A reverse loop runs t over [0, start - stop) by -step, and its index
  // is start - t: the values above stop, from start down (none when start
  // <= stop). scf.for steps only upwards.
  mlir::Value start = lo.v;
  if (reverseStep) {
    mlir::Location l = loc(s.range.begin);
    hi.v = mlir::arith::SubIOp::create(builder, l, lo.v, hi.v);
    lo.v = mlir::arith::ConstantIntOp::create(builder, l, 0, 32);
    step.v = mlir::arith::ConstantIntOp::create(builder, l, reverseStep, 32);
  }
  auto forOp = mlir::scf::ForOp::create(builder, loc(s.range.begin), lo.v, hi.v,
                                        step.v, inits);
  if (stages)
    forOp->setAttr(tl::TileDialect::kPipelineStagesAttrName,
                   builder.getI32IntegerAttr(*stages));
  std::vector<Effect> body;
  std::vector<Effect> *savedEffects = kernelState->effects;
  kernelState->effects = &body;
  if (stages)
    kernelState->loopLoadBytes.push_back(0);
  {
    mlir::OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToStart(forOp.getBody());
    ScopeGuard scope(*this);
    for (auto [i, b] : llvm::enumerate(carried))
      b->val.v = forOp.getRegionIterArgs()[i];
    mlir::Value index = forOp.getInductionVar();
    if (reverseStep)
      index = mlir::arith::SubIOp::create(builder, loc(s.range.begin), start,
                                          index);
    bind(s.names[0], Val::runtime(index, Ty::scalar(DT::I32)), s.nameLocs[0]);
    kernelState->enterRuntimeControl();
    kernelState->loops.push_back(
        {kernelState->frames.size(), hasBreak, stages.has_value(), {}});
    if (guarded)
      runtimeIf(s.range.begin, stillRunning(s.range.begin), s.body, {});
    else
      stmts(s.body);
    std::optional<SourceLoc> breakLoc = kernelState->loops.back().breakLoc;
    kernelState->loops.pop_back();
    kernelState->leaveRuntimeControl();
    // Pipelines count pushes and pops per iteration and may prefetch.
    if (breakLoc && usesPipelines(body))
      diags.error(*breakLoc, "'break' in a loop that pushes or pops a "
                             "pipeline is not supported; the stage counts "
                             "must be the same on every path");
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
  kernelState->effects = savedEffects;
  if (kernelState->effects)
    kernelState->effects->push_back(
        {Effect::Loop, -1, s.range.begin, std::move(body), {}});
  if (stages) {
    int64_t perIteration = kernelState->loopLoadBytes.back();
    kernelState->loopLoadBytes.pop_back();
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
  runtimeIf(s.range.begin, c.v, s.body, s.elseBody);
}

void Sema::runtimeIf(SourceLoc l, mlir::Value cond,
                     llvm::ArrayRef<StmtPtr> then,
                     llvm::ArrayRef<StmtPtr> otherwise) {
  llvm::SmallVector<std::string> assigned;
  llvm::SmallVector<Binding *> results;
  collectAssigned(then, assigned);
  collectAssigned(otherwise, assigned);
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
  auto ifOp = mlir::scf::IfOp::create(builder, loc(l), types, cond,
                                      /*withElseRegion=*/true);
  std::vector<Effect> arms[2];
  std::vector<Effect> *savedEffects = kernelState->effects;
  kernelState->enterRuntimeControl();
  for (int arm = 0; arm < 2; ++arm) {
    mlir::Block *block = arm == 0 ? ifOp.thenBlock() : ifOp.elseBlock();
    mlir::OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToStart(block);
    for (auto [i, b] : llvm::enumerate(results))
      b->val = before[i];
    kernelState->effects = &arms[arm];
    {
      ScopeGuard scope(*this);
      stmts(arm == 0 ? then : otherwise);
    }
    llvm::SmallVector<mlir::Value> yields;
    for (Binding *b : results)
      yields.push_back(b->val.v);
    if (block->empty() || !block->back().hasTrait<mlir::OpTrait::IsTerminator>())
      mlir::scf::YieldOp::create(builder, loc(l), yields);
    else
      block->back().setOperands(yields);
  }
  kernelState->leaveRuntimeControl();
  kernelState->effects = savedEffects;
  for (auto [i, b] : llvm::enumerate(results)) {
    b->val = before[i];
    b->val.v = ifOp.getResult(i);
  }
  if (kernelState->effects)
    kernelState->effects->push_back(
        {Effect::If, -1, l, std::move(arms[0]), std::move(arms[1])});
}
