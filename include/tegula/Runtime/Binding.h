//===- Binding.h - Size variables, scalars and launch-time checks -*- C++
//-*-===//
//
// Binds size variables from --dims and from the shapes of --in files, parses
// scalar values, and runs every launch-time check of the language spec
// (bound and positive sizes, agreement between tensors, fixed dims,
// `requires`, grid limits) before anything touches the driver.
//
//===----------------------------------------------------------------------===//

#ifndef TEGULA_RUNTIME_BINDING_H
#define TEGULA_RUNTIME_BINDING_H

#include "tegula/Runtime/Bundle.h"

#include <array>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tegula::rt {

/// A scalar argument as the kernel receives it.
struct ScalarValue {
  DType dtype = DType::F32;
  int64_t i = 0; // i32, i64, bool
  float f = 0;   // f32
  double asDouble() const { return dtype == DType::F32 ? f : double(i); }
};

struct LaunchPlan {
  /// Size variables and integer scalars, for expressions.
  Env env;
  /// Per parameter: the tensor shape, or the scalar value.
  std::vector<std::vector<int64_t>> shapes;
  std::vector<ScalarValue> scalars;
  std::array<int64_t, 3> grid{};
  std::optional<int64_t> flops, bytes;
  /// The size variables in ABI order, as passed to the kernel.
  std::vector<int32_t> sizeVarValues;
  /// Per parameter: a strided tensor's strides in elements (passed after
  /// the size variables); empty for every other parameter.
  std::vector<std::vector<int64_t>> strides;
  /// The bundle's config this launch runs (docs/tuning.md), and the
  /// variant of it (-1: the config's general code).
  int config = 0;
  int variant = -1;

  /// Some tensor has no elements (a size variable or a dim of 0).
  bool hasEmptyTensor() const;
  /// The grid is empty: the launch does nothing and succeeds.
  bool launchesNothing() const {
    return grid[0] == 0 || grid[1] == 0 || grid[2] == 0;
  }
};

struct BindingInputs {
  std::map<std::string, int64_t> dims;
  std::map<std::string, std::string> scalars;
  /// Shapes of --in files by parameter name.
  std::map<std::string, std::vector<int64_t>> fileShapes;
  /// Strides of strided tensors by parameter name (others: row-major).
  std::map<std::string, std::vector<int64_t>> strides;
  /// Device addresses of strided tensors where the caller knows them
  /// already (the C ABI): `align(x)` of a variant's conditions. Others are
  /// bound when the launcher packs its pointers (bindAddresses).
  std::map<std::string, uint64_t> addresses;
  /// Whose arguments these are, for the hint of a missing value: tile-run's
  /// flags, or the C ABI's calls (and the Python keyword over them).
  enum class Caller { TileRun, CApi } caller = Caller::TileRun;
};

/// Parses "N=4096,Z=2" into `dims`.
bool parseDimsArg(const std::string &text, std::map<std::string, int64_t> &dims,
                  std::string &error);
/// Parses "x=4096,1" (--stride) into `strides`.
bool parseStridesArg(const std::string &text,
                     std::map<std::string, std::vector<int64_t>> &strides,
                     std::string &error);
/// Splits "NAME=VALUE".
bool splitAssignment(const std::string &text, std::string &name,
                     std::string &value);
/// Parses a scalar of `type` ("0.088", "-3", "true").
bool parseScalar(const std::string &text, DType type, ScalarValue &value,
                 std::string &error);

/// Runs every check that needs no GPU and fills `plan`, for config 0.
bool bindAndCheck(const Bundle &bundle, const BindingInputs &inputs,
                  LaunchPlan &plan, std::string &error);
/// Makes a bound `plan` run config `config`: its grid (checked against the
/// limits) and the first of its variants whose conditions hold.
bool applyConfig(const Bundle &bundle, int config, LaunchPlan &plan,
                 std::string &error);

/// Binds `align(x)` of strided tensor `param` at device address `address`
/// (0: not known yet, assumed aligned) into the plan's environment.
void bindAddress(const Param &param, uint64_t address, LaunchPlan &plan);
/// Binds the addresses a launch packs (one per parameter) and chooses the
/// plan's variant again: a variant that assumes a strided view 16-byte
/// aligned must not run on one that is not. False when the choice changed.
bool bindAddresses(const Bundle &bundle,
                   const std::vector<unsigned long long> &pointers,
                   LaunchPlan &plan);
/// align(x) of an address: the largest power of two up to kMaxAlign that
/// divides it (kMaxAlign for 0).
int64_t addressAlign(uint64_t address);
/// Records each strided parameter's address alignment in `aligns` (one
/// slot per parameter, 0 for the others); true when any differs from what
/// `aligns` held (or it held nothing): only then can bindAddresses choose
/// another variant.
bool updateAlignments(const Bundle &bundle,
                      const std::vector<unsigned long long> &pointers,
                      std::vector<int64_t> &aligns);

} // namespace tegula::rt

#endif // TEGULA_RUNTIME_BINDING_H
