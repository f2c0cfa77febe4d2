//===- TileDialect.cpp - The tile dialect and its types -------------------===//

#include "Tile/TileDialect.h"
#include "Tile/TileOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace tegula::tile;

#include "Tile/TileDialect.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "Tile/TileTypes.cpp.inc"

namespace {
/// Prints layouts as aliases (`#mma`, `#blocked1`, ...) so that tiles stay
/// readable in IR dumps.
struct TileOpAsmInterface : public OpAsmDialectInterface {
  using OpAsmDialectInterface::OpAsmDialectInterface;

  AliasResult getAlias(Attribute attr, raw_ostream &os) const override {
    return TypeSwitch<Attribute, AliasResult>(attr)
        .Case<BlockedLayoutAttr>([&](auto) {
          os << "blocked";
          return AliasResult::FinalAlias;
        })
        .Case<MmaLayoutAttr>([&](auto) {
          os << "mma";
          return AliasResult::FinalAlias;
        })
        .Case<DotOperandLayoutAttr>([&](auto) {
          os << "dot_op";
          return AliasResult::FinalAlias;
        })
        .Case<SliceLayoutAttr>([&](auto) {
          os << "slice";
          return AliasResult::FinalAlias;
        })
        .Case<SharedLayoutAttr>([&](auto) {
          os << "shared";
          return AliasResult::FinalAlias;
        })
        .Default([](Attribute) { return AliasResult::NoAlias; });
  }
};
} // namespace

void TileDialect::initialize() {
  addInterfaces<TileOpAsmInterface>();
  addTypes<
#define GET_TYPEDEF_LIST
#include "Tile/TileTypes.cpp.inc"
      >();
  registerAttributes();
  addOperations<
#define GET_OP_LIST
#include "Tile/TileOps.cpp.inc"
      >();
}

/// Folders (tile.dim of a static extent) produce integer attributes; they
/// become arith constants.
Operation *TileDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                            Type type, Location loc) {
  return arith::ConstantOp::materialize(builder, value, type, loc);
}

//===----------------------------------------------------------------------===//
// Shared checks
//===----------------------------------------------------------------------===//

static bool isMemoryElementType(Type type) {
  return type.isInteger(1) || type.isInteger(32) || type.isInteger(64) ||
         type.isF16() || type.isBF16() || type.isF32();
}

static LogicalResult
verifyMemoryElementType(function_ref<InFlightDiagnostic()> emitError,
                        StringRef what, Type elementType) {
  if (isMemoryElementType(elementType))
    return success();
  return emitError() << what << " element type " << elementType
                     << " is not one of i1, i32, i64, f16, bf16, f32";
}

/// Block extents must be powers of two with a bounded element count; the
/// same rule holds for tiles (checked on ops) and pipeline blocks.
static LogicalResult
verifyBlockShape(function_ref<InFlightDiagnostic()> emitError, StringRef what,
                 Type printed, ArrayRef<int64_t> shape) {
  int64_t elements = 1;
  for (auto [dim, extent] : llvm::enumerate(shape)) {
    if (ShapedType::isDynamic(extent))
      return emitError() << what << " " << printed
                         << " has a dynamic extent in dimension " << dim
                         << "; tile extents are compile-time";
    if (extent < 1 || !llvm::isPowerOf2_64(extent))
      return emitError() << what << " " << printed << " has extent " << extent
                         << " in dimension " << dim
                         << ", which is not a power of two";
    elements *= extent;
    if (elements > kMaxTileElements)
      break;
  }
  if (elements > kMaxTileElements) {
    uint64_t total = 1;
    for (int64_t extent : shape)
      total *= extent;
    return emitError() << what << " " << printed << " holds " << total
                       << " elements, more than the limit of "
                       << kMaxTileElements;
  }
  return success();
}

/// The bytes of one row of a tile stored as `storedShape` (of two or more
/// dimensions) of `element`s, which getSwizzleBytes picks a swizzle for.
static int64_t getStoredRowBytes(ArrayRef<int64_t> storedShape, Type element) {
  return storedShape.back() * getStoredBytes(element);
}

/// A #tile.shared tile is a matrix whose encoding names the swizzle of its
/// stored rows (getSwizzleBytes), the one getSharedElementAddress lays it
/// out in.
static LogicalResult verifySharedTile(Operation *op, RankedTensorType tile,
                                      SharedLayoutAttr shared) {
  if (tile.getRank() != 2)
    return op->emitOpError()
           << "tile " << tile << " stays in shared memory but is not 2-D";
  SmallVector<int64_t, 2> stored = shared.getStoredShape(tile.getShape());
  int64_t swizzle = getSwizzleBytes(stored, tile.getElementType());
  if (swizzle == shared.getSwizzle())
    return success();
  InFlightDiagnostic diag = op->emitOpError()
                            << "tile " << tile << " is stored in rows of "
                            << getStoredRowBytes(stored, tile.getElementType())
                            << " bytes, ";
  if (!swizzle)
    return diag << "which no swizzle fits (a multiple of 32 bytes)";
  return diag << "whose swizzle is " << swizzle << " bytes, not "
              << shared.getSwizzle();
}

LogicalResult tegula::tile::verifyTileShape(Operation *op, Type type) {
  auto tile = dyn_cast<RankedTensorType>(type);
  if (!tile)
    return success();
  auto emitError = [op] { return op->emitOpError(); };
  if (failed(verifyBlockShape(emitError, "tile", tile, tile.getShape())))
    return failure();
  if (!tile.getEncoding())
    return success();
  // Which shared tiles wgmma can read is tile-plan-dots' call
  // (readsInPlace); a matrix of the swizzle its shape has is all any of
  // them is.
  if (auto shared = dyn_cast<SharedLayoutAttr>(tile.getEncoding()))
    return verifySharedTile(op, tile, shared);
  auto layout = dyn_cast<LayoutAttrInterface>(tile.getEncoding());
  if (!layout)
    return op->emitOpError() << "tile " << tile << " has encoding "
                             << tile.getEncoding() << ", which is not a layout";
  return layout.toLinearLayout(tile.getShape(), emitError);
}

LogicalResult tegula::tile::verifyTileShapes(Operation *op) {
  for (Type type : op->getOperandTypes())
    if (failed(verifyTileShape(op, type)))
      return failure();
  for (Type type : op->getResultTypes())
    if (failed(verifyTileShape(op, type)))
      return failure();
  return success();
}

//===----------------------------------------------------------------------===//
// PtrType
//===----------------------------------------------------------------------===//

LogicalResult PtrType::verify(function_ref<InFlightDiagnostic()> emitError,
                              Type elementType) {
  return verifyMemoryElementType(emitError, "pointer", elementType);
}

//===----------------------------------------------------------------------===//
// GlobalTensorType
//===----------------------------------------------------------------------===//

unsigned GlobalTensorType::getNumDynamicDims() const {
  return llvm::count_if(getShape(), ShapedType::isDynamic);
}

LogicalResult
GlobalTensorType::verify(function_ref<InFlightDiagnostic()> emitError,
                         ArrayRef<int64_t> shape, Type elementType,
                         bool isMutable, bool isStrided) {
  if (shape.empty())
    return emitError() << "global tensor needs at least one dimension";
  for (auto [dim, extent] : llvm::enumerate(shape))
    if (!ShapedType::isDynamic(extent) && extent < 1)
      return emitError() << "global tensor extent " << extent
                         << " in dimension " << dim << " must be positive";
  return verifyMemoryElementType(emitError, "global tensor", elementType);
}

/// `!tile.tensor<?x128xbf16>`, then optionally `, mut` and `, strided`.
Type GlobalTensorType::parse(AsmParser &parser) {
  SmallVector<int64_t> shape;
  Type elementType;
  if (parser.parseLess() || parser.parseDimensionList(shape) ||
      parser.parseType(elementType))
    return {};
  bool isMutable = false, isStrided = false;
  while (succeeded(parser.parseOptionalComma())) {
    if (!isMutable && !isStrided &&
        succeeded(parser.parseOptionalKeyword("mut")))
      isMutable = true;
    else if (!isStrided && succeeded(parser.parseOptionalKeyword("strided")))
      isStrided = true;
    else
      return parser.emitError(parser.getCurrentLocation(),
                              "expected 'mut' or 'strided', in that order"),
             Type();
  }
  if (parser.parseGreater())
    return {};
  return parser.getChecked<GlobalTensorType>(parser.getContext(), shape,
                                             elementType, isMutable, isStrided);
}

static void printShape(AsmPrinter &printer, ArrayRef<int64_t> shape) {
  for (int64_t extent : shape) {
    if (ShapedType::isDynamic(extent))
      printer << "?";
    else
      printer << extent;
    printer << "x";
  }
}

void GlobalTensorType::print(AsmPrinter &printer) const {
  printer << "<";
  printShape(printer, getShape());
  printer << getElementType();
  if (getIsMutable())
    printer << ", mut";
  if (getIsStrided())
    printer << ", strided";
  printer << ">";
}

//===----------------------------------------------------------------------===//
// PipelineType
//===----------------------------------------------------------------------===//

RankedTensorType PipelineType::getTileType() const {
  return RankedTensorType::get(getShape(), getElementType());
}

int64_t PipelineType::getStageBytes() const {
  int64_t elements = 1;
  for (int64_t extent : getShape())
    elements *= extent;
  unsigned bits = getElementType().getIntOrFloatBitWidth();
  return elements * std::max(1u, bits / 8);
}

LogicalResult PipelineType::verify(function_ref<InFlightDiagnostic()> emitError,
                                   ArrayRef<int64_t> shape, Type elementType,
                                   unsigned stages) {
  if (failed(verifyMemoryElementType(emitError, "pipeline", elementType)))
    return failure();
  if (shape.empty())
    return emitError() << "pipeline block needs at least one dimension";
  if (stages < 1)
    return emitError() << "pipeline needs at least one stage, got " << stages;
  return verifyBlockShape(emitError, "pipeline block",
                          RankedTensorType::get(shape, elementType), shape);
}

/// `!tile.pipeline<64x128xbf16, stages = 2>`.
Type PipelineType::parse(AsmParser &parser) {
  SmallVector<int64_t> shape;
  Type elementType;
  unsigned stages = 0;
  if (parser.parseLess() ||
      parser.parseDimensionList(shape, /*allowDynamic=*/false) ||
      parser.parseType(elementType) || parser.parseComma() ||
      parser.parseKeyword("stages") || parser.parseEqual() ||
      parser.parseInteger(stages) || parser.parseGreater())
    return {};
  return parser.getChecked<PipelineType>(parser.getContext(), shape,
                                         elementType, stages);
}

void PipelineType::print(AsmPrinter &printer) const {
  printer << "<";
  printShape(printer, getShape());
  printer << getElementType() << ", stages = " << getStages() << ">";
}

//===----------------------------------------------------------------------===//
// Attributes the dialect owns on other dialects' ops
//===----------------------------------------------------------------------===//

LogicalResult TileDialect::verifyOperationAttribute(Operation *op,
                                                    NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  if (name == kTargetAttrName) {
    auto target = dyn_cast<StringAttr>(attr.getValue());
    if (!isa<ModuleOp>(op) || !target)
      return op->emitError() << "'" << name << "' must be a string on a module";
    if (!TargetInfo::lookup(target.getValue()))
      return op->emitError()
             << "unknown target '" << target.getValue() << "'; expected one of "
             << llvm::join(TargetInfo::names(), ", ");
    return success();
  }
  if (name == kDebugAttrName) {
    if (!isa<ModuleOp>(op) || !isa<UnitAttr>(attr.getValue()))
      return op->emitError()
             << "'" << name << "' must be a unit attribute on a module";
    return success();
  }
  if (name == kKernelAttrName || name == kExactMathAttrName) {
    if (!isa<UnitAttr>(attr.getValue()))
      return op->emitError() << "'" << name << "' must be a unit attribute";
    if (!isa<FunctionOpInterface>(op))
      return op->emitError()
             << "'" << name << "' may only mark a function, not '"
             << op->getName() << "'";
    return success();
  }
  if (name == kWarpsAttrName) {
    auto warps = dyn_cast<IntegerAttr>(attr.getValue());
    if (!warps || !warps.getType().isInteger(32))
      return op->emitError() << "'" << name << "' must be an i32 attribute";
    int64_t value = warps.getInt();
    if (value != 1 && value != 2 && value != 4 && value != 8 && value != 16)
      return op->emitError() << "'" << name << "' is " << value
                             << "; a kernel runs on 1, 2, 4, 8 or 16 warps";
    return success();
  }
  if (name == kBlocksPerSmAttrName) {
    auto blocks = dyn_cast<IntegerAttr>(attr.getValue());
    if (!blocks || !blocks.getType().isInteger(32))
      return op->emitError() << "'" << name << "' must be an i32 attribute";
    if (blocks.getInt() < 1 || blocks.getInt() > kMaxBlocksPerSm)
      return op->emitError()
             << "'" << name << "' is " << blocks.getInt()
             << "; a multiprocessor runs 1 to " << kMaxBlocksPerSm << " blocks";
    return success();
  }
  if (name == kPipelineStagesAttrName) {
    auto stages = dyn_cast<IntegerAttr>(attr.getValue());
    if (!stages || !stages.getType().isInteger(32))
      return op->emitError() << "'" << name << "' must be an i32 attribute";
    if (!isa<scf::ForOp>(op))
      return op->emitError()
             << "'" << name << "' may only mark an scf.for, not '"
             << op->getName() << "'";
    if (stages.getInt() < 1)
      return op->emitError() << "'" << name << "' is " << stages.getInt()
                             << "; a pipelined loop needs at least 1 stage";
    return success();
  }
  auto isStringArray = [](Attribute value) {
    auto array = dyn_cast<ArrayAttr>(value);
    return array && llvm::all_of(array, llvm::IsaPred<StringAttr>);
  };
  if (name == kGridAttrName || name == kRequiresAttrName) {
    auto array = dyn_cast<ArrayAttr>(attr.getValue());
    if (!isStringArray(attr.getValue()))
      return op->emitError()
             << "'" << name << "' must be an array of expression strings";
    if (name == kGridAttrName && array.size() != 3)
      return op->emitError() << "'" << name << "' has " << array.size()
                             << " extents; a bundle grid has exactly 3";
    return success();
  }
  if (name == kFlopsAttrName || name == kBytesAttrName) {
    if (!isa<StringAttr>(attr.getValue()))
      return op->emitError() << "'" << name << "' must be an expression string";
    return success();
  }
  if (name == kSharedBytesAttrName) {
    auto bytes = dyn_cast<IntegerAttr>(attr.getValue());
    if (!bytes || bytes.getInt() < 0)
      return op->emitError()
             << "'" << name << "' must be a non-negative integer";
    return success();
  }
  if (name == kTemplateAttrName) {
    if (!isa<DictionaryAttr>(attr.getValue()))
      return op->emitError() << "'" << name << "' must be a dictionary";
    return success();
  }
  return op->emitError() << "unknown tile dialect attribute '" << name << "'";
}

LogicalResult TileDialect::verifyRegionArgAttribute(Operation *op,
                                                    unsigned regionIndex,
                                                    unsigned argIndex,
                                                    NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  Attribute value = attr.getValue();
  if (name == kArgNameAttrName || name == kSizeVarAttrName ||
      name == kStrideOfAttrName) {
    if (!isa<StringAttr>(value))
      return op->emitError() << "'" << name << "' of argument " << argIndex
                             << " must be a string";
    return success();
  }
  if (name == kDivisibilityAttrName || name == kAlignmentAttrName) {
    auto divisor = dyn_cast<IntegerAttr>(value);
    if (!divisor || divisor.getInt() < 1 ||
        !llvm::isPowerOf2_64(divisor.getInt()))
      return op->emitError() << "'" << name << "' of argument " << argIndex
                             << " must be a power of two";
    return success();
  }
  if (name == kKnownValueAttrName) {
    if (!isa<IntegerAttr>(value))
      return op->emitError() << "'" << name << "' of argument " << argIndex
                             << " must be an integer";
    return success();
  }
  if (name == kArgAccessAttrName) {
    auto access = dyn_cast<StringAttr>(value);
    if (!access ||
        !llvm::is_contained({"read", "write", "readwrite"}, access.getValue()))
      return op->emitError() << "'" << name << "' of argument " << argIndex
                             << " must be \"read\", \"write\" or "
                                "\"readwrite\"";
    return success();
  }
  if (name == kArgDimsAttrName) {
    auto dims = dyn_cast<ArrayAttr>(value);
    if (!dims || !llvm::all_of(dims, [](Attribute dim) {
          return isa<StringAttr, IntegerAttr>(dim);
        }))
      return op->emitError() << "'" << name << "' of argument " << argIndex
                             << " must list size-variable names and integers";
    return success();
  }
  return op->emitError() << "unknown tile dialect argument attribute '" << name
                         << "'";
}

FailureOr<tegula::TargetInfo> tegula::tile::getTarget(Operation *op) {
  auto module =
      isa<ModuleOp>(op) ? cast<ModuleOp>(op) : op->getParentOfType<ModuleOp>();
  auto name =
      module ? module->getAttrOfType<StringAttr>(TileDialect::kTargetAttrName)
             : StringAttr();
  if (!name)
    return TargetInfo::defaultTarget();
  if (std::optional<TargetInfo> target = TargetInfo::lookup(name.getValue()))
    return *target;
  module.emitError() << "unknown target '" << name.getValue()
                     << "'; expected one of "
                     << llvm::join(TargetInfo::names(), ", ");
  return failure();
}

LinearLayout tegula::tile::getLinearLayout(RankedTensorType type) {
  auto layout = cast<LayoutAttrInterface>(type.getEncoding());
  FailureOr<LinearLayout> linear = layout.toLinearLayout(
      type.getShape(), [] { return InFlightDiagnostic(); });
  assert(succeeded(linear) && "verified tiles have valid layouts");
  return *linear;
}

int64_t tegula::tile::getStoredBytes(Type type) {
  return std::max<int64_t>(1, type.getIntOrFloatBitWidth() / 8);
}

SmallVector<int64_t, 2> tegula::tile::getStoredShape(ArrayRef<int64_t> shape,
                                                     ArrayRef<unsigned> order) {
  if (shape.size() == 2 && order.front() == 0)
    return {shape[1], shape[0]};
  return SmallVector<int64_t, 2>(shape);
}

int64_t tegula::tile::getSwizzleBytes(ArrayRef<int64_t> storedShape,
                                      Type element) {
  if (storedShape.size() < 2)
    return 0;
  int64_t rowBytes = getStoredRowBytes(storedShape, element);
  for (int64_t swizzle : kSwizzleModes)
    if (rowBytes % swizzle == 0)
      return swizzle;
  return 0;
}

bool tegula::tile::isSwizzledShared(ArrayRef<int64_t> shape, Type element) {
  return getSwizzleBytes(shape, element) != 0;
}
