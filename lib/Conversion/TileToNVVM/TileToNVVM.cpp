//===- TileToNVVM.cpp - The convert-tile-to-nvvm pass ---------------------===//

#include "Common.h"
#include "Families.h"
#include "Patterns.h"

#include "tegula/Analysis/AxisInfo.h"

#include "Tile/TilePasses.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/Transforms/FuncConversions.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/Transforms/Patterns.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;

namespace tegula::tile {
#define GEN_PASS_DEF_CONVERTTILETONVVM
#include "Tile/TileConversionPasses.h.inc"
} // namespace tegula::tile

using namespace tegula;
using namespace tegula::tile;

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

void tegula::tile::populateTileToNVVMTypeConversions(TypeConverter &converter) {
  converter.addConversion([](Type type) { return type; });
  // A tile is this thread's registers, in register order.
  converter.addConversion([](RankedTensorType type) -> std::optional<Type> {
    if (!type.getEncoding())
      return std::nullopt;
    // A tile left in shared memory is the byte offset where it starts.
    if (isa<SharedLayoutAttr>(type.getEncoding()))
      return IntegerType::get(type.getContext(), 32);
    LinearLayout layout = getLinearLayout(type);
    return VectorType::get({layout.getNumRegs()}, type.getElementType());
  });
  // A group of warpgroup dots is counted, not named: a placeholder.
  converter.addConversion([](DotTokenType type) -> Type {
    return IntegerType::get(type.getContext(), 32);
  });
  converter.addConversion([](PtrType type) -> Type {
    return LLVM::LLVMPointerType::get(type.getContext(), /*addressSpace=*/1);
  });
  // A global tensor is its address, every extent (i32) and, when strided,
  // every stride (i64, in elements).
  converter.addConversion([](GlobalTensorType type) -> Type {
    MLIRContext *context = type.getContext();
    SmallVector<Type> fields = {LLVM::LLVMPointerType::get(context, 1)};
    fields.append(type.getRank(), IntegerType::get(context, 32));
    if (type.getIsStrided())
      fields.append(type.getRank(), IntegerType::get(context, 64));
    return LLVM::LLVMStructType::getLiteral(context, fields);
  });
  // A pipeline is the byte offset of its ring in shared memory and the
  // addresses of its push and pop counters (registers after mem2reg).
  converter.addConversion([](PipelineType type) -> Type {
    MLIRContext *context = type.getContext();
    auto i32 = IntegerType::get(context, 32);
    auto local = LLVM::LLVMPointerType::get(context);
    return LLVM::LLVMStructType::getLiteral(context, {i32, local, local});
  });
}

//===----------------------------------------------------------------------===//
// Program identity and tensors
//===----------------------------------------------------------------------===//

namespace {
template <typename SourceOp, typename X, typename Y, typename Z>
struct GridIndexLowering : public OpConversionPattern<SourceOp> {
  using OpConversionPattern<SourceOp>::OpConversionPattern;
  LogicalResult
  matchAndRewrite(SourceOp op, typename SourceOp::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Type i32 = rewriter.getI32Type();
    Value result;
    switch (op.getAxis()) {
    case 0:
      result = X::create(rewriter, op.getLoc(), i32);
      break;
    case 1:
      result = Y::create(rewriter, op.getLoc(), i32);
      break;
    default:
      result = Z::create(rewriter, op.getLoc(), i32);
      break;
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct MakeTensorLowering : public OpConversionPattern<MakeTensorOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(MakeTensorOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type structType = getTypeConverter()->convertType(op.getType());
    Value result = LLVM::UndefOp::create(rewriter, loc, structType);
    result = LLVM::InsertValueOp::create(
        rewriter, loc, result, adaptor.getBase(), ArrayRef<int64_t>{0});
    unsigned dynamic = 0;
    for (auto [dim, extent] : llvm::enumerate(op.getType().getShape())) {
      Value value = ShapedType::isDynamic(extent)
                        ? adaptor.getDynamicDims()[dynamic++]
                        : i32Const(rewriter, loc, extent);
      result = LLVM::InsertValueOp::create(
          rewriter, loc, result, value,
          ArrayRef<int64_t>{static_cast<int64_t>(dim + 1)});
    }
    int64_t rank = op.getType().getRank();
    for (auto [dim, stride] : llvm::enumerate(adaptor.getStrides()))
      result = LLVM::InsertValueOp::create(
          rewriter, loc, result, stride,
          ArrayRef<int64_t>{static_cast<int64_t>(1 + rank + dim)});
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct DimLowering : public OpConversionPattern<DimOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(DimOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<LLVM::ExtractValueOp>(
        op, adaptor.getTensor(), ArrayRef<int64_t>{op.getDim() + 1});
    return success();
  }
};

struct SplatLowering : public OpConversionPattern<SplatOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(SplatOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Type type = getTypeConverter()->convertType(op.getType());
    rewriter.replaceOpWithNewOp<vector::BroadcastOp>(op, type,
                                                     adaptor.getValue());
    return success();
  }
};

struct ArangeLowering : public OpConversionPattern<ArangeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ArangeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    LinearLayout layout = getLinearLayout(op.getType());
    auto coords = emitRegisterCoords(rewriter, loc, layout,
                                     getThreadPosition(rewriter, op));
    SmallVector<Value> elements;
    for (auto &regCoords : coords)
      elements.push_back(regCoords[0]);
    rewriter.replaceOp(op,
                       packVector(rewriter, loc,
                                  getTypeConverter()->convertType(op.getType()),
                                  elements));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// The kernel ABI
//===----------------------------------------------------------------------===//

/// The kernel ABI passes a bool as 32 bits (tools.md), where LLVM would pass
/// an i1 parameter as a byte: each i1 argument of a kernel becomes i32 and
/// the body reads it as `!= 0`.
void widenBoolParameters(func::FuncOp func) {
  if (func.isExternal() || !func->hasAttr(TileDialect::kKernelAttrName))
    return;
  Block &entry = func.front();
  OpBuilder builder = OpBuilder::atBlockBegin(&entry);
  Type i32 = builder.getI32Type();
  SmallVector<Type> inputs(func.getArgumentTypes());
  for (BlockArgument arg : entry.getArguments()) {
    if (!arg.getType().isInteger(1))
      continue;
    arg.setType(i32);
    inputs[arg.getArgNumber()] = i32;
    Value flag =
        arith::CmpIOp::create(builder, arg.getLoc(), arith::CmpIPredicate::ne,
                              arg, i32Const(builder, arg.getLoc(), 0));
    arg.replaceAllUsesExcept(flag, flag.getDefiningOp());
  }
  func.setType(
      FunctionType::get(func.getContext(), inputs, func.getResultTypes()));
}

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

/// While alive, turns the conversion's "failed to legalize operation 'X'"
/// (an op no pattern could lower: a limitation of this lowering, not an
/// error in the program) into an error a user can act on, at the same
/// location.
class RewordLegalizationFailures {
public:
  explicit RewordLegalizationFailures(MLIRContext *context)
      : handler(context, [this](Diagnostic &diag) { return reword(diag); }) {}

private:
  LogicalResult reword(Diagnostic &diag) {
    static constexpr StringLiteral prefix = "failed to legalize ";
    std::string message = diag.str();
    if (rewording || diag.getSeverity() != DiagnosticSeverity::Error ||
        !StringRef(message).starts_with(prefix))
      return failure(); // not ours: the next handler prints it
    StringRef name = StringRef(message).split('\'').second.split('\'').first;
    rewording = true;
    emitError(diag.getLocation())
        << "cannot compile this '" << name
        << "' for the GPU: the lowering has no rule for it in this form (a "
           "limitation of the compiler, not an error in the program; please "
           "report it with this program)";
    rewording = false;
    return success();
  }

  bool rewording = false;
  ScopedDiagnosticHandler handler;
};

bool hasTileTypes(Operation *op) {
  auto isTileType = [](Type type) {
    return isa<RankedTensorType, PtrType, GlobalTensorType, PipelineType>(type);
  };
  return llvm::any_of(op->getOperandTypes(), isTileType) ||
         llvm::any_of(op->getResultTypes(), isTileType);
}

/// Reports `func`'s shared memory over the target's budget: at the op whose
/// scratch brings the total over, naming it, or at the kernel when its
/// pipeline rings alone are over. Once per location in `reported` (a
/// kernel's div16 variant repeats its ops).
void reportSharedOverBudget(func::FuncOp func, const KernelPlan &plan,
                            const TargetInfo &target,
                            llvm::DenseSet<Location> &reported) {
  int64_t limit = target.maxSharedBytes, rings = plan.scratchOffset;
  Operation *worst = nullptr;
  int64_t worstScratch = 0, worstTotal = 0;
  func.walk([&](Operation *op) {
    int64_t scratch = getScratchBytes(op);
    int64_t total =
        plan.scratchOverRings.contains(op) ? scratch : rings + scratch;
    if (scratch && total > worstTotal) {
      worst = op;
      worstScratch = scratch;
      worstTotal = total;
    }
  });
  if (!worst || worstTotal <= limit) {
    if (!reported.insert(func.getLoc()).second)
      return;
    func.emitError() << "kernel needs " << plan.sharedBytes
                     << " bytes of shared memory but " << target.chip
                     << " allows " << limit
                     << " per block; use fewer stages or smaller blocks";
    return;
  }
  if (!reported.insert(worst->getLoc()).second)
    return;
  // A layout conversion is the compiler's; the others are builtins.
  std::string what;
  llvm::raw_string_ostream os(what);
  if (isa<ConvertLayoutOp>(worst))
    os << "moving a tile between layouts";
  else
    os << "'" << worst->getName().stripDialect() << "'";
  auto source = cast<RankedTensorType>(worst->getOperand(0).getType());
  os << " of tile<" << source.getElementType() << ">[";
  llvm::interleaveComma(source.getShape(), os);
  os << "]";
  InFlightDiagnostic diag = worst->emitError();
  diag << what << " needs " << worstScratch
       << " bytes of shared-memory scratch";
  if (worstTotal != worstScratch)
    diag << ", " << worstTotal << " with the kernel's " << rings
         << " bytes of pipeline stages";
  diag << ", over the " << limit << " bytes " << target.chip
       << " allows per block; use a smaller tile"
       << (worstTotal != worstScratch ? " or fewer stages" : "");
}

struct ConvertTileToNVVMPass
    : public tegula::tile::impl::ConvertTileToNVVMBase<ConvertTileToNVVMPass> {
  using ConvertTileToNVVMBase::ConvertTileToNVVMBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<TargetInfo> targetInfo = getTarget(module);
    if (failed(targetInfo))
      return signalPassFailure();
    LoweringState state(*targetInfo);
    module.walk(widenBoolParameters);

    // Plan shared memory before any op is rewritten.
    bool overBudget = false;
    llvm::DenseSet<Location> reported;
    module.walk([&](func::FuncOp func) {
      KernelPlan plan = planSharedMemory(func);
      if (plan.sharedBytes > targetInfo->maxSharedBytes) {
        reportSharedOverBudget(func, plan, *targetInfo, reported);
        overBudget = true;
      }
      func->setAttr(TileDialect::kSharedBytesAttrName,
                    IntegerAttr::get(IntegerType::get(&getContext(), 64),
                                     plan.sharedBytes));
      state.plans[func] = plan;
    });
    if (overBudget)
      return signalPassFailure();

    // Vector widths come from the tile IR, before it is rewritten.
    module.walk([&](Operation *op) {
      if (unsigned width = getAccessVectorWidth(op))
        state.vectorWidths[op] = width;
    });

    if (failed(analyzePipelineSync(module, state.pipelineSync,
                                   state.pendingCopies)))
      return signalPassFailure();
    analyzeMemoryOrder(module, state.pipelineSync, state.memoryBarriers);

    OpBuilder builder(module.getBodyRegion());
    if (!module.lookupSymbol("__tegula_shared")) {
      // Dynamic shared memory: the launcher passes its size. Aligned for
      // the swizzled stages that start on kSwizzleAtomBytes boundaries.
      auto type = LLVM::LLVMArrayType::get(builder.getI8Type(), 0);
      LLVM::GlobalOp::create(builder, module.getLoc(), type,
                             /*isConstant=*/false, LLVM::Linkage::External,
                             "__tegula_shared", Attribute(),
                             /*alignment=*/kSwizzleAtomBytes,
                             /*addrSpace=*/3);
    }

    TypeConverter converter;
    populateTileToNVVMTypeConversions(converter);

    ConversionTarget conversionTarget(getContext());
    conversionTarget.addLegalDialect<LLVM::LLVMDialect, NVVM::NVVMDialect,
                                     vector::VectorDialect>();
    conversionTarget.addIllegalDialect<TileDialect, math::MathDialect>();
    // arith stays for the standard lowering, but not on tiles, and not a
    // fast division (FastMathToNVVM.cpp), whose LLVM form would be IEEE.
    conversionTarget.addDynamicallyLegalDialect<arith::ArithDialect>(
        [](Operation *op) { return !hasTileTypes(op) && !isFastDivision(op); });
    conversionTarget.addDynamicallyLegalOp<func::FuncOp>([&](func::FuncOp f) {
      return converter.isSignatureLegal(f.getFunctionType()) &&
             converter.isLegal(&f.getBody());
    });
    conversionTarget.addDynamicallyLegalOp<func::ReturnOp, func::CallOp>(
        [&](Operation *op) { return converter.isLegal(op); });

    RewritePatternSet patterns(&getContext());
    patterns
        .add<GridIndexLowering<ProgramIdOp, NVVM::BlockIdXOp, NVVM::BlockIdYOp,
                               NVVM::BlockIdZOp>,
             GridIndexLowering<NumProgramsOp, NVVM::GridDimXOp,
                               NVVM::GridDimYOp, NVVM::GridDimZOp>,
             MakeTensorLowering, DimLowering, SplatLowering, ArangeLowering>(
            converter, &getContext());
    populateMemoryOpToNVVMPatterns(converter, patterns, state);
    populateAtomicOpToNVVMPatterns(converter, patterns, state);
    populateLayoutOpToNVVMPatterns(converter, patterns, state);
    populateReduceOpToNVVMPatterns(converter, patterns, state);
    populateCumsumOpToNVVMPatterns(converter, patterns, state);
    populateDotPatterns(state.target, converter, patterns, state);
    populateElementwiseToNVVMPatterns(converter, patterns);
    populateAccurateMathToNVVMPatterns(converter, patterns);
    populateFastMathToNVVMPatterns(converter, patterns);
    populateAssertOpToNVVMPatterns(converter, patterns);
    populatePipelineOpToNVVMPatterns(converter, patterns, state);
    populateFunctionOpInterfaceTypeConversionPattern<func::FuncOp>(patterns,
                                                                   converter);
    populateReturnOpTypeConversionPattern(patterns, converter);
    populateCallOpTypeConversionPattern(patterns, converter);
    scf::populateSCFStructuralTypeConversionsAndLegality(converter, patterns,
                                                         conversionTarget);

    LogicalResult converted = failure();
    {
      RewordLegalizationFailures reword(&getContext());
      converted =
          applyPartialConversion(module, conversionTarget, std::move(patterns));
    }
    if (failed(converted))
      return signalPassFailure();
  }
};
} // namespace
