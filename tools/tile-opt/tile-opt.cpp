//===- tile-opt.cpp - mlir-opt with the tile dialect and passes -----------===//

#include "TestPasses.h"
#include "Tile/TileDialect.h"
#include "Tile/TilePasses.h"
#include "tegula/Target/Pipeline.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  tegula::tile::registerTilePasses();
  tegula::tile::registerTileTestPasses();
  tegula::target::registerLoweringPipelines();

  mlir::DialectRegistry registry;
  registry.insert<tegula::tile::TileDialect>();
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);

  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "Tegula tile-dialect optimizer driver\n", registry));
}
