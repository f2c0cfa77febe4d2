//===- Tensor.cpp - Host tensors and .npy files ---------------------------===//

#include "tegula/Runtime/Tensor.h"

#include "tegula/Runtime/File.h"
#include "tegula/Runtime/Text.h"

#include <cmath>
#include <cstring>

namespace tegula::rt {

std::string formatShape(const std::vector<int64_t> &shape) {
  std::vector<std::string> items;
  for (int64_t d : shape)
    items.push_back(std::to_string(d));
  return "[" + joinList(items) + "]";
}

std::string formatIndex(const std::vector<int64_t> &shape, int64_t index) {
  std::vector<int64_t> idx(shape.size());
  for (size_t i = shape.size(); i-- > 0;) {
    if (shape[i] == 0)
      continue;
    idx[i] = index % shape[i];
    index /= shape[i];
  }
  return formatShape(idx);
}

size_t npyItemSize(const std::string &descr) {
  if (descr == "|b1" || descr == "|u1" || descr == "|i1")
    return 1;
  if (descr == "<f2")
    return 2;
  if (descr == "<f4" || descr == "<i4")
    return 4;
  if (descr == "<f8" || descr == "<i8")
    return 8;
  return 0;
}

double npyElement(const NpyArray &array, size_t index) {
  const uint8_t *p = array.data.data() + index * npyItemSize(array.descr);
  const std::string &d = array.descr;
  if (d == "<f2") {
    uint16_t h;
    std::memcpy(&h, p, 2);
    return halfToFloat(h);
  }
  if (d == "<f4") {
    float f;
    std::memcpy(&f, p, 4);
    return f;
  }
  if (d == "<f8") {
    double f;
    std::memcpy(&f, p, 8);
    return f;
  }
  if (d == "<i4") {
    int32_t i;
    std::memcpy(&i, p, 4);
    return i;
  }
  if (d == "<i8") {
    int64_t i;
    std::memcpy(&i, p, 8);
    return double(i);
  }
  if (d == "|i1")
    return int8_t(*p);
  return *p;
}

namespace {
/// Finds `'key':` in a header dict and returns the position after the colon.
size_t findKey(const std::string &header, const std::string &key) {
  for (char quote : {'\'', '"'}) {
    std::string pattern = quote + key + quote;
    size_t at = header.find(pattern);
    if (at == std::string::npos)
      continue;
    at = header.find(':', at + pattern.size());
    if (at != std::string::npos)
      return at + 1;
  }
  return std::string::npos;
}

/// How many times `'key':` (either quote) appears in a header dict. Python
/// keeps the last of duplicate keys and findKey the first: such a header
/// is refused.
int countKey(const std::string &header, const std::string &key) {
  int count = 0;
  for (char quote : {'\'', '"'}) {
    std::string pattern = quote + key + quote;
    for (size_t at = header.find(pattern); at != std::string::npos;
         at = header.find(pattern, at + 1)) {
      size_t colon = header.find_first_not_of(" \t", at + pattern.size());
      count += colon != std::string::npos && header[colon] == ':';
    }
  }
  return count;
}
} // namespace

bool parseNpy(const std::vector<uint8_t> &bytes, NpyArray &result,
              std::string &error) {
  static const char magic[] = "\x93NUMPY";
  if (bytes.size() < 10 || std::memcmp(bytes.data(), magic, 6) != 0) {
    error = "not a .npy file (bad magic)";
    return false;
  }
  uint8_t major = bytes[6];
  size_t headerLen, start;
  if (major == 1) {
    headerLen = bytes[8] | (size_t(bytes[9]) << 8);
    start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) {
      error = "truncated .npy header";
      return false;
    }
    headerLen = bytes[8] | (size_t(bytes[9]) << 8) | (size_t(bytes[10]) << 16) |
                (size_t(bytes[11]) << 24);
    start = 12;
  } else {
    error = "unsupported .npy version " + std::to_string(major);
    return false;
  }
  if (bytes.size() < start + headerLen) {
    error = "truncated .npy header";
    return false;
  }
  std::string header(bytes.begin() + start, bytes.begin() + start + headerLen);
  // A Python dict literal, padded with spaces and ended by a newline.
  size_t first = header.find_first_not_of(" \t\r\n");
  size_t last = header.find_last_not_of(" \t\r\n");
  if (first == std::string::npos || header[first] != '{' ||
      header[last] != '}') {
    error = "malformed .npy header: not a dict '{...}'";
    return false;
  }

  for (const char *key : {"descr", "fortran_order", "shape"})
    if (countKey(header, key) > 1) {
      error = std::string("malformed .npy header: the key '") + key +
              "' appears more than once";
      return false;
    }

  size_t at = findKey(header, "descr");
  size_t q1 = at == std::string::npos ? at : header.find_first_of("'\"", at);
  size_t q2 = q1 == std::string::npos ? q1 : header.find(header[q1], q1 + 1);
  if (q2 == std::string::npos) {
    error = "malformed .npy header: no 'descr'";
    return false;
  }
  NpyArray array;
  array.descr = header.substr(q1 + 1, q2 - q1 - 1);
  if (npyItemSize(array.descr) == 0) {
    error = "unsupported .npy dtype '" + abbreviate(array.descr) +
            "' (expected <f2, <f4, <f8, <i4, <i8 or |b1)";
    return false;
  }

  at = findKey(header, "shape");
  size_t open = at == std::string::npos ? at : header.find('(', at);
  size_t close = open == std::string::npos ? open : header.find(')', open);
  if (close == std::string::npos) {
    error = "malformed .npy header: no 'shape'";
    return false;
  }
  std::string dims = header.substr(open + 1, close - open - 1);
  auto badShape = [&](const char *why) {
    error = "malformed .npy shape '(" + abbreviate(dims) + ")'" + why;
    return false;
  };
  size_t numel = 1;
  for (size_t i = 0; i < dims.size();) {
    while (i < dims.size() && (dims[i] == ' ' || dims[i] == ','))
      ++i;
    if (i == dims.size())
      break;
    if (dims[i] == '-')
      return badShape(": a dim is negative");
    if (!std::isdigit((unsigned char)dims[i]))
      return badShape("");
    int64_t d = 0;
    while (i < dims.size() && std::isdigit((unsigned char)dims[i])) {
      if (__builtin_mul_overflow(d, 10, &d) ||
          __builtin_add_overflow(d, dims[i] - '0', &d))
        return badShape(": a dim does not fit in 64 bits");
      ++i;
    }
    // 'L' suffixes come from Python 2 writers.
    if (i < dims.size() && dims[i] == 'L')
      ++i;
    array.shape.push_back(d);
    if (__builtin_mul_overflow(numel, size_t(d), &numel))
      return badShape(": the element count does not fit in 64 bits");
  }

  at = findKey(header, "fortran_order");
  size_t value = at == std::string::npos ? at
                                         : header.find_first_not_of(' ', at);
  if (value != std::string::npos && header.compare(value, 4, "True") == 0) {
    size_t nontrivial = 0;
    for (int64_t d : array.shape)
      nontrivial += d > 1;
    if (nontrivial > 1) {
      error = "Fortran-order .npy files are not supported";
      return false;
    }
  }

  size_t need;
  if (__builtin_mul_overflow(numel, npyItemSize(array.descr), &need) ||
      bytes.size() - start - headerLen != need) {
    error = "data size " + std::to_string(bytes.size() - start - headerLen) +
            " bytes does not match shape " + formatShape(array.shape) + " of " +
            array.descr;
    return false;
  }
  array.data.assign(bytes.begin() + start + headerLen, bytes.end());
  result = std::move(array);
  return true;
}

bool readNpy(const std::string &path, NpyArray &result, std::string &error) {
  std::string contents, reason;
  if (!readFile(path, contents, reason)) {
    error = "cannot open '" + path + "': " + reason;
    return false;
  }
  std::vector<uint8_t> bytes(contents.begin(), contents.end());
  if (!parseNpy(bytes, result, error)) {
    error = "'" + path + "': " + error;
    return false;
  }
  return true;
}

std::vector<uint8_t> serializeNpy(const NpyArray &array) {
  std::string dict =
      "{'descr': '" + array.descr + "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < array.shape.size(); ++i)
    dict += (i ? ", " : "") + std::to_string(array.shape[i]);
  if (array.shape.size() == 1)
    dict += ","; // "(2, 3)" but "(5,)".
  dict += "), }";
  // numpy pads the header with spaces so the data starts 64-byte aligned.
  size_t total = 10 + dict.size() + 1;
  dict.append((64 - total % 64) % 64, ' ');
  dict += '\n';
  std::vector<uint8_t> out = {0x93,
                              'N',
                              'U',
                              'M',
                              'P',
                              'Y',
                              1,
                              0,
                              uint8_t(dict.size() & 0xff),
                              uint8_t(dict.size() >> 8)};
  out.insert(out.end(), dict.begin(), dict.end());
  out.insert(out.end(), array.data.begin(), array.data.end());
  return out;
}

bool writeNpy(const std::string &path, const NpyArray &array,
              std::string &error) {
  std::vector<uint8_t> bytes = serializeNpy(array);
  std::string reason;
  if (!writeFile(path,
                 std::string_view(reinterpret_cast<const char *>(bytes.data()),
                                  bytes.size()),
                 reason)) {
    error = "cannot write '" + path + "': " + reason;
    return false;
  }
  return true;
}

HostTensor::HostTensor(DType dtype, std::vector<int64_t> shape)
    : dtype(dtype), shape(std::move(shape)) {
  bytes.resize(size_t(numel()) * dtypeSize(dtype));
}

int64_t HostTensor::numel() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

double HostTensor::get(int64_t index) const {
  const uint8_t *p = bytes.data() + index * dtypeSize(dtype);
  switch (dtype) {
  case DType::F16:
  case DType::BF16: {
    uint16_t h;
    std::memcpy(&h, p, 2);
    return dtype == DType::F16 ? halfToFloat(h) : bf16ToFloat(h);
  }
  case DType::F32: {
    float f;
    std::memcpy(&f, p, 4);
    return f;
  }
  case DType::I32: {
    int32_t i;
    std::memcpy(&i, p, 4);
    return i;
  }
  case DType::I64: {
    int64_t i;
    std::memcpy(&i, p, 8);
    return double(i);
  }
  case DType::Bool:
    return *p != 0;
  }
  return 0;
}

void HostTensor::set(int64_t index, double value) {
  uint8_t *p = bytes.data() + index * dtypeSize(dtype);
  switch (dtype) {
  case DType::F16:
  case DType::BF16: {
    uint16_t h = dtype == DType::F16 ? floatToHalf(float(value))
                                     : floatToBF16(float(value));
    std::memcpy(p, &h, 2);
    return;
  }
  case DType::F32: {
    float f = float(value);
    std::memcpy(p, &f, 4);
    return;
  }
  case DType::I32: {
    int32_t i = int32_t(value);
    std::memcpy(p, &i, 4);
    return;
  }
  case DType::I64: {
    int64_t i = int64_t(value);
    std::memcpy(p, &i, 8);
    return;
  }
  case DType::Bool:
    *p = value != 0;
    return;
  }
}

std::vector<double> HostTensor::toDoubles() const {
  std::vector<double> out(static_cast<size_t>(numel()));
  for (int64_t i = 0; i < numel(); ++i)
    out[size_t(i)] = get(i);
  return out;
}

const char *npyDescrFor(DType type) {
  switch (type) {
  case DType::F16:
    return "<f2";
  case DType::BF16:
  case DType::F32:
    return "<f4";
  case DType::I32:
    return "<i4";
  case DType::I64:
    return "<i8";
  case DType::Bool:
    return "|b1";
  }
  return "";
}

bool tensorFromNpy(const NpyArray &array, DType type, HostTensor &result,
                   std::string &error) {
  if (array.descr != npyDescrFor(type)) {
    error = std::string("holds ") + array.descr + " but a " + dtypeName(type) +
            " tensor is read from " + npyDescrFor(type);
    return false;
  }
  HostTensor tensor(type, array.shape);
  if (type == DType::BF16) {
    for (int64_t i = 0; i < tensor.numel(); ++i)
      tensor.set(i, npyElement(array, size_t(i)));
  } else if (type == DType::Bool) {
    for (int64_t i = 0; i < tensor.numel(); ++i)
      tensor.bytes[size_t(i)] = array.data[size_t(i)] != 0;
  } else {
    tensor.bytes = array.data;
  }
  result = std::move(tensor);
  return true;
}

NpyArray tensorToNpy(const HostTensor &tensor) {
  NpyArray array;
  array.descr = npyDescrFor(tensor.dtype);
  array.shape = tensor.shape;
  if (tensor.dtype != DType::BF16) {
    array.data = tensor.bytes;
    return array;
  }
  array.data.resize(size_t(tensor.numel()) * 4);
  for (int64_t i = 0; i < tensor.numel(); ++i) {
    float f = float(tensor.get(i)); // Exact: bf16 is a prefix of f32.
    std::memcpy(array.data.data() + i * 4, &f, 4);
  }
  return array;
}

namespace {
/// splitmix64: tiny, seedable, identical on every platform (unlike the
/// standard distributions).
struct Rng {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  double uniform() { return double(next() >> 11) * 0x1.0p-53; }
};

uint64_t poisonBits(DType type) {
  switch (type) {
  case DType::F16:
    return 0x7e5a; // quiet NaN, payload 0x25a
  case DType::BF16:
    return 0x7fa5; // quiet NaN, payload 0x25
  case DType::F32:
    return 0x7fc5a5a5; // quiet NaN, payload 0x45a5a5
  default:
    return 0xa5a5a5a5a5a5a5a5ull;
  }
}
} // namespace

void fillRandom(HostTensor &tensor, uint64_t seed) {
  Rng rng{seed};
  for (int64_t i = 0; i < tensor.numel(); ++i) {
    if (tensor.dtype == DType::Bool) {
      tensor.set(i, double(rng.next() >> 63));
      continue;
    }
    if (!isFloat(tensor.dtype)) {
      int64_t v = int64_t(rng.next() >> 60) - 8; // -8..7
      tensor.set(i, double(v >= 0 ? v + 1 : v));
      continue;
    }
    double v;
    do
      v = 2 * rng.uniform() - 1;
    while (std::fabs(v) < 1.0 / 64);
    tensor.set(i, v);
  }
}

void fillPoison(HostTensor &tensor) {
  uint64_t bits = poisonBits(tensor.dtype);
  size_t size = dtypeSize(tensor.dtype);
  for (size_t at = 0; at < tensor.bytes.size(); at += size)
    std::memcpy(tensor.bytes.data() + at, &bits, size);
}

int64_t countPoison(const HostTensor &tensor, int64_t &firstIndex) {
  uint64_t bits = poisonBits(tensor.dtype);
  size_t size = dtypeSize(tensor.dtype);
  int64_t count = 0;
  firstIndex = -1;
  for (int64_t i = 0; i < tensor.numel(); ++i) {
    if (std::memcmp(tensor.bytes.data() + i * size, &bits, size) != 0)
      continue;
    if (count++ == 0)
      firstIndex = i;
  }
  return count;
}

} // namespace tegula::rt
