//===- Sema.cpp - Semantic analysis and tile-dialect generation ----------===//
//
// The entry point of the elaborator (see Sema.h for how it is split) and the
// checks of a program as a whole: one definition per kernel and fn name.
//
//===----------------------------------------------------------------------===//

#include "Sema.h"

#include "Tile/TilePasses.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"

using namespace tegula;
using namespace tegula::frontend;
using namespace tegula::frontend::sema;

void tegula::frontend::registerFrontendDialects(mlir::MLIRContext &context) {
  context.loadDialect<tl::TileDialect, mlir::arith::ArithDialect,
                      mlir::func::FuncDialect, mlir::math::MathDialect,
                      mlir::scf::SCFDialect>();
}

Sema::Sema(const Program &program, DiagEngine &diags,
           mlir::MLIRContext &context, const CompileOptions &options)
    : program(program), diags(diags), ctx(&context), builder(&context),
      options(options) {
  llvm::StringMap<const Kernel *> kernels;
  for (const auto &k : program.kernels) {
    // PTX identifiers that start with '_' need a second character.
    if (k->name == "_")
      diags.error(k->loc, "a kernel cannot be named '_': the PTX name of a "
                          "kernel that starts with '_' needs a second "
                          "character");
    auto [it, inserted] = kernels.try_emplace(k->name, k.get());
    if (!inserted) {
      diags.error(k->loc, "redefinition of kernel '" + k->name + "'");
      diags.note(it->second->loc, "previous definition is here");
    }
  }
  for (const auto &fn : program.functions) {
    if (functions.count(fn->name)) {
      diags.error(fn->loc, "redefinition of fn '" + fn->name + "'");
      diags.note(functions[fn->name]->loc, "previous definition is here");
      continue;
    }
    functions[fn->name] = fn.get();
  }
}

mlir::OwningOpRef<mlir::ModuleOp> Sema::run() {
  module = mlir::ModuleOp::create(builder, loc(SourceLoc{}));
  (*module)->setAttr(tl::TileDialect::kTargetAttrName,
                     builder.getStringAttr(options.target.chip));
  if (options.debug)
    (*module)->setAttr(tl::TileDialect::kDebugAttrName, builder.getUnitAttr());
  bool found = options.kernel.empty();
  for (const auto &k : program.kernels) {
    if (!options.kernel.empty() && k->name != options.kernel)
      continue;
    found = true;
    kernel(*k);
  }
  if (!found)
    diags.errorNoLoc("no kernel named '" + options.kernel + "' in " +
                     diags.getFileName());
  for (const auto &[name, text] : options.defines)
    if (!usedDefines.contains(name) && !diags.hasErrors()) {
      bool known = false;
      for (const auto &k : program.kernels)
        for (const TemplateParam &tp : k->templateParams)
          known |= tp.name == name;
      if (!known)
        diags.errorNoLoc("-D " + name + "=" + text +
                         " names no template parameter of any kernel");
    }
  if (diags.hasErrors())
    return nullptr;
  // Generated IR that fails to verify is a compiler bug, not a user error.
  std::string message;
  llvm::raw_string_ostream os(message);
  mlir::ScopedDiagnosticHandler handler(ctx, [&](mlir::Diagnostic &d) {
    os << d.getLocation() << ": " << d.str() << "\n";
    return mlir::success();
  });
  if (mlir::failed(mlir::verify(*module))) {
    diags.errorNoLoc("internal compiler error: the generated tile IR does not "
                     "verify (please report this bug):\n" + message);
    return nullptr;
  }
  // Fast math by default, as flags on the ops that every later reader
  // (--emit tile, the interpreter, the lowering) sees.
  mlir::PassManager fastMath(ctx, mlir::ModuleOp::getOperationName());
  fastMath.addNestedPass<mlir::func::FuncOp>(tl::createTileFastMath());
  if (mlir::failed(fastMath.run(*module)))
    return nullptr;
  return std::move(module);
}

mlir::OwningOpRef<mlir::ModuleOp>
tegula::frontend::compileProgram(const Program &program, DiagEngine &diags,
                                 mlir::MLIRContext &context,
                                 const CompileOptions &options) {
  registerFrontendDialects(context);
  Sema sema(program, diags, context, options);
  return sema.run();
}

