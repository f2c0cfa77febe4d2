//===- DType.h - Element types of kernel arguments --------------*- C++ -*-===//
//
// The element types a bundle can name, their device sizes and the exact
// conversions between f16/bf16 bit patterns and float that the runner needs
// on the host.
//
//===----------------------------------------------------------------------===//

#ifndef TEGULA_RUNTIME_DTYPE_H
#define TEGULA_RUNTIME_DTYPE_H

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace tegula::rt {

enum class DType { F16, BF16, F32, I32, I64, Bool };

/// Parses "f16", "bf16", "f32", "i32", "i64" or "bool".
std::optional<DType> parseDType(std::string_view name);
const char *dtypeName(DType type);
/// Bytes per element in device memory (bool is one byte).
size_t dtypeSize(DType type);
bool isFloat(DType type);

/// IEEE binary16 conversions, round to nearest even.
uint16_t floatToHalf(float value);
float halfToFloat(uint16_t bits);
/// bfloat16 conversions, round to nearest even; NaN stays NaN.
uint16_t floatToBF16(float value);
float bf16ToFloat(uint16_t bits);

/// Rounds a double to the nearest value representable in `type` (integers
/// truncate toward zero, bool is `value != 0`).
double roundToDType(double value, DType type);

} // namespace tegula::rt

#endif // TEGULA_RUNTIME_DTYPE_H
