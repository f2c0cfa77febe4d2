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

void target::buildLowerToGPUPipeline(OpPassManager &pm) {
  pm.addNestedPass<func::FuncOp>(tile::createTilePipelineLoops());
  pm.addNestedPass<func::FuncOp>(tile::createTileAssignLayouts());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addNestedPass<func::FuncOp>(createLoopInvariantCodeMotionPass());
  pm.addNestedPass<func::FuncOp>(tile::createTileDeferDotWaits());
  pm.addPass(tile::createConvertTileToNVVM());
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

void target::registerLoweringPipelines() {
  PassPipelineRegistration<>(
      "tile-lower-to-gpu",
      "What tilec runs from tile IR to NVVM-level MLIR (layouts, NVVM), for "
      "the module's tile.target",
      [](OpPassManager &pm) { buildLowerToGPUPipeline(pm); });
  PassPipelineRegistration<>(
      "tile-lower-to-llvm",
      "What tilec runs from NVVM-level MLIR to the LLVM dialect",
      [](OpPassManager &pm) { buildLowerToLLVMPipeline(pm); });
}
