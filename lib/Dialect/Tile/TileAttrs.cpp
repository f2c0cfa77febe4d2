//===- TileAttrs.cpp - Layout encodings and their linear layouts ----------===//

#include "Tile/TileDialect.h"
#include "Tile/TileOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/InterleavedRange.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace tegula::tile;

#include "Tile/TileAttrInterfaces.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "Tile/TileAttrs.cpp.inc"

void TileDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "Tile/TileAttrs.cpp.inc"
      >();
}

namespace {
using Coords = LinearLayout::Coords;

/// A basis vector with `value` in dimension `dim`; values past the tile's
/// extent wrap to zero, which replicates elements over the bits above it.
Coords basisAlong(ArrayRef<int64_t> shape, unsigned dim, int64_t value) {
  Coords coords(shape.size(), 0);
  coords[dim] = value < shape[dim] ? value : 0;
  return coords;
}

Coords basis2D(int64_t row, int64_t col) { return Coords{row, col}; }

/// The lane bases every mma.sync m16n8k16 fragment shares: lane = 4 * group
/// + thread, where thread bits step the inner dimension (accumulator
/// columns, operand K) by 2 and 4 and group bits step the outer one (rows,
/// or B's columns) by 1, 2 and 4. `at(outer, inner)` places a step.
template <typename At>
void addMmaLaneBases(LinearLayout &layout, At at) {
  layout.addLaneBasis(at(0, 2));
  layout.addLaneBasis(at(0, 4));
  layout.addLaneBasis(at(1, 0));
  layout.addLaneBasis(at(2, 0));
  layout.addLaneBasis(at(4, 0));
}

bool allPowersOfTwo(ArrayRef<unsigned> values) {
  return llvm::all_of(values,
                      [](unsigned v) { return llvm::isPowerOf2_32(v); });
}

unsigned product(ArrayRef<unsigned> values) {
  unsigned result = 1;
  for (unsigned v : values)
    result *= v;
  return result;
}

bool isPermutation(ArrayRef<unsigned> order) {
  SmallVector<bool> seen(order.size(), false);
  for (unsigned dim : order) {
    if (dim >= order.size() || seen[dim])
      return false;
    seen[dim] = true;
  }
  return true;
}
} // namespace

//===----------------------------------------------------------------------===//
// BlockedLayoutAttr
//===----------------------------------------------------------------------===//

LogicalResult BlockedLayoutAttr::verify(
    function_ref<InFlightDiagnostic()> emitError,
    ArrayRef<unsigned> sizePerThread, ArrayRef<unsigned> threadsPerWarp,
    ArrayRef<unsigned> warpsPerCTA, ArrayRef<unsigned> order) {
  size_t rank = sizePerThread.size();
  if (threadsPerWarp.size() != rank || warpsPerCTA.size() != rank ||
      order.size() != rank)
    return emitError() << "blocked layout lists have different lengths";
  if (!allPowersOfTwo(sizePerThread) || !allPowersOfTwo(threadsPerWarp) ||
      !allPowersOfTwo(warpsPerCTA))
    return emitError() << "blocked layout sizes must be powers of two";
  if (product(threadsPerWarp) != 32)
    return emitError() << "blocked layout spreads a warp over "
                       << product(threadsPerWarp) << " threads, not 32";
  if (!isPermutation(order))
    return emitError() << "blocked layout order is not a permutation";
  return success();
}

unsigned BlockedLayoutAttr::getNumWarps() const {
  return product(getWarpsPerCTA());
}

FailureOr<LinearLayout> BlockedLayoutAttr::toLinearLayout(
    ArrayRef<int64_t> shape,
    function_ref<InFlightDiagnostic()> emitError) const {
  if (shape.size() != getOrder().size()) {
    emitError() << "blocked layout of rank " << getOrder().size()
                << " on a rank-" << shape.size() << " tile";
    return failure();
  }
  LinearLayout layout(shape);
  ArrayRef<unsigned> spt = getSizePerThread(), tpw = getThreadsPerWarp(),
                     wpc = getWarpsPerCTA();
  for (unsigned dim : getOrder())
    for (int64_t v = 1; v < spt[dim]; v *= 2)
      layout.addRegBasis(basisAlong(shape, dim, v));
  for (unsigned dim : getOrder())
    for (int64_t v = spt[dim]; v < int64_t(spt[dim]) * tpw[dim]; v *= 2)
      layout.addLaneBasis(basisAlong(shape, dim, v));
  for (unsigned dim : getOrder()) {
    int64_t lanes = int64_t(spt[dim]) * tpw[dim];
    for (int64_t v = lanes; v < lanes * wpc[dim]; v *= 2)
      layout.addWarpBasis(basisAlong(shape, dim, v));
  }
  // Tiles larger than one pass of the pattern take more registers.
  for (unsigned dim : getOrder())
    for (int64_t v = int64_t(spt[dim]) * tpw[dim] * wpc[dim]; v < shape[dim];
         v *= 2)
      layout.addRegBasis(basisAlong(shape, dim, v));
  return layout;
}

//===----------------------------------------------------------------------===//
// MmaLayoutAttr
//===----------------------------------------------------------------------===//

LogicalResult
MmaLayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                      ArrayRef<unsigned> warpsPerCTA) {
  if (warpsPerCTA.size() != 2 || !allPowersOfTwo(warpsPerCTA))
    return emitError() << "mma layout needs two power-of-two warp counts";
  return success();
}

unsigned MmaLayoutAttr::getNumWarps() const {
  return product(getWarpsPerCTA());
}

FailureOr<LinearLayout> MmaLayoutAttr::toLinearLayout(
    ArrayRef<int64_t> shape,
    function_ref<InFlightDiagnostic()> emitError) const {
  if (shape.size() != 2) {
    emitError() << "mma layout on a rank-" << shape.size() << " tile";
    return failure();
  }
  // Tiles narrower than the warps' fragments (a [128, 1] column about to be
  // broadcast against a dot result, say) wrap: their elements replicate.
  ArrayRef<unsigned> warps = getWarpsPerCTA();
  int64_t rowsPerWarp = std::max<int64_t>(shape[0], 16 * warps[0]) / warps[0];
  int64_t colsPerWarp = std::max<int64_t>(shape[1], 8 * warps[1]) / warps[1];
  auto at = [&](int64_t row, int64_t col) {
    return Coords{row < shape[0] ? row : 0, col < shape[1] ? col : 0};
  };
  LinearLayout layout(shape);
  // c0/c1 are adjacent columns; c2/c3 are eight rows below.
  layout.addRegBasis(at(0, 1));
  layout.addRegBasis(at(8, 0));
  for (int64_t col = 8; col < colsPerWarp; col *= 2)
    layout.addRegBasis(at(0, col));
  for (int64_t row = 16; row < rowsPerWarp; row *= 2)
    layout.addRegBasis(at(row, 0));
  addMmaLaneBases(layout, at);
  for (int64_t w = 1; w < warps[0]; w *= 2)
    layout.addWarpBasis(at(rowsPerWarp * w, 0));
  for (int64_t w = 1; w < warps[1]; w *= 2)
    layout.addWarpBasis(at(0, colsPerWarp * w));
  return layout;
}

//===----------------------------------------------------------------------===//
// DotOperandLayoutAttr
//===----------------------------------------------------------------------===//

LogicalResult
DotOperandLayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                             unsigned opIdx, Attribute parent) {
  if (opIdx > 1)
    return emitError() << "dot operand index " << opIdx << " is not 0 or 1";
  if (!isa<MmaLayoutAttr>(parent))
    return emitError() << "dot operand parent must be an mma layout, got "
                       << parent;
  return success();
}

unsigned DotOperandLayoutAttr::getNumWarps() const {
  return cast<MmaLayoutAttr>(getParent()).getNumWarps();
}

FailureOr<LinearLayout> DotOperandLayoutAttr::toLinearLayout(
    ArrayRef<int64_t> shape,
    function_ref<InFlightDiagnostic()> emitError) const {
  if (shape.size() != 2) {
    emitError() << "dot operand layout on a rank-" << shape.size() << " tile";
    return failure();
  }
  ArrayRef<unsigned> warps = cast<MmaLayoutAttr>(getParent()).getWarpsPerCTA();
  bool isB = getOpIdx() == 1;
  // Work in (outer, k) coordinates: rows of A or columns of B, then K.
  int64_t outer = isB ? shape[1] : shape[0];
  int64_t k = isB ? shape[0] : shape[1];
  unsigned outerWarps = isB ? warps[1] : warps[0];
  int64_t minOuter = isB ? 8 : 16;
  if (k < 16) {
    emitError() << "dot operand " << (isB ? "B" : "A") << " [" << shape[0]
                << ", " << shape[1] << "] has K = " << k
                << "; mma.sync needs at least 16";
    return failure();
  }
  // As for the result: warps past the operand's extent hold copies of the
  // fragments below them (their bases wrap to zero).
  int64_t outerPerWarp =
      std::max<int64_t>(outer, minOuter * outerWarps) / outerWarps;
  LinearLayout layout(shape);
  auto at = [&](int64_t o, int64_t kk) {
    o = o < outer ? o : 0;
    return isB ? basis2D(kk, o) : basis2D(o, kk);
  };
  if (!isB) {
    // a0/a1 adjacent K, a2/a3 eight rows down, a4..a7 eight K further.
    layout.addRegBasis(at(0, 1));
    layout.addRegBasis(at(8, 0));
    layout.addRegBasis(at(0, 8));
  } else {
    // b0/b1 adjacent K, b2/b3 eight K further.
    layout.addRegBasis(at(0, 1));
    layout.addRegBasis(at(0, 8));
  }
  for (int64_t kk = 16; kk < k; kk *= 2)
    layout.addRegBasis(at(0, kk));
  for (int64_t o = minOuter; o < outerPerWarp; o *= 2)
    layout.addRegBasis(at(o, 0));
  addMmaLaneBases(layout, at);
  // Warps along the other operand's dimension hold the same fragments.
  for (int64_t w = 1; w < warps[0]; w *= 2)
    layout.addWarpBasis(isB ? basis2D(0, 0) : at(outerPerWarp * w, 0));
  for (int64_t w = 1; w < warps[1]; w *= 2)
    layout.addWarpBasis(isB ? at(outerPerWarp * w, 0) : basis2D(0, 0));
  return layout;
}

//===----------------------------------------------------------------------===//
// SliceLayoutAttr
//===----------------------------------------------------------------------===//

LogicalResult
SliceLayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                        unsigned dim, Attribute parent) {
  if (!isa<LayoutAttrInterface>(parent))
    return emitError() << "slice parent must be a layout, got " << parent;
  return success();
}

unsigned SliceLayoutAttr::getNumWarps() const {
  return cast<LayoutAttrInterface>(getParent()).getNumWarps();
}

/// The smallest extent along `dim` that `parent` can spread without error;
/// slicing projects that dimension away, so any valid extent gives the same
/// result.
static int64_t minimalExtent(Attribute parent, unsigned dim) {
  if (auto blocked = dyn_cast<BlockedLayoutAttr>(parent))
    return int64_t(blocked.getSizePerThread()[dim]) *
           blocked.getThreadsPerWarp()[dim] * blocked.getWarpsPerCTA()[dim];
  if (auto mma = dyn_cast<MmaLayoutAttr>(parent))
    return 1;
  if (auto operand = dyn_cast<DotOperandLayoutAttr>(parent)) {
    ArrayRef<unsigned> warps =
        cast<MmaLayoutAttr>(operand.getParent()).getWarpsPerCTA();
    bool isK = (operand.getOpIdx() == 0) == (dim == 1);
    if (isK)
      return 16;
    return operand.getOpIdx() == 0 ? 16 * int64_t(warps[0])
                                   : 8 * int64_t(warps[1]);
  }
  return 1;
}

FailureOr<LinearLayout> SliceLayoutAttr::toLinearLayout(
    ArrayRef<int64_t> shape,
    function_ref<InFlightDiagnostic()> emitError) const {
  SmallVector<int64_t> parentShape(shape);
  if (getDim() > shape.size()) {
    emitError() << "slice dimension " << getDim() << " of a rank-"
                << shape.size() << " tile";
    return failure();
  }
  parentShape.insert(parentShape.begin() + getDim(),
                     minimalExtent(getParent(), getDim()));
  FailureOr<LinearLayout> parent = cast<LayoutAttrInterface>(getParent())
                                       .toLinearLayout(parentShape, emitError);
  if (failed(parent))
    return failure();
  return parent->sliceDim(getDim());
}

//===----------------------------------------------------------------------===//
// SharedLayoutAttr and DotPlanAttr
//===----------------------------------------------------------------------===//

LogicalResult
SharedLayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                         int64_t swizzle, ArrayRef<unsigned> order) {
  // The swizzles getSharedElementAddress lays out and wgmma reads; which
  // one a tile has follows from its shape (verifyTileShape).
  if (!llvm::is_contained(kSwizzleModes, swizzle))
    return emitError() << "#tile.shared swizzle is " << swizzle
                       << " bytes; shared tiles have the 128-, 64- or "
                          "32-byte swizzle";
  if (order.size() != 2 || order[0] + order[1] != 1 || order[0] > 1)
    return emitError() << "#tile.shared order must be [1, 0] or [0, 1], got ["
                       << llvm::interleaved(order) << "]";
  return success();
}

SmallVector<int64_t, 2>
SharedLayoutAttr::getStoredShape(ArrayRef<int64_t> shape) const {
  return tegula::tile::getStoredShape(shape, getOrder());
}

LogicalResult DotPlanAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                  DotFamily family, ArrayRef<unsigned> warps,
                                  OperandSource a, OperandSource b) {
  if (warps.size() != 2 || !allPowersOfTwo(warps))
    return emitError()
           << "#tile.dot_plan warps must be two powers of two, got ["
           << llvm::interleaved(warps) << "]";
  if (family == DotFamily::MmaSync &&
      (a == OperandSource::Stage || b == OperandSource::Stage))
    return emitError() << "#tile.dot_plan: mma_sync reads its operands from "
                          "registers, not in place from a stage";
  if (family == DotFamily::Wgmma && b != OperandSource::Stage)
    return emitError() << "#tile.dot_plan: wgmma reads b in place from a "
                          "stage, not from "
                       << stringifyOperandSource(b);
  return success();
}
