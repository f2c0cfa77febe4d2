//===- Pipeline.cpp - The lowering's pass pipelines -----------------------===//

#include "tegula/Target/Pipeline.h"

#include "Tile/TilePasses.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVMPass.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace tegula;

void target::buildLowerToGPUPipeline(OpPassManager &pm,
                                     const TargetInfo &target) {
  pm.addNestedPass<func::FuncOp>(tile::createTilePipelineLoops());
  pm.addNestedPass<func::FuncOp>(tile::createTileAssignLayouts());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addNestedPass<func::FuncOp>(createLoopInvariantCodeMotionPass());
  tile::ConvertTileToNVVMOptions options;
  options.target = target.chip.str();
  pm.addPass(tile::createConvertTileToNVVM(options));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void target::buildLowerToLLVMPipeline(OpPassManager &pm) {
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createConvertVectorToLLVMPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

namespace {
struct LowerToGPUOptions : public PassPipelineOptions<LowerToGPUOptions> {
  Option<std::string> target{*this, "target",
                             llvm::cl::desc("the GPU target"),
                             llvm::cl::init(
                                 TargetInfo::defaultTarget().chip.str())};
};
} // namespace

void target::registerLoweringPipelines() {
  PassPipelineRegistration<LowerToGPUOptions>(
      "tile-lower-to-gpu",
      "What tilec runs from tile IR to NVVM-level MLIR (layouts, NVVM)",
      [](OpPassManager &pm, const LowerToGPUOptions &options) {
        std::optional<TargetInfo> target = TargetInfo::lookup(options.target);
        // An unknown name leaves the pipeline empty; the conversion pass
        // would have rejected it the same way.
        if (!target) {
          llvm::errs() << "tile-lower-to-gpu: unknown target '"
                       << options.target << "'\n";
          return;
        }
        buildLowerToGPUPipeline(pm, *target);
      });
  PassPipelineRegistration<>(
      "tile-lower-to-llvm",
      "What tilec runs from NVVM-level MLIR to the LLVM dialect",
      [](OpPassManager &pm) { buildLowerToLLVMPipeline(pm); });
}
