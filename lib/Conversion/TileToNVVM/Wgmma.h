//===- Wgmma.h - The wgmma instruction family -------------------*- C++ -*-===//
//
// tile.dot_issue and tile.dot_wait as sm_90a's warpgroup wgmma.mma_async,
// for the dots tile-plan-dots gave the wgmma family (#tile.dot_plan) and
// tile-split-async-dots split. Reached only through Families.h; the other
// dots stay tile.dot and lower as mma.sync.
//
//===----------------------------------------------------------------------===//

#ifndef TEGULA_LIB_CONVERSION_TILETONVVM_WGMMA_H
#define TEGULA_LIB_CONVERSION_TILETONVVM_WGMMA_H

#include "Common.h"

namespace tegula::tile {

/// Also tile.to_shared, which writes the tiles wgmma reads in place from
/// registers.
void populateWgmmaDotPatterns(const mlir::TypeConverter &converter,
                              mlir::RewritePatternSet &patterns,
                              LoweringState &state);

} // namespace tegula::tile

#endif // TEGULA_LIB_CONVERSION_TILETONVVM_WGMMA_H
