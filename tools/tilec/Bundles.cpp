//===- Bundles.cpp - tilec's bundle stage ---------------------------------===//

#include "Bundles.h"
#include "Ptxas.h"

#include "tegula/Runtime/Bundle.h"
#include "tegula/Runtime/Chip.h"
#include "tegula/Target/Target.h"
#include "tegula/Target/Variants.h"

#include "Tile/TileOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/SymbolTable.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <map>

using namespace tegula;
using namespace tegula::tilec;

namespace {

/// Splits an LLVM-dialect module into one module per kernel, each holding
/// the kernel and the symbols it uses (transitively), in the module's
/// order. Cloning the whole module for each kernel made a bundle of N
/// kernels cost N^2 (200 kernels: 74 s).
class KernelSplitter {
public:
  explicit KernelSplitter(mlir::ModuleOp module)
      : module(module), symbols(module) {
    for (auto [position, op] : llvm::enumerate(*module.getBody()))
      order[&op] = position;
  }

  /// The module with only function `function`, renamed `entry`, and what
  /// it uses.
  mlir::OwningOpRef<mlir::ModuleOp> split(llvm::StringRef function,
                                          llvm::StringRef entry) {
    mlir::Operation *root = symbols.lookup(function);
    llvm::SetVector<mlir::Operation *> used;
    used.insert(root);
    for (size_t i = 0; i < used.size(); ++i) {
      auto uses = mlir::SymbolTable::getSymbolUses(used[i]);
      if (!uses)
        continue;
      for (const mlir::SymbolTable::SymbolUse &use : *uses)
        if (mlir::Operation *symbol =
                symbols.lookup(use.getSymbolRef().getRootReference()))
          used.insert(symbol);
    }
    llvm::SmallVector<mlir::Operation *> kept(used.begin(), used.end());
    llvm::sort(kept, [&](mlir::Operation *a, mlir::Operation *b) {
      return order.lookup(a) < order.lookup(b);
    });
    mlir::OpBuilder builder(module.getContext());
    mlir::OwningOpRef<mlir::ModuleOp> single =
        mlir::ModuleOp::create(module.getLoc(), module.getName());
    single->getOperation()->setAttrs(module->getAttrDictionary());
    builder.setInsertionPointToEnd(single->getBody());
    for (mlir::Operation *op : kept) {
      mlir::Operation *copy = builder.clone(*op);
      if (op == root && function != entry)
        mlir::SymbolTable::setSymbolName(copy, entry);
    }
    return single;
  }

private:
  mlir::ModuleOp module;
  mlir::SymbolTable symbols;
  llvm::DenseMap<mlir::Operation *, size_t> order;
};

/// The PTX of kernel function `function` of an LLVM-dialect module under
/// the entry name `entry`, for the module's target; none after an error,
/// printed.
std::optional<std::string> emitKernel(KernelSplitter &splitter,
                                      const TargetInfo &targetInfo,
                                      llvm::StringRef function,
                                      llvm::StringRef entry) {
  mlir::OwningOpRef<mlir::ModuleOp> single = splitter.split(function, entry);
  llvm::LLVMContext llvmContext;
  auto llvmModule = target::translateToLLVMIR(*single, llvmContext, targetInfo);
  if (!llvmModule)
    return fail(llvm::toString(llvmModule.takeError())), std::nullopt;
  llvm::Expected<std::string> ptx = target::emitPTX(**llvmModule, targetInfo);
  if (!ptx)
    return fail(llvm::toString(ptx.takeError())), std::nullopt;
  return std::move(*ptx);
}

/// The shared memory of every lowered function, by name.
std::map<std::string, int64_t> sharedBytesOf(mlir::ModuleOp module) {
  std::map<std::string, int64_t> sharedBytes;
  module->walk([&](mlir::func::FuncOp func) {
    if (auto bytes = func->getAttrOfType<mlir::IntegerAttr>(
            tile::TileDialect::kSharedBytesAttrName))
      sharedBytes[func.getSymName().str()] = bytes.getInt();
  });
  return sharedBytes;
}

/// Adds the variant `variant` to a kernel whose general code is `code`.
bool addVariant(const target::KernelVariant &variant, std::string ptx,
                int64_t sharedBytes, rt::Config &code) {
  rt::Variant built;
  built.name = variant.name;
  built.ptx = std::move(ptx);
  built.sharedBytes = sharedBytes;
  for (const std::string &condition : variant.when) {
    rt::Expr when;
    std::string error;
    if (!rt::Expr::parse(condition, when, error))
      return fail("variant '" + variant.name + "': " + error), false;
    built.when.push_back(std::move(when));
  }
  code.variants.push_back(std::move(built));
  return true;
}

/// Whether every condition of `less` is one of `more`'s: `less` runs
/// wherever `more` would.
bool assumesLess(const target::KernelVariant &less,
                 const target::KernelVariant &more) {
  return llvm::all_of(less.when, [&](const std::string &condition) {
    return llvm::is_contained(more.when, condition);
  });
}

/// Lowers `module` to PTX, every kernel and its variants (div16_unit, unit,
/// div16; each left out when its PTX comes out the same as a less
/// specialized build's): one described bundle per kernel, its one config
/// holding the code. False after an error, printed.
bool buildKernels(mlir::ModuleOp module, const std::string &reference,
                  std::vector<rt::Bundle> &kernels) {
  std::string error;
  std::optional<std::map<std::string, rt::Bundle>> described =
      target::describeKernels(module, reference, error);
  if (!described)
    return fail(error), false;
  // A bundle carries, beside each kernel's general code, builds that assume
  // its sizes are multiples of 16, and its strided views unit-stride and
  // aligned (chosen at launch when they are).
  std::vector<target::KernelVariant> variants =
      target::addDivisibilityVariants(module);
  if (failed(target::lowerToGPU(module)))
    return false;
  std::map<std::string, int64_t> sharedBytes = sharedBytesOf(module);
  if (failed(target::lowerToLLVMDialect(module)))
    return false;
  // The back half reads the module's target, as every pass does.
  mlir::FailureOr<TargetInfo> targetInfo = tile::getTarget(module);
  if (failed(targetInfo))
    return false;
  KernelSplitter splitter(module);
  for (auto &[name, kernel] : *described) {
    rt::Config &code = kernel.configs[0];
    code.sharedBytes = sharedBytes[name];
    std::optional<std::string> ptx =
        emitKernel(splitter, *targetInfo, name, name);
    if (!ptx)
      return false;
    code.ptx = std::move(*ptx);
    // The kernel's ladder, most specialized first: a variant whose PTX
    // comes out the same as the general code's, or as that of a later one
    // that runs wherever it would (unit's need not: div16 assumes other
    // things), is not worth a choice.
    std::vector<std::pair<const target::KernelVariant *, std::string>> ladder;
    for (const target::KernelVariant &variant : variants) {
      if (variant.kernel != name)
        continue;
      std::optional<std::string> variantPtx =
          emitKernel(splitter, *targetInfo, variant.function, name);
      if (!variantPtx)
        return false;
      ladder.emplace_back(&variant, std::move(*variantPtx));
    }
    for (size_t i = 0; i < ladder.size(); ++i) {
      auto &[variant, variantPtx] = ladder[i];
      bool same = variantPtx == code.ptx;
      for (size_t j = i + 1; j < ladder.size(); ++j)
        same = same || (variantPtx == ladder[j].second &&
                        assumesLess(*ladder[j].first, *variant));
      if (!same && !addVariant(*variant, std::move(variantPtx),
                               sharedBytes[variant->function], code))
        return false;
    }
    kernels.push_back(std::move(kernel));
  }
  return true;
}

/// The template values of every kernel of `module`, as one string: two
/// configs with the same ones build the same code under two names.
std::string templateValues(mlir::ModuleOp module) {
  std::string text;
  llvm::raw_string_ostream os(text);
  module.walk([&](mlir::func::FuncOp func) {
    if (func->hasAttr(tile::TileDialect::kKernelAttrName))
      os << func.getSymName() << " "
         << func->getAttr(tile::TileDialect::kTemplateAttrName) << "\n";
  });
  return text;
}

/// Compiles every config of the sweep (the first is `first`, already
/// compiled): configs[c][k] is kernel k of config c. Returns an exit code,
/// 0 when every config compiled to the same kernels.
int compileConfigs(mlir::ModuleOp first, const BundleRequest &request,
                   std::vector<std::vector<rt::Bundle>> &configs) {
  const Sweep &sweep = request.sweep;
  size_t count = configCount(sweep);
  configs.resize(count);
  std::map<std::string, size_t> configOf; // by templateValues
  frontend::CompileOptions options = request.options;
  for (size_t c = 0; c < count; ++c) {
    mlir::OwningOpRef<mlir::ModuleOp> module;
    mlir::ModuleOp compiled = first;
    if (c > 0) {
      options.defines = configDefines(sweep, c);
      module = frontend::compileProgram(request.program, request.diags,
                                        request.context, options);
      if (request.diags.hasErrors() || !module)
        return fail("config '" + configName(sweep, c) + "' does not compile");
      compiled = *module;
    }
    // A value spelled two ways (64 and 064) or a parameter the kernels do
    // not use would name one build twice.
    if (count > 1) {
      auto [same, fresh] = configOf.try_emplace(templateValues(compiled), c);
      if (!fresh)
        return fail("configs '" + configName(sweep, same->second) + "' and '" +
                    configName(sweep, c) +
                    "' give every kernel the same template values; list each "
                    "value once, and only for parameters the kernels use");
    }
    if (!buildKernels(compiled, request.reference, configs[c]))
      return count > 1 ? fail("config '" + configName(sweep, c) +
                              "' does not compile")
                       : 1;
    if (configs[c].size() != configs[0].size())
      return fail("config '" + configName(sweep, c) +
                  "' compiles other kernels than config '" +
                  configName(sweep, 0) + "'");
  }
  return 0;
}

/// The fields of the bundle's ABI, identical in every config.
const char *const kAbiFields[] = {"params", "size_vars", "requires", "flops",
                                  "bytes"};

/// Template parameters are compile-time: the launch's ABI is not, so it
/// must not change between configs. Checked before anything is written.
int checkAbi(const std::vector<std::vector<rt::Bundle>> &configs,
             const Sweep &sweep) {
  for (size_t k = 0; k < configs[0].size(); ++k) {
    nlohmann::json abi = rt::bundleToJson(configs[0][k]);
    for (size_t c = 1; c < configs.size(); ++c) {
      nlohmann::json described = rt::bundleToJson(configs[c][k]);
      for (const char *field : kAbiFields) {
        const nlohmann::json &mine = described[field], &first = abi[field];
        if (mine != first)
          return fail("kernel '" + configs[0][k].kernel + "': the " + field +
                      " of config '" + configName(sweep, c) + "' (" +
                      mine.dump() + ") differ from those of config '" +
                      configName(sweep, 0) + "' (" + first.dump() +
                      "); template parameters are compile-time, so every "
                      "config must keep the kernel's ABI (params, size_vars, "
                      "requires, flops, bytes)");
      }
    }
  }
  return 0;
}

/// Which build a file holds, as tilec's messages name it.
struct BuildName {
  std::string kernel;
  /// "" for the general code.
  std::string variant;
  /// The config's name in a sweep, else the -D values given ("" for none).
  std::string config;
};

/// Starts a warning about `build` for `chip`: "tilec: warning: kernel 'K'
/// (CHIP, general code | variant 'V', defaults | config 'C')".
llvm::raw_ostream &warnAbout(const BuildName &build, llvm::StringRef chip) {
  llvm::raw_ostream &os = llvm::errs();
  os << "tilec: warning: kernel '" << build.kernel << "' (" << chip << ", "
     << (build.variant.empty() ? "general code"
                               : "variant '" + build.variant + "'")
     << ", "
     << (build.config.empty() ? "defaults" : "config '" + build.config + "'")
     << ")";
  return os;
}

/// Warns that `function` of `build` spills: a spill is local memory
/// traffic in the kernel's loop, never what a shipped config should do
/// (docs/tuning.md, "Spills").
void warnSpills(const PtxasStats &function, const BuildName &build,
                llvm::StringRef chip) {
  llvm::raw_ostream &os = warnAbout(build, chip);
  os << " spills " << function.spillStores << " bytes (stores "
     << function.spillStores << ", loads " << function.spillLoads << ")";
  if (function.function != build.kernel)
    os << " in function '" << function.function << "'";
  if (function.registers)
    os << " with " << *function.registers << " registers";
  os << "; smaller blocks or fewer stages avoid it\n";
}

/// Warns that ptxas serializes the wgmma instructions of `function` of
/// `build`: each then waits for the one before, and no dot overlaps
/// anything (a tilec bug to report: the lowering means to avoid it).
void warnSerializedWgmma(const PtxasStats &function, const BuildName &build,
                         llvm::StringRef chip) {
  warnAbout(build, chip) << ": ptxas serializes the wgmma instructions of '"
                         << function.function << "' ("
                         << *function.wgmmaSerialized
                         << "); each waits for the one before\n";
}

/// Where tilec writes each config's files, and how it assembles them.
struct FileWriter {
  std::string directory, ptxas, chip;

  /// Writes the code's PTX to the file it names (ptxPath) and, with
  /// ptxas, a cubin beside it, named in the code with its registers and
  /// spills (every function's); warns of each function that spills.
  /// `threads` is the launch's block size.
  template <typename Code>
  bool write(Code &code, const BuildName &build, int64_t threads) {
    llvm::SmallString<256> ptxPath(directory);
    llvm::sys::path::append(ptxPath, code.ptxPath);
    if (!writeFile(ptxPath, code.ptx))
      return false;
    if (ptxas.empty())
      return true;
    llvm::SmallString<256> cubinPath(ptxPath);
    llvm::sys::path::replace_extension(cubinPath, "cubin");
    llvm::Expected<std::vector<PtxasStats>> functions =
        assembleCubin(ptxas, chip, ptxPath, cubinPath);
    if (!functions) {
      // PTX alone still runs: every launcher can JIT it.
      llvm::errs() << "tilec: warning: "
                   << llvm::toString(functions.takeError()) << "; '" << ptxPath
                   << "' ships without a cubin\n";
      return true;
    }
    if (!avoidSpills(code.ptx, *functions, build.kernel, threads, ptxPath,
                     cubinPath))
      return false;
    code.cubinPath = llvm::sys::path::filename(cubinPath).str();
    code.spillBytes = code.spillLoadBytes = 0;
    for (const PtxasStats &function : *functions) {
      if (function.function == build.kernel)
        code.registers = function.registers;
      *code.spillBytes += function.spillStores;
      *code.spillLoadBytes += function.spillLoads;
      if (function.spills())
        warnSpills(function, build, chip);
      if (function.wgmmaSerialized)
        warnSerializedWgmma(function, build, chip);
    }
    return true;
  }

  /// ptxas keeps registers for as many resident blocks as it judges best;
  /// when that count makes `kernel` spill, asks for fewer (`.minnctapersm`
  /// in the PTX, the most first) and keeps the first build that does not
  /// spill, PTX and cubin. A kernel's own `blocks_per_sm` is kept as it is.
  bool avoidSpills(std::string &ptx, std::vector<PtxasStats> &functions,
                   llvm::StringRef kernel, int64_t threads,
                   llvm::StringRef ptxPath, llvm::StringRef cubinPath) {
    const ChipFacts *facts = findChip(chip);
    auto stats = llvm::find_if(functions, [&](const PtxasStats &function) {
      return function.function == kernel;
    });
    if (!facts || stats == functions.end() || !stats->spills() ||
        !stats->registers || threads <= 0)
      return true;
    int64_t chosen = facts->registersPerBlock / (*stats->registers * threads);
    std::string tryPtx = (ptxPath + ".try.ptx").str();
    std::string tryCubin = (ptxPath + ".try.cubin").str();
    for (int64_t blocks = chosen - 1; blocks >= 1; --blocks) {
      std::optional<std::string> candidate = withMinBlocksPerSm(ptx, blocks);
      if (!candidate || !writeFile(tryPtx, *candidate))
        break;
      llvm::Expected<std::vector<PtxasStats>> retried =
          assembleCubin(ptxas, chip, tryPtx, tryCubin);
      // A retry that fails or still spills leaves the first build as it is.
      if (!retried) {
        llvm::consumeError(retried.takeError());
        continue;
      }
      if (llvm::any_of(*retried, [](const PtxasStats &function) {
            return function.spills();
          }))
        continue;
      if (std::error_code ec = llvm::sys::fs::rename(tryCubin, cubinPath))
        return fail("cannot write '" + cubinPath + "': " + ec.message()), false;
      if (!writeFile(ptxPath, *candidate))
        return false;
      ptx = std::move(*candidate);
      functions = std::move(*retried);
      break;
    }
    llvm::sys::fs::remove(tryPtx);
    llvm::sys::fs::remove(tryCubin);
    return true;
  }
};

/// The writer for the bundle directory, with ptxas when it is on PATH and
/// wanted; none after an error, printed.
std::optional<FileWriter> openDirectory(const BundleRequest &request,
                                        const std::string &chip) {
  FileWriter writer;
  writer.directory = request.output.empty() ? "." : request.output;
  writer.chip = chip;
  if (std::error_code ec = llvm::sys::fs::create_directories(writer.directory))
    return fail("cannot create '" + writer.directory + "': " + ec.message()),
           std::nullopt;
  if (!llvm::sys::fs::is_directory(writer.directory))
    return fail("cannot write a bundle into '" + writer.directory +
                "': not a directory"),
           std::nullopt;
  if (request.noCubin)
    return writer;
  if (llvm::ErrorOr<std::string> found = llvm::sys::findProgramByName("ptxas"))
    writer.ptxas = *found;
  else
    llvm::errs() << "tilec: warning: no ptxas on PATH: the bundle ships "
                    "PTX only (no KERNEL.cubin)\n";
  return writer;
}

/// How tilec's messages name config `c`: its name in a sweep, else the
/// -D values given ("D=128,CAUSAL=true"), so that a warning of a single
/// build says which one.
std::string configLabel(const Sweep &sweep, size_t c) {
  if (configCount(sweep) > 1)
    return configName(sweep, c);
  std::string label;
  for (const auto &[name, value] : configDefines(sweep, c))
    label += (label.empty() ? "" : ",") + name + "=" + value;
  return label;
}

/// The line tilec prints for config `c` of kernel `name` in a sweep.
std::string configLine(const std::string &name, size_t c, size_t count,
                       const rt::Config &code) {
  std::string line = name + " [" + std::to_string(c + 1) + "/" +
                     std::to_string(count) + "] " + code.name + ": " +
                     std::to_string(code.threads) + " threads, " +
                     std::to_string(code.sharedBytes) + " bytes shared";
  if (code.registers)
    line += ", " + std::to_string(*code.registers) + " registers";
  if (code.spillBytes)
    line += ", " + std::to_string(*code.spillBytes) + " bytes spilled";
  return line;
}

/// The swept defines of config `c`, each with the value its template took
/// (a number, a boolean) or else the text given.
nlohmann::json sweptDefines(const Sweep &sweep, size_t c,
                            const nlohmann::json &templateParams) {
  nlohmann::json defines = nlohmann::json::object();
  auto given = configDefines(sweep, c);
  for (size_t d = 0; d < sweep.size(); ++d)
    if (sweep[d].second.size() > 1)
      defines[given[d].first] =
          templateParams.value(given[d].first, nlohmann::json(given[d].second));
  return defines;
}

/// Writes kernel `k`'s files and its bundle: configs[c][k] for every c.
bool writeBundle(std::vector<std::vector<rt::Bundle>> &configs, size_t k,
                 const Sweep &sweep, FileWriter &writer) {
  size_t count = configs.size();
  rt::Bundle bundle = configs[0][k];
  const std::string &name = bundle.kernel;
  bundle.configs.clear();
  bundle.listsConfigs = count > 1;
  for (size_t c = 0; c < count; ++c) {
    rt::Bundle &built = configs[c][k];
    rt::Config code = std::move(built.configs[0]);
    std::string prefix = c == 0 ? name : name + ".c" + std::to_string(c);
    code.ptxPath = prefix + ".ptx";
    BuildName build{name, "", configLabel(sweep, c)};
    if (!writer.write(code, build, code.threads))
      return false;
    for (rt::Variant &variant : code.variants) {
      variant.ptxPath = prefix + "." + variant.name + ".ptx";
      build.variant = variant.name;
      if (!writer.write(variant, build, code.threads))
        return false;
    }
    if (count > 1) {
      code.name = configName(sweep, c);
      code.defines = sweptDefines(sweep, c, built.templateParams);
      llvm::outs() << configLine(name, c, count, code) << "\n";
    }
    bundle.configs.push_back(std::move(code));
  }
  // A table tuned before stays named: entries whose PTX is unchanged still
  // apply, the others are reported stale (docs/tuning.md).
  llvm::SmallString<256> table(writer.directory);
  llvm::sys::path::append(table, name + ".tuning.json");
  if (count > 1 && llvm::sys::fs::exists(table))
    bundle.tuningPath = name + ".tuning.json";
  llvm::SmallString<256> jsonPath(writer.directory);
  llvm::sys::path::append(jsonPath, name + ".json");
  return writeFile(jsonPath, rt::writeBundleJson(bundle));
}

} // namespace

int tilec::writeBundles(mlir::ModuleOp first, const BundleRequest &request) {
  std::vector<std::vector<rt::Bundle>> configs;
  if (int code = compileConfigs(first, request, configs))
    return code;
  if (int code = checkAbi(configs, request.sweep))
    return code;
  // The back half reads the module's target, as every pass does.
  mlir::FailureOr<TargetInfo> targetInfo = tile::getTarget(first);
  if (failed(targetInfo))
    return 1;
  std::optional<FileWriter> writer =
      openDirectory(request, targetInfo->chip.str());
  if (!writer)
    return 1;
  for (size_t k = 0; k < configs[0].size(); ++k)
    if (!writeBundle(configs, k, request.sweep, *writer))
      return 1;
  return 0;
}
