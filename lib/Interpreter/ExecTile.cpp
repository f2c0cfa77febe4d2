//===- ExecTile.cpp - Program identity, tile shapes, reduce and dot -------===//
//
// The tile ops that compute on values already in registers: program ids,
// arange and splat, the shape and layout ops (broadcast, expand_dims,
// trans, permute, reshape, convert_layout, which ignores layouts),
// tile.cumsum (rounded after every add), tile.reduce (in double, rounded
// once) and tile.dot (f16/bf16 and tf32 products exact in f32, summed in
// f32 in order of k).
//
//===----------------------------------------------------------------------===//

#include "Machine.h"

#include "Tile/TileOps.h"

#include <algorithm>
#include <cmath>
#include <cstring>

using namespace mlir;

namespace tegula::interp {
namespace {

bool execProgramId(Machine &m, tile::ProgramIdOp op) {
  Data d;
  d.i = {m.pid[op.getAxis()]};
  m.setData(op.getResult(), std::move(d));
  return true;
}

bool execNumPrograms(Machine &m, tile::NumProgramsOp op) {
  Data d;
  d.i = {wrapInt(m.plan.grid[op.getAxis()], 32)};
  m.setData(op.getResult(), std::move(d));
  return true;
}

bool execArange(Machine &m, tile::ArangeOp op) {
  Data d;
  d.shape = shapeOf(op.getType());
  for (int64_t k = 0; k < d.shape[0]; ++k)
    d.i.push_back(k);
  m.setData(op.getResult(), std::move(d));
  return true;
}

bool execSplat(Machine &m, tile::SplatOp op) {
  const Data &v = m.data(op.getValue());
  Data d;
  d.shape = shapeOf(op.getType());
  d.isFloat = v.isFloat;
  size_t n = size_t(product(d.shape));
  if (d.isFloat)
    d.f.assign(n, v.f[0]);
  else
    d.i.assign(n, v.i[0]);
  m.setData(op.getResult(), std::move(d));
  return true;
}

/// Appends to `d` (shape and kind set) its elements in row-major order,
/// element [c0, ..., cn] being a's element at sum(ck * stride[k]).
void gatherElements(const Data &a, ArrayRef<int64_t> stride, Data &d) {
  size_t rank = d.shape.size();
  std::vector<int64_t> counter(rank, 0);
  for (int64_t e = 0, n = product(d.shape); e < n; ++e) {
    int64_t src = 0;
    for (size_t k = 0; k < rank; ++k)
      src += counter[k] * stride[k];
    if (d.isFloat)
      d.f.push_back(a.f[size_t(src)]);
    else
      d.i.push_back(a.i[size_t(src)]);
    for (size_t k = rank; k-- > 0;) {
      if (++counter[k] < d.shape[k])
        break;
      counter[k] = 0;
    }
  }
}

bool execBroadcast(Machine &m, tile::BroadcastOp op) {
  const Data &a = m.data(op.getSource());
  Data d;
  d.shape = shapeOf(op.getResult().getType());
  d.isFloat = a.isFloat;
  size_t rank = d.shape.size();
  std::vector<int64_t> srcStride(rank, 0);
  int64_t s = 1;
  for (size_t k = rank; k-- > 0;) {
    srcStride[k] = a.shape[k] == 1 ? 0 : s;
    s *= a.shape[k];
  }
  gatherElements(a, srcStride, d);
  m.setData(op.getResult(), std::move(d));
  return true;
}

/// tile.expand_dims, tile.reshape, tile.convert_layout, tile.to_shared: the
/// same elements in the same order; only the shape or the layout changes.
bool execReshape(Machine &m, Operation &op) {
  Data d = m.data(op.getOperand(0));
  d.shape = shapeOf(op.getResult(0).getType());
  m.setData(op.getResult(0), std::move(d));
  return true;
}

bool execTrans(Machine &m, tile::TransOp op) {
  m.setData(op.getResult(), transposeData(m.data(op.getSource())));
  return true;
}

bool execPermute(Machine &m, tile::PermuteOp op) {
  const Data &a = m.data(op.getSource());
  ArrayRef<int32_t> order = op.getOrder();
  size_t rank = a.shape.size();
  // The source's row-major strides, taken in the result's dimension order.
  std::vector<int64_t> stride(rank), srcStride(rank);
  for (size_t d = rank, step = 1; d-- > 0; step *= size_t(a.shape[d]))
    srcStride[d] = int64_t(step);
  Data d;
  d.shape = shapeOf(op.getResult().getType());
  d.isFloat = a.isFloat;
  for (size_t k = 0; k < rank; ++k)
    stride[k] = srcStride[size_t(order[k])];
  gatherElements(a, stride, d);
  m.setData(op.getResult(), std::move(d));
  return true;
}

/// Sums in index order, rounding to f32 (or wrapping to i32) after every
/// add, as each step of the GPU's scan does.
bool execCumsum(Machine &m, tile::CumsumOp op) {
  Data d = m.data(op.getSource());
  Type elt = getElementTypeOrSelf(op.getSource().getType());
  auto [outer, len, inner] = splitAroundAxis(d.shape, op.getAxis());
  unsigned w = d.isFloat ? 0 : intWidth(elt);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t in = 0; in < inner; ++in)
      for (int64_t k = 1; k < len; ++k) {
        size_t at = size_t((o * len + k) * inner + in), prev = at - inner;
        if (d.isFloat)
          d.f[at] = roundFloat(d.f[prev] + d.f[at], elt);
        else
          d.i[at] =
              wrapInt(int64_t(uint64_t(d.i[prev]) + uint64_t(d.i[at])), w);
      }
  m.setData(op.getResult(), std::move(d));
  return true;
}

bool execReduce(Machine &m, tile::ReduceOp op) {
  const Data &a = m.data(op.getSource());
  Type elt = getElementTypeOrSelf(op.getSource().getType());
  auto [outer, len, inner] = splitAroundAxis(a.shape, op.getAxis());
  Data d;
  d.shape = shapeOf(op.getResult().getType());
  d.isFloat = a.isFloat;
  tile::ReduceKind kind = op.getKind();
  unsigned w = a.isFloat ? 0 : intWidth(elt);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t in = 0; in < inner; ++in) {
      // (Structured bindings are captured by value: C++17 lambdas cannot.)
      auto at = [&, len = len, inner = inner](int64_t k) {
        return size_t((o * len + k) * inner + in);
      };
      if (a.isFloat) {
        double acc = a.f[at(0)];
        for (int64_t k = 1; k < len; ++k) {
          double x = a.f[at(k)];
          if (kind == tile::ReduceKind::Sum)
            acc += x;
          else if (kind == tile::ReduceKind::Max)
            acc = maximumF(acc, x);
          else
            acc = minimumF(acc, x);
        }
        d.f.push_back(roundFloat(acc, elt));
      } else {
        int64_t acc = asSigned(a.i[at(0)], w);
        for (int64_t k = 1; k < len; ++k) {
          int64_t x = asSigned(a.i[at(k)], w);
          if (kind == tile::ReduceKind::Sum)
            acc =
                wrapInt(int64_t(uint64_t(acc) + uint64_t(x)), w == 1 ? 64 : w);
          else if (kind == tile::ReduceKind::Max)
            acc = std::max(acc, x);
          else
            acc = std::min(acc, x);
        }
        d.i.push_back(wrapInt(acc, w));
      }
    }
  m.setData(op.getResult(), std::move(d));
  return true;
}

/// cvt.rna.tf32.f32: to the nearest value with 10 mantissa bits, ties away
/// from zero (adding half of the dropped bits' range to the magnitude, then
/// clearing them; an overflow carries into the exponent and gives inf).
/// NaN and inf pass through.
float roundToTf32(float x) {
  if (std::isnan(x) || std::isinf(x))
    return x;
  uint32_t bits;
  std::memcpy(&bits, &x, 4);
  bits = (bits + 0x1000u) & ~0x1fffu;
  std::memcpy(&x, &bits, 4);
  return x;
}

bool execDot(Machine &m, tile::DotOp op) {
  const Data &a = m.data(op.getA()), &b = m.data(op.getB()),
             &c = m.data(op.getAcc());
  int64_t M = a.shape[0], K = a.shape[1], N = b.shape[1];
  Data d;
  d.shape = {M, N};
  d.isFloat = true;
  d.f.resize(size_t(M * N));
  // f16/bf16 products are exact in f32; f32 operands are rounded to tf32
  // first, whose products are exact too; the sum accumulates in f32. An
  // ieee dot is one f32 FMA per k, in order, as its GPU code.
  bool ieee = op.getIeee();
  bool tf32 = !ieee && getElementTypeOrSelf(op.getA().getType()).isF32();
  // Each operand element is converted (and rounded) once, not per product.
  auto operands = [&](const Data &x) {
    std::vector<float> values(x.f.size());
    for (size_t e = 0; e < values.size(); ++e)
      values[e] = tf32 ? roundToTf32(float(x.f[e])) : float(x.f[e]);
    return values;
  };
  std::vector<float> av = operands(a), bv = operands(b);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      float acc = float(c.f[size_t(i * N + j)]);
      for (int64_t k = 0; k < K; ++k) {
        float x = av[size_t(i * K + k)], y = bv[size_t(k * N + j)];
        acc = ieee ? std::fma(x, y, acc) : acc + x * y;
      }
      d.f[size_t(i * N + j)] = acc;
    }
  m.setData(op.getResult(), std::move(d));
  return true;
}

} // namespace

void registerTileOps(OpTable &table) {
  table.add<tile::ProgramIdOp>(execProgramId);
  table.add<tile::NumProgramsOp>(execNumPrograms);
  table.add<tile::ArangeOp>(execArange);
  table.add<tile::SplatOp>(execSplat);
  table.add<tile::BroadcastOp>(execBroadcast);
  table.add<tile::ExpandDimsOp>(execReshape);
  table.add<tile::ConvertLayoutOp>(execReshape);
  table.add<tile::ToSharedOp>(execReshape);
  table.add<tile::TransOp>(execTrans);
  table.add<tile::PermuteOp>(execPermute);
  table.add<tile::ReshapeOp>(execReshape);
  table.add<tile::CumsumOp>(execCumsum);
  table.add<tile::ReduceOp>(execReduce);
  table.add<tile::DotOp>(execDot);
}

} // namespace tegula::interp
