//===- Target.cpp - Tile IR to PTX and kernel bundles ---------------------===//

#include "tegula/Target/Target.h"
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
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Triple.h"

#include <nlohmann/json.hpp>

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
  passes.run(module);
  return ptx.str().str();
}

//===----------------------------------------------------------------------===//
// Bundle descriptions
//===----------------------------------------------------------------------===//

static std::string dtypeName(Type type) {
  if (type.isInteger(1))
    return "bool";
  std::string name;
  llvm::raw_string_ostream os(name);
  type.print(os);
  return name;
}

static nlohmann::json attrToJson(Attribute attr) {
  if (auto integer = dyn_cast<IntegerAttr>(attr))
    return integer.getType().isInteger(1)
               ? nlohmann::json(integer.getInt() != 0)
               : nlohmann::json(integer.getInt());
  if (auto boolean = dyn_cast<BoolAttr>(attr))
    return boolean.getValue();
  if (auto string = dyn_cast<StringAttr>(attr))
    return string.getValue().str();
  return nullptr;
}

std::string target::defaultReference(StringRef kernelName) {
  return rt::isKnownReference(kernelName.str()) ? kernelName.str() : "";
}

std::map<std::string, std::string>
target::describeKernels(ModuleOp tileModule, const TargetInfo &target,
                        const std::string &reference) {
  std::map<std::string, std::string> descriptions;
  tileModule.walk([&](func::FuncOp func) {
    if (!func->hasAttr(TileDialect::kKernelAttrName))
      return;
    nlohmann::json kernel;
    std::string name = func.getSymName().str();
    kernel["kernel"] = name;
    kernel["entry"] = name;
    kernel["target"] = target.chip.str();
    int64_t warps = 4;
    if (auto attr =
            func->getAttrOfType<IntegerAttr>(TileDialect::kWarpsAttrName))
      warps = attr.getInt();
    kernel["threads"] = 32 * warps;
    kernel["shared_bytes"] = 0;
    nlohmann::json templ = nlohmann::json::object();
    if (auto dict =
            func->getAttrOfType<DictionaryAttr>(TileDialect::kTemplateAttrName))
      for (NamedAttribute entry : dict)
        templ[entry.getName().str()] = attrToJson(entry.getValue());
    kernel["template"] = templ;
    nlohmann::json params = nlohmann::json::array();
    nlohmann::json sizeVars = nlohmann::json::array();
    for (unsigned i = 0; i < func.getNumArguments(); ++i) {
      Type type = func.getArgument(i).getType();
      if (auto sizeVar = func.getArgAttrOfType<StringAttr>(
              i, TileDialect::kSizeVarAttrName)) {
        sizeVars.push_back(sizeVar.getValue().str());
        continue;
      }
      nlohmann::json param;
      auto argName =
          func.getArgAttrOfType<StringAttr>(i, TileDialect::kArgNameAttrName);
      param["name"] =
          argName ? argName.getValue().str() : "arg" + std::to_string(i);
      if (auto ptr = dyn_cast<PtrType>(type)) {
        param["kind"] = "tensor";
        param["dtype"] = dtypeName(ptr.getElementType());
        nlohmann::json dims = nlohmann::json::array();
        if (auto array = func.getArgAttrOfType<ArrayAttr>(
                i, TileDialect::kArgDimsAttrName))
          for (Attribute dim : array)
            dims.push_back(attrToJson(dim));
        param["dims"] = dims;
        auto access = func.getArgAttrOfType<StringAttr>(
            i, TileDialect::kArgAccessAttrName);
        param["access"] = access ? access.getValue().str() : "readwrite";
      } else {
        param["kind"] = "scalar";
        param["dtype"] = dtypeName(type);
      }
      params.push_back(param);
    }
    kernel["params"] = params;
    kernel["size_vars"] = sizeVars;
    auto strings = [&](StringRef attrName) {
      nlohmann::json list = nlohmann::json::array();
      if (auto array = func->getAttrOfType<ArrayAttr>(attrName))
        for (Attribute entry : array)
          list.push_back(cast<StringAttr>(entry).getValue().str());
      return list;
    };
    nlohmann::json grid = strings(TileDialect::kGridAttrName);
    while (grid.size() < 3)
      grid.push_back("1");
    kernel["grid"] = grid;
    kernel["requires"] = strings(TileDialect::kRequiresAttrName);
    auto optionalString = [&](StringRef attrName) -> nlohmann::json {
      if (auto value = func->getAttrOfType<StringAttr>(attrName))
        return value.getValue().str();
      return nullptr;
    };
    kernel["flops"] = optionalString(TileDialect::kFlopsAttrName);
    kernel["bytes"] = optionalString(TileDialect::kBytesAttrName);
    if (!reference.empty()) {
      nlohmann::json parsed = nlohmann::json::parse(reference, nullptr, false);
      kernel["reference"] =
          parsed.is_discarded() ? nlohmann::json(reference) : parsed;
    } else if (std::string byName = defaultReference(name); !byName.empty()) {
      kernel["reference"] = byName;
    }
    descriptions[name] = kernel.dump(2);
  });
  return descriptions;
}

std::string target::finishDescription(const std::string &description,
                                      int64_t sharedBytes) {
  nlohmann::json kernel = nlohmann::json::parse(description);
  kernel["shared_bytes"] = sharedBytes;
  return kernel.dump(2) + "\n";
}
