//===- Tensor.h - Host tensors and .npy files -------------------*- C++ -*-===//
//
// A host tensor holds elements in the device layout of its dtype (row-major,
// f16/bf16 as 16-bit patterns, bool as one byte), so it can be copied to and
// from the GPU as is. .npy files map f16 to <f2, f32 and bf16 to <f4, i32
// to <i4, i64 to <i8 and bool to |b1.
//
//===----------------------------------------------------------------------===//

#ifndef TEGULA_RUNTIME_TENSOR_H
#define TEGULA_RUNTIME_TENSOR_H

#include "tegula/Runtime/DType.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tegula::rt {

/// Formats a shape as "[4096, 64]".
std::string formatShape(const std::vector<int64_t> &shape);

/// The contents of a .npy file, undecoded.
struct NpyArray {
  std::string descr; // e.g. "<f4"
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;
};

bool parseNpy(const std::vector<uint8_t> &bytes, NpyArray &result,
              std::string &error);
bool readNpy(const std::string &path, NpyArray &result, std::string &error);
std::vector<uint8_t> serializeNpy(const NpyArray &array);
bool writeNpy(const std::string &path, const NpyArray &array,
              std::string &error);
/// Bytes per element of a supported descr, 0 if unsupported.
size_t npyItemSize(const std::string &descr);
/// Element `index` of a supported descr as a double.
double npyElement(const NpyArray &array, size_t index);

struct HostTensor {
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;

  HostTensor() = default;
  HostTensor(DType dtype, std::vector<int64_t> shape);
  int64_t numel() const;
  double get(int64_t index) const;
  /// Stores `value` rounded to the dtype.
  void set(int64_t index, double value);
  std::vector<double> toDoubles() const;
};

/// The .npy descr a dtype is stored as.
const char *npyDescrFor(DType type);
/// Converts a file's contents into a tensor of `type`; the descr must be the
/// one npyDescrFor gives (bf16 from <f4 rounds to nearest even).
bool tensorFromNpy(const NpyArray &array, DType type, HostTensor &result,
                   std::string &error);
/// bf16 widens exactly to <f4.
NpyArray tensorToNpy(const HostTensor &tensor);

/// Seeded values in [-1, -1/64] U [1/64, 1] rounded to the dtype (floats),
/// in [-8, 8] without 0 (integers), or 0/1 (bool). The stream depends only on
/// `seed`, so one tensor's values do not change when another is read from a
/// file.
void fillRandom(HostTensor &tensor, uint64_t seed);
/// Fills with the poison pattern: a NaN with a payload for floats, 0xA5 bytes
/// for integers and bool.
void fillPoison(HostTensor &tensor);
/// Counts elements still bit-identical to the poison pattern.
int64_t countPoison(const HostTensor &tensor, int64_t &firstIndex);
/// Formats a flat index as a multi-index "[0, 3, 17]".
std::string formatIndex(const std::vector<int64_t> &shape, int64_t index);

} // namespace tegula::rt

#endif // TEGULA_RUNTIME_TENSOR_H
