//===- Variants.h - Specialized builds a bundle carries ---------*- C++ -*-===//
//
// A kernel over runtime sizes is compiled twice: the general code, and a
// variant that assumes every size variable is a multiple of 16, so that its
// accesses move 16 bytes where the general code cannot prove alignment.
// The bundle lists the variant with the conditions it assumes; launchers
// check them and pick it when they hold (docs/runtime.md).
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

/// Adds to a tile-level module, for each kernel with a size variable not
/// already known to be a multiple of 16, a copy that assumes every one is.
std::vector<KernelVariant> addDivisibilityVariants(mlir::ModuleOp tileModule);

} // namespace tegula::target

#endif // TEGULA_TARGET_VARIANTS_H
