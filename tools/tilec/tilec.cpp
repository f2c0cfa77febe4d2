//===- tilec.cpp - The Tegula compiler driver -----------------------------===//
//
// tilec FILE.tile [-k KERNEL] [-D NAME=VALUE]... [--target TARGET]
//       [--emit ast|tile|gpu|llvm|ptx|bundle] [-o PATH] [--reference REF] [-g]
//       [--run [tile-run's options]]
//
//===----------------------------------------------------------------------===//

#include "tegula/Frontend/Frontend.h"
#include "tegula/Interpreter/CLIOptions.h"
#include "tegula/Interpreter/Interpreter.h"
#include "tegula/Target/KernelDescription.h"
#include "tegula/Target/Target.h"
#include "tegula/Target/Variants.h"

#include "Tile/TileOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/SymbolTable.h"

#include "llvm/ADT/SetVector.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <CLI/CLI.hpp>
#include <new>

using namespace tegula;
using namespace tegula::frontend;

namespace {

int fail(const llvm::Twine &message) {
  llvm::errs() << "tilec: error: " << message << "\n";
  return 1;
}

/// Writes `text` to `path` ("-" is stdout). A write that fails (a full
/// disk, /dev/full) is reported and leaves no file behind; LLVM's streams
/// would otherwise abort at exit with "LLVM ERROR: IO failure".
bool writeFile(llvm::StringRef path, llvm::StringRef text) {
  std::error_code ec;
  llvm::ToolOutputFile out(path, ec, llvm::sys::fs::OF_Text);
  if (ec) {
    fail("cannot write '" + path + "': " + ec.message());
    return false;
  }
  out.os() << text;
  if (path == "-")
    out.os().flush();
  else
    out.os().close();
  if (std::error_code written = out.os().error()) {
    out.os().clear_error();
    fail("cannot write " +
         (path == "-" ? llvm::Twine("to standard output")
                      : llvm::Twine("'") + path + "'") +
         ": " + written.message());
    return false;
  }
  out.keep();
  return true;
}

/// Flushes what tilec printed on stdout (the configs' lines); false, with
/// a message, when that fails, so a full stdout is an error and not an
/// abort at exit.
bool flushStdout() {
  llvm::outs().flush();
  std::error_code ec = llvm::outs().error();
  if (!ec)
    return true;
  llvm::outs().clear_error();
  fail("cannot write to standard output: " + ec.message());
  return false;
}

std::string printModule(mlir::ModuleOp module) {
  std::string text;
  llvm::raw_string_ostream os(text);
  mlir::OpPrintingFlags flags;
  flags.enableDebugInfo(/*enable=*/false);
  module->print(os, flags);
  return text;
}

/// The names of the kernels (tile.kernel functions) of `module`.
std::vector<std::string> kernelNames(mlir::ModuleOp module) {
  std::vector<std::string> names;
  module.walk([&](mlir::func::FuncOp func) {
    if (func->hasAttr(tile::TileDialect::kKernelAttrName))
      names.push_back(func.getSymName().str());
  });
  return names;
}

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

/// What `ptxas -v` reports of a kernel (docs/tuning.md).
struct PtxasStats {
  std::optional<int64_t> registers, spillBytes;
};

/// The first integer before `word` on a line of `log` holding `key`.
std::optional<int64_t> numberBefore(llvm::StringRef log, llvm::StringRef key,
                                    llvm::StringRef word) {
  llvm::SmallVector<llvm::StringRef> lines;
  log.split(lines, '\n');
  for (llvm::StringRef line : lines) {
    size_t at = line.find(key);
    size_t end = line.find(word);
    if (at == llvm::StringRef::npos || end == llvm::StringRef::npos)
      continue;
    llvm::StringRef before = line.take_front(end).rtrim();
    size_t start = before.find_last_not_of("0123456789");
    int64_t value;
    if (!before.drop_front(start + 1).getAsInteger(10, value))
      return value;
  }
  return std::nullopt;
}

/// Assembles `ptxPath` into `cubinPath` for `chip` with ptxas, so that a
/// launch on that GPU needs no PTX JIT (docs/runtime.md, "cubin"). Without
/// ptxas, or when it fails, warns and returns false: the bundle then ships
/// PTX only, which every launcher can JIT. `ptxas` is its path. With
/// `stats`, runs `ptxas -v` and reads registers and spills from its log.
bool assembleCubin(llvm::StringRef ptxas, llvm::StringRef chip,
                   llvm::StringRef ptxPath, llvm::StringRef cubinPath,
                   PtxasStats *stats = nullptr) {
  auto warn = [&](const llvm::Twine &why) {
    llvm::sys::fs::remove(cubinPath);
    llvm::errs() << "tilec: warning: " << why << "; '" << ptxPath
                 << "' ships without a cubin\n";
    return false;
  };
  llvm::SmallString<128> log;
  if (llvm::sys::fs::createTemporaryFile("tilec-ptxas", "log", log))
    return warn("cannot create a temporary file for ptxas's output");
  std::string arch = ("-arch=" + chip).str();
  llvm::SmallVector<llvm::StringRef> args = {ptxas, arch, "-o", cubinPath,
                                             ptxPath};
  if (stats)
    args.insert(args.begin() + 1, "-v");
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, log.str(),
                                                log.str()};
  std::string error;
  int code =
      llvm::sys::ExecuteAndWait(ptxas, args, std::nullopt, redirects,
                                /*SecondsToWait=*/0, /*MemoryLimit=*/0, &error);
  std::string output;
  if (auto text = llvm::MemoryBuffer::getFile(log))
    output = llvm::StringRef((*text)->getBuffer()).trim().str();
  llvm::sys::fs::remove(log);
  if (code == 0) {
    if (stats) {
      stats->registers = numberBefore(output, "Used ", " registers");
      stats->spillBytes =
          numberBefore(output, "spill stores", " bytes spill stores");
    }
    return true;
  }
  if (size_t newline = output.find('\n'); newline != std::string::npos)
    output.resize(newline);
  return warn("ptxas failed" +
              (code < 0 ? llvm::Twine(" (") + error + ")"
                        : llvm::Twine(" (exit ") + llvm::Twine(code) + ")") +
              (output.empty() ? "" : ": " + output));
}

/// The -D options in order, each with its values (more than one: swept).
using Sweep = std::vector<std::pair<std::string, std::vector<std::string>>>;

/// The defines of combination `index` of the sweep, the first -D slowest.
std::vector<std::pair<std::string, std::string>>
configDefines(const Sweep &sweep, size_t index) {
  std::vector<std::pair<std::string, std::string>> defines(sweep.size());
  for (size_t i = sweep.size(); i-- > 0;) {
    const auto &[name, values] = sweep[i];
    defines[i] = {name, values[index % values.size()]};
    index /= values.size();
  }
  return defines;
}

/// "BLOCK_M=64,BLOCK_N=32": the swept parameters of a combination.
std::string configName(const Sweep &sweep, size_t index) {
  std::string name;
  auto defines = configDefines(sweep, index);
  for (size_t i = 0; i < sweep.size(); ++i)
    if (sweep[i].second.size() > 1)
      name += (name.empty() ? "" : ",") + defines[i].first + "=" +
              defines[i].second;
  return name;
}

struct BuiltVariant {
  std::string name;
  nlohmann::json when;
  int64_t sharedBytes = 0;
  std::string ptx;
};

/// One kernel of a module compiled to PTX, with its description.
struct BuiltKernel {
  std::string name;
  std::string description;
  int64_t sharedBytes = 0;
  std::string ptx;
  std::vector<BuiltVariant> variants;
};

/// Lowers `module` to PTX, every kernel and its div16 variant (left out
/// when its PTX comes out the same). False after an error, printed.
bool buildKernels(mlir::ModuleOp module, const std::string &reference,
                  const TargetInfo &targetInfo,
                  std::vector<BuiltKernel> &kernels) {
  std::string error;
  std::optional<std::map<std::string, std::string>> described =
      target::describeKernels(module, reference, error);
  if (!described)
    return fail(error), false;
  // A bundle carries, beside each kernel's general code, a build that
  // assumes its sizes are multiples of 16 (chosen at launch when they are).
  std::vector<target::KernelVariant> variants =
      target::addDivisibilityVariants(module);
  if (failed(target::lowerToGPU(module)))
    return false;
  std::map<std::string, int64_t> sharedBytes;
  module->walk([&](mlir::func::FuncOp func) {
    if (auto bytes = func->getAttrOfType<mlir::IntegerAttr>(
            tile::TileDialect::kSharedBytesAttrName))
      sharedBytes[func.getSymName().str()] = bytes.getInt();
  });
  if (failed(target::lowerToLLVMDialect(module)))
    return false;
  KernelSplitter splitter(module);
  // PTX of kernel function `function` under the entry name `entry`.
  auto emitKernel = [&](llvm::StringRef function,
                        llvm::StringRef entry) -> std::optional<std::string> {
    mlir::OwningOpRef<mlir::ModuleOp> single = splitter.split(function, entry);
    llvm::LLVMContext llvmContext;
    auto llvmModule =
        target::translateToLLVMIR(*single, llvmContext, targetInfo, error);
    if (!llvmModule)
      return std::nullopt;
    std::string ptx = target::emitPTX(*llvmModule, targetInfo, error);
    if (ptx.empty())
      return std::nullopt;
    return ptx;
  };
  for (const auto &[name, description] : *described) {
    BuiltKernel kernel;
    kernel.name = name;
    kernel.description = description;
    kernel.sharedBytes = sharedBytes[name];
    std::optional<std::string> ptx = emitKernel(name, name);
    if (!ptx)
      return fail(error), false;
    kernel.ptx = std::move(*ptx);
    for (const target::KernelVariant &variant : variants) {
      if (variant.kernel != name)
        continue;
      std::optional<std::string> variantPtx =
          emitKernel(variant.function, name);
      if (!variantPtx)
        return fail(error), false;
      // A variant whose code came out the same is not worth a choice.
      if (*variantPtx == kernel.ptx)
        continue;
      kernel.variants.push_back({variant.name, variant.when,
                                 sharedBytes[variant.function],
                                 std::move(*variantPtx)});
    }
    kernels.push_back(std::move(kernel));
  }
  return true;
}

/// What tilec writes of each config's files, and what it names in JSON.
struct Writer {
  std::string directory, ptxas, chip;
  bool stats = false;

  /// Writes FILE.ptx and, with ptxas, FILE.cubin; names the cubin in
  /// `item` and, with stats, its registers and spills.
  bool write(const std::string &file, const std::string &ptx,
             nlohmann::json &item) {
    llvm::SmallString<256> ptxPath(directory);
    llvm::sys::path::append(ptxPath, file);
    if (!writeFile(ptxPath, ptx))
      return false;
    if (ptxas.empty())
      return true;
    llvm::SmallString<256> cubinPath(ptxPath);
    llvm::sys::path::replace_extension(cubinPath, "cubin");
    PtxasStats figures;
    if (!assembleCubin(ptxas, chip, ptxPath, cubinPath,
                       stats ? &figures : nullptr))
      return true;
    item["cubin"] = llvm::sys::path::filename(cubinPath).str();
    if (figures.registers)
      item["registers"] = *figures.registers;
    if (figures.spillBytes)
      item["spill_bytes"] = *figures.spillBytes;
    return true;
  }
};

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

/// The fields of the bundle's ABI, identical in every config.
const char *const kAbiFields[] = {"params", "size_vars", "requires", "flops",
                                  "bytes"};

/// Compiles every config of the sweep (the first is `first`, already
/// compiled) and writes one bundle per kernel: KERNEL.json, KERNEL.ptx and
/// the rest beside them in `output`.
int writeBundles(mlir::ModuleOp first, const Program &program,
                 DiagEngine &diags, mlir::MLIRContext &context,
                 CompileOptions options, const Sweep &sweep,
                 const std::string &reference, const TargetInfo &targetInfo,
                 const std::string &output, bool noCubin) {
  size_t count = 1;
  for (const auto &entry : sweep)
    count *= entry.second.size();
  std::vector<std::vector<BuiltKernel>> configs(count);
  std::map<std::string, size_t> configOf; // by templateValues
  for (size_t c = 0; c < count; ++c) {
    mlir::OwningOpRef<mlir::ModuleOp> module;
    mlir::ModuleOp compiled = first;
    if (c > 0) {
      options.defines = configDefines(sweep, c);
      module = compileProgram(program, diags, context, options);
      if (diags.hasErrors() || !module)
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
    if (!buildKernels(compiled, reference, targetInfo, configs[c]))
      return count > 1 ? fail("config '" + configName(sweep, c) +
                              "' does not compile")
                       : 1;
    if (configs[c].size() != configs[0].size())
      return fail("config '" + configName(sweep, c) +
                  "' compiles other kernels than config '" +
                  configName(sweep, 0) + "'");
  }

  // Template parameters are compile-time: the launch's ABI is not, so it
  // must not change between configs. Checked before anything is written.
  for (size_t k = 0; k < configs[0].size(); ++k) {
    nlohmann::json abi = nlohmann::json::parse(configs[0][k].description);
    for (size_t c = 1; c < count; ++c) {
      nlohmann::json described =
          nlohmann::json::parse(configs[c][k].description);
      for (const char *field : kAbiFields) {
        nlohmann::json mine = described.value(field, nlohmann::json()),
                       first = abi.value(field, nlohmann::json());
        if (mine != first)
          return fail("kernel '" + configs[0][k].name + "': the " + field +
                      " of config '" + configName(sweep, c) + "' (" +
                      mine.dump() + ") differ from those of config '" +
                      configName(sweep, 0) + "' (" + first.dump() +
                      "); template parameters are compile-time, so every "
                      "config must keep the kernel's ABI (params, size_vars, "
                      "requires, flops, bytes)");
      }
    }
  }

  Writer writer;
  writer.directory = output.empty() ? "." : output;
  writer.chip = targetInfo.chip.str();
  writer.stats = count > 1;
  if (std::error_code ec = llvm::sys::fs::create_directories(writer.directory))
    return fail("cannot create '" + writer.directory + "': " + ec.message());
  if (!llvm::sys::fs::is_directory(writer.directory))
    return fail("cannot write a bundle into '" + writer.directory +
                "': not a directory");
  if (!noCubin) {
    if (llvm::ErrorOr<std::string> found =
            llvm::sys::findProgramByName("ptxas"))
      writer.ptxas = *found;
    else
      llvm::errs() << "tilec: warning: no ptxas on PATH: the bundle ships "
                      "PTX only (no KERNEL.cubin)\n";
  }
  for (size_t k = 0; k < configs[0].size(); ++k) {
    const std::string &name = configs[0][k].name;
    nlohmann::json bundle, list = nlohmann::json::array();
    for (size_t c = 0; c < count; ++c) {
      const BuiltKernel &built = configs[c][k];
      nlohmann::json described = nlohmann::json::parse(built.description);
      std::string prefix = c == 0 ? name : name + ".c" + std::to_string(c);
      nlohmann::json item = {{"ptx", prefix + ".ptx"}};
      if (!writer.write(prefix + ".ptx", built.ptx, item))
        return 1;
      nlohmann::json variants = nlohmann::json::array();
      for (const BuiltVariant &variant : built.variants) {
        std::string file = prefix + "." + variant.name + ".ptx";
        nlohmann::json v = {{"name", variant.name},
                            {"ptx", file},
                            {"when", variant.when},
                            {"shared_bytes", variant.sharedBytes}};
        if (!writer.write(file, variant.ptx, v))
          return 1;
        variants.push_back(v);
      }
      std::string finished = target::finishDescription(
          built.description, built.sharedBytes, variants);
      nlohmann::json full = nlohmann::json::parse(finished);
      if (item.contains("cubin"))
        full["cubin"] = item["cubin"];
      if (c == 0)
        bundle = full;
      if (count == 1)
        break;
      item["name"] = configName(sweep, c);
      nlohmann::json defines = nlohmann::json::object();
      auto given = configDefines(sweep, c);
      for (size_t d = 0; d < sweep.size(); ++d)
        if (sweep[d].second.size() > 1)
          defines[given[d].first] = full["template"].value(
              given[d].first, nlohmann::json(given[d].second));
      item["defines"] = defines;
      for (const char *field : {"grid", "threads", "shared_bytes", "variants"})
        item[field] = full.value(field, nlohmann::json());
      if (item["variants"].is_null())
        item.erase("variants");
      list.push_back(item);
      std::string line =
          name + " [" + std::to_string(c + 1) + "/" + std::to_string(count) +
          "] " + configName(sweep, c) + ": " +
          std::to_string(full["threads"].get<int64_t>()) + " threads, " +
          std::to_string(full["shared_bytes"].get<int64_t>()) + " bytes shared";
      if (item.contains("registers"))
        line += ", " + std::to_string(item["registers"].get<int64_t>()) +
                " registers";
      if (item.contains("spill_bytes"))
        line += ", " + std::to_string(item["spill_bytes"].get<int64_t>()) +
                " bytes spilled";
      llvm::outs() << line << "\n";
    }
    if (count > 1) {
      bundle["configs"] = list;
      // A table tuned before stays named: entries whose PTX is unchanged
      // still apply, the others are reported stale (docs/tuning.md).
      llvm::SmallString<256> table(writer.directory);
      llvm::sys::path::append(table, name + ".tuning.json");
      if (llvm::sys::fs::exists(table))
        bundle["tuning"] = name + ".tuning.json";
    }
    llvm::SmallString<256> jsonPath(writer.directory);
    llvm::sys::path::append(jsonPath, name + ".json");
    if (!writeFile(jsonPath, bundle.dump(2) + "\n"))
      return 1;
  }
  return 0;
}

/// The message for `-D NAME` given again with `value`: the one -D to write
/// instead, its values in the order given, each once.
std::string repeatedDefine(const std::string &name,
                           const std::vector<std::string> &values,
                           const std::string &value) {
  std::vector<std::string> merged = values;
  llvm::SmallVector<llvm::StringRef> items;
  llvm::StringRef(value).split(items, ',');
  for (llvm::StringRef item : items)
    if (!item.trim().empty() && !llvm::is_contained(merged, item.trim().str()))
      merged.push_back(item.trim().str());
  return "-D " + name + " is given twice; give it once" +
         (merged.size() > 1 ? ", with a comma list to sweep it" : "") +
         " (-D " + name + "=" + llvm::join(merged, ",") + ")";
}

} // namespace

static int compile(int argc, char **argv) {
  CLI::App app{"tilec: the Tegula tile-language compiler"};
  std::string input, kernel, emit = "bundle", output;
  std::string target = TargetInfo::defaultTarget().chip.str();
  std::vector<std::string> defines;
  bool run = false;
  interp::RunOptions runOptions;
  app.add_option("file", input, "the .tile source file")->required();
  app.add_option("-k,--kernel", kernel, "compile only this kernel");
  app.add_option("-D", defines, "set a template parameter: -D NAME=VALUE")
      ->allow_extra_args(false);
  app.add_option("--target", target, "the GPU target (default " + target + ")")
      ->check(CLI::IsMember(TargetInfo::names()));
  app.add_option("--emit", emit,
                 "stop after a stage: ast, tile, gpu, llvm, ptx, or bundle "
                 "(default: KERNEL.ptx and KERNEL.json in the -o directory)")
      ->check(CLI::IsMember({"ast", "tile", "gpu", "llvm", "ptx", "bundle"}));
  app.add_option("-o", output,
                 "output file (default: stdout), or the bundle directory "
                 "(default: .)");
  bool noCubin = false;
  app.add_flag("--no-cubin", noCubin,
               "write no KERNEL.cubin beside KERNEL.ptx (by default ptxas "
               "assembles one for --target when it is on PATH)");
  bool debug = false;
  app.add_flag("-g", debug,
               "compile device_assert into the GPU code (a failing assert "
               "reports its message, block and thread and fails the launch; "
               "without -g it is left out, and the interpreter checks it "
               "either way)");
  app.add_flag("--run", run,
               "run the kernel in the tile-IR interpreter instead of "
               "compiling it for the GPU");
  app.add_flag_callback(
      "--list-builtins",
      [] {
        for (const std::string &name : builtinNames())
          llvm::outs() << name << "\n";
        llvm::outs().flush();
        throw CLI::Success();
      },
      "print the names of the builtin functions, one a line, and exit");
  interp::addRunOptions(app, runOptions, "--run options (as tile-run)");
  // --reference (from the run options) also names the bundle's reference.
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    int code = app.exit(e);
    return code == 0 ? 0 : 1;
  }

  CompileOptions options;
  options.kernel = kernel;
  options.debug = debug;
  // A comma list in a -D sweeps that parameter: every combination becomes
  // a config of one bundle (docs/tuning.md), the first -D slowest.
  Sweep sweep;
  for (const std::string &d : defines) {
    size_t eq = d.find('=');
    if (eq == std::string::npos || eq == 0)
      return fail("-D expects NAME=VALUE, got '" + d + "'");
    std::string name = d.substr(0, eq);
    // The frontend would keep the last value while a sweep names the first.
    for (const auto &[given, values] : sweep)
      if (given == name)
        return fail(repeatedDefine(name, values, d.substr(eq + 1)));
    std::vector<std::string> values;
    llvm::SmallVector<llvm::StringRef> items;
    llvm::StringRef(d).drop_front(eq + 1).split(items, ',');
    for (llvm::StringRef item : items) {
      if (item.trim().empty())
        return fail("-D " + name + ": an empty value in '" + d + "'");
      if (llvm::is_contained(values, item.trim().str()))
        return fail("-D " + name + " lists '" + item.trim() + "' twice");
      values.push_back(item.trim().str());
    }
    sweep.emplace_back(name, values);
  }
  size_t combinations = 1;
  for (const auto &[name, values] : sweep) {
    combinations *= values.size();
    if (combinations > 4096)
      return fail("the -D lists make more than 4096 configs");
  }
  if (combinations > 1 && (emit != "bundle" || run))
    return fail("a comma list in -D makes configs of a bundle: it needs "
                "--emit bundle and no --run");
  options.defines = configDefines(sweep, 0);
  // --target was checked against TargetInfo::names() by the parser.
  std::optional<TargetInfo> targetInfo = TargetInfo::lookup(target);
  options.target = *targetInfo;

  auto buffer = llvm::MemoryBuffer::getFileOrSTDIN(input);
  if (!buffer)
    return fail("cannot read '" + input + "': " + buffer.getError().message());
  DiagEngine diags(input, (*buffer)->getBuffer().str(), llvm::errs());
  Program program = parseProgram(diags);

  // Checks run whatever --emit asks for: the AST is printed only for a
  // program that compiles.
  mlir::MLIRContext context;
  target::registerLowering(context);
  mlir::OwningOpRef<mlir::ModuleOp> module;
  if (!diags.hasErrors())
    module = compileProgram(program, diags, context, options);
  if (diags.hasErrors() || !module)
    return 1;

  // Errors from the lowering (shared memory past the target's limit once
  // conversion scratch is counted, say) print like the frontend's: the
  // location, the source line and a caret.
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy((*buffer)->getBuffer(), input),
      llvm::SMLoc());
  mlir::SourceMgrDiagnosticHandler lowering(sourceMgr, &context);
  context.printOpOnDiagnostic(false);

  if (run) {
    std::vector<std::string> names = kernelNames(*module);
    if (names.size() != 1)
      return fail("--run needs exactly one kernel; pick one with -k");
    mlir::func::FuncOp func =
        module->lookupSymbol<mlir::func::FuncOp>(names[0]);
    interp::RunOptions withReference = runOptions;
    if (withReference.reference.empty())
      withReference.reference = target::defaultReference(names[0]);
    // The interpreter holds host copies of every tensor: a size that fits
    // the runner's check can still exhaust memory here.
    try {
      return interp::runKernel(func, withReference).exitCode;
    } catch (const std::bad_alloc &) {
      return fail("out of host memory running the kernel in the interpreter; "
                  "use smaller --dims");
    }
  }

  if (emit == "ast") {
    std::string text;
    llvm::raw_string_ostream os(text);
    dumpAST(program, os);
    return writeFile(output.empty() ? "-" : output, text) ? 0 : 1;
  }
  if (emit == "tile")
    return writeFile(output.empty() ? "-" : output, printModule(*module)) ? 0
                                                                          : 1;

  if (emit == "bundle")
    return writeBundles(*module, program, diags, context, options, sweep,
                        runOptions.reference, *targetInfo, output, noCubin);

  std::string describeError;
  if (!target::describeKernels(*module, runOptions.reference, describeError))
    return fail(describeError);
  if (failed(target::lowerToGPU(*module)))
    return 1;
  if (emit == "gpu")
    return writeFile(output.empty() ? "-" : output, printModule(*module)) ? 0
                                                                          : 1;
  if (failed(target::lowerToLLVMDialect(*module)))
    return 1;
  std::string error;
  llvm::LLVMContext llvmContext;
  auto llvmModule =
      target::translateToLLVMIR(*module, llvmContext, *targetInfo, error);
  if (!llvmModule)
    return fail(error);
  std::string text;
  if (emit == "llvm") {
    llvm::raw_string_ostream os(text);
    llvmModule->print(os, nullptr);
  } else {
    text = target::emitPTX(*llvmModule, *targetInfo, error);
    if (text.empty())
      return fail(error);
  }
  return writeFile(output.empty() ? "-" : output, text) ? 0 : 1;
}

int main(int argc, char **argv) {
  int code = compile(argc, argv);
  return flushStdout() ? code : 1;
}
