//===- Target.cpp - Tile IR to PTX and kernel bundles ---------------------===//

#include "tegula/Target/Target.h"
#include "tegula/Target/KernelDescription.h"
#include "tegula/Target/Pipeline.h"

#include "Tile/TileOps.h"
#include "Tile/TilePasses.h"
#include "tegula/Runtime/References.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "mlir/Target/LLVMIR/LLVMTranslationInterface.h"

#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/OptBisect.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Triple.h"

#include <algorithm>
#include <mutex>

using namespace mlir;
using namespace tegula;
using namespace tegula::tile;

namespace {
/// The tile.* attributes left on lowered kernels (tile.name, tile.dims, ...)
/// describe the bundle's ABI, which is read from the tile-level module. LLVM
/// IR has nothing to carry them; claiming them for the tile dialect lets the
/// translation drop them without an "Unhandled parameter attribute" warning.
struct TileToLLVMIRTranslation : public LLVMTranslationDialectInterface {
  using LLVMTranslationDialectInterface::LLVMTranslationDialectInterface;
};
} // namespace

void target::registerLowering(MLIRContext &context) {
  static std::once_flag once;
  std::call_once(once, [] {
    registerAllPasses();
    registerTilePasses();
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
  });
  DialectRegistry registry;
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registerAllToLLVMIRTranslations(registry);
  registry.addExtension(+[](MLIRContext *, TileDialect *dialect) {
    dialect->addInterfaces<TileToLLVMIRTranslation>();
  });
  context.appendDialectRegistry(registry);
  context.loadAllAvailableDialects();
}

LogicalResult target::lowerToGPU(ModuleOp module) {
  PassManager manager(module->getName());
  buildLowerToGPUPipeline(manager);
  return manager.run(module);
}

LogicalResult target::lowerToLLVMDialect(ModuleOp module) {
  PassManager manager(module->getName());
  buildLowerToLLVMPipeline(manager);
  if (failed(manager.run(module)))
    return failure();
  // Kernels launch 32 threads per warp; the attributes tell NVPTX so.
  Builder builder(module.getContext());
  module.walk([&](LLVM::LLVMFuncOp func) {
    if (!func->hasAttr(TileDialect::kKernelAttrName))
      return;
    int32_t warps = 4;
    if (auto attr =
            func->getAttrOfType<IntegerAttr>(TileDialect::kWarpsAttrName))
      warps = attr.getInt();
    func->setAttr("nvvm.kernel", builder.getUnitAttr());
    func->setAttr("nvvm.maxntid",
                  builder.getDenseI32ArrayAttr({32 * warps, 1, 1}));
    // `blocks_per_sm`: ptxas keeps registers for that many blocks.
    if (auto blocks =
            func->getAttrOfType<IntegerAttr>(TileDialect::kBlocksPerSmAttrName))
      func->setAttr("nvvm.minctasm",
                    builder.getI32IntegerAttr(blocks.getInt()));
  });
  return success();
}

static llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
createTargetMachine(const TargetInfo &target) {
  llvm::Triple triple("nvptx64-nvidia-cuda");
  std::string error;
  const llvm::Target *nvptx = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!nvptx)
    return llvm::createStringError(error);
  // AllowFPOpFusion stays Standard: contraction is per kernel, through the
  // `contract` flags the tile lowering puts on its arith ops (TileToNVVM).
  llvm::TargetOptions options;
  return std::unique_ptr<llvm::TargetMachine>(nvptx->createTargetMachine(
      triple, target.chip, target.ptxFeatures, options, std::nullopt,
      std::nullopt, llvm::CodeGenOptLevel::Aggressive));
}

llvm::Expected<std::unique_ptr<llvm::Module>>
target::translateToLLVMIR(ModuleOp module, llvm::LLVMContext &context,
                          const TargetInfo &target) {
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, context, "tegula");
  if (!llvmModule)
    return llvm::createStringError("translation to LLVM IR failed");
  auto machine = createTargetMachine(target);
  if (!machine)
    return machine.takeError();
  llvmModule->setTargetTriple((*machine)->getTargetTriple());
  llvmModule->setDataLayout((*machine)->createDataLayout());

  llvm::LoopAnalysisManager loops;
  llvm::FunctionAnalysisManager functions;
  llvm::CGSCCAnalysisManager cgscc;
  llvm::ModuleAnalysisManager modules;
  llvm::PassBuilder builder(machine->get());
  builder.registerModuleAnalyses(modules);
  builder.registerCGSCCAnalyses(cgscc);
  builder.registerFunctionAnalyses(functions);
  builder.registerLoopAnalyses(loops);
  builder.crossRegisterProxies(loops, functions, cgscc, modules);
  llvm::ModulePassManager passes =
      builder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
  passes.run(*llvmModule, modules);
  return std::move(llvmModule);
}

namespace {
/// Skips LLVM's straight-line strength reduction, which the NVPTX back end
/// runs before instruction selection. In LLVM 22 its time and memory grow
/// with the square of a function's straight-line address arithmetic: four
/// [256, 512] tiles loaded and summed over 4 warps (4096 elements a thread)
/// spent 55 s of llc's 56 and 1.3 GB in it, a [1024, 1024] tile ten minutes
/// and 5 GB. ptxas strength-reduces addresses itself: skipping the pass
/// everywhere changed no register count in kernels/ and their cubins by
/// under 1%.
class SkipStrengthReduction : public llvm::OptPassGate {
public:
  bool shouldRunPass(llvm::StringRef pass, llvm::StringRef) const override {
    return pass != "slsr";
  }
  bool isEnabled() const override { return true; }
};

/// Functions up to this many LLVM instructions keep the pass (it costs them
/// about half a second at most; every kernel in kernels/ is below it, so
/// their PTX is unchanged); larger ones skip it, which keeps llc linear.
constexpr unsigned kMaxStrengthReducedInstructions = 4096;
} // namespace

llvm::Expected<std::string> target::emitPTX(llvm::Module &module,
                                            const TargetInfo &target) {
  auto machine = createTargetMachine(target);
  if (!machine)
    return machine.takeError();
  llvm::SmallString<0> ptx;
  llvm::raw_svector_ostream stream(ptx);
  llvm::legacy::PassManager passes;
  if ((*machine)->addPassesToEmitFile(passes, stream, nullptr,
                                      llvm::CodeGenFileType::AssemblyFile))
    return llvm::createStringError("the NVPTX back end cannot emit PTX");
  unsigned largest = 0;
  for (const llvm::Function &function : module)
    largest = std::max(largest, function.getInstructionCount());
  llvm::LLVMContext &context = module.getContext();
  llvm::OptPassGate &gate = context.getOptPassGate();
  static SkipStrengthReduction skip; // stateless, shared by every context
  if (largest > kMaxStrengthReducedInstructions)
    context.setOptPassGate(skip);
  passes.run(module);
  context.setOptPassGate(gate);
  return ptx.str().str();
}

//===----------------------------------------------------------------------===//
// Bundle descriptions
//===----------------------------------------------------------------------===//

std::optional<std::map<std::string, rt::Bundle>>
target::describeKernels(ModuleOp tileModule, const std::string &reference,
                        std::string &error) {
  std::map<std::string, rt::Bundle> descriptions;
  WalkResult walk = tileModule.walk([&](func::FuncOp func) {
    if (!func->hasAttr(TileDialect::kKernelAttrName))
      return WalkResult::advance();
    std::string name = func.getSymName().str();
    std::optional<rt::Bundle> kernel = describeKernel(
        func, reference.empty() ? defaultReference(name) : reference, error);
    if (!kernel)
      return WalkResult::interrupt();
    descriptions[name] = std::move(*kernel);
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return std::nullopt;
  return descriptions;
}
