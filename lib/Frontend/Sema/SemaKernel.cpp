//===- SemaKernel.cpp - Kernels -------------------------------------------===//
//
// A kernel's steps in order (Sema::kernel), its launch description (grid,
// requires, flops, bytes rendered for the bundle), the parameter-space and
// shared-memory budgets, and the pipeline counting rule.
//
//===----------------------------------------------------------------------===//

#include "Sema.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/ScopeExit.h"

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

void Sema::checkParamBytes(const Kernel &k, const KernelSignature &sig) {
  // The kernel's PTX signature: each parameter in order, naturally aligned
  // (pointers and i64 take 8 bytes; i32, f32 and bool 4), then one i32 per
  // size variable, then one i64 per stride of a strided tensor.
  size_t numParams = sig.params.size(), numSizeVars = sig.sizeVarOrder.size(),
         numStrides = sig.numStrides();
  int64_t bytes = 0;
  auto add = [&](int64_t size) { bytes = llvm::alignTo(bytes, size) + size; };
  for (const ParamInfo &p : sig.params)
    add(p.ty.kind == Ty::Tensor || p.ty.dt == DT::I64 ? 8 : 4);
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
  kernelState->sharedBytes += bytes;
  if (kernelState->sharedBytes > limit && !kernelState->sharedReported) {
    kernelState->sharedReported = true;
    diags.error(l, "shared memory exceeded: " + what +
                       ", bringing the kernel's total to " +
                       std::to_string(kernelState->sharedBytes) +
                       " bytes, over the " + std::to_string(limit) +
                       " bytes available on " + options.target.chip +
                       "; use fewer stages or smaller blocks");
  }
}

void Sema::countPipelines(const std::vector<Effect> &list,
                          std::map<int, int> &state) {
  for (const Effect &e : list) {
    switch (e.kind) {
    case Effect::Push: {
      int &n = state[e.pipe];
      const PipeInfo &p = kernelState->pipes[e.pipe];
      if (n + 1 > (int)p.stages) {
        if (kernelState->reportedPipeErrors.insert(e.loc.offset).second) {
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
      const PipeInfo &p = kernelState->pipes[e.pipe];
      if (n == 0) {
        if (kernelState->reportedPipeErrors.insert(e.loc.offset).second) {
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
  if (e.kind == ExprKind::Name && (kernelState->sizeVars.contains(e.name) ||
                                   kernelState->scalarParams.contains(e.name)))
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
    if (kernelState->sizeVars.contains(e.name) ||
        kernelState->scalarParams.contains(e.name))
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
    // A side a template parameter fixes decides `&&` and `||` or drops out:
    // `GROUPED || H == HKV` reads `H == HKV` when GROUPED is false.
    if (op == Tok::AmpAmp || op == Tok::PipePipe)
      for (unsigned side : {0u, 1u})
        if (auto c = tryConst(*e.operands[side]); c && c->kind == Val::CBool) {
          if (c->b == (op == Tok::AmpAmp))
            return renderLaunch(*e.operands[1 - side], parentPrec, right);
          return std::string(c->b ? "1" : "0");
        }
    // An identity a template parameter makes drops out too: `x * 1`,
    // `x / 1`, `x + 0`, `x - 0` (`cdiv(T, CHUNK) * (SPLIT ? 4 : 1)` reads
    // `cdiv(T, CHUNK)` when SPLIT is false).
    for (unsigned side : {0u, 1u}) {
      auto c = tryConst(*e.operands[side]);
      if (!c || c->kind != Val::CInt)
        continue;
      bool identity = (op == Tok::Star && c->i == 1) ||
                      (op == Tok::Plus && c->i == 0) ||
                      (side == 1 && op == Tok::Slash && c->i == 1) ||
                      (side == 1 && op == Tok::Minus && c->i == 0);
      if (identity && !tryConst(*e.operands[1 - side]))
        return renderLaunch(*e.operands[1 - side], parentPrec, right);
    }
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

void Sema::setWarps(const Kernel &k, mlir::func::FuncOp func) {
  if (k.warps) {
    auto w = evalConstInt(*k.warps, "'warps'");
    if (w && *w != 1 && *w != 2 && *w != 4 && *w != 8 && *w != 16)
      diags.error(k.warps->loc(),
                  "warps must be 1, 2, 4, 8 or 16, got " + std::to_string(*w));
    else if (w)
      kernelState->warps = *w;
  }
  func->setAttr(tl::TileDialect::kWarpsAttrName,
                builder.getI32IntegerAttr(kernelState->warps));
}

void Sema::setBlocksPerSm(const Kernel &k, mlir::func::FuncOp func) {
  if (!k.blocksPerSm)
    return;
  auto blocks = evalConstInt(*k.blocksPerSm, "'blocks_per_sm'");
  int64_t most =
      std::min<int64_t>(tl::TileDialect::kMaxBlocksPerSm,
                        tl::TileDialect::kMaxWarpsPerSm / kernelState->warps);
  if (blocks && (*blocks < 1 || *blocks > most))
    diags.error(
        k.blocksPerSm->loc(),
        "blocks_per_sm must be 1 to " + std::to_string(most) +
            " for a kernel of " + std::to_string(kernelState->warps) +
            " warps (" + std::to_string(tl::TileDialect::kMaxWarpsPerSm) +
            " warps per multiprocessor), got " + std::to_string(*blocks));
  else if (blocks)
    func->setAttr(tl::TileDialect::kBlocksPerSmAttrName,
                  builder.getI32IntegerAttr(*blocks));
}

void Sema::setGrid(const Kernel &k, mlir::func::FuncOp func) {
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
}

void Sema::setRequires(const Kernel &k, const KernelSignature &sig,
                       mlir::func::FuncOp func) {
  llvm::SmallVector<mlir::Attribute> conditions;
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
    // A condition the template parameters make true holds at every launch.
    if (auto text = renderLaunch(*r, 0, false); text && *text != "1")
      conditions.push_back(builder.getStringAttr(*text));
  }
  func->setAttr(tl::TileDialect::kRequiresAttrName,
                builder.getArrayAttr(conditions));
  // `requires N % 16 == 0` lets every access through N be vectorized.
  std::map<std::string, int64_t> divisors;
  for (const ExprPtr &r : k.requires_)
    collectDivisibility(*r, divisors);
  size_t numParams = sig.params.size();
  for (auto [i, var] : llvm::enumerate(sig.sizeVarOrder))
    if (int64_t divisor = divisors[var]; divisor > 1)
      func.setArgAttr(numParams + i, tl::TileDialect::kDivisibilityAttrName,
                      builder.getI64IntegerAttr(divisor));
}

void Sema::describeLaunch(const Kernel &k, const KernelSignature &sig,
                          mlir::func::FuncOp func,
                          mlir::DictionaryAttr templateValues) {
  func->setAttr(tl::TileDialect::kKernelAttrName, builder.getUnitAttr());
  if (k.exactMath)
    func->setAttr(tl::TileDialect::kExactMathAttrName, builder.getUnitAttr());
  setWarps(k, func);
  setBlocksPerSm(k, func);
  setGrid(k, func);
  setRequires(k, sig, func);
  if (k.flops)
    if (auto text = renderLaunch(*k.flops, 0, false))
      func->setAttr(tl::TileDialect::kFlopsAttrName,
                    builder.getStringAttr(*text));
  if (k.bytes)
    if (auto text = renderLaunch(*k.bytes, 0, false))
      func->setAttr(tl::TileDialect::kBytesAttrName,
                    builder.getStringAttr(*text));
  func->setAttr(tl::TileDialect::kTemplateAttrName, templateValues);
}

void Sema::elaborateBody(const Kernel &k) {
  std::vector<Effect> top;
  kernelState->effects = &top;
  ScopeGuard scope(*this);
  if (contains(k.body, StmtKind::Return))
    bind("$returned",
         Val::runtime(
             mlir::arith::ConstantIntOp::create(builder, loc(k.loc), 0, 1),
             Ty::scalar(DT::I1)),
         k.loc, /*isVar=*/true);
  stmts(k.body);
  kernelState->effects = nullptr;
  mlir::func::ReturnOp::create(builder, loc(k.loc));
  std::map<int, int> outstanding;
  countPipelines(top, outstanding);
}

void Sema::setArgAccess(const KernelSignature &sig, mlir::func::FuncOp func) {
  for (auto [i, p] : llvm::enumerate(sig.params)) {
    if (p.ty.kind != Ty::Tensor)
      continue;
    const TensorParam *t = nullptr;
    for (const TensorParam &candidate : kernelState->tensors)
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
}

void Sema::kernel(const Kernel &k) {
  // Everything this kernel binds and counts is new, and goes when it is
  // done, whichever way it ends.
  kernelState.emplace();
  kernelState->scopes.emplace_back();
  builder.clearInsertionPoint();
  llvm::scope_exit done([&] {
    builder.clearInsertionPoint();
    kernelState.reset();
  });
  unsigned errorsBefore = diags.getNumErrors();
  mlir::DictionaryAttr templateValues = bindTemplateParams(k);
  KernelSignature sig;
  declareParams(k, sig);
  bool paramsOk =
      llvm::all_of(sig.params, [](const ParamInfo &p) { return p.ok; });
  if (!paramsOk || diags.getNumErrors() != errorsBefore)
    return;
  checkParamBytes(k, sig);
  mlir::func::FuncOp func = createKernelFunc(k, sig);
  if (!bindParams(k, sig, func))
    return;
  describeLaunch(k, sig, func, templateValues);
  elaborateBody(k);
  setArgAccess(sig, func);
}
