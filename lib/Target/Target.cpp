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

#include <nlohmann/json.hpp>

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
  });
  return success();
}

static std::unique_ptr<llvm::TargetMachine>
createTargetMachine(const TargetInfo &target, std::string &error) {
  llvm::Triple triple("nvptx64-nvidia-cuda");
  const llvm::Target *nvptx = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!nvptx)
    return nullptr;
  llvm::TargetOptions options;
  return std::unique_ptr<llvm::TargetMachine>(nvptx->createTargetMachine(
      triple, target.chip, target.ptxFeatures, options, std::nullopt,
      std::nullopt, llvm::CodeGenOptLevel::Aggressive));
}

std::unique_ptr<llvm::Module>
target::translateToLLVMIR(ModuleOp module, llvm::LLVMContext &context,
                          const TargetInfo &target, std::string &error) {
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, context, "tegula");
  if (!llvmModule) {
    error = "translation to LLVM IR failed";
    return nullptr;
  }
  std::unique_ptr<llvm::TargetMachine> machine =
      createTargetMachine(target, error);
  if (!machine)
    return nullptr;
  llvmModule->setTargetTriple(machine->getTargetTriple());
  llvmModule->setDataLayout(machine->createDataLayout());

  llvm::LoopAnalysisManager loops;
  llvm::FunctionAnalysisManager functions;
  llvm::CGSCCAnalysisManager cgscc;
  llvm::ModuleAnalysisManager modules;
  llvm::PassBuilder builder(machine.get());
  builder.registerModuleAnalyses(modules);
  builder.registerCGSCCAnalyses(cgscc);
  builder.registerFunctionAnalyses(functions);
  builder.registerLoopAnalyses(loops);
  builder.crossRegisterProxies(loops, functions, cgscc, modules);
  llvm::ModulePassManager passes =
      builder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
  passes.run(*llvmModule, modules);
  return llvmModule;
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

std::string target::emitPTX(llvm::Module &module, const TargetInfo &target,
                            std::string &error) {
  std::unique_ptr<llvm::TargetMachine> machine =
      createTargetMachine(target, error);
  if (!machine)
    return "";
  llvm::SmallString<0> ptx;
  llvm::raw_svector_ostream stream(ptx);
  llvm::legacy::PassManager passes;
  if (machine->addPassesToEmitFile(passes, stream, nullptr,
                                   llvm::CodeGenFileType::AssemblyFile)) {
    error = "the NVPTX back end cannot emit PTX";
    return "";
  }
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

std::optional<std::map<std::string, std::string>>
target::describeKernels(ModuleOp tileModule, const std::string &reference,
                        std::string &error) {
  std::map<std::string, std::string> descriptions;
  WalkResult walk = tileModule.walk([&](func::FuncOp func) {
    if (!func->hasAttr(TileDialect::kKernelAttrName))
      return WalkResult::advance();
    std::string name = func.getSymName().str();
    std::optional<nlohmann::json> kernel = describeKernel(
        func, reference.empty() ? defaultReference(name) : reference, error);
    if (!kernel)
      return WalkResult::interrupt();
    descriptions[name] = kernel->dump(2);
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return std::nullopt;
  return descriptions;
}

std::string target::finishDescription(const std::string &description,
                                      int64_t sharedBytes,
                                      const nlohmann::json &variants) {
  nlohmann::json kernel = nlohmann::json::parse(description);
  kernel["shared_bytes"] = sharedBytes;
  if (!variants.empty())
    kernel["variants"] = variants;
  return kernel.dump(2) + "\n";
}
