//===- Values.h - The interpreter's values and numeric rules ----*- C++ -*-===//
//
// What an SSA value holds while a kernel runs, and the rules every op uses
// to keep numbers the GPU's: floats are doubles already rounded to their
// element type, integers are int64 sign-extended from their width (i1 as
// 0/1), so an op computes in double or 64 bits and rounds or wraps its
// result to the type it produces.
//
//===----------------------------------------------------------------------===//

#ifndef TEGULA_LIB_INTERPRETER_VALUES_H
#define TEGULA_LIB_INTERPRETER_VALUES_H

#include "mlir/IR/Location.h"
#include "mlir/IR/Types.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tegula::interp {

/// A block of numbers; rank 0 is a scalar.
struct Data {
  std::vector<int64_t> shape;
  bool isFloat = false;
  std::vector<double> f;
  std::vector<int64_t> i;
  size_t size() const { return isFloat ? f.size() : i.size(); }
};
using DataP = std::shared_ptr<const Data>;

/// What an SSA value holds: numbers, a kernel parameter's pointer, a global
/// tensor (the parameter and its extents) or a pipeline.
struct RtValue {
  enum Kind { Unset, Numbers, Ptr, Tensor, Pipeline } kind = Unset;
  DataP data;
  int param = -1;               // Ptr, Tensor: the kernel parameter
  std::vector<int64_t> extents; // Tensor
  int pipeline = -1;            // Pipeline: index into the program's rings
};

/// The transpose of a 2-D tile.
Data transposeData(const Data &a);

/// The static shape of a shaped type; empty for a scalar.
std::vector<int64_t> shapeOf(mlir::Type type);
int64_t product(const std::vector<int64_t> &shape);

/// A row-major shape seen around `axis`: element (o, k, i) is at
/// (o * len + k) * inner + i.
struct AxisSplit {
  int64_t outer, len, inner;
};
AxisSplit splitAroundAxis(const std::vector<int64_t> &shape, unsigned axis);

/// The width of an integer type; 64 for index.
unsigned intWidth(mlir::Type type);
/// Wraps to `width` bits: sign-extended, except i1 which is 0 or 1.
int64_t wrapInt(int64_t v, unsigned width);
/// A held integer read as signed (i1 true is -1) or unsigned.
int64_t asSigned(int64_t v, unsigned width);
uint64_t asUnsigned(int64_t v, unsigned width);

/// Rounds a value computed in double to a float element type.
double roundFloat(double v, mlir::Type type);
/// A float to an integer of `width` bits, truncating and saturating (as
/// cvt.rzi does); NaN gives 0.
int64_t floatToInt(double v, unsigned width, bool isUnsigned);
/// arith.maximumf/minimumf: NaN propagates, -0 < +0.
double maximumF(double a, double b);
double minimumF(double a, double b);

/// FILE:LINE:COL of a location, or its printed form.
std::string locationText(mlir::Location loc);

} // namespace tegula::interp

#endif // TEGULA_LIB_INTERPRETER_VALUES_H
