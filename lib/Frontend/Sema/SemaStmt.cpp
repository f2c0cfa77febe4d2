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
} // namespace

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
