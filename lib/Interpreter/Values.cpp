//===- Values.cpp - The interpreter's values and numeric rules ------------===//
//
// Rounding, wrapping and float <-> integer conversion as the GPU code does
// them; every op family reads and produces numbers through these.
//
//===----------------------------------------------------------------------===//

#include "Values.h"

#include "tegula/Runtime/DType.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <limits>

using namespace mlir;

namespace tegula::interp {

Data transposeData(const Data &a) {
  Data d;
  d.shape = {a.shape[1], a.shape[0]};
  d.isFloat = a.isFloat;
  for (int64_t i = 0; i < a.shape[1]; ++i)
    for (int64_t j = 0; j < a.shape[0]; ++j) {
      size_t src = size_t(j * a.shape[1] + i);
      if (d.isFloat)
        d.f.push_back(a.f[src]);
      else
        d.i.push_back(a.i[src]);
    }
  return d;
}

std::vector<int64_t> shapeOf(Type type) {
  if (auto t = dyn_cast<ShapedType>(type))
    return std::vector<int64_t>(t.getShape().begin(), t.getShape().end());
  return {};
}

int64_t product(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t e : shape)
    n *= e;
  return n;
}

AxisSplit splitAroundAxis(const std::vector<int64_t> &shape, unsigned axis) {
  AxisSplit split{1, shape[axis], 1};
  for (unsigned k = 0; k < axis; ++k)
    split.outer *= shape[k];
  for (size_t k = axis + 1; k < shape.size(); ++k)
    split.inner *= shape[k];
  return split;
}

unsigned intWidth(Type type) {
  if (auto i = dyn_cast<IntegerType>(type))
    return i.getWidth();
  return 64; // index
}

int64_t wrapInt(int64_t v, unsigned width) {
  if (width >= 64)
    return v;
  if (width == 1)
    return v & 1;
  uint64_t mask = (uint64_t(1) << width) - 1;
  uint64_t u = uint64_t(v) & mask;
  if (u >> (width - 1))
    u |= ~mask;
  return int64_t(u);
}
int64_t asSigned(int64_t v, unsigned width) {
  return width == 1 ? (v ? -1 : 0) : v;
}
uint64_t asUnsigned(int64_t v, unsigned width) {
  return width >= 64 ? uint64_t(v) : uint64_t(v) & ((uint64_t(1) << width) - 1);
}

double roundFloat(double v, Type type) {
  if (type.isF32())
    return double(float(v));
  if (type.isF16())
    return rt::roundToDType(v, rt::DType::F16);
  if (type.isBF16())
    return rt::roundToDType(v, rt::DType::BF16);
  return v;
}

int64_t floatToInt(double v, unsigned width, bool isUnsigned) {
  if (std::isnan(v))
    return 0;
  v = std::trunc(v);
  if (width == 1)
    return v != 0;
  if (isUnsigned) {
    double hi = std::ldexp(1.0, int(width)) - 1;
    if (v <= 0)
      return 0;
    if (v >= hi)
      return wrapInt(int64_t(uint64_t(hi)), width);
    return wrapInt(int64_t(uint64_t(v)), width);
  }
  double hi = std::ldexp(1.0, int(width) - 1);
  if (v >= hi)
    return width >= 64 ? std::numeric_limits<int64_t>::max() : int64_t(hi) - 1;
  if (v <= -hi)
    return width >= 64 ? std::numeric_limits<int64_t>::min() : -int64_t(hi);
  return int64_t(v);
}

double maximumF(double a, double b) {
  if (std::isnan(a) || std::isnan(b))
    return std::numeric_limits<double>::quiet_NaN();
  if (a == b)
    return std::signbit(a) ? b : a;
  return a > b ? a : b;
}
double minimumF(double a, double b) {
  if (std::isnan(a) || std::isnan(b))
    return std::numeric_limits<double>::quiet_NaN();
  if (a == b)
    return std::signbit(a) ? a : b;
  return a < b ? a : b;
}

std::string locationText(Location loc) {
  if (auto fl = dyn_cast<FileLineColLoc>(loc))
    return (fl.getFilename().getValue() + ":" + Twine(fl.getLine()) + ":" +
            Twine(fl.getColumn()))
        .str();
  std::string text;
  llvm::raw_string_ostream os(text);
  loc.print(os);
  return text;
}

} // namespace tegula::interp
