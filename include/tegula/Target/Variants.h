//===- Variants.h - Specialized builds a bundle carries ---------*- C++ -*-===//
//
// A kernel over runtime sizes is compiled more than once: the general
// code, and variants whose accesses move 16 bytes where the general code
// cannot prove alignment. "div16" assumes every size variable is a
// multiple of 16; for a kernel with strided tensors, "unit" assumes, of
// every strided view, a last stride of 1, the other strides multiples of
// 16 bytes and a 16-byte aligned base, and "div16_unit" both. The bundle
// lists them, most specialized first (div16_unit, unit, div16), with the
// conditions they assume; launchers pick the first whose conditions hold
// (docs/runtime.md).
//
//===----------------------------------------------------------------------===//

#ifndef TEGULA_TARGET_VARIANTS_H
#define TEGULA_TARGET_VARIANTS_H

#include "mlir/IR/BuiltinOps.h"

#include <string>
#include <vector>

namespace tegula::target {

struct KernelVariant {
  std::string kernel;   ///< the kernel it specializes
  std::string function; ///< its own function in the module until emitted
  std::string name;     ///< in the bundle ("div16")
  std::vector<std::string> when; ///< conditions over size variables
};

/// Adds to a tile-level module, for each kernel with strided tensors, a
/// copy that assumes its sizes divisible and its views unit-stride
/// ("div16_unit") and one that assumes its views alone unit-stride
/// ("unit", where some size is not already known to be a multiple of 16),
/// and for each kernel with such a size variable, a copy that assumes every
/// one is ("div16"); in that order, per kernel.
std::vector<KernelVariant> addDivisibilityVariants(mlir::ModuleOp tileModule);

} // namespace tegula::target

#endif // TEGULA_TARGET_VARIANTS_H
