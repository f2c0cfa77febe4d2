//===- SemaMemory.cpp - Tensor blocks, loads, stores, pipelines -------------===//
//
// T[I0, ..., In] blocks and their bounds masks, loads and stores, and the
// push/pop methods of pipelines.
//
//===----------------------------------------------------------------------===//

#include "Sema.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MathExtras.h"

#include <functional>

using namespace tegula;
using namespace tegula::frontend;
using namespace tegula::frontend::sema;

namespace tegula::frontend::sema {
/// A sum of runtime terms with integer coefficients plus a constant, used to
/// find slice lengths where the runtime parts of both ends cancel.
struct Linear {
  std::map<std::string, int64_t> terms;
  int64_t constant = 0;
  bool ok = true;
};
} // namespace tegula::frontend::sema

static std::string canonical(llvm::StringRef text) {
  std::string out;
  for (char c : text)
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
      out.push_back(c);
  return out;
}

std::optional<mlir::Value> Sema::evalMask(const Expr &e, const Block &b) {
  const NamedArg *arg = namedArg(e, "mask");
  if (!arg)
    return mlir::Value();
  Val m = eval(*arg->value);
  if (!m.ok())
    return std::nullopt;
  if (m.kind == Val::CBool)
    m = toRuntime(m, arg->loc, DT::I1);
  if (m.kind != Val::Runtime || m.ty.dt != DT::I1) {
    diags.error(arg->value->loc(), "the mask must be bool, but '" +
                                       src(*arg->value) + "' is " +
                                       (m.kind == Val::Runtime ? m.ty.str() : std::string("not a bool")));
    return std::nullopt;
  }
  Ty blockTy = Ty::tile(DT::I1, b.shape);
  auto s = broadcastShapes(m.ty, blockTy, arg->value->loc(), arg->value.get(), nullptr);
  if (!s)
    return std::nullopt;
  if (s->shape != blockTy.shape) {
    diags.error(arg->value->loc(), "the mask " + m.ty.str() +
                                       " does not broadcast to the block " +
                                       shapeStr(b.shape));
    return std::nullopt;
  }
  return broadcastTo(m.v, m.ty, b.shape, arg->value->loc());
}

std::optional<mlir::Value> Sema::evalOther(const Expr &e, const Block &b, DT dt) {
  const NamedArg *arg = namedArg(e, "other");
  if (!arg)
    return mlir::Value();
  Val o = eval(*arg->value);
  if (!o.ok())
    return std::nullopt;
  Ty blockTy = Ty::tile(dt, b.shape);
  if (o.kind == Val::Runtime && o.ty.isTile()) {
    auto s = broadcastShapes(o.ty, blockTy, arg->value->loc(), arg->value.get(), nullptr);
    if (!s)
      return std::nullopt;
  }
  Val v = coerce(o, blockTy, arg->value->loc(), "'other'", e.loc());
  if (!v.ok())
    return std::nullopt;
  return v.v;
}

/// "index 64", "indices 64 to 127".
static std::string indexSpan(int64_t first, int64_t last) {
  if (first == last)
    return "index " + std::to_string(first);
  return "indices " + std::to_string(first) + " to " + std::to_string(last);
}

bool Sema::checkIndexRange(const TensorParam &t, size_t dim, const Expr &ix,
                           std::optional<int64_t> start, int64_t length,
                           bool forStore, bool padded) {
  int64_t extent = t.ty.shape[dim];
  // Runtime extents are masked: the ragged tail is what masking is for.
  if (extent == mlir::ShapedType::kDynamic)
    return true;
  std::string extentText = std::to_string(extent);
  const std::string &written = t.dimTexts[dim];
  std::string where =
      "dimension " + std::to_string(dim) + " of '" + t.name +
      "', whose declared extent is " +
      (written == extentText ? extentText : written + " = " + extentText);
  std::string what =
      (ix.kind == ExprKind::Slice ? "slice '" : "index '") + src(ix) + "'";
  const char *masked =
      forStore ? "masked and not written" : "masked and read as 0";
  std::string padding = std::string(forStore ? "mask =" : "other = or mask =") +
                        " if the padding is meant";
  auto fail = [&](const std::string &message) {
    diags.error(ix.loc(), message);
    diags.note(t.loc, "'" + t.name + "' is declared here as tensor<" +
                          dtName(t.ty.dt) + ">[" +
                          llvm::join(t.dimTexts, ", ") + "]");
    return false;
  };
  if (!start) {
    // A runtime start: at least `length - extent` elements lie outside.
    if (padded || length < 2 * extent)
      return true;
    return fail(
        what + " has length " + std::to_string(length) + ", at least twice " +
        where + ": at least " + std::to_string(length - extent) +
        " of its elements are " + masked + "; use length " +
        std::to_string(llvm::PowerOf2Ceil(extent)) + ", or pass " + padding);
  }
  int64_t first = *start, end = 0;
  bool overflow = __builtin_add_overflow(first, length, &end);
  int64_t inFirst = std::max<int64_t>(first, 0);
  int64_t inEnd = overflow ? extent : std::min(end, extent);
  if (overflow || inEnd <= inFirst)
    return fail(what + " lies outside " + where + " (indices 0 to " +
                std::to_string(extent - 1) + "): " +
                (length == 1 ? "its element is " : "every element is ") +
                masked);
  if (first >= 0 && end <= extent)
    return true;
  // Partly outside: fine when the block rounds what lies inside up to a
  // power of two, or when other/mask says the padding is meant.
  int64_t inside = inEnd - inFirst;
  if (padded || inside * 2 > length)
    return true;
  std::string outside;
  if (first < 0)
    outside = indexSpan(first, -1);
  if (end > extent)
    outside += (outside.empty() ? "" : " and ") + indexSpan(extent, end - 1);
  return fail(what + " runs past " + where + ": " + outside + " are " + masked +
              "; a block of " + std::to_string(llvm::PowerOf2Ceil(inside)) +
              " covers the part inside, or pass " + padding);
}

Linear Sema::linearize(const Expr &x) {
  Linear lin;
  if (auto c = tryConst(x)) {
    if (c->kind == Val::CInt) {
      lin.constant = c->i;
      return lin;
    }
  }
  if (x.kind == ExprKind::Unary && x.op == Tok::Minus) {
    lin = linearize(*x.operands[0]);
    for (auto &term : lin.terms)
      term.second = -term.second;
    if (lin.constant == INT64_MIN)
      lin.ok = false;
    lin.constant = -lin.constant;
    return lin;
  }
  if (x.kind == ExprKind::Binary && (x.op == Tok::Plus || x.op == Tok::Minus)) {
    Linear a = linearize(*x.operands[0]), b = linearize(*x.operands[1]);
    int64_t sign = x.op == Tok::Plus ? 1 : -1;
    lin = a;
    for (auto &term : b.terms)
      lin.terms[term.first] += sign * term.second;
    lin.ok =
        a.ok && b.ok &&
        !__builtin_add_overflow(a.constant, sign * b.constant, &lin.constant);
    return lin;
  }
  if (x.kind == ExprKind::Binary && x.op == Tok::Star) {
    for (int side = 0; side < 2; ++side) {
      auto c = tryConst(*x.operands[side]);
      if (c && c->kind == Val::CInt) {
        lin = linearize(*x.operands[1 - side]);
        for (auto &term : lin.terms)
          if (__builtin_mul_overflow(term.second, c->i, &term.second))
            lin.ok = false;
        if (__builtin_mul_overflow(lin.constant, c->i, &lin.constant))
          lin.ok = false;
        return lin;
      }
    }
  }
  lin.terms[canonical(diags.slice(x.range))] = 1;
  return lin;
}

std::optional<BlockIndex> Sema::sliceIndex(const TensorParam &t, size_t dim,
                                           const Expr &ix, bool forStore,
                                           bool padded) {
  if (ix.operands.empty()) {
    diags.error(ix.loc(), "':' alone is not a tensor index; write a "
                          "slice 'START : END' of compile-time length");
    return std::nullopt;
  }
  Linear a = linearize(*ix.operands[0]), b = linearize(*ix.operands[1]);
  bool constant = a.ok && b.ok;
  for (auto &term : b.terms)
    a.terms[term.first] -= term.second;
  for (auto &term : a.terms)
    constant &= term.second == 0;
  int64_t length = 0;
  if (!constant || __builtin_sub_overflow(b.constant, a.constant, &length)) {
    diags.error(ix.loc(), "the length of slice '" + src(ix) +
                              "' is not a compile-time constant; write "
                              "both ends so that END - START is known "
                              "(for example 'n0 : n0 + BLOCK')");
    return std::nullopt;
  }
  if (!isPow2(length) || length > tl::kMaxTileElements) {
    diags.error(ix.loc(), "slice '" + src(ix) + "' has length " +
                              std::to_string(length) +
                              ", which is not a power of two; tile "
                              "extents must be powers of two");
    return std::nullopt;
  }
  Origin origin;
  auto startConst = tryConst(*ix.operands[0]);
  if (startConst && startConst->kind == Val::CInt && startConst->i == 0)
    if (auto endConst = tryConst(*ix.operands[1]))
      origin = endConst->origin;
  Val start = eval(*ix.operands[0]);
  if (!start.ok())
    return std::nullopt;
  if (!(start.kind == Val::CInt ||
        (start.kind == Val::Runtime && start.ty.isScalar() &&
         isInt(start.ty.dt)))) {
    diags.error(ix.operands[0]->loc(),
                "a slice start must be a scalar integer");
    return std::nullopt;
  }
  Ty ty = Ty::tile(DT::I32, {length}, {origin});
  mlir::Value r = tl::ArangeOp::create(builder, loc(ix.loc()), mlirType(ty));
  if (!(start.kind == Val::CInt && start.i == 0)) {
    if (start.kind == Val::Runtime && start.ty.dt == DT::I64)
      start = castTo(start, DT::I32, ix.loc());
    Val sum = binaryOp(Tok::Plus, start, Val::runtime(r, ty), ix.loc(), nullptr,
                       nullptr);
    if (!sum.ok())
      return std::nullopt;
    r = sum.v;
  }
  std::optional<int64_t> first;
  if (start.kind == Val::CInt)
    first = start.i;
  if (!checkIndexRange(t, dim, ix, first, length, forStore, padded))
    return std::nullopt;
  return BlockIndex{Val::runtime(r, ty), true};
}

std::optional<BlockIndex> Sema::blockIndex(const TensorParam &t, size_t dim,
                                           const Expr &ix, bool forStore,
                                           bool padded) {
  if (ix.kind == ExprKind::Slice)
    return sliceIndex(t, dim, ix, forStore, padded);
  if (ix.kind == ExprKind::NoneIndex) {
    diags.error(ix.loc(), "'None' is not a tensor index");
    return std::nullopt;
  }
  Val v = eval(ix);
  if (!v.ok())
    return std::nullopt;
  if (v.kind == Val::CInt) {
    if (!checkIndexRange(t, dim, ix, v.i, 1, forStore, padded))
      return std::nullopt;
    v = toRuntime(v, ix.loc(), DT::I32);
    if (!v.ok())
      return std::nullopt;
  }
  if (v.kind != Val::Runtime || !isInt(v.ty.dt)) {
    diags.error(ix.loc(),
                "a tensor index must be a scalar integer, an "
                "integer tile or a slice 'START : END', but '" +
                    src(ix) + "' is " +
                    (v.kind == Val::Runtime ? v.ty.str()
                                            : std::string("not an integer")));
    return std::nullopt;
  }
  // arange(N) as an index covers 0 .. N - 1.
  if (v.ty.rank() == 1 && v.v.getDefiningOp<tl::ArangeOp>() &&
      !checkIndexRange(t, dim, ix, 0, v.ty.shape[0], forStore, padded))
    return std::nullopt;
  return BlockIndex{v, v.ty.isTile()};
}

void Sema::asOneElementBlock(Block &block, SourceLoc l) {
  block.shape.push_back(1);
  block.origins.emplace_back();
  for (mlir::Value &index : block.indices)
    index = tl::SplatOp::create(
        builder, loc(l),
        mlir::RankedTensorType::get(block.shape, index.getType()), index);
}

std::optional<Block> Sema::evalBlock(const Expr &e, bool forStore,
                                     llvm::StringRef writer, bool padded) {
  Val base;
  if (e.kind == ExprKind::Index)
    base = eval(*e.operands[0]);
  if (e.kind != ExprKind::Index || (base.ok() && base.kind != Val::Tensor)) {
    diags.error(e.loc(), "expected an indexed tensor parameter T[...], got '" +
                             src(e) + "'");
    return std::nullopt;
  }
  if (!base.ok())
    return std::nullopt;
  TensorParam &t = kernelState->tensors[base.index];
  Block block;
  block.tensor = base.index;
  size_t rank = t.ty.shape.size();
  size_t given = e.operands.size() - 1;
  if (given != rank) {
    diags.error(e.loc(), "tensor '" + t.name + "' has rank " +
                             std::to_string(rank) + " but is indexed with " +
                             std::to_string(given) + " index" +
                             (given == 1 ? "" : "es") +
                             "; give exactly one index per dimension");
    diags.note(t.loc, "'" + t.name + "' is declared here");
    return std::nullopt;
  }
  if (forStore && !t.ty.isMutable) {
    diags.error(e.loc(), writer + " needs a mut tensor, but '" + t.name +
                             "' is read-only; declare it 'mut tensor<...>'");
    diags.note(t.loc, "'" + t.name + "' is declared here");
    return std::nullopt;
  }
  std::vector<BlockIndex> items;
  for (size_t i = 1; i < e.operands.size(); ++i) {
    std::optional<BlockIndex> item =
        blockIndex(t, i - 1, *e.operands[i], forStore, padded);
    if (!item)
      return std::nullopt;
    items.push_back(std::move(*item));
  }
  // Each tile index contributes its extents, in order: a 2-D index tile on
  // one dimension gathers a 2-D block from it.
  for (const BlockIndex &item : items)
    for (size_t d = 0; item.tile && d < item.v.ty.shape.size(); ++d) {
      block.shape.push_back(item.v.ty.shape[d]);
      block.origins.push_back(
          d < item.v.ty.origins.size() ? item.v.ty.origins[d] : Origin());
    }
  if (!checkShape(block.shape, e.loc()))
    return std::nullopt;
  size_t position = 0;
  for (const BlockIndex &item : items) {
    mlir::Value v = item.v.v;
    if (!item.tile) {
      block.indices.push_back(broadcastTo(v, item.v.ty, block.shape, e.loc()));
      continue;
    }
    block.indices.push_back(
        spreadAlong(v, item.v.ty.dt, position, block.shape, e.loc()));
    position += item.v.ty.shape.size();
  }
  return block;
}

Val Sema::evalIndex(const Expr &e) {
  Val base = eval(*e.operands[0]);
  if (!base.ok())
    return base;
  if (base.kind == Val::Tensor)
    return error(e.loc(), "an indexed tensor may only appear in load, store, "
                          "push, atomic_add and atomic_max; write load(" +
                              src(e) + ")");
  if (base.kind != Val::Runtime || !base.ty.isTile())
    return error(e.loc(), "only tiles and tensors can be indexed, but '" +
                              src(*e.operands[0]) + "' is " +
                              (base.kind == Val::Runtime ? base.ty.str() : std::string("not a tile")));
  size_t slices = 0;
  for (size_t i = 1; i < e.operands.size(); ++i) {
    const Expr &ix = *e.operands[i];
    if (ix.kind == ExprKind::Slice && ix.operands.empty())
      ++slices;
    else if (ix.kind != ExprKind::NoneIndex)
      return error(ix.loc(), "a tile can only be indexed with ':' and 'None' "
                             "(as in x[:, None]) to add unit dimensions");
  }
  if ((int64_t)slices != base.ty.rank())
    return error(e.loc(), "'" + src(*e.operands[0]) + "' is " + base.ty.str() +
                              " and needs one ':' per dimension, got " +
                              std::to_string(slices));
  Ty ty = base.ty;
  mlir::Value v = base.v;
  for (size_t i = 1; i < e.operands.size(); ++i) {
    if (e.operands[i]->kind != ExprKind::NoneIndex)
      continue;
    uint32_t axis = i - 1;
    ty.shape.insert(ty.shape.begin() + axis, 1);
    ty.origins.insert(ty.origins.begin() + axis, Origin());
    v = tl::ExpandDimsOp::create(builder, loc(e.loc()), mlirType(ty), v, axis);
  }
  if (!checkShape(ty.shape, e.loc()))
    return Val::invalid();
  return Val::runtime(v, ty);
}

Val Sema::evalMethod(const Expr &e) {
  Val recv = eval(*e.operands[0]);
  if (!recv.ok())
    return recv;
  if (recv.kind != Val::Pipe)
    return error(e.loc(), "'." + e.name + "(...)' applies to pipelines, but '" +
                              src(*e.operands[0]) + "' is not a pipeline");
  // A copy: evaluating the pushed block may inline fn calls that create
  // pipelines and so grow `pipes`.
  const PipeInfo info = kernelState->pipes[recv.index];
  std::string pipeName = info.name.empty() ? src(*e.operands[0]) : info.name;
  SourceLoc l = e.loc();
  if (e.name == "push") {
    // Counted even when refused, so the pops after it are not reported too.
    llvm::scope_exit countPush([&] {
      if (kernelState->effects)
        kernelState->effects->push_back({Effect::Push, recv.index, l, {}, {}});
    });
    if (e.operands.size() != 2) {
      return error(l, "push takes one indexed tensor, as in " + pipeName +
                          ".push(k[z, h, n0 : n0 + BLOCK_N, 0 : D])");
    }
    for (const NamedArg &arg : e.namedArgs)
      if (arg.name != "mask" && arg.name != "other")
        return error(arg.loc, "push has no argument named '" + arg.name + "'");
    auto block = evalBlock(*e.operands[1], false, "push",
                           namedArg(e, "other") || namedArg(e, "mask"));
    if (!block)
      return Val::invalid();
    TensorParam &t = kernelState->tensors[block->tensor];
    Ty blockTy = Ty::tile(t.ty.dt, block->shape, block->origins);
    if (blockTy.dt != recv.ty.dt || blockTy.shape != recv.ty.shape) {
      diags.error(e.operands[1]->loc(),
                  "push of a " + blockTy.str() + " block into pipeline '" +
                      pipeName + "' of type " + recv.ty.str() +
                      "; push needs a block of exactly the pipeline's dtype "
                      "and shape");
      diags.note(info.loc, "'" + pipeName + "' is created here as " +
                               recv.ty.str());
      return Val::invalid();
    }
    auto mask = evalMask(e, *block);
    auto other = evalOther(e, *block, t.ty.dt);
    if (!mask || !other)
      return Val::invalid();
    tl::PipelinePushOp::create(builder, loc(l), recv.v, t.value, block->indices,
                               *mask, *other);
    t.read = true;
    return Val::voidVal();
  }
  if (e.name == "pop") {
    if (!e.operands.empty() || e.operands.size() != 1 || !e.namedArgs.empty())
      if (e.operands.size() != 1 || !e.namedArgs.empty())
        return error(l, "pop takes no arguments");
    Ty ty = recv.ty;
    ty.kind = Ty::Tile;
    mlir::Value r = tl::PipelinePopOp::create(builder, loc(l), mlirType(ty), recv.v);
    if (kernelState->effects)
      kernelState->effects->push_back({Effect::Pop, recv.index, l, {}, {}});
    return Val::runtime(r, ty);
  }
  return error(l, "pipelines have no method '" + e.name + "'; use push or pop");
}

/// atomic_add(T[...], V (, mask = M)?) and atomic_max: a statement, like
/// store, whose elements are combined into memory one relaxed GPU-scope
/// atomic each. The old values are not returned.
Val Sema::builtinAtomic(const Expr &e) {
  llvm::StringRef name = e.name;
  SourceLoc l = e.loc();
  bool isAdd = name == "atomic_add";
  auto block = evalBlock(*e.operands[0], true, "'" + name.str() + "'",
                         namedArg(e, "mask"));
  if (!block)
    return Val::invalid();
  TensorParam &t = kernelState->tensors[block->tensor];
  DT dt = t.ty.dt;
  bool supported = dt == DT::F32 || dt == DT::I32 ||
                   (isAdd && (dt == DT::F16 || dt == DT::BF16));
  if (!supported)
    return error(e.operands[0]->loc(),
                 "'" + name + "' works on tensors of " +
                     (isAdd ? "f32, i32, f16 and bf16" : "f32 and i32") +
                     ", but '" + t.name + "' holds " + dtName(dt) +
                     (isAdd ? ""
                            : "; accumulate the maximum in an f32 or "
                              "i32 tensor"));
  if (dt == DT::BF16 && !targetInfo().facts().hasBf16Atomics)
    return error(e.operands[0]->loc(),
                 "'atomic_add' on bf16 needs sm_90 or newer (PTX "
                 "red.add.noftz.bf16), but the target is " +
                     targetInfo().chip +
                     "; accumulate in an f32 tensor, or compile for sm_90a");
  Val v = eval(*e.operands[1]);
  if (!v.ok())
    return v;
  if (!v.isValue() || v.kind == Val::CBool)
    return error(e.operands[1]->loc(),
                 "'" + name + "' needs a number or a tile to combine");
  if (v.kind == Val::Runtime && v.ty.dt != dt)
    return error(e.operands[1]->loc(),
                 "'" + name + "' of " + v.ty.str() + " values into tensor '" +
                     t.name + "' of " + dtName(dt) +
                     "; convert them with cast<" + dtName(dt) + ">(...)");
  if (block->shape.empty())
    asOneElementBlock(*block, l);
  Ty blockTy = Ty::tile(dt, block->shape, block->origins);
  if (v.kind == Val::Runtime && v.ty.isTile()) {
    auto s = broadcastShapes(v.ty, blockTy, e.operands[1]->loc(),
                             e.operands[1].get(), e.operands[0].get());
    if (!s)
      return Val::invalid();
    if (s->shape != blockTy.shape)
      return error(e.operands[1]->loc(),
                   "'" + name + "' of a " + v.ty.str() + " value into a " +
                       blockTy.str() +
                       " block; the value must broadcast to the block's shape");
  }
  Val value = coerce(v, blockTy, e.operands[1]->loc(),
                     "the value of '" + name + "'", e.operands[0]->loc());
  auto mask = evalMask(e, *block);
  if (!value.ok() || !mask)
    return Val::invalid();
  tl::AtomicRMWOp::create(builder, loc(l),
                          isAdd ? tl::AtomicKind::Add : tl::AtomicKind::Max,
                          t.value, block->indices, value.v, *mask);
  // Atomics read what is there: the tensor is an input as well as an output.
  t.read = t.written = true;
  return Val::voidVal();
}
