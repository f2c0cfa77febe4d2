//===- Families.cpp - Dispatch to the target's instruction families -------===//

#include "Families.h"

#include "CpAsync.h"
#include "MmaSync.h"
#include "Wgmma.h"

using namespace mlir;
using namespace tegula;
using namespace tegula::tile;

void tegula::tile::populateDotPatterns(const TargetInfo &target,
                                       const TypeConverter &converter,
                                       RewritePatternSet &patterns,
                                       LoweringState &state) {
  // tile.dot is mma.sync's; tile.dot_issue and tile.dot_wait, which only
  // dots planned as wgmma become (tile-split-async-dots), are wgmma's.
  populateMmaSyncDotPatterns(converter, patterns);
  if (target.hasWarpgroupDots)
    populateWgmmaDotPatterns(converter, patterns, state);
}

std::optional<SmallVector<Value>>
tegula::tile::readDotFragments(const TargetInfo &target, OpBuilder &builder,
                               Location loc, Operation *anchor,
                               ArrayRef<int64_t> shape, const LinearLayout &to,
                               Type elementType, Value byteOffset) {
  // Register fragments are mma.sync's in both families (wgmma's register A
  // is mma.sync's A).
  return readMmaFragmentsWithLdmatrix(builder, loc, anchor, shape, to,
                                      elementType, byteOffset);
}

bool tegula::tile::writeDotFragments(const TargetInfo &target,
                                     OpBuilder &builder, Location loc,
                                     Operation *anchor, ArrayRef<int64_t> shape,
                                     const LinearLayout &from,
                                     ArrayRef<Value> values, Type elementType,
                                     Value byteOffset) {
  // stmatrix came with sm_90, as the warpgroup dots did.
  return target.hasWarpgroupDots &&
         writeMmaFragmentsWithStmatrix(builder, loc, anchor, shape, from,
                                       values, elementType, byteOffset);
}

bool tegula::tile::canCopyAsync(const TargetInfo &target, int64_t groupBytes,
                                Type element, Value other) {
  switch (target.copyFamily) {
  case CopyFamily::Registers:
    return false;
  case CopyFamily::CpAsync:
    return canCopyWithCpAsync(groupBytes, element, other);
  }
  return false;
}

void tegula::tile::emitAsyncCopy(const TargetInfo &target, OpBuilder &builder,
                                 Location loc,
                                 function_ref<Value()> destination,
                                 Value source, int64_t bytes, Value predicate) {
  assert(target.copyFamily == CopyFamily::CpAsync && "no asynchronous copy");
  emitCpAsync(builder, loc, destination, source, bytes, predicate);
}

void tegula::tile::emitAsyncCopyCommit(const TargetInfo &target,
                                       OpBuilder &builder, Location loc) {
  switch (target.copyFamily) {
  case CopyFamily::Registers:
    return;
  case CopyFamily::CpAsync:
    return emitCpAsyncCommit(builder, loc);
  }
}

void tegula::tile::emitAsyncCopyWait(const TargetInfo &target,
                                     OpBuilder &builder, Location loc,
                                     int64_t pending) {
  switch (target.copyFamily) {
  case CopyFamily::Registers:
    return;
  case CopyFamily::CpAsync:
    return emitCpAsyncWait(builder, loc, pending);
  }
}
