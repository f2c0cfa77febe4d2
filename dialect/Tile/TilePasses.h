//===- TilePasses.h - The passes tilec runs on tile IR ----------*- C++ -*-===//

#ifndef TEGULA_DIALECT_TILE_TILEPASSES_H
#define TEGULA_DIALECT_TILE_TILEPASSES_H

#include "Tile/TileOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"

namespace tegula::tile {

// Transforms of tile IR (TilePasses.td).
#define GEN_PASS_DECL
#include "Tile/TilePasses.h.inc"

#define GEN_PASS_REGISTRATION
#include "Tile/TilePasses.h.inc"

// The conversion out of it (TileConversionPasses.td).
#define GEN_PASS_DECL
#include "Tile/TileConversionPasses.h.inc"

#define GEN_PASS_REGISTRATION
#include "Tile/TileConversionPasses.h.inc"

/// Registers every pass tilec runs, transforms and conversion; tile-opt adds
/// the test passes (test/lib/TestPasses.h).
inline void registerTilePasses() {
  registerTileTransformsPasses();
  registerTileConversionPasses();
}

} // namespace tegula::tile

#endif // TEGULA_DIALECT_TILE_TILEPASSES_H
