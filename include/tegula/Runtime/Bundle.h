//===- Bundle.h - Compiled-kernel bundles (KERNEL.json + .ptx) --*- C++ -*-===//
//
// Loads and validates a bundle as described in docs/spec tools.md. All
// validation that needs no GPU happens here, so a malformed bundle is
// reported the same way on any machine. The one writer (BundleWriter.cpp)
// writes the same typed Bundle back.
//
//===----------------------------------------------------------------------===//

#ifndef TEGULA_RUNTIME_BUNDLE_H
#define TEGULA_RUNTIME_BUNDLE_H

#include "tegula/Runtime/DType.h"
#include "tegula/Runtime/Expr.h"

#include <nlohmann/json.hpp>

#include <array>
#include <atomic>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tegula::rt {

enum class Access { Read, Write, ReadWrite };
const char *accessName(Access access);

/// Tensors, and strided views, over this many bytes are refused at launch.
constexpr int64_t kMaxTensorBytes = int64_t(1) << 40;

struct Param {
  std::string name;
  bool isTensor = false;
  DType dtype = DType::F32;
  Access access = Access::Read; // tensors only
  std::vector<Expr> dims;       // tensors only
  /// Tensors: its strides come at launch, after the size variables.
  bool strided = false;

  /// Tensors: the device address alignment an argument needs. Contiguous
  /// tensors are accessed with 16-byte vectors; a strided view may start at
  /// any element (a column slice).
  uint64_t alignment() const { return strided ? dtypeSize(dtype) : 16; }
};

/// A specialized build of the kernel, chosen at launch when every `when`
/// condition holds (the first such variant wins; none: the general code).
/// Same entry name and ABI, its own PTX file and optional cubin.
struct Variant {
  std::string name;
  std::string ptxPath, ptx;
  /// The cubin's path and bytes (an ELF image); both empty when none.
  std::string cubinPath, cubin;
  std::vector<Expr> when;
  int64_t sharedBytes = 0;
  /// From `ptxas -v`, when tilec ran it (informational): registers, and
  /// bytes of spill stores and loads summed over the cubin's functions.
  std::optional<int64_t> registers, spillBytes, spillLoadBytes;
};

/// One tuning configuration (docs/tuning.md): the kernel compiled for one
/// set of template parameters. The ABI is the bundle's; the code, launch
/// shape and variants are its own. A bundle without "configs" has exactly
/// one, described by its top level, with an empty name.
struct Config {
  std::string name;
  nlohmann::json defines = nlohmann::json::object();
  std::string ptxPath, ptx;
  std::string cubinPath, cubin;
  std::array<Expr, 3> grid;
  int64_t threads = 0;
  int64_t sharedBytes = 0;
  /// As a Variant's.
  std::optional<int64_t> registers, spillBytes, spillLoadBytes;
  std::vector<Variant> variants;
  /// SHA-256 of `ptx` in hex (loadBundle), what tuning tables record.
  std::string ptxSha256;
};

/// An entry of a tuning table (KERNEL.tuning.json, docs/tuning.md).
struct TuningEntry {
  std::string device;
  /// The GPU's architecture ("sm_90", the table's "cc"); "" when absent.
  std::string cc;
  /// Size variables rounded up to powers of two, in `sizeVars` order.
  std::vector<int64_t> bucket;
  std::string winner;
  /// Set by loadBundle when a recorded PTX hash differs from the bundle's,
  /// or the bucket names other size variables (then `bucket` is empty).
  bool stale = false;
  bool otherSizeVars = false;
};

struct Bundle {
  std::string jsonPath;
  std::string kernel, entry, target;
  nlohmann::json templateParams = nlohmann::json::object();
  /// The "reference" field: null or an object with at least "name".
  nlohmann::json reference;
  std::vector<Param> params;
  std::vector<std::string> sizeVars;
  std::vector<Expr> requires_;
  std::optional<Expr> flops, bytes;
  /// At least one; configs[0] is what the top level describes.
  std::vector<Config> configs;
  /// Whether KERNEL.json lists "configs" (else configs[0] is unnamed).
  bool listsConfigs = false;
  /// The "tuning" field's file beside the bundle ("" when none), and its
  /// entries as loadBundle read them.
  std::string tuningPath;
  std::vector<TuningEntry> tuning;
  /// Whether the stale-table warning was printed (once per bundle, shared
  /// by copies).
  std::shared_ptr<std::atomic<bool>> staleWarned =
      std::make_shared<std::atomic<bool>>(false);
  /// Positions in `params` and `sizeVars` by name, kept by parseBundleJson
  /// so that a bundle with 100,000 of them is not checked in quadratic time.
  std::map<std::string, size_t, std::less<>> paramIndex, sizeVarIndex;

  const Param *findParam(std::string_view name) const;
  bool isSizeVar(std::string_view name) const;
  /// Bits of each kernel parameter of the ABI, in order.
  std::vector<unsigned> abiParamBits() const;
  /// The index of the config named `name`, or -1.
  int findConfig(std::string_view name) const;
  /// The PTX text, cubin bytes ("" when none) and dynamic shared memory of
  /// config `config`'s variant `variant` (-1: its general code).
  const std::string &ptxOf(int config, int variant) const;
  const std::string &cubinOf(int config, int variant) const;
  int64_t sharedBytesOf(int config, int variant) const;
  int64_t threadsOf(int config) const { return configs[config].threads; }
  /// "general" or the variant's name.
  std::string variantName(int config, int variant) const;
  /// The config's name, "default" for a bundle without configs.
  std::string configName(int config) const;
};

/// Parses JSON from a user (a bundle, an option) without throwing; arrays
/// and objects nested more than 64 deep are an error, as nlohmann copies
/// and prints values recursively. The error starts "invalid JSON: ".
bool parseUserJson(const std::string &text, nlohmann::json &value,
                   std::string &error);
/// Parses KERNEL.json text; `jsonPath` only names it in messages.
bool parseBundleJson(const std::string &text, const std::string &jsonPath,
                     Bundle &bundle, std::string &error);
/// Reads KERNEL.json and the KERNEL.ptx beside it (and every other PTX,
/// cubin and tuning table it names), and checks that each PTX has the
/// entry with the parameter list the ABI gives.
bool loadBundle(const std::string &jsonPath, Bundle &bundle,
                std::string &error);
/// KERNEL.json of `bundle`: what parseBundleJson reads back into the same
/// fields (paths as the bundle names them: plain file names). The one
/// writer; tilec fills a Bundle and calls it.
nlohmann::json bundleToJson(const Bundle &bundle);
/// bundleToJson as text, two-space indented, ending in a newline.
std::string writeBundleJson(const Bundle &bundle);
/// Finds `.entry NAME(` in PTX text (without comments: stripPtxComments)
/// and returns the bit width of each parameter, and in `paramsEnd` the
/// offset past the list's ')'; false if the entry is missing.
bool ptxEntryParams(const std::string &ptx, const std::string &entry,
                    std::vector<unsigned> &bits, size_t *paramsEnd = nullptr);
/// SHA-256 of `bytes` as 64 lowercase hex digits.
std::string sha256Hex(const std::string &bytes);

} // namespace tegula::rt

#endif // TEGULA_RUNTIME_BUNDLE_H
