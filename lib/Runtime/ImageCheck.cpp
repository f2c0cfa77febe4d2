//===- ImageCheck.cpp - A bundle's PTX and cubins checked on the host -----===//

#include "tegula/Runtime/ImageCheck.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <sstream>
#include <vector>

namespace tegula::rt {

namespace {
/// A little-endian field of the ELF file (x86-64 hosts only).
template <typename T> T field(const std::string &image, uint64_t at) {
  T value;
  std::memcpy(&value, image.data() + at, sizeof(T));
  return value;
}

/// Whether `bytes` bytes at `offset` lie inside a file of `size` bytes.
bool inside(uint64_t offset, uint64_t bytes, uint64_t size) {
  return offset <= size && bytes <= size - offset;
}

std::string outside(const std::string &what, uint64_t offset, uint64_t bytes,
                    uint64_t size) {
  return "is truncated or corrupt: " + what + " (" + std::to_string(bytes) +
         " bytes at byte " + std::to_string(offset) +
         ") ends past the end of the file (" + std::to_string(size) + " bytes)";
}

constexpr uint64_t kElf64HeaderBytes = 64, kPhdrBytes = 56, kShdrBytes = 64;
constexpr uint32_t kShtNull = 0, kShtStrtab = 3, kShtNobits = 8;

/// A header table of `count` entries of `entrySize` bytes (at least
/// `minimum`, ELF64's size) at `table`, inside the file.
bool checkTable(const std::string &image, const char *what, uint64_t table,
                uint16_t entrySize, uint16_t count, uint64_t minimum,
                std::string &error) {
  if (entrySize < minimum) {
    error = std::string("has ") + what + " headers of " +
            std::to_string(entrySize) + " bytes (ELF64's are " +
            std::to_string(minimum) + ")";
    return false;
  }
  if (!inside(table, uint64_t(count) * entrySize, image.size())) {
    error = outside(std::string("its ") + what + " header table", table,
                    uint64_t(count) * entrySize, image.size());
    return false;
  }
  return true;
}

/// The program headers: each segment's file bytes inside the file.
bool checkSegments(const std::string &image, std::string &error) {
  const uint64_t size = image.size(), table = field<uint64_t>(image, 32);
  const uint16_t entrySize = field<uint16_t>(image, 54),
                 count = field<uint16_t>(image, 56);
  if (count == 0)
    return true;
  if (!checkTable(image, "program", table, entrySize, count, kPhdrBytes,
                  error))
    return false;
  for (uint16_t i = 0; i < count; ++i) {
    uint64_t header = table + uint64_t(i) * entrySize;
    uint64_t offset = field<uint64_t>(image, header + 8),
             bytes = field<uint64_t>(image, header + 32);
    if (!inside(offset, bytes, size)) {
      error = outside("segment " + std::to_string(i), offset, bytes, size);
      return false;
    }
  }
  return true;
}

/// The section headers: each section's bytes inside the file, and the
/// section-name string table a string table.
bool checkSections(const std::string &image, std::string &error) {
  const uint64_t size = image.size(), table = field<uint64_t>(image, 40);
  const uint16_t entrySize = field<uint16_t>(image, 58),
                 count = field<uint16_t>(image, 60),
                 names = field<uint16_t>(image, 62);
  if (count == 0) {
    if (names == 0)
      return true;
    error = "names section " + std::to_string(names) +
            " as its section-name string table but has no sections";
    return false;
  }
  if (!checkTable(image, "section", table, entrySize, count, kShdrBytes,
                  error))
    return false;
  auto header = [&](uint16_t i) { return table + uint64_t(i) * entrySize; };
  for (uint16_t i = 0; i < count; ++i) {
    uint32_t type = field<uint32_t>(image, header(i) + 4);
    uint64_t offset = field<uint64_t>(image, header(i) + 24),
             bytes = field<uint64_t>(image, header(i) + 32);
    if (type != kShtNull && type != kShtNobits &&
        !inside(offset, bytes, size)) {
      error = outside("section " + std::to_string(i), offset, bytes, size);
      return false;
    }
  }
  if (names >= count) {
    error = "names section " + std::to_string(names) +
            " as its section-name string table but has " +
            std::to_string(count) + " sections";
    return false;
  }
  uint64_t namesAt = field<uint64_t>(image, header(names) + 24),
           namesBytes = field<uint64_t>(image, header(names) + 32);
  if (field<uint32_t>(image, header(names) + 4) != kShtStrtab ||
      namesBytes == 0 || image[namesAt + namesBytes - 1] != '\0') {
    error = "has a section-name string table (section " +
            std::to_string(names) + ") that is not a string table";
    return false;
  }
  return true;
}
} // namespace

bool checkElfImage(const std::string &image, std::string &error) {
  if (image.size() < kElf64HeaderBytes) {
    error = "is truncated: " + std::to_string(image.size()) +
            " bytes, less than an ELF64 header (64)";
    return false;
  }
  if (image[4] != 2 || image[5] != 1) {
    error = "is not a 64-bit little-endian ELF file";
    return false;
  }
  return checkSegments(image, error) && checkSections(image, error);
}

std::string stripPtxComments(const std::string &ptx) {
  std::string code = ptx;
  enum { Code, Line, Block, String } state = Code;
  for (size_t i = 0; i < code.size(); ++i) {
    char c = code[i], next = i + 1 < code.size() ? code[i + 1] : '\0';
    switch (state) {
    case Code:
      if (c == '"')
        state = String;
      else if (c == '/' && (next == '/' || next == '*')) {
        state = next == '/' ? Line : Block;
        code[i] = code[i + 1] = ' ';
        ++i;
      }
      break;
    case String:
      if (c == '\\' && next)
        ++i;
      else if (c == '"' || c == '\n')
        state = Code;
      break;
    case Line:
      if (c == '\n')
        state = Code;
      else
        code[i] = ' ';
      break;
    case Block:
      if (c == '*' && next == '/') {
        code[i] = code[i + 1] = ' ';
        ++i;
        state = Code;
      } else if (c != '\n') {
        code[i] = ' ';
      }
      break;
    }
  }
  return code;
}

bool ptxEntryBodyCloses(const std::string &ptx, size_t paramsEnd) {
  size_t open = ptx.find('{', paramsEnd);
  if (open == std::string::npos)
    return false;
  int64_t depth = 0;
  for (size_t i = open; i < ptx.size(); ++i) {
    if (ptx[i] == '{')
      ++depth;
    else if (ptx[i] == '}' && --depth == 0)
      return true;
  }
  return false;
}

namespace {
/// The decimal number at the start of `text`, saturating at 2^40.
int64_t leadingCount(const std::string &text) {
  int64_t value = 0;
  for (char c : text) {
    if (!std::isdigit((unsigned char)c))
      break;
    value = std::min<int64_t>(value * 10 + (c - '0'), int64_t(1) << 40);
  }
  return value;
}

/// The bytes one `.shared` declaration statement (its text without the
/// ';') reserves: element width times every [count] of every name.
int64_t sharedDeclarationBytes(const std::string &statement) {
  std::stringstream tokens(statement);
  std::string token, names;
  int64_t width = 0, lanes = 1;
  bool shared = false;
  while (tokens >> token) {
    if (token == ".extern")
      return 0; // dynamic: sized at launch
    if (token == ".shared") {
      shared = true;
    } else if (token.size() >= 3 && token[0] == '.' &&
               std::strchr("bsuf", token[1]) &&
               std::isdigit((unsigned char)token[2])) {
      width = leadingCount(token.substr(2)) / 8;
    } else if (token.size() >= 3 && token[0] == '.' && token[1] == 'v' &&
               std::isdigit((unsigned char)token[2])) {
      lanes = leadingCount(token.substr(2));
    } else if (token == ".align") {
      tokens >> token;
    } else if (token[0] != '.') {
      names += token;
    }
  }
  if (!shared)
    return 0;
  int64_t total = 0, limit = int64_t(1) << 40;
  std::stringstream list(names);
  std::string name;
  while (std::getline(list, name, ',')) {
    int64_t bytes = std::min(width * lanes, limit);
    for (size_t at = name.find('['); at != std::string::npos;
         at = name.find('[', at + 1))
      bytes = std::min(bytes * leadingCount(name.substr(at + 1)), limit);
    total = std::min(total + bytes, limit);
  }
  return total;
}
} // namespace

int64_t ptxStaticSharedBytes(const std::string &ptx) {
  int64_t total = 0;
  size_t start = 0;
  while (start < ptx.size()) {
    size_t end = std::min(ptx.find(';', start), ptx.size());
    // A statement starts after the last brace before it.
    std::string statement = ptx.substr(start, end - start);
    size_t brace = statement.find_last_of("{}");
    if (brace != std::string::npos)
      statement.erase(0, brace + 1);
    // Directives start with '.'; instructions (st.shared.f32) do not.
    size_t first = statement.find_first_not_of(" \t\r\n");
    if (first != std::string::npos && statement[first] == '.')
      total =
          std::min(total + sharedDeclarationBytes(statement), int64_t(1) << 40);
    start = end + 1;
  }
  return total;
}

} // namespace tegula::rt
