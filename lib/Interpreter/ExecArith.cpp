//===- ExecArith.cpp - Constants, elementwise arithmetic and casts --------===//
//
// arith and math ops, elementwise over a tile or on scalars. Each computes
// in double or 64 bits and rounds or wraps to the type it produces
// (Values.h): f32 arithmetic on f16/bf16 values, i32 wrapping, fptosi
// saturating, an integer division by zero an error.
//
//===----------------------------------------------------------------------===//

#include "Machine.h"

#include "Tile/TileOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"

#include <algorithm>
#include <cmath>
#include <cstring>

using namespace mlir;

namespace tegula::interp {
namespace {

bool execConstant(Machine &m, arith::ConstantOp op) {
  Attribute value = op.getValue();
  Type type = op.getType();
  Type elt = getElementTypeOrSelf(type);
  Data d;
  d.shape = shapeOf(type);
  d.isFloat = isa<FloatType>(elt);
  if (auto f = dyn_cast<FloatAttr>(value)) {
    d.f = {roundFloat(f.getValueAsDouble(), elt)};
  } else if (auto i = dyn_cast<IntegerAttr>(value)) {
    d.i = {wrapInt(i.getValue().getSExtValue(), intWidth(elt))};
  } else if (auto dense = dyn_cast<DenseElementsAttr>(value)) {
    if (d.isFloat)
      for (APFloat v : dense.getValues<APFloat>())
        d.f.push_back(roundFloat(v.convertToDouble(), elt));
    else
      for (APInt v : dense.getValues<APInt>())
        d.i.push_back(wrapInt(v.getBitWidth() == 1 ? int64_t(v.getZExtValue())
                                                   : v.getSExtValue(),
                              intWidth(elt)));
  } else {
    return m.fail(op, "unsupported constant");
  }
  m.setData(op.getResult(), std::move(d));
  return true;
}

/// Sets an elementwise op's result, giving `d` the result's shape.
bool setElementwise(Machine &m, Operation *op, Data d) {
  Value result = op->getResult(0);
  d.shape = shapeOf(result.getType());
  m.setData(result, std::move(d));
  return true;
}

//===----------------------------------------------------------------------===//
// Float arithmetic
//===----------------------------------------------------------------------===//

using F1 = double (*)(double);
using F2 = double (*)(double, double);

Handler floatUnary(F1 fn) {
  return [fn](Machine &m, Operation &op) {
    Type elt = getElementTypeOrSelf(op.getResult(0).getType());
    const Data &a = m.data(op.getOperand(0));
    Data d;
    d.isFloat = true;
    d.f.resize(a.f.size());
    for (size_t k = 0; k < a.f.size(); ++k)
      d.f[k] = roundFloat(fn(a.f[k]), elt);
    return setElementwise(m, &op, std::move(d));
  };
}

/// exp and exp2 as the GPU computes them (ElementwiseToNVVM.cpp): flagged
/// `afn` (tile-fast-math: outside `tile.exact_math` kernels), through
/// ex2.approx.ftz.f32, which flushes results below 2^-126 (FLT_MIN) to +0.
/// Its approximation error (2^-22.5 relative) and FMA contraction's single
/// rounding are within any checking tolerance and not modelled.
Handler flushingExp(F1 fn) {
  return [fn](Machine &m, Operation &op) {
    auto flags = cast<arith::ArithFastMathInterface>(op).getFastMathFlagsAttr();
    bool flush = flags && arith::bitEnumContainsAll(flags.getValue(),
                                                    arith::FastMathFlags::afn);
    Type elt = getElementTypeOrSelf(op.getResult(0).getType());
    const Data &a = m.data(op.getOperand(0));
    Data d;
    d.isFloat = true;
    d.f.resize(a.f.size());
    for (size_t k = 0; k < a.f.size(); ++k) {
      double y = fn(a.f[k]);
      if (flush && y < std::ldexp(1.0, -126))
        y = 0;
      d.f[k] = roundFloat(y, elt);
    }
    return setElementwise(m, &op, std::move(d));
  };
}

Handler floatBinary(F2 fn) {
  return [fn](Machine &m, Operation &op) {
    Type elt = getElementTypeOrSelf(op.getResult(0).getType());
    const Data &a = m.data(op.getOperand(0)), &b = m.data(op.getOperand(1));
    Data d;
    d.isFloat = true;
    d.f.resize(a.f.size());
    for (size_t k = 0; k < a.f.size(); ++k)
      d.f[k] = roundFloat(fn(a.f[k], b.f[k]), elt);
    return setElementwise(m, &op, std::move(d));
  };
}

bool execFma(Machine &m, Operation &op) {
  Type elt = getElementTypeOrSelf(op.getResult(0).getType());
  const Data &a = m.data(op.getOperand(0)), &b = m.data(op.getOperand(1)),
             &c = m.data(op.getOperand(2));
  Data d;
  d.isFloat = true;
  d.f.resize(a.f.size());
  for (size_t k = 0; k < a.f.size(); ++k)
    d.f[k] = roundFloat(std::fma(a.f[k], b.f[k], c.f[k]), elt);
  return setElementwise(m, &op, std::move(d));
}

//===----------------------------------------------------------------------===//
// Integer arithmetic: operands and result share one type
//===----------------------------------------------------------------------===//

enum IntOp {
  Add,
  Sub,
  Mul,
  DivS,
  DivU,
  RemS,
  RemU,
  CeilDivS,
  CeilDivU,
  FloorDivS,
  And,
  Or,
  Xor,
  Shl,
  ShrS,
  ShrU,
  MaxS,
  MinS,
  MaxU,
  MinU
};

bool execIntBinary(Machine &m, Operation &op, IntOp iop) {
  unsigned w = intWidth(getElementTypeOrSelf(op.getResult(0).getType()));
  const Data &a = m.data(op.getOperand(0)), &b = m.data(op.getOperand(1));
  Data d;
  d.i.resize(a.i.size());
  for (size_t k = 0; k < a.i.size(); ++k) {
    int64_t x = asSigned(a.i[k], w), y = asSigned(b.i[k], w);
    uint64_t ux = asUnsigned(a.i[k], w), uy = asUnsigned(b.i[k], w);
    bool isDiv = iop == DivS || iop == DivU || iop == RemS || iop == RemU ||
                 iop == CeilDivS || iop == CeilDivU || iop == FloorDivS;
    if (isDiv && uy == 0)
      return m.fail(&op, "integer division by zero");
    // INT_MIN / -1 wraps (the GPU's result) instead of trapping.
    bool minOverNeg1 =
        y == -1 && x == wrapInt(int64_t(uint64_t(1) << (w - 1)), w) && w > 1;
    int64_t r = 0;
    switch (iop) {
    case Add:
      r = int64_t(ux + uy);
      break;
    case Sub:
      r = int64_t(ux - uy);
      break;
    case Mul:
      r = int64_t(ux * uy);
      break;
    case DivS:
      r = minOverNeg1 ? x : x / y;
      break;
    case DivU:
      r = int64_t(ux / uy);
      break;
    case RemS:
      r = minOverNeg1 ? 0 : x % y;
      break;
    case RemU:
      r = int64_t(ux % uy);
      break;
    case CeilDivS:
      if (minOverNeg1) {
        r = x;
        break;
      }
      r = x / y + ((x % y != 0) && ((x < 0) == (y < 0)) ? 1 : 0);
      break;
    case CeilDivU:
      r = int64_t(ux / uy + (ux % uy != 0));
      break;
    case FloorDivS:
      if (minOverNeg1) {
        r = x;
        break;
      }
      r = x / y - ((x % y != 0) && ((x < 0) != (y < 0)) ? 1 : 0);
      break;
    case And:
      r = int64_t(ux & uy);
      break;
    case Or:
      r = int64_t(ux | uy);
      break;
    case Xor:
      r = int64_t(ux ^ uy);
      break;
    case Shl:
      r = uy >= w ? 0 : int64_t(ux << uy);
      break;
    case ShrS:
      r = uy >= w ? (x < 0 ? -1 : 0) : (x >> uy);
      break;
    case ShrU:
      r = uy >= w ? 0 : int64_t(ux >> uy);
      break;
    case MaxS:
      r = std::max(x, y);
      break;
    case MinS:
      r = std::min(x, y);
      break;
    case MaxU:
      r = int64_t(std::max(ux, uy));
      break;
    case MinU:
      r = int64_t(std::min(ux, uy));
      break;
    }
    d.i[k] = wrapInt(r, w);
  }
  return setElementwise(m, &op, std::move(d));
}

Handler intBinary(IntOp iop) {
  return [iop](Machine &m, Operation &op) { return execIntBinary(m, op, iop); };
}

bool execAbsI(Machine &m, Operation &op) {
  unsigned w = intWidth(getElementTypeOrSelf(op.getResult(0).getType()));
  const Data &a = m.data(op.getOperand(0));
  Data d;
  d.i.resize(a.i.size());
  for (size_t k = 0; k < a.i.size(); ++k)
    d.i[k] = wrapInt(asSigned(a.i[k], w) < 0
                         ? int64_t(uint64_t(0) - uint64_t(a.i[k]))
                         : a.i[k],
                     w);
  return setElementwise(m, &op, std::move(d));
}

//===----------------------------------------------------------------------===//
// Comparisons and select
//===----------------------------------------------------------------------===//

bool execCmpI(Machine &m, arith::CmpIOp op) {
  unsigned w = intWidth(getElementTypeOrSelf(op.getLhs().getType()));
  const Data &a = m.data(op.getLhs()), &b = m.data(op.getRhs());
  Data d;
  d.i.resize(a.i.size());
  using P = arith::CmpIPredicate;
  P pred = op.getPredicate();
  for (size_t k = 0; k < a.i.size(); ++k) {
    int64_t x = asSigned(a.i[k], w), y = asSigned(b.i[k], w);
    uint64_t ux = asUnsigned(a.i[k], w), uy = asUnsigned(b.i[k], w);
    bool r = false;
    switch (pred) {
    case P::eq:
      r = ux == uy;
      break;
    case P::ne:
      r = ux != uy;
      break;
    case P::slt:
      r = x < y;
      break;
    case P::sle:
      r = x <= y;
      break;
    case P::sgt:
      r = x > y;
      break;
    case P::sge:
      r = x >= y;
      break;
    case P::ult:
      r = ux < uy;
      break;
    case P::ule:
      r = ux <= uy;
      break;
    case P::ugt:
      r = ux > uy;
      break;
    case P::uge:
      r = ux >= uy;
      break;
    }
    d.i[k] = r;
  }
  return setElementwise(m, op, std::move(d));
}

bool execCmpF(Machine &m, arith::CmpFOp op) {
  const Data &a = m.data(op.getLhs()), &b = m.data(op.getRhs());
  Data d;
  d.i.resize(a.f.size());
  using P = arith::CmpFPredicate;
  P pred = op.getPredicate();
  for (size_t k = 0; k < a.f.size(); ++k) {
    double x = a.f[k], y = b.f[k];
    bool unordered = std::isnan(x) || std::isnan(y);
    bool r = false;
    switch (pred) {
    case P::AlwaysFalse:
      r = false;
      break;
    case P::OEQ:
      r = !unordered && x == y;
      break;
    case P::OGT:
      r = !unordered && x > y;
      break;
    case P::OGE:
      r = !unordered && x >= y;
      break;
    case P::OLT:
      r = !unordered && x < y;
      break;
    case P::OLE:
      r = !unordered && x <= y;
      break;
    case P::ONE:
      r = !unordered && x != y;
      break;
    case P::ORD:
      r = !unordered;
      break;
    case P::UEQ:
      r = unordered || x == y;
      break;
    case P::UGT:
      r = unordered || x > y;
      break;
    case P::UGE:
      r = unordered || x >= y;
      break;
    case P::ULT:
      r = unordered || x < y;
      break;
    case P::ULE:
      r = unordered || x <= y;
      break;
    case P::UNE:
      r = unordered || x != y;
      break;
    case P::UNO:
      r = unordered;
      break;
    case P::AlwaysTrue:
      r = true;
      break;
    }
    d.i[k] = r;
  }
  return setElementwise(m, op, std::move(d));
}

bool execSelect(Machine &m, arith::SelectOp op) {
  const Data &c = m.data(op.getCondition()), &a = m.data(op.getTrueValue()),
             &b = m.data(op.getFalseValue());
  Data d;
  d.isFloat = a.isFloat;
  size_t n = a.size();
  if (d.isFloat)
    d.f.resize(n);
  else
    d.i.resize(n);
  for (size_t k = 0; k < n; ++k) {
    bool take = c.i[c.i.size() == 1 ? 0 : k] != 0;
    if (d.isFloat)
      d.f[k] = take ? a.f[k] : b.f[k];
    else
      d.i[k] = take ? a.i[k] : b.i[k];
  }
  return setElementwise(m, op, std::move(d));
}

//===----------------------------------------------------------------------===//
// Casts
//===----------------------------------------------------------------------===//

enum class CastKind {
  Float,       // extf, truncf
  SIntToFloat, // sitofp
  UIntToFloat, // uitofp
  FloatToSInt, // fptosi
  FloatToUInt, // fptoui
  SInt,        // extsi, trunci, index_cast
  UInt,        // extui, index_castui
  Bitcast
};

bool execCast(Machine &m, Operation &op, CastKind kind) {
  Value in = op.getOperand(0), out = op.getResult(0);
  Type src = getElementTypeOrSelf(in.getType());
  Type dst = getElementTypeOrSelf(out.getType());
  const Data &a = m.data(in);
  Data d;
  d.shape = shapeOf(out.getType());
  d.isFloat = isa<FloatType>(dst);
  switch (kind) {
  case CastKind::Float:
    for (double v : a.f)
      d.f.push_back(roundFloat(v, dst));
    break;
  case CastKind::SIntToFloat:
  case CastKind::UIntToFloat: {
    unsigned w = intWidth(src);
    for (int64_t v : a.i)
      d.f.push_back(roundFloat(kind == CastKind::SIntToFloat
                                   ? double(asSigned(v, w))
                                   : double(asUnsigned(v, w)),
                               dst));
    break;
  }
  case CastKind::FloatToSInt:
  case CastKind::FloatToUInt:
    for (double v : a.f)
      d.i.push_back(
          floatToInt(v, intWidth(dst), kind == CastKind::FloatToUInt));
    break;
  case CastKind::SInt: {
    unsigned w = intWidth(src);
    for (int64_t v : a.i)
      d.i.push_back(wrapInt(asSigned(v, w), intWidth(dst)));
    break;
  }
  case CastKind::UInt: {
    unsigned w = intWidth(src);
    for (int64_t v : a.i)
      d.i.push_back(wrapInt(int64_t(asUnsigned(v, w)), intWidth(dst)));
    break;
  }
  case CastKind::Bitcast:
    if (src.isF32() && dst.isInteger(32)) {
      for (double v : a.f) {
        float f = float(v);
        int32_t bits;
        std::memcpy(&bits, &f, 4);
        d.i.push_back(bits);
      }
    } else if (src.isInteger(32) && dst.isF32()) {
      for (int64_t v : a.i) {
        int32_t bits = int32_t(v);
        float f;
        std::memcpy(&f, &bits, 4);
        d.f.push_back(f);
      }
    } else if (src == dst) {
      d = a;
      d.shape = shapeOf(out.getType());
    } else {
      return m.fail(&op, "only f32 <-> i32 bitcasts are supported");
    }
    break;
  }
  m.setData(out, std::move(d));
  return true;
}

Handler castOp(CastKind kind) {
  return [kind](Machine &m, Operation &op) { return execCast(m, op, kind); };
}

} // namespace

void registerArithOps(OpTable &table) {
  table.add<arith::ConstantOp>(execConstant);

  table.add<arith::NegFOp>(floatUnary([](double x) { return -x; }));
  table.add<math::AbsFOp>(floatUnary([](double x) { return std::fabs(x); }));
  table.add<math::ExpOp>(flushingExp([](double x) { return std::exp(x); }));
  table.add<math::Exp2Op>(flushingExp([](double x) { return std::exp2(x); }));
  table.add<math::ExpM1Op>(floatUnary([](double x) { return std::expm1(x); }));
  table.add<math::LogOp>(floatUnary([](double x) { return std::log(x); }));
  table.add<math::Log2Op>(floatUnary([](double x) { return std::log2(x); }));
  table.add<math::Log10Op>(floatUnary([](double x) { return std::log10(x); }));
  table.add<math::Log1pOp>(floatUnary([](double x) { return std::log1p(x); }));
  table.add<math::SqrtOp>(floatUnary([](double x) { return std::sqrt(x); }));
  table.add<math::RsqrtOp>(
      floatUnary([](double x) { return 1 / std::sqrt(x); }));
  table.add<math::SinOp>(floatUnary([](double x) { return std::sin(x); }));
  table.add<math::CosOp>(floatUnary([](double x) { return std::cos(x); }));
  table.add<math::TanOp>(floatUnary([](double x) { return std::tan(x); }));
  table.add<math::TanhOp>(floatUnary([](double x) { return std::tanh(x); }));
  table.add<tile::SigmoidOp>(
      floatUnary([](double x) { return 1 / (1 + std::exp(-x)); }));
  table.add<math::AtanOp>(floatUnary([](double x) { return std::atan(x); }));
  table.add<math::ErfOp>(floatUnary([](double x) { return std::erf(x); }));
  table.add<math::FloorOp>(floatUnary([](double x) { return std::floor(x); }));
  table.add<math::CeilOp>(floatUnary([](double x) { return std::ceil(x); }));
  table.add<math::RoundOp>(floatUnary([](double x) { return std::round(x); }));
  table.add<math::RoundEvenOp>(
      floatUnary([](double x) { return std::nearbyint(x); }));
  table.add<math::TruncOp>(floatUnary([](double x) { return std::trunc(x); }));

  table.add<arith::AddFOp>(
      floatBinary([](double a, double b) { return a + b; }));
  table.add<arith::SubFOp>(
      floatBinary([](double a, double b) { return a - b; }));
  table.add<arith::MulFOp>(
      floatBinary([](double a, double b) { return a * b; }));
  table.add<arith::DivFOp>(
      floatBinary([](double a, double b) { return a / b; }));
  table.add<arith::RemFOp>(
      floatBinary([](double a, double b) { return std::fmod(a, b); }));
  table.add<arith::MaximumFOp>(floatBinary(maximumF));
  table.add<arith::MinimumFOp>(floatBinary(minimumF));
  table.add<arith::MaxNumFOp>(
      floatBinary([](double a, double b) { return std::fmax(a, b); }));
  table.add<arith::MinNumFOp>(
      floatBinary([](double a, double b) { return std::fmin(a, b); }));
  table.add<math::PowFOp>(
      floatBinary([](double a, double b) { return std::pow(a, b); }));
  table.add<math::Atan2Op>(
      floatBinary([](double a, double b) { return std::atan2(a, b); }));
  table.add<math::CopySignOp>(
      floatBinary([](double a, double b) { return std::copysign(a, b); }));
  table.add<math::FmaOp>(execFma);

  table.add<arith::AddIOp>(intBinary(Add));
  table.add<arith::SubIOp>(intBinary(Sub));
  table.add<arith::MulIOp>(intBinary(Mul));
  table.add<arith::DivSIOp>(intBinary(DivS));
  table.add<arith::DivUIOp>(intBinary(DivU));
  table.add<arith::RemSIOp>(intBinary(RemS));
  table.add<arith::RemUIOp>(intBinary(RemU));
  table.add<arith::CeilDivSIOp>(intBinary(CeilDivS));
  table.add<arith::CeilDivUIOp>(intBinary(CeilDivU));
  table.add<arith::FloorDivSIOp>(intBinary(FloorDivS));
  table.add<arith::AndIOp>(intBinary(And));
  table.add<arith::OrIOp>(intBinary(Or));
  table.add<arith::XOrIOp>(intBinary(Xor));
  table.add<arith::ShLIOp>(intBinary(Shl));
  table.add<arith::ShRSIOp>(intBinary(ShrS));
  table.add<arith::ShRUIOp>(intBinary(ShrU));
  table.add<arith::MaxSIOp>(intBinary(MaxS));
  table.add<arith::MinSIOp>(intBinary(MinS));
  table.add<arith::MaxUIOp>(intBinary(MaxU));
  table.add<arith::MinUIOp>(intBinary(MinU));
  table.add<math::AbsIOp>(execAbsI);

  table.add<arith::CmpIOp>(execCmpI);
  table.add<arith::CmpFOp>(execCmpF);
  table.add<arith::SelectOp>(execSelect);

  table.add<arith::ExtFOp>(castOp(CastKind::Float));
  table.add<arith::TruncFOp>(castOp(CastKind::Float));
  table.add<arith::SIToFPOp>(castOp(CastKind::SIntToFloat));
  table.add<arith::UIToFPOp>(castOp(CastKind::UIntToFloat));
  table.add<arith::FPToSIOp>(castOp(CastKind::FloatToSInt));
  table.add<arith::FPToUIOp>(castOp(CastKind::FloatToUInt));
  table.add<arith::ExtSIOp>(castOp(CastKind::SInt));
  table.add<arith::TruncIOp>(castOp(CastKind::SInt));
  table.add<arith::IndexCastOp>(castOp(CastKind::SInt));
  table.add<arith::ExtUIOp>(castOp(CastKind::UInt));
  table.add<arith::IndexCastUIOp>(castOp(CastKind::UInt));
  table.add<arith::BitcastOp>(castOp(CastKind::Bitcast));
}

} // namespace tegula::interp
