//===- SemaDot.cpp - dot
//----------------------------------------------------===//
//
// dot(a, b (, acc)? (, precision = tf32 | bf16x3 | ieee)?): the operand,
// extent (at least 16, saying where a small one came from) and accumulator
// checks, and the tile.dot ops, three of them for bf16x3.
//
//===----------------------------------------------------------------------===//

#include "Sema.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace tegula;
using namespace tegula::frontend;
using namespace tegula::frontend::sema;

Val Sema::dot(const Expr &e) {
  Val a = eval(*e.operands[0]);
  Val b = eval(*e.operands[1]);
  if (!a.ok() || !b.ok())
    return Val::invalid();
  for (int i = 0; i < 2; ++i) {
    const Val &x = i ? b : a;
    const Expr &ex = *e.operands[i];
    if (x.kind != Val::Runtime || x.ty.rank() != 2)
      return error(ex.loc(),
                   "dot needs 2-D tiles, but '" + src(ex) + "' is " +
                       (x.kind == Val::Runtime ? x.ty.str()
                                               : std::string("not a tile")));
    if (x.ty.dt != DT::F16 && x.ty.dt != DT::BF16 && x.ty.dt != DT::F32)
      return error(ex.loc(),
                   "dot operands must be f16, bf16 or f32, but '" + src(ex) +
                       "' is " + x.ty.str() +
                       "; convert it with cast<bf16>(...) or cast<f32>(...)");
  }
  // precision = tf32 (the default), bf16x3 or ieee, for f32 operands.
  std::optional<llvm::StringRef> precision =
      precisionArg(e, {"tf32", "bf16x3", "ieee"});
  if (!precision)
    return Val::invalid();
  const NamedArg *given = namedArg(e, "precision");
  if (given && (a.ty.dt != DT::F32 || b.ty.dt != DT::F32))
    return error(given->loc,
                 "'precision' chooses how f32 operands multiply, but '" +
                     src(*e.operands[a.ty.dt != DT::F32 ? 0 : 1]) + "' is " +
                     (a.ty.dt != DT::F32 ? a : b).ty.str() +
                     "; f16 and bf16 products are exact");
  bool ieee = *precision == "ieee";
  if (a.ty.dt != b.ty.dt)
    return error(e.loc(), "dot operands must have one dtype, but '" +
                              src(*e.operands[0]) + "' is " + a.ty.str() +
                              " and '" + src(*e.operands[1]) + "' is " +
                              b.ty.str() + "; cast one to the other's dtype");
  int64_t m = a.ty.shape[0], k = a.ty.shape[1], kb = b.ty.shape[0],
          n = b.ty.shape[1];
  if (k != kb)
    return error(e.loc(), "dot contracts " + a.ty.str() + " with " +
                              b.ty.str() + ": K differs (" + std::to_string(k) +
                              " vs " + std::to_string(kb) +
                              "); a is [M, K] and b must be [K, N]");
  struct Extent {
    const char *name;
    int64_t value;
    Origin origin;
  } extents[] = {
      {"M", m, a.ty.origins[0]},
      {"N", n, b.ty.origins[1]},
      {"K", k,
       a.ty.origins[1].text.empty() ? b.ty.origins[0] : a.ty.origins[1]}};
  for (const Extent &x : extents) {
    if (x.value >= 16)
      continue;
    std::string how;
    if (!x.origin.text.empty())
      how = "; " + std::string(x.name) + " = " + std::to_string(x.value) +
            " comes from " + x.origin.text;
    diags.error(e.loc(), "dot " + std::string(x.name) + " = " +
                             std::to_string(x.value) +
                             " is below 16: tensor-core dot needs M, N and K "
                             "of at least 16 (a is " +
                             a.ty.str() + ", b is " + b.ty.str() + ")" + how +
                             "; choose template values or tile sizes that "
                             "make it at least 16");
    if (!x.origin.text.empty())
      diags.note(x.origin.loc, std::string(x.name) + " = " +
                                   std::to_string(x.value) +
                                   " is computed here");
    return Val::invalid();
  }
  // Check 5 of the spec is gone: a result too small to give every warp its
  // own block is computed by several warps alike (TargetInfo::dotWarpSplit).
  if (!checkShape({m, n}, e.loc()))
    return Val::invalid();
  Ty accTy = Ty::tile(DT::F32, {m, n}, {a.ty.origins[0], b.ty.origins[1]});
  mlir::Value acc;
  if (e.operands.size() == 3) {
    Val c = eval(*e.operands[2]);
    if (!c.ok())
      return c;
    if (c.kind == Val::Runtime &&
        (c.ty.dt != DT::F32 || c.ty.shape != accTy.shape))
      return error(e.operands[2]->loc(),
                   "the dot accumulator must be " + accTy.str() + ", but '" +
                       src(*e.operands[2]) + "' is " + c.ty.str());
    Val cc =
        coerce(c, accTy, e.operands[2]->loc(), "the dot accumulator", e.loc());
    if (!cc.ok())
      return cc;
    acc = cc.v;
  } else {
    acc = materialize(Val::cint(0), accTy, e.loc());
  }
  if (*precision == "bf16x3")
    return dotBf16x3(a, b, acc, accTy, e.loc());
  mlir::Value r = tl::DotOp::create(builder, loc(e.loc()), mlirType(accTy), a.v,
                                    b.v, acc, ieee);
  return Val::runtime(r, accTy);
}

/// x's value before it was widened to f32, or null.
static mlir::Value beforeWidening(const Val &x) {
  if (auto ext = x.v.getDefiningOp<mlir::arith::ExtFOp>())
    return ext.getIn();
  return {};
}

/// An f32 operand as bf16 parts hi + lo, lo = bf16(x - hi) (none when x is
/// a bf16 value widened: its lo is 0).
std::pair<Val, Val> Sema::splitBf16(const Val &x, SourceLoc l) {
  mlir::Value narrow = beforeWidening(x);
  if (narrow && mlir::getElementTypeOrSelf(narrow).isBF16())
    return {Val::runtime(narrow, x.ty.withDT(DT::BF16)), Val::invalid()};
  Val hi = castTo(x, DT::BF16, l);
  Val lo = castTo(
      binaryOp(Tok::Minus, x, castTo(hi, DT::F32, l), l, nullptr, nullptr),
      DT::BF16, l);
  return {hi, lo};
}

/// precision = bf16x3: a b of f32 operands on bf16 tensor cores, each
/// operand split into bf16 parts (x = hi + lo), acc + ah bl + al bh + ah bh
/// summed in that order (small terms first; al bl, about 2^-18 of the
/// product, is left out): about 2^-16 relative per product against tf32's
/// 2^-11. Three dots, fewer when an operand is a widened bf16 value (no lo).
/// Two widened f16 operands take one f16 dot: its products are exact.
Val Sema::dotBf16x3(const Val &a, const Val &b, mlir::Value acc,
                    const Ty &accTy, SourceLoc l) {
  mlir::Value a16 = beforeWidening(a), b16 = beforeWidening(b);
  auto isF16 = [](mlir::Value v) {
    return v && mlir::getElementTypeOrSelf(v).isF16();
  };
  if (isF16(a16) && isF16(b16))
    return Val::runtime(tl::DotOp::create(builder, loc(l), mlirType(accTy), a16,
                                          b16, acc, false),
                        accTy);
  auto [ah, al] = splitBf16(a, l);
  auto [bh, bl] = splitBf16(b, l);
  if (!ah.ok() || !bh.ok())
    return Val::invalid();
  auto add = [&](const Val &x, const Val &y) {
    acc = tl::DotOp::create(builder, loc(l), mlirType(accTy), x.v, y.v, acc,
                            false);
  };
  if (bl.ok())
    add(ah, bl);
  if (al.ok())
    add(al, bh);
  add(ah, bh);
  return Val::runtime(acc, accTy);
}
