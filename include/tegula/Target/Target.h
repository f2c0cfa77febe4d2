//===- Target.h - Tile IR to PTX and kernel bundles -------------*- C++ -*-===//
//
// The back half of tilec: lowering of verified tile IR to GPU-level MLIR
// (layouts, NVVM), to the LLVM dialect, to LLVM IR, to PTX through LLVM's
// NVPTX back end, and the bundle (KERNEL.ptx + KERNEL.json) of tools.md.
//
//===----------------------------------------------------------------------===//

#ifndef TEGULA_TARGET_TARGET_H
#define TEGULA_TARGET_TARGET_H

#include "tegula/Target/TargetInfo.h"

#include "mlir/IR/BuiltinOps.h"

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <string>

namespace llvm {
class LLVMContext;
class Module;
} // namespace llvm

namespace tegula::target {

/// Registers the passes, dialects and LLVM IR translations the lowering
/// uses in `context`.
void registerLowering(mlir::MLIRContext &context);

/// Layout assignment and conversion to per-thread NVVM-level MLIR, for the
/// target the module names (tile.target, set by the frontend).
mlir::LogicalResult lowerToGPU(mlir::ModuleOp module);

/// GPU-level MLIR to the LLVM dialect, kernels marked for NVVM.
mlir::LogicalResult lowerToLLVMDialect(mlir::ModuleOp module);

/// LLVM-dialect module to LLVM IR for the NVPTX target, optimized at -O3.
std::unique_ptr<llvm::Module> translateToLLVMIR(mlir::ModuleOp module,
                                                llvm::LLVMContext &context,
                                                const TargetInfo &target,
                                                std::string &error);

/// PTX of an LLVM module, or an empty string and `error`.
std::string emitPTX(llvm::Module &module, const TargetInfo &target,
                    std::string &error);

/// Bundle descriptions (tools.md's KERNEL.json) of every kernel of a
/// tile-level module, keyed by kernel name (see describeKernel). An empty
/// `reference` gives each kernel its default one (defaultReference). None,
/// and `error`, if a kernel cannot be described.
std::optional<std::map<std::string, std::string>>
describeKernels(mlir::ModuleOp tileModule, const std::string &reference,
                std::string &error);

/// Adds the lowered kernel's shared-memory size and its variants (an array
/// of {name, ptx, when, shared_bytes}; may be empty) to its description.
std::string finishDescription(const std::string &description,
                              int64_t sharedBytes,
                              const nlohmann::json &variants);

} // namespace tegula::target

#endif // TEGULA_TARGET_TARGET_H
