//===- KernelDescription.h - KERNEL.json from a tile-level kernel -*- C++ -*-===//
//
// A kernel's bundle description (tools.md's KERNEL.json) from its tile-level
// function, as the typed rt::Bundle that the one writer (rt::writeBundleJson)
// writes: tilec adds the code and writes it beside the PTX, and the
// interpreter reads the same description back to bind and check its inputs
// exactly as tile-run does.
//
//===----------------------------------------------------------------------===//

#ifndef TEGULA_TARGET_KERNELDESCRIPTION_H
#define TEGULA_TARGET_KERNELDESCRIPTION_H

#include "tegula/Runtime/Bundle.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <optional>
#include <string>

namespace tegula::target {

/// The description of `kernel` (a tile-level kernel function) for the
/// target its module names. `reference` is the float64 reference for
/// tile-run --check: a name, a JSON object, or empty for none. A kernel
/// whose arguments lack what the description needs (hand-written IR) or a
/// malformed reference gives none and `error`. The bundle has one config,
/// its launch shape; its code (PTX, shared_bytes, variants) is the
/// lowering's to add.
std::optional<rt::Bundle> describeKernel(mlir::func::FuncOp kernel,
                                         const std::string &reference,
                                         std::string &error);

/// The float64 reference a kernel gets by default: its own name when the
/// runtime ships a reference of that name, else none ("").
std::string defaultReference(llvm::StringRef kernelName);

} // namespace tegula::target

#endif // TEGULA_TARGET_KERNELDESCRIPTION_H
