//===- TilePasses.h - Passes over the tile dialect --------------*- C++ -*-===//

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

#define GEN_PASS_DECL
#include "Tile/TilePasses.h.inc"

#define GEN_PASS_REGISTRATION
#include "Tile/TilePasses.h.inc"

} // namespace tegula::tile

#endif // TEGULA_DIALECT_TILE_TILEPASSES_H
