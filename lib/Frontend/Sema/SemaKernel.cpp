//===- SemaKernel.cpp - Kernels
//---------------------------------------------===//
//
// A kernel's template values, parameters and size variables, its launch
// description (grid, requires, flops, bytes rendered for the bundle), the
// parameter-space and shared-memory budgets, and the pipeline counting rule.
//
//===----------------------------------------------------------------------===//

#include "Sema.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace tegula;
using namespace tegula::frontend;
using namespace tegula::frontend::sema;

/// Size variables a requires condition makes multiples of a power of two:
/// `N % C == 0` (either side of `==`), and conjunctions of such.
void Sema::collectDivisibility(const Expr &e,
                               std::map<std::string, int64_t> &divisors) {
  if (e.kind != ExprKind::Binary || e.operands.size() != 2)
    return;
  if (e.op == Tok::AmpAmp) {
    collectDivisibility(*e.operands[0], divisors);
    collectDivisibility(*e.operands[1], divisors);
    return;
  }
  if (e.op != Tok::EqEq)
    return;
  auto isZero = [&](const Expr &x) {
    std::optional<Val> c = tryConst(x);
    return c && c->kind == Val::CInt && c->i == 0;
  };
  const Expr *rem = isZero(*e.operands[1])   ? e.operands[0].get()
                    : isZero(*e.operands[0]) ? e.operands[1].get()
                                             : nullptr;
  if (!rem || rem->kind != ExprKind::Binary || rem->op != Tok::Percent ||
      rem->operands[0]->kind != ExprKind::Name)
    return;
  std::optional<Val> modulus = tryConst(*rem->operands[1]);
  if (!modulus || modulus->kind != Val::CInt || modulus->i <= 0)
    return;
  int64_t power = modulus->i & -modulus->i;
  int64_t &divisor = divisors[rem->operands[0]->name];
  divisor = std::max(divisor, power);
}

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
                                  std::to_string(axis) + " is " + value + " (" +
                                  renderValues(extent) + "); it must be " +
                                  range);
}

void Sema::checkParamBytes(const Kernel &k, size_t numParams,
                           size_t numSizeVars, size_t numStrides,
                           llvm::function_ref<int64_t(size_t)> paramBytes) {
  // The kernel's PTX signature: each parameter in order, naturally aligned
  // (pointers and i64 take 8 bytes; i32, f32 and bool 4), then one i32 per
  // size variable, then one i64 per stride of a strided tensor.
  int64_t bytes = 0;
  auto add = [&](int64_t size) { bytes = llvm::alignTo(bytes, size) + size; };
  for (size_t i = 0; i < numParams; ++i)
    add(paramBytes(i));
  for (size_t i = 0; i < numSizeVars; ++i)
    add(4);
  for (size_t i = 0; i < numStrides; ++i)
    add(8);
  int64_t limit = targetInfo().maxParamBytes;
  if (bytes > limit)
    diags.error(k.loc,
                "kernel '" + k.name + "' takes " + std::to_string(bytes) +
                    " bytes of parameters (" + std::to_string(numParams) +
                    " parameters and " + std::to_string(numSizeVars) +
                    " size variables" +
                    (numStrides ? ", " + std::to_string(numStrides) + " strides"
                                : std::string()) +
                    "); a kernel may take at most " + std::to_string(limit) +
                    " bytes");
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
                       options.target.chip +
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
      diags.error(e.loc(), "'" + e.name +
                               "' cannot appear in a launch "
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
      diags.error(e.opLoc,
                  "operator '" + opText(op) +
                      "' is not allowed in a "
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
      diags.error(e.opLoc, "division by zero in launch expression '" + src(e) +
                               "' (" + renderValues(e) + ")");
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
    diags.error(e.loc(),
                "'" + src(e) +
                    "' is not allowed in a launch "
                    "expression; use + - * / % comparisons && || cdiv "
                    "min max over size variables, scalar parameters and "
                    "template parameters");
    return std::nullopt;
  }
}

std::optional<std::string>
Sema::sizeExpression(const Expr &dim, const std::string &tensor,
                     const llvm::StringMap<SourceLoc> &paramNames,
                     llvm::SmallVectorImpl<std::string> &order,
                     llvm::StringMap<const Expr *> &firstUse) {
  llvm::SmallVector<const Expr *> unbound;
  std::function<void(const Expr &)> collect = [&](const Expr &e) {
    if (e.kind == ExprKind::Name && !lookup(e.name))
      unbound.push_back(&e);
    for (const ExprPtr &operand : e.operands)
      if (operand)
        collect(*operand);
  };
  collect(dim);
  if (unbound.empty())
    return std::nullopt;
  std::string what = "dimension '" + src(dim) + "' of tensor '" + tensor + "'";
  for (const Expr *name : unbound)
    if (paramNames.count(name->name)) {
      diags.error(name->loc(), what + " names the parameter '" + name->name +
                                   "'; size variables must be new names, "
                                   "bound from the tensor at launch");
      diags.note(paramNames.lookup(name->name),
                 "'" + name->name + "' is declared here");
      return std::string();
    }
  // Launch computes the dimension from its variables; + - * keep that
  // exact, and the variables stay bound by dimensions of their own.
  std::function<const Expr *(const Expr &)> outside =
      [&](const Expr &e) -> const Expr * {
    if (e.kind == ExprKind::Int || e.kind == ExprKind::Name)
      return nullptr;
    if (e.kind != ExprKind::Binary ||
        (e.op != Tok::Plus && e.op != Tok::Minus && e.op != Tok::Star))
      return &e;
    for (const ExprPtr &operand : e.operands)
      if (const Expr *bad = outside(*operand))
        return bad;
    return nullptr;
  };
  if (const Expr *bad = outside(dim)) {
    bool isOp = bad->kind == ExprKind::Binary || bad->kind == ExprKind::Unary;
    diags.error(isOp && bad->kind == ExprKind::Binary ? bad->opLoc : bad->loc(),
                what + " uses '" + (isOp ? opText(bad->op) : src(*bad)) +
                    "'; a dimension over size variables may only add, "
                    "subtract and multiply them and compile-time values "
                    "(M + 1, 2 * N, M * N)");
    return std::string();
  }
  for (const Expr *name : unbound) {
    if (!llvm::is_contained(order, name->name)) {
      order.push_back(name->name);
      sizeVars.insert(name->name);
    }
    firstUse.try_emplace(name->name, &dim);
  }
  return renderLaunch(dim, 0, false).value_or("");
}

/// A dimension computed from size variables (ParamInfo::dimSizeVar).
constexpr int kSizeExpression = -2;

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
  reportedFnTypeNames.clear();
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
      diags.error(tp.loc,
                  "redefinition of template parameter '" + tp.name + "'");
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
          v->origin = {"template parameter " + tp.name + " = " +
                           std::to_string(v->i) + " (from -D " + name + "=" +
                           text + ")",
                       tp.loc};
        }
      }
    if (!v && tp.defaultValue) {
      std::optional<Val> d = tryConst(*tp.defaultValue);
      bool good =
          d && ((tp.kind == TemplateKind::Int && d->kind == Val::CInt) ||
                (tp.kind == TemplateKind::Bool && d->kind == Val::CBool) ||
                (tp.kind == TemplateKind::DType && d->kind == Val::DType));
      if (!good) {
        if (!findUndefined(*tp.defaultValue))
          diags.error(tp.defaultValue->loc(),
                      "the default of template parameter '" + tp.name +
                          "' must be a compile-time " + kindName +
                          " over earlier template parameters");
        v = Val::invalid();
      } else {
        v = *d;
        if (v->kind == Val::CInt)
          v->origin = {tp.name + " = " +
                           (d->origin.text.empty() ? std::to_string(d->i)
                                                   : d->origin.text),
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
    /// Index into sizeVarOrder, -1 for a fixed dim, kSizeExpression.
    llvm::SmallVector<int> dimSizeVar;
    bool ok = true;
  };
  std::vector<ParamInfo> params;
  llvm::StringMap<SourceLoc> paramNames;
  // Size variables seen as a whole dimension, and the first dimension
  // expression (2 * N) each appears in.
  llvm::StringSet<> boundAlone;
  llvm::StringMap<const Expr *> inExpression;
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
                                         "or bool, not " +
                                             llvm::Twine(dtName(*dt)));
        dt.reset();
      }
      ParamInfo info{
          &p, Ty::scalar(dt.value_or(DT::I32)), {}, {}, dt.has_value()};
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
                        (p.type->kind == TypeKind::Tile       ? "tile"
                         : p.type->kind == TypeKind::Pipeline ? "pipeline"
                                                              : "tuple"));
      continue;
    }
    ParamInfo info{&p, Ty(), {}, {}, true};
    auto dt = evalDType(*p.type->dtype);
    info.ok = dt.has_value();
    info.ty.kind = Ty::Tensor;
    info.ty.dt = dt.value_or(DT::F32);
    info.ty.isMutable = p.type->isMutable;
    info.ty.isStrided = p.type->isStrided;
    if (p.type->dims.empty()) {
      diags.error(p.type->range.begin,
                  "tensor '" + p.name + "' needs at least one dimension");
      info.ok = false;
    }
    for (const ExprPtr &d : p.type->dims) {
      Binding *b = d->kind == ExprKind::Name ? lookup(d->name) : nullptr;
      if (d->kind == ExprKind::Name && !b) {
        if (scalarParams.contains(d->name) || paramNames.count(d->name)) {
          diags.error(d->loc(),
                      "dimension '" + d->name + "' of tensor '" + p.name +
                          "' names the parameter '" + d->name +
                          "'; size variables must be "
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
        boundAlone.insert(d->name);
        info.ty.shape.push_back(mlir::ShapedType::kDynamic);
        info.dims.push_back(builder.getStringAttr(d->name));
        info.dimSizeVar.push_back(index);
        continue;
      }
      if (std::optional<std::string> text = sizeExpression(
              *d, p.name, paramNames, sizeVarOrder, inExpression)) {
        info.ok = info.ok && !text->empty();
        info.ty.shape.push_back(mlir::ShapedType::kDynamic);
        info.dims.push_back(builder.getStringAttr(*text));
        info.dimSizeVar.push_back(kSizeExpression);
        continue;
      }
      Origin origin;
      auto v = evalConstInt(*d, "a fixed tensor dimension", &origin);
      if (!v) {
        info.ok = false;
        continue;
      }
      // An empty tensor has no elements to index: every access would be
      // masked away (a size variable may still be 0 at launch).
      if (*v < 1) {
        std::string text = src(*d), value = std::to_string(*v);
        diags.error(d->loc(),
                    "dimension " + std::to_string(info.ty.shape.size()) +
                        " of tensor '" + p.name + "' is " +
                        (text == value ? value : text + " = " + value) +
                        "; a fixed dimension must be at least 1");
        if (!origin.text.empty() && origin.loc.offset != d->loc().offset)
          diags.note(origin.loc, "the extent comes from " + origin.text);
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
  // Launch binds a size variable from a dimension that is just its name.
  for (const std::string &var : sizeVarOrder) {
    if (boundAlone.contains(var))
      continue;
    const Expr *dim = inExpression.lookup(var);
    diags.error(dim->loc(),
                "size variable '" + var + "' appears only inside dimension '" +
                    src(*dim) +
                    "', and launch binds a size variable only "
                    "from a dimension that is just its name; give some "
                    "tensor the dimension '" +
                    var +
                    "', or make this "
                    "dimension a new size variable and compute '" +
                    var + "' from it in the body");
  }
  // Keep declaration order.
  std::sort(
      params.begin(), params.end(),
      [](const ParamInfo &a, const ParamInfo &b) { return a.param < b.param; });
  bool paramsOk = llvm::all_of(params, [](const ParamInfo &p) { return p.ok; });
  if (!paramsOk || diags.getNumErrors() != errorsBefore)
    return;
  size_t numStrides = 0;
  for (const ParamInfo &p : params)
    if (p.ty.kind == Ty::Tensor && p.ty.isStrided)
      numStrides += p.ty.shape.size();
  checkParamBytes(k, params.size(), sizeVarOrder.size(), numStrides,
                  [&](size_t i) {
                    const Ty &ty = params[i].ty;
                    return ty.kind == Ty::Tensor || ty.dt == DT::I64 ? 8 : 4;
                  });

  for (const ParamInfo &p : params)
    argTypes.push_back(p.ty.kind == Ty::Tensor
                           ? (mlir::Type)tl::PtrType::get(ctx, mlirDT(p.ty.dt))
                           : mlirDT(p.ty.dt));
  for (size_t i = 0; i < sizeVarOrder.size(); ++i)
    argTypes.push_back(builder.getI32Type());
  // Then every stride of every strided tensor, in elements (tools.md).
  size_t firstStride = argTypes.size();
  argTypes.append(numStrides, builder.getI64Type());
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
  size_t nextStride = firstStride;
  for (auto [i, p] : llvm::enumerate(params)) {
    mlir::Value arg = entry->getArgument(i);
    func.setArgAttr(i, tl::TileDialect::kArgNameAttrName,
                    builder.getStringAttr(p.param->name));
    if (p.ty.kind != Ty::Tensor) {
      bind(p.param->name, Val::runtime(arg, p.ty), p.param->loc);
      continue;
    }
    func.setArgAttr(i, tl::TileDialect::kArgDimsAttrName,
                    builder.getArrayAttr(p.dims));
    llvm::SmallVector<mlir::Value> dynamic;
    for (auto [dim, index] : llvm::enumerate(p.dimSizeVar)) {
      if (index >= 0)
        dynamic.push_back(entry->getArgument(params.size() + index));
      if (index != kSizeExpression)
        continue;
      // 2 * N from the bound N, in i32: launch checks it fits.
      Val extent = eval(*p.param->type->dims[dim]);
      if (!extent.ok() || extent.kind != Val::Runtime)
        return;
      dynamic.push_back(extent.v);
    }
    llvm::SmallVector<mlir::Value> strides;
    if (p.ty.isStrided)
      for (size_t dim = 0; dim < p.ty.shape.size(); ++dim, ++nextStride) {
        strides.push_back(entry->getArgument(nextStride));
        func.setArgAttr(nextStride, tl::TileDialect::kStrideOfAttrName,
                        builder.getStringAttr(p.param->name));
      }
    auto type = tl::GlobalTensorType::get(ctx, p.ty.shape, mlirDT(p.ty.dt),
                                          p.ty.isMutable, p.ty.isStrided);
    mlir::Value tensor = tl::MakeTensorOp::create(builder, loc(p.param->loc),
                                                  type, arg, dynamic, strides);
    Val v;
    v.kind = Val::Tensor;
    v.index = tensors.size();
    v.ty = p.ty;
    TensorParam param;
    param.name = p.param->name;
    param.loc = p.param->loc;
    param.ty = p.ty;
    param.value = tensor;
    for (const ExprPtr &d : p.param->type->dims)
      param.dimTexts.push_back(diags.slice(d->range).str());
    tensors.push_back(std::move(param));
    bind(p.param->name, v, p.param->loc);
  }

  // Launch description.
  func->setAttr(tl::TileDialect::kKernelAttrName, builder.getUnitAttr());
  if (k.warps) {
    auto w = evalConstInt(*k.warps, "'warps'");
    if (w && *w != 1 && *w != 2 && *w != 4 && *w != 8 && *w != 16)
      diags.error(k.warps->loc(),
                  "warps must be 1, 2, 4, 8 or 16, got " + std::to_string(*w));
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
  llvm::SmallVector<mlir::Attribute>
  requires;
  for (const ExprPtr &r : k.requires_) {
    if (auto c = tryConst(*r)) {
      if (c->kind != Val::CBool) {
        diags.error(r->loc(), "a requires condition must be a bool");
        continue;
      }
      if (!c->b) {
        std::string values = renderValues(*r);
        diags.error(
            r->loc(),
            "requirement '" + src(*r) + "' of kernel '" + k.name + "' failed" +
                (values != src(*r) ? " (" + values + ")" : std::string()) +
                "; choose template values that satisfy it");
      }
      continue;
    }
    if (auto text = renderLaunch(*r, 0, false))
    requires.push_back(builder.getStringAttr(*text));
  }
  func->setAttr(tl::TileDialect::kRequiresAttrName,
                builder.getArrayAttr(requires));
  // `requires N % 16 == 0` lets every access through N be vectorized.
  std::map<std::string, int64_t> divisors;
  for (const ExprPtr &r : k.requires_)
    collectDivisibility(*r, divisors);
  for (size_t i = 0; i < sizeVarOrder.size(); ++i)
    if (int64_t divisor = divisors[sizeVarOrder[i]]; divisor > 1)
      func.setArgAttr(params.size() + i, tl::TileDialect::kDivisibilityAttrName,
                      builder.getI64IntegerAttr(divisor));
  if (k.flops)
    if (auto text = renderLaunch(*k.flops, 0, false))
      func->setAttr(tl::TileDialect::kFlopsAttrName,
                    builder.getStringAttr(*text));
  if (k.bytes)
    if (auto text = renderLaunch(*k.bytes, 0, false))
      func->setAttr(tl::TileDialect::kBytesAttrName,
                    builder.getStringAttr(*text));
  func->setAttr(tl::TileDialect::kTemplateAttrName,
                builder.getDictionaryAttr(templateAttrs));

  // The body.
  std::vector<Effect> top;
  effects = &top;
  scopes.emplace_back();
  kernelReturned = blockExited = false;
  loops.clear();
  if (contains(k.body, StmtKind::Return))
    bind("$returned",
         Val::runtime(
             mlir::arith::ConstantIntOp::create(builder, loc(k.loc), 0, 1),
             Ty::scalar(DT::I1)),
         k.loc, /*isVar=*/true);
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
