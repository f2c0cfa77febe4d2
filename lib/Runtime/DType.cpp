//===- DType.cpp - Element types and f16/bf16 conversions -----------------===//

#include "tegula/Runtime/DType.h"

#include <cmath>
#include <cstring>

namespace tegula::rt {

namespace {
uint32_t floatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float bitsFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
} // namespace

std::optional<DType> parseDType(std::string_view name) {
  if (name == "f16")
    return DType::F16;
  if (name == "bf16")
    return DType::BF16;
  if (name == "f32")
    return DType::F32;
  if (name == "i32")
    return DType::I32;
  if (name == "i64")
    return DType::I64;
  if (name == "bool")
    return DType::Bool;
  return std::nullopt;
}

const char *dtypeName(DType type) {
  switch (type) {
  case DType::F16:
    return "f16";
  case DType::BF16:
    return "bf16";
  case DType::F32:
    return "f32";
  case DType::I32:
    return "i32";
  case DType::I64:
    return "i64";
  case DType::Bool:
    return "bool";
  }
  return "?";
}

size_t dtypeSize(DType type) {
  switch (type) {
  case DType::F16:
  case DType::BF16:
    return 2;
  case DType::F32:
  case DType::I32:
    return 4;
  case DType::I64:
    return 8;
  case DType::Bool:
    return 1;
  }
  return 0;
}

bool isFloat(DType type) {
  return type == DType::F16 || type == DType::BF16 || type == DType::F32;
}

uint16_t floatToHalf(float value) {
  uint32_t x = floatBits(value);
  uint16_t sign = (x >> 16) & 0x8000;
  uint32_t abs = x & 0x7fffffff;
  if (abs > 0x7f800000) // NaN: keep it quiet and keep the top payload bits.
    return sign | 0x7e00 | ((abs >> 13) & 0x3ff);
  if (abs >= 0x477ff000) // >= 65520 rounds to infinity.
    return sign | 0x7c00;
  if (abs < 0x38800000) {
    // Subnormal half: the scaling by 2^24 is exact; nearbyint rounds to even
    // and 1024 lands on the smallest normal's encoding by construction.
    float scaled = bitsFloat(abs) * 16777216.0f;
    return sign | uint16_t(std::nearbyint(scaled));
  }
  uint32_t h = ((abs >> 23) - 112) << 10 | ((abs >> 13) & 0x3ff);
  uint32_t rest = abs & 0x1fff;
  if (rest > 0x1000 || (rest == 0x1000 && (h & 1)))
    ++h; // A carry into the exponent is the right result.
  return sign | uint16_t(h);
}

float halfToFloat(uint16_t bits) {
  uint32_t sign = uint32_t(bits & 0x8000) << 16;
  uint32_t exp = (bits >> 10) & 0x1f;
  uint32_t mant = bits & 0x3ff;
  if (exp == 0) {
    float v = float(mant) / 16777216.0f;
    return sign ? -v : v;
  }
  if (exp == 31)
    return bitsFloat(sign | 0x7f800000 | (mant << 13));
  return bitsFloat(sign | ((exp + 112) << 23) | (mant << 13));
}

uint16_t floatToBF16(float value) {
  uint32_t x = floatBits(value);
  if ((x & 0x7fffffff) > 0x7f800000)
    return uint16_t((x >> 16) | 0x40);
  x += 0x7fff + ((x >> 16) & 1);
  return uint16_t(x >> 16);
}

float bf16ToFloat(uint16_t bits) { return bitsFloat(uint32_t(bits) << 16); }

double roundToDType(double value, DType type) {
  switch (type) {
  case DType::F16:
    return halfToFloat(floatToHalf(float(value)));
  case DType::BF16:
    return bf16ToFloat(floatToBF16(float(value)));
  case DType::F32:
    return float(value);
  case DType::I32:
  case DType::I64:
    return std::trunc(value);
  case DType::Bool:
    return value != 0;
  }
  return value;
}

} // namespace tegula::rt
