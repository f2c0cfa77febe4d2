//===- Wgmma.h - The wgmma instruction family -------------------*- C++ -*-===//
//
// tile.dot as sm_90a's warpgroup wgmma.mma_async, for the dots layout
// assignment gave a B read in place (#tile.shared). Reached only through
// Families.h; the other dots of the target stay mma.sync.
//
//===----------------------------------------------------------------------===//

#ifndef TEGULA_LIB_CONVERSION_TILETONVVM_WGMMA_H
#define TEGULA_LIB_CONVERSION_TILETONVVM_WGMMA_H

#include "Common.h"

namespace tegula::tile {

void populateWgmmaDotPatterns(const mlir::TypeConverter &converter,
                              mlir::RewritePatternSet &patterns);

} // namespace tegula::tile

#endif // TEGULA_LIB_CONVERSION_TILETONVVM_WGMMA_H
