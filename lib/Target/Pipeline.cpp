//===- Pipeline.cpp - The lowering's pass pipelines -----------------------===//

#include "tegula/Target/Pipeline.h"

#include "Tile/TilePasses.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVMPass.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Iterators.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Rewrite/PatternApplicator.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace tegula;

namespace {
/// SCF to CF with the upstream patterns, applied to each block's scf ops
/// last to first (nested ones before theirs). Lowering an op splits its
/// block there and moves the ops after it into a new block; the upstream
/// pass, first to last, moves every later op again at each one, so a block
/// of N guarded stores cost N^2 moves, each recorded by the conversion
/// (2000 stores: two minutes and 14 GB). Last to first, each split moves
/// only the ops up to the next lowered op. The blocks come out in the same
/// order; createSCFToControlFlowPass, after it, finds nothing left.
struct LinearSCFToControlFlow
    : public PassWrapper<LinearSCFToControlFlow, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(LinearSCFToControlFlow)

  StringRef getArgument() const final { return "tile-scf-to-cf-last-first"; }
  StringRef getDescription() const final {
    return "SCF to CF, each block's ops last to first (linear time)";
  }
  void getDependentDialects(DialectRegistry &registry) const final {
    registry.insert<cf::ControlFlowDialect>();
  }

  void runOnOperation() final {
    RewritePatternSet set(&getContext());
    populateSCFToControlFlowConversionPatterns(set);
    FrozenRewritePatternSet frozen(std::move(set));
    PatternApplicator applicator(frozen);
    applicator.applyDefaultCostModel();
    SmallVector<Operation *> ops;
    getOperation()->walk<WalkOrder::PostOrder, ReverseIterator>(
        [&](Operation *op) {
          if (isa<scf::SCFDialect>(op->getDialect()) && op->getNumRegions())
            ops.push_back(op);
        });
    PatternRewriter rewriter(&getContext());
    for (Operation *op : ops) {
      rewriter.setInsertionPoint(op);
      (void)applicator.matchAndRewrite(op, rewriter);
    }
  }
};
} // namespace

void target::buildLowerToGPUPipeline(OpPassManager &pm) {
  pm.addNestedPass<func::FuncOp>(tile::createTilePipelineLoops());
  pm.addNestedPass<func::FuncOp>(tile::createTileVersionLoops());
  pm.addNestedPass<func::FuncOp>(tile::createTilePlanDots());
  pm.addNestedPass<func::FuncOp>(tile::createTileAssignLayouts());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addNestedPass<func::FuncOp>(createLoopInvariantCodeMotionPass());
  pm.addNestedPass<func::FuncOp>(tile::createTileSplitAsyncDots());
  pm.addNestedPass<func::FuncOp>(tile::createTileDeferDotWaits());
  pm.addNestedPass<func::FuncOp>(tile::createTileSinkDotWaits());
  pm.addPass(tile::createConvertTileToNVVM());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void target::buildLowerToLLVMPipeline(OpPassManager &pm) {
  pm.addPass(std::make_unique<LinearSCFToControlFlow>());
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
  PassRegistration<LinearSCFToControlFlow>();
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
