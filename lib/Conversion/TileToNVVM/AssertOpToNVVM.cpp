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

using namespace mlir;
using namespace tegula::tile;

namespace {

/// A generic pointer to a new NUL-terminated constant string.
Value stringPointer(OpBuilder &builder, Location loc, ModuleOp module,
                    StringRef text) {
  std::string value = text.str();
  value.push_back('\0');
  std::string name;
  for (int i = 0; name.empty() || module.lookupSymbol(name); ++i)
    name = "__tegula_assert_" + std::to_string(i);
  auto type = LLVM::LLVMArrayType::get(builder.getI8Type(), value.size());
  LLVM::GlobalOp global;
  {
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToStart(module.getBody());
    global = LLVM::GlobalOp::create(
        builder, loc, type, /*isConstant=*/true, LLVM::Linkage::Internal, name,
        builder.getStringAttr(value), /*alignment=*/1, /*addrSpace=*/1);
  }
  Value address = LLVM::AddressOfOp::create(builder, loc, global);
  return LLVM::AddrSpaceCastOp::create(
      builder, loc, LLVM::LLVMPointerType::get(builder.getContext()), address);
}

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
        stringPointer(rewriter, loc, module, message),
        stringPointer(rewriter, loc, module, file),
        arith::ConstantIntOp::create(rewriter, loc, rewriter.getI32Type(),
                                     line),
        stringPointer(rewriter, loc, module,
                      function ? function.getName() : "kernel"),
        arith::ConstantIntOp::create(rewriter, loc, rewriter.getI64Type(), 1)};
    LLVM::CallOp::create(rewriter, loc, assertFail(rewriter, module), args);
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

void tegula::tile::populateAssertOpToNVVMPatterns(
    const TypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<AssertLowering>(converter, patterns.getContext());
}
