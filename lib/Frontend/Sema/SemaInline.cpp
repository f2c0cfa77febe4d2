//===- SemaInline.cpp - fn calls --------------------------------------------===//
//
// fn calls are inlined: arguments bound in a fresh scope stack, the body
// elaborated in place, the returned value handed back.
//
//===----------------------------------------------------------------------===//

#include "Sema.h"

#include "llvm/ADT/ScopeExit.h"

using namespace tegula;
using namespace tegula::frontend;
using namespace tegula::frontend::sema;

/// The first name in `e` that is neither bound nor a dtype, or null.
const Expr *Sema::firstUnbound(const Expr &e) {
  if (e.kind == ExprKind::Name && !lookup(e.name) && !parseDT(e.name))
    return &e;
  for (const ExprPtr &op : e.operands)
    if (const Expr *found = op ? firstUnbound(*op) : nullptr)
      return found;
  return nullptr;
}

bool Sema::checkFnTypeNames(const Function &fn, const TypeExpr &t) {
  for (const TypePtr &element : t.elements)
    if (!checkFnTypeNames(fn, *element))
      return false;
  const Expr *name = nullptr;
  bool isDType = t.dtype && (name = firstUnbound(*t.dtype));
  for (size_t d = 0; !name && d < t.dims.size(); ++d)
    name = firstUnbound(*t.dims[d]);
  if (!name)
    return true;
  if (!kernelState->reportedFnTypeNames.insert(name->loc().offset).second)
    return false;
  std::string declared;
  for (const TemplateParam &tp : fn.templateParams)
    declared += tp.name + ": " + templateKindName(tp.kind) + ", ";
  diags.error(name->loc(), "'" + name->name + "' in the types of fn '" +
                               fn.name +
                               "' is not one of its template parameters; "
                               "declare it, as in fn " +
                               fn.name + "<" + declared + name->name +
                               (isDType ? ": dtype" : ": int") + ">(...)");
  return false;
}

bool Sema::checkCall(const Function &fn, const Expr &e) {
  for (const Frame &f : kernelState->frames)
    if (f.fn == &fn) {
      std::string chain;
      for (const Frame &g : kernelState->frames)
        chain += g.fn->name + " -> ";
      diags.error(e.loc(), "recursive call to fn '" + fn.name + "' (" + chain +
                               fn.name + "); fn calls are inlined, so "
                               "recursion is not allowed");
      diags.note(fn.loc, "'" + fn.name + "' is defined here");
      return false;
    }
  if (!e.hasCallArgs) {
    diags.error(e.loc(), "fn '" + fn.name + "' must be called with (...)");
    return false;
  }
  if (!e.namedArgs.empty()) {
    diags.error(e.namedArgs[0].loc, "fn arguments are positional");
    return false;
  }
  if (e.templateArgs.size() > fn.templateParams.size()) {
    diags.error(e.loc(), "fn '" + fn.name + "' takes " +
                             std::to_string(fn.templateParams.size()) +
                             " template arguments, but " +
                             std::to_string(e.templateArgs.size()) +
                             " were given");
    return false;
  }
  if (e.operands.size() != fn.params.size()) {
    diags.error(e.loc(), "fn '" + fn.name + "' takes " +
                             std::to_string(fn.params.size()) +
                             " arguments, but " +
                             std::to_string(e.operands.size()) + " were given");
    diags.note(fn.loc, "'" + fn.name + "' is defined here");
    return false;
  }
  return true;
}

std::optional<std::vector<Val>> Sema::explicitTemplateArgs(const Function &fn,
                                                           const Expr &e) {
  std::vector<Val> explicitArgs;
  for (size_t i = 0; i < e.templateArgs.size(); ++i) {
    const TemplateParam &tp = fn.templateParams[i];
    const Expr &arg = *e.templateArgs[i];
    if (tp.kind == TemplateKind::DType) {
      auto dt = evalDType(arg);
      if (!dt)
        return std::nullopt;
      explicitArgs.push_back(Val::dtype(*dt));
      continue;
    }
    std::optional<Val> c = tryConst(arg);
    bool good = c && (tp.kind == TemplateKind::Int ? c->kind == Val::CInt
                                                   : c->kind == Val::CBool);
    if (!good) {
      diags.error(arg.loc(),
                  "template argument '" + src(arg) + "' for '" + tp.name +
                      "' must be a compile-time " +
                      (tp.kind == TemplateKind::Int ? "int" : "bool"));
      return std::nullopt;
    }
    explicitArgs.push_back(*c);
  }
  return explicitArgs;
}

bool Sema::bindFnTemplateParams(const Function &fn, const Expr &e,
                                llvm::ArrayRef<Val> explicitArgs,
                                llvm::ArrayRef<Val> args) {
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
          Origin origin =
              d < arg.ty.origins.size() ? arg.ty.origins[d] : Origin();
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
      return false;
    }
    std::optional<Val> v = tp.kind == TemplateKind::DType
                               ? std::optional<Val>()
                               : tryConst(*tp.defaultValue);
    if (tp.kind == TemplateKind::DType)
      if (auto dt = evalDType(*tp.defaultValue))
        v = Val::dtype(*dt);
    if (!v) {
      if (!findUndefined(*tp.defaultValue))
        diags.error(tp.defaultValue->loc(),
                    "the default of '" + tp.name + "' must be compile-time");
      return false;
    }
    bind(tp.name, *v, tp.loc);
    bound.insert(tp.name);
  }
  return true;
}

bool Sema::bindFnParams(const Function &fn, const Expr &e,
                        llvm::ArrayRef<Val> args) {
  // A name in the types that is no template parameter would otherwise be
  // only an undefined name, with no word on how fn templates are declared.
  bool namesBound = llvm::all_of(
      fn.params, [&](const Param &p) { return checkFnTypeNames(fn, *p.type); });
  if (!namesBound)
    return false;
  for (size_t i = 0; i < fn.params.size(); ++i) {
    const Param &p = fn.params[i];
    std::optional<Ty> ty = resolveType(*p.type);
    if (!ty)
      return false;
    Val v = coerce(args[i], *ty, e.operands[i]->loc(),
                   "argument '" + p.name + "' of fn '" + fn.name + "'", p.loc);
    if (!v.ok())
      return false;
    if (ty->isTile() && v.kind == Val::Runtime &&
        args[i].kind == Val::Runtime && args[i].ty.shape == ty->shape)
      v.ty.origins = args[i].ty.origins;
    bind(p.name, v, p.loc);
  }
  return true;
}

Val Sema::callFunction(const Function &fn, const Expr &e) {
  if (!checkCall(fn, e))
    return Val::invalid();
  // Arguments and explicit template arguments, in the caller's scope.
  std::optional<std::vector<Val>> explicitArgs = explicitTemplateArgs(fn, e);
  if (!explicitArgs)
    return Val::invalid();
  std::vector<Val> args;
  for (const ExprPtr &arg : e.operands) {
    Val v = eval(*arg);
    if (!v.ok())
      return v;
    if (v.kind == Val::Tensor || v.kind == Val::Tuple || v.kind == Val::DType ||
        v.kind == Val::Void)
      return error(arg->loc(),
                   "an fn argument must be a scalar, a tile or a pipeline");
    args.push_back(v);
  }
  // The callee sees only its own template parameters and parameters.
  std::deque<llvm::StringMap<Binding>> saved;
  std::swap(saved, kernelState->scopes);
  kernelState->scopes.emplace_back();
  llvm::scope_exit restore([&] { std::swap(saved, kernelState->scopes); });
  if (!bindFnTemplateParams(fn, e, *explicitArgs, args) ||
      !bindFnParams(fn, e, args))
    return Val::invalid();
  if (kernelState->frames.size() >= 64)
    return error(e.loc(), "fn calls nest too deeply (more than 64)");
  Frame frame;
  frame.fn = &fn;
  frame.callLoc = e.loc();
  kernelState->frames.push_back(frame);
  kernelState->scopes.emplace_back();
  stmts(fn.body);
  kernelState->scopes.pop_back();
  Frame done = kernelState->frames.back();
  kernelState->frames.pop_back();
  if (fn.result && !done.returned && !kernelState->aborted) {
    diags.error(fn.loc, "fn '" + fn.name + "' must end with 'return' of its "
                        "result on every compile-time path");
    diags.note(e.loc(), "called here");
    return Val::invalid();
  }
  return fn.result ? done.result : Val::voidVal();
}
