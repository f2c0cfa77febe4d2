//===- Target.h - Tile IR to PTX and kernel bundles -------------*- C++ -*-===//
//
// The back half of tilec: lowering of verified tile IR to GPU-level MLIR
// (layouts, NVVM), to the LLVM dialect, to LLVM IR, to PTX through LLVM's
// NVPTX back end, and the bundle (KERNEL.ptx + KERNEL.json) of tools.md.
//
//===----------------------------------------------------------------------===//

#ifndef TEGULA_TARGET_TARGET_H
#define TEGULA_TARGET_TARGET_H

#include "tegula/Runtime/Bundle.h"
#include "tegula/Target/TargetInfo.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"

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

/// LLVM-dialect module to LLVM IR for the NVPTX target `target` (the
/// module's tile.target: tile::getTarget), optimized at -O3.
llvm::Expected<std::unique_ptr<llvm::Module>>
translateToLLVMIR(mlir::ModuleOp module, llvm::LLVMContext &context,
                  const TargetInfo &target);

/// PTX of an LLVM module for `target`, or an error saying why none.
llvm::Expected<std::string> emitPTX(llvm::Module &module,
                                    const TargetInfo &target);

/// Bundle descriptions (tools.md's KERNEL.json) of every kernel of a
/// tile-level module, keyed by kernel name (see describeKernel). An empty
/// `reference` gives each kernel its default one (defaultReference). None,
/// and `error`, if a kernel cannot be described.
std::optional<std::map<std::string, rt::Bundle>>
describeKernels(mlir::ModuleOp tileModule, const std::string &reference,
                std::string &error);

} // namespace tegula::target

#endif // TEGULA_TARGET_TARGET_H
