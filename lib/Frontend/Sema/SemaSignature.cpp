//===- SemaSignature.cpp - A kernel's template values and parameters -----===//
//
// The first steps of Sema::kernel: template values (-D, defaults), scalar
// and tensor parameters with their size variables and fixed dimensions,
// and the func they become, its arguments bound in the kernel's scope.
//
//===----------------------------------------------------------------------===//

#include "Sema.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace tegula;
using namespace tegula::frontend;
using namespace tegula::frontend::sema;

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

std::optional<Val> Sema::definedValue(const TemplateParam &tp) {
  std::optional<Val> v;
  for (const auto &[name, text] : options.defines)
    if (name == tp.name) {
      usedDefines.insert(name);
      v = parseDefine(text, tp.kind);
      if (!v) {
        diags.error(tp.loc, "-D " + name + "=" + text + " is not a valid " +
                                templateKindName(tp.kind) +
                                " for template parameter '" + tp.name + "'");
        v = Val::invalid();
      } else if (v->kind == Val::CInt) {
        v->origin = {"template parameter " + tp.name + " = " +
                         std::to_string(v->i) + " (from -D " + name + "=" +
                         text + ")",
                     tp.loc};
      }
    }
  return v;
}

Val Sema::defaultValue(const TemplateParam &tp) {
  std::optional<Val> d = tryConst(*tp.defaultValue);
  bool good = d && ((tp.kind == TemplateKind::Int && d->kind == Val::CInt) ||
                    (tp.kind == TemplateKind::Bool && d->kind == Val::CBool) ||
                    (tp.kind == TemplateKind::DType && d->kind == Val::DType));
  if (!good) {
    if (!findUndefined(*tp.defaultValue))
      diags.error(tp.defaultValue->loc(),
                  "the default of template parameter '" + tp.name +
                      "' must be a compile-time " + templateKindName(tp.kind) +
                      " over earlier template parameters");
    return Val::invalid();
  }
  Val v = *d;
  if (v.kind == Val::CInt)
    v.origin = {
        tp.name + " = " +
            (d->origin.text.empty() ? std::to_string(d->i) : d->origin.text),
        tp.loc};
  return v;
}

mlir::DictionaryAttr Sema::bindTemplateParams(const Kernel &k) {
  llvm::SmallVector<mlir::NamedAttribute> attrs;
  for (const TemplateParam &tp : k.templateParams) {
    if (lookup(tp.name)) {
      diags.error(tp.loc,
                  "redefinition of template parameter '" + tp.name + "'");
      continue;
    }
    // -D, else the default, else an error.
    std::optional<Val> v = definedValue(tp);
    if (!v && tp.defaultValue)
      v = defaultValue(tp);
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
      attrs.push_back(builder.getNamedAttr(tp.name, attr));
    }
    bind(tp.name, *v, tp.loc);
  }
  return builder.getDictionaryAttr(attrs);
}

std::optional<std::string> Sema::sizeExpression(const Expr &dim,
                                                const std::string &tensor,
                                                KernelSignature &sig) {
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
    if (sig.paramNames.count(name->name)) {
      diags.error(name->loc(), what + " names the parameter '" + name->name +
                                   "'; size variables must be new names, "
                                   "bound from the tensor at launch");
      diags.note(sig.paramNames.lookup(name->name),
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
    if (!llvm::is_contained(sig.sizeVarOrder, name->name)) {
      sig.sizeVarOrder.push_back(name->name);
      kernelState->sizeVars.insert(name->name);
    }
    sig.inExpression.try_emplace(name->name, &dim);
  }
  return renderLaunch(dim, 0, false).value_or("");
}

std::optional<int64_t> Sema::fixedTensorDim(const Param &p, const Expr &d,
                                            size_t index) {
  Origin origin;
  auto v = evalConstInt(d, "a fixed tensor dimension", &origin);
  if (!v)
    return std::nullopt;
  // An empty tensor has no elements to index: every access would be
  // masked away (a size variable may still be 0 at launch).
  if (*v < 1) {
    std::string text = src(d), value = std::to_string(*v);
    diags.error(d.loc(), "dimension " + std::to_string(index) + " of tensor '" +
                             p.name + "' is " +
                             (text == value ? value : text + " = " + value) +
                             "; a fixed dimension must be at least 1");
    if (!origin.text.empty() && origin.loc.offset != d.loc().offset)
      diags.note(origin.loc, "the extent comes from " + origin.text);
    return std::nullopt;
  }
  // Indices, size variables and bounds masks are i32.
  if (*v > INT32_MAX) {
    diags.error(d.loc(), "tensor dimension " + std::to_string(*v) +
                             " is more than 2^31 - 1 = 2147483647; "
                             "dimensions and indices are i32");
    return std::nullopt;
  }
  return v;
}

void Sema::declareTensorDim(const Param &p, const Expr &d, ParamInfo &info,
                            KernelSignature &sig) {
  Binding *b = d.kind == ExprKind::Name ? lookup(d.name) : nullptr;
  if (d.kind == ExprKind::Name && !b) {
    if (kernelState->scalarParams.contains(d.name) ||
        sig.paramNames.count(d.name)) {
      diags.error(d.loc(), "dimension '" + d.name + "' of tensor '" + p.name +
                               "' names the parameter '" + d.name +
                               "'; size variables must be "
                               "new names, bound from the tensor at launch");
      diags.note(sig.paramNames[d.name], "'" + d.name + "' is declared here");
      info.ok = false;
      return;
    }
    auto it = llvm::find(sig.sizeVarOrder, d.name);
    int index = it - sig.sizeVarOrder.begin();
    if (it == sig.sizeVarOrder.end()) {
      sig.sizeVarOrder.push_back(d.name);
      kernelState->sizeVars.insert(d.name);
    }
    sig.boundAlone.insert(d.name);
    info.ty.shape.push_back(mlir::ShapedType::kDynamic);
    info.dims.push_back(builder.getStringAttr(d.name));
    info.dimSizeVar.push_back(index);
    return;
  }
  if (std::optional<std::string> text = sizeExpression(d, p.name, sig)) {
    info.ok = info.ok && !text->empty();
    info.ty.shape.push_back(mlir::ShapedType::kDynamic);
    info.dims.push_back(builder.getStringAttr(*text));
    info.dimSizeVar.push_back(ParamInfo::kSizeExpression);
    return;
  }
  std::optional<int64_t> v = fixedTensorDim(p, d, info.ty.shape.size());
  if (!v) {
    info.ok = false;
    return;
  }
  info.ty.shape.push_back(*v);
  info.dims.push_back(builder.getI64IntegerAttr(*v));
  info.dimSizeVar.push_back(ParamInfo::kFixed);
}

void Sema::declareTensorParam(const Param &p, KernelSignature &sig) {
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
  for (const ExprPtr &d : p.type->dims)
    declareTensorDim(p, *d, info, sig);
  sig.params.push_back(info);
}

void Sema::checkSizeVarsBound(const KernelSignature &sig) {
  // Launch binds a size variable from a dimension that is just its name.
  for (const std::string &var : sig.sizeVarOrder) {
    if (sig.boundAlone.contains(var))
      continue;
    const Expr *dim = sig.inExpression.lookup(var);
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
}

void Sema::declareParams(const Kernel &k, KernelSignature &sig) {
  // Scalars first: size variables may not name scalar parameters.
  for (const Param &p : k.params) {
    if (sig.paramNames.count(p.name) || lookup(p.name)) {
      diags.error(p.loc, "redefinition of '" + p.name + "'");
      continue;
    }
    sig.paramNames[p.name] = p.loc;
    if (p.type->kind != TypeKind::Scalar)
      continue;
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
      kernelState->scalarParams.insert(p.name);
    sig.params.push_back(info);
  }
  for (const Param &p : k.params) {
    if (p.type->kind == TypeKind::Tensor) {
      declareTensorParam(p, sig);
      continue;
    }
    if (p.type->kind != TypeKind::Scalar)
      diags.error(p.type->range.begin,
                  "kernel parameters are scalars or tensors; '" + p.name +
                      "' cannot be a " +
                      (p.type->kind == TypeKind::Tile       ? "tile"
                       : p.type->kind == TypeKind::Pipeline ? "pipeline"
                                                            : "tuple"));
  }
  checkSizeVarsBound(sig);
  // Keep declaration order.
  std::sort(
      sig.params.begin(), sig.params.end(),
      [](const ParamInfo &a, const ParamInfo &b) { return a.param < b.param; });
}

size_t KernelSignature::numStrides() const {
  size_t n = 0;
  for (const ParamInfo &p : params)
    if (p.ty.kind == Ty::Tensor && p.ty.isStrided)
      n += p.ty.shape.size();
  return n;
}

mlir::func::FuncOp Sema::createKernelFunc(const Kernel &k,
                                          const KernelSignature &sig) {
  // The parameters, then one i32 per size variable, then every stride of
  // every strided tensor, in elements (tools.md).
  llvm::SmallVector<mlir::Type> argTypes;
  for (const ParamInfo &p : sig.params)
    argTypes.push_back(p.ty.kind == Ty::Tensor
                           ? (mlir::Type)tl::PtrType::get(ctx, mlirDT(p.ty.dt))
                           : mlirDT(p.ty.dt));
  for (size_t i = 0; i < sig.sizeVarOrder.size(); ++i)
    argTypes.push_back(builder.getI32Type());
  argTypes.append(sig.numStrides(), builder.getI64Type());
  auto func = mlir::func::FuncOp::create(builder, loc(k.loc), k.name,
                                         builder.getFunctionType(argTypes, {}));
  module->push_back(func);
  mlir::Block *entry = func.addEntryBlock();
  builder.setInsertionPointToStart(entry);
  return func;
}

bool Sema::bindTensorParam(const ParamInfo &p, size_t i,
                           const KernelSignature &sig, mlir::func::FuncOp func,
                           size_t &nextStride) {
  mlir::Block *entry = &func.getBody().front();
  mlir::Value arg = entry->getArgument(i);
  func.setArgAttr(i, tl::TileDialect::kArgDimsAttrName,
                  builder.getArrayAttr(p.dims));
  llvm::SmallVector<mlir::Value> dynamic;
  for (auto [dim, index] : llvm::enumerate(p.dimSizeVar)) {
    if (index >= 0)
      dynamic.push_back(entry->getArgument(sig.params.size() + index));
    if (index != ParamInfo::kSizeExpression)
      continue;
    // 2 * N from the bound N, in i32: launch checks it fits.
    Val extent = eval(*p.param->type->dims[dim]);
    if (!extent.ok() || extent.kind != Val::Runtime)
      return false;
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
  v.index = kernelState->tensors.size();
  v.ty = p.ty;
  TensorParam param;
  param.name = p.param->name;
  param.loc = p.param->loc;
  param.ty = p.ty;
  param.value = tensor;
  for (const ExprPtr &d : p.param->type->dims)
    param.dimTexts.push_back(diags.slice(d->range).str());
  kernelState->tensors.push_back(std::move(param));
  bind(p.param->name, v, p.param->loc);
  return true;
}

bool Sema::bindParams(const Kernel &k, const KernelSignature &sig,
                      mlir::func::FuncOp func) {
  mlir::Block *entry = &func.getBody().front();
  size_t numParams = sig.params.size();
  for (auto [i, name] : llvm::enumerate(sig.sizeVarOrder)) {
    mlir::Value arg = entry->getArgument(numParams + i);
    bind(name, Val::runtime(arg, Ty::scalar(DT::I32)), k.loc);
    func.setArgAttr(numParams + i, tl::TileDialect::kSizeVarAttrName,
                    builder.getStringAttr(name));
  }
  size_t nextStride = numParams + sig.sizeVarOrder.size();
  for (auto [i, p] : llvm::enumerate(sig.params)) {
    func.setArgAttr(i, tl::TileDialect::kArgNameAttrName,
                    builder.getStringAttr(p.param->name));
    if (p.ty.kind != Ty::Tensor) {
      bind(p.param->name, Val::runtime(entry->getArgument(i), p.ty),
           p.param->loc);
      continue;
    }
    if (!bindTensorParam(p, i, sig, func, nextStride))
      return false;
  }
  return true;
}
