//===- AssertOpToNVVM.cpp - device_assert ---------------------------------===//
//
// Without `tile.debug` on the module (tilec -g) a tile.assert is dropped.
// With it, each thread ANDs its elements of the condition and, when one is
// false, calls `__assertfail(message, file, line, function, 1)`, the CUDA
// device runtime's assert: the driver prints
// "FILE:LINE: KERNEL: block: [x,y,z], thread: [...] Assertion `MESSAGE
// (CONDITION)` failed." (the block is the program id) and the launch fails
// with CUDA_ERROR_ASSERT. ptxas resolves the call itself.
//
//===----------------------------------------------------------------------===//

#include "Patterns.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <optional>

using namespace mlir;
using namespace tegula::tile;

namespace {

/// The module's constant strings for __assertfail, one global per text
/// (asserts share their file and kernel names). Names are counted rather
/// than looked up: looking up each candidate name in the module made N
/// asserts cost N^3 (1000 under -g: 62 s).
class AssertStrings {
public:
  /// A generic pointer to the NUL-terminated constant `text`.
  Value pointer(OpBuilder &builder, Location loc, ModuleOp module,
                StringRef text) {
    LLVM::GlobalOp &global = globals[text];
    if (!global)
      global = create(builder, loc, module, text);
    Value address = LLVM::AddressOfOp::create(builder, loc, global);
    return LLVM::AddrSpaceCastOp::create(
        builder, loc, LLVM::LLVMPointerType::get(builder.getContext()),
        address);
  }

private:
  LLVM::GlobalOp create(OpBuilder &builder, Location loc, ModuleOp module,
                        StringRef text) {
    if (!namesTaken) {
      // The module's symbols, once: names other code chose stay theirs.
      namesTaken.emplace();
      for (Operation &op : *module.getBody())
        if (auto name =
                op.getAttrOfType<StringAttr>(SymbolTable::getSymbolAttrName()))
          namesTaken->insert(name.getValue());
    }
    std::string name;
    do
      name = "__tegula_assert_" + std::to_string(next++);
    while (namesTaken->contains(name));
    std::string value = text.str();
    value.push_back('\0');
    auto type = LLVM::LLVMArrayType::get(builder.getI8Type(), value.size());
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToStart(module.getBody());
    return LLVM::GlobalOp::create(builder, loc, type, /*isConstant=*/true,
                                  LLVM::Linkage::Internal, name,
                                  builder.getStringAttr(value),
                                  /*alignment=*/1, /*addrSpace=*/1);
  }

  llvm::StringMap<LLVM::GlobalOp> globals;
  std::optional<llvm::StringSet<>> namesTaken;
  unsigned next = 0;
};

LLVM::LLVMFuncOp assertFail(OpBuilder &builder, ModuleOp module) {
  if (auto fn = module.lookupSymbol<LLVM::LLVMFuncOp>("__assertfail"))
    return fn;
  MLIRContext *context = builder.getContext();
  auto ptr = LLVM::LLVMPointerType::get(context);
  auto type = LLVM::LLVMFunctionType::get(
      LLVM::LLVMVoidType::get(context),
      {ptr, ptr, builder.getI32Type(), ptr, builder.getI64Type()});
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToStart(module.getBody());
  return LLVM::LLVMFuncOp::create(builder, module.getLoc(), "__assertfail",
                                  type);
}

struct AssertLowering : public OpConversionPattern<AssertOp> {
  using OpConversionPattern::OpConversionPattern;
  /// One conversion's strings: the pass builds the pattern for each run
  /// over one module, and that conversion runs on one thread.
  mutable AssertStrings strings;
  mutable LLVM::LLVMFuncOp callee;

  LogicalResult
  matchAndRewrite(AssertOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto module = op->getParentOfType<ModuleOp>();
    if (!module->hasAttr(TileDialect::kDebugAttrName)) {
      rewriter.eraseOp(op);
      return success();
    }
    Location loc = op.getLoc();
    Value ok;
    for (Value element : unpackVector(rewriter, loc, adaptor.getCondition()))
      ok = ok ? arith::AndIOp::create(rewriter, loc, ok, element).getResult()
              : element;
    Value failed = arith::XOrIOp::create(
        rewriter, loc, ok, arith::ConstantIntOp::create(rewriter, loc, 1, 1));
    auto guarded = scf::IfOp::create(rewriter, loc, failed,
                                     /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPointToStart(guarded.thenBlock());
    std::string file = "<unknown>";
    int64_t line = 0;
    if (auto at = dyn_cast<FileLineColLoc>(loc)) {
      file = at.getFilename().str() + ":" + std::to_string(at.getLine()) + ":" +
             std::to_string(at.getColumn());
      line = at.getLine();
    }
    std::string message = op.getMessage().str();
    message = "device_assert " +
              (message.empty() ? op.getText().str()
                               : message + " (" + op.getText().str() + ")");
    auto function = op->getParentOfType<FunctionOpInterface>();
    Value args[] = {
        strings.pointer(rewriter, loc, module, message),
        strings.pointer(rewriter, loc, module, file),
        arith::ConstantIntOp::create(rewriter, loc, rewriter.getI32Type(),
                                     line),
        strings.pointer(rewriter, loc, module,
                        function ? function.getName() : "kernel"),
        arith::ConstantIntOp::create(rewriter, loc, rewriter.getI64Type(), 1)};
    if (!callee)
      callee = assertFail(rewriter, module);
    LLVM::CallOp::create(rewriter, loc, callee, args);
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

void tegula::tile::populateAssertOpToNVVMPatterns(
    const TypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<AssertLowering>(converter, patterns.getContext());
}
