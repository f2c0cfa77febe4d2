//===- SemaTileOps.cpp - cumsum, reshape and permute ----------------------===//
//
// Builtins that rearrange or scan a tile's elements without reducing it:
// `cumsum(x, axis = k)`, `reshape(x, (A, B))` and `permute(x, (1, 0))`.
// Shapes and orders are parenthesized lists of compile-time integers, as
// Python writes them (`(1024,)` for one).
//
//===----------------------------------------------------------------------===//

#include "Sema.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/Sequence.h"

using namespace tegula;
using namespace tegula::frontend;
using namespace tegula::frontend::sema;

/// The tile operand of `name`, or none after an error.
std::optional<Val> Sema::tileOperand(llvm::StringRef name, const Expr &e,
                                     llvm::StringRef verb) {
  Val x = eval(*e.operands[0]);
  if (!x.ok())
    return std::nullopt;
  if (x.kind != Val::Runtime || !x.ty.isTile()) {
    error(
        e.operands[0]->loc(),
        "'" + name + "' " + verb + " a tile, but '" + src(*e.operands[0]) +
            "' is " +
            (x.kind == Val::Runtime ? x.ty.str() : std::string("not a tile")));
    return std::nullopt;
  }
  return x;
}

/// cumsum(x, axis = k): the inclusive prefix sum along the axis. f16 and
/// bf16 tiles are summed, and returned, as f32.
Val Sema::builtinCumsum(const Expr &e) {
  SourceLoc l = e.loc();
  if (!namedArg(e, "axis"))
    return error(l, "'cumsum' needs the axis to scan: cumsum(x, axis = 0)");
  auto operand = reduceOperand("cumsum", e, "scan", "the scan axis");
  if (!operand)
    return Val::invalid();
  auto [x, axis] = *operand;
  DT dt = x.ty.dt;
  if (dt == DT::I64)
    return error(e.operands[0]->loc(),
                 "'cumsum' scans f32, f16, bf16 and i32 tiles, but '" +
                     src(*e.operands[0]) + "' is " + x.ty.str() +
                     "; cast<i32>(...) it if its sums fit");
  Val xs = isFloat(dt) && dt != DT::F32 ? castTo(x, DT::F32, l) : x;
  mlir::Value r = tl::CumsumOp::create(builder, loc(l), xs.v, (uint32_t)axis);
  return Val::runtime(r, xs.ty);
}

/// The compile-time integers of a parenthesized list `(a, b, ...)` given
/// as `what`; none after an error.
std::optional<llvm::SmallVector<int64_t>>
Sema::constList(const Expr &list, llvm::StringRef name, llvm::StringRef what,
                llvm::StringRef example) {
  if (list.kind != ExprKind::Tuple) {
    error(list.loc(), "the " + what + " of '" + name +
                          "' is a parenthesized list of integers, as in " +
                          example + " (write (N,) for one)");
    return std::nullopt;
  }
  llvm::SmallVector<int64_t> values;
  for (const ExprPtr &element : list.operands) {
    auto v = evalConstInt(*element, what);
    if (!v)
      return std::nullopt;
    values.push_back(*v);
  }
  return values;
}

/// reshape(x, (A, B, ...)): the same elements in row-major order.
Val Sema::builtinReshape(const Expr &e) {
  SourceLoc l = e.loc();
  std::optional<Val> x = tileOperand("reshape", e, "reshapes");
  if (!x)
    return Val::invalid();
  const Expr &shapeExpr = *e.operands[1];
  auto shape =
      constList(shapeExpr, "reshape", "new shape", "reshape(x, (16, 64))");
  if (!shape)
    return Val::invalid();
  for (auto [extent, element] : llvm::zip(*shape, shapeExpr.operands))
    if (!checkExtent(extent, element->loc(), "tile"))
      return Val::invalid();
  if (!checkShape(*shape, shapeExpr.loc()))
    return Val::invalid();
  Ty ty = Ty::tile(x->ty.dt, *shape);
  int64_t from = x->ty.elements(), to = ty.elements();
  if (from != to)
    return error(shapeExpr.loc(),
                 "'reshape' keeps the element count, but '" +
                     src(*e.operands[0]) + "' is " + x->ty.str() + " (" +
                     std::to_string(from) + " elements) and " + src(shapeExpr) +
                     " holds " + std::to_string(to));
  if (ty.shape == x->ty.shape)
    return *x;
  return Val::runtime(
      tl::ReshapeOp::create(builder, loc(l), mlirType(ty), x->v), ty);
}

/// permute(x, (d0, d1, ...)): dimension i of the result is dimension d_i
/// of x. A 2-D swap is trans(x).
Val Sema::builtinPermute(const Expr &e) {
  SourceLoc l = e.loc();
  std::optional<Val> x = tileOperand("permute", e, "permutes");
  if (!x)
    return Val::invalid();
  const Expr &orderExpr = *e.operands[1];
  auto order = constList(orderExpr, "permute", "order", "permute(x, (1, 0))");
  if (!order)
    return Val::invalid();
  int64_t rank = x->ty.rank();
  llvm::SmallVector<bool> seen(rank, false);
  bool valid = (int64_t)order->size() == rank;
  for (int64_t dim : *order) {
    if (!valid || dim < 0 || dim >= rank || seen[dim]) {
      valid = false;
      break;
    }
    seen[dim] = true;
  }
  if (!valid)
    return error(orderExpr.loc(),
                 "'permute' needs an order of the dimensions 0 to " +
                     std::to_string(rank - 1) + ", each once, for " +
                     x->ty.str() + ", but got " + src(orderExpr));
  llvm::SmallVector<int64_t> shape;
  std::vector<Origin> origins;
  llvm::SmallVector<int32_t> order32;
  for (int64_t dim : *order) {
    shape.push_back(x->ty.shape[dim]);
    origins.push_back(x->ty.origins[dim]);
    order32.push_back(int32_t(dim));
  }
  Ty ty = Ty::tile(x->ty.dt, shape, origins);
  if (llvm::equal(order32, llvm::seq<int32_t>(0, int32_t(rank))))
    return *x;
  mlir::Value r =
      rank == 2
          ? tl::TransOp::create(builder, loc(l), mlirType(ty), x->v).getResult()
          : tl::PermuteOp::create(builder, loc(l), mlirType(ty), x->v, order32)
                .getResult();
  return Val::runtime(r, ty);
}
