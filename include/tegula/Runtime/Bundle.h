//===- Bundle.h - Compiled-kernel bundles (KERNEL.json + .ptx) --*- C++ -*-===//
//
// Loads and validates a bundle as described in docs/spec tools.md. All
// validation that needs no GPU happens here, so a malformed bundle is
// reported the same way on any machine.
//
//===----------------------------------------------------------------------===//

#ifndef TEGULA_RUNTIME_BUNDLE_H
#define TEGULA_RUNTIME_BUNDLE_H

#include "tegula/Runtime/DType.h"
#include "tegula/Runtime/Expr.h"

#include <nlohmann/json.hpp>

#include <array>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tegula::rt {

enum class Access { Read, Write, ReadWrite };
const char *accessName(Access access);

struct Param {
  std::string name;
  bool isTensor = false;
  DType dtype = DType::F32;
  Access access = Access::Read; // tensors only
  std::vector<Expr> dims;       // tensors only
};

/// A specialized build of the kernel, chosen at launch when every `when`
/// condition holds (the first such variant wins; none: the general code).
/// Same entry name and ABI, its own PTX file.
struct Variant {
  std::string name;
  std::string ptxPath, ptx;
  std::vector<Expr> when;
  int64_t sharedBytes = 0;
};

struct Bundle {
  std::string jsonPath, ptxPath;
  std::string ptx;
  std::string kernel, entry, target;
  int64_t threads = 0;
  int64_t sharedBytes = 0;
  nlohmann::json templateParams = nlohmann::json::object();
  /// The "reference" field: null or an object with at least "name".
  nlohmann::json reference;
  std::vector<Param> params;
  std::vector<std::string> sizeVars;
  std::array<Expr, 3> grid;
  std::vector<Expr> requires_;
  std::optional<Expr> flops, bytes;
  std::vector<Variant> variants;
  /// Positions in `params` and `sizeVars` by name, kept by parseBundleJson
  /// so that a bundle with 100,000 of them is not checked in quadratic time.
  std::map<std::string, size_t, std::less<>> paramIndex, sizeVarIndex;

  const Param *findParam(std::string_view name) const;
  bool isSizeVar(std::string_view name) const;
  /// Bits of each kernel parameter of the ABI, in order.
  std::vector<unsigned> abiParamBits() const;
  /// The PTX text and dynamic shared memory of variant `variant` (-1: the
  /// general code).
  const std::string &ptxOf(int variant) const;
  int64_t sharedBytesOf(int variant) const;
  /// "general" or the variant's name.
  std::string variantName(int variant) const;
};

/// Parses JSON from a user (a bundle, an option) without throwing; arrays
/// and objects nested more than 64 deep are an error, as nlohmann copies
/// and prints values recursively. The error starts "invalid JSON: ".
bool parseUserJson(const std::string &text, nlohmann::json &value,
                   std::string &error);
/// Parses KERNEL.json text; `jsonPath` only names it in messages.
bool parseBundleJson(const std::string &text, const std::string &jsonPath,
                     Bundle &bundle, std::string &error);
/// Reads KERNEL.json and the KERNEL.ptx beside it, and checks that the PTX
/// has the entry with the parameter list the ABI gives.
bool loadBundle(const std::string &jsonPath, Bundle &bundle,
                std::string &error);
/// Finds `.entry NAME(` in PTX text and returns the bit width of each
/// parameter; false if the entry is missing.
bool ptxEntryParams(const std::string &ptx, const std::string &entry,
                    std::vector<unsigned> &bits);

} // namespace tegula::rt

#endif // TEGULA_RUNTIME_BUNDLE_H
