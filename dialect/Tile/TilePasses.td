//===- TilePasses.td - Passes over the tile dialect -------*- tablegen -*-===//

#ifndef TEGULA_TILE_PASSES
#define TEGULA_TILE_PASSES

include "mlir/Pass/PassBase.td"

def TileAssignLayouts : Pass<"tile-assign-layouts", "::mlir::func::FuncOp"> {
  let summary = "Give every tile a layout, converting where users differ";
  let description = [{
    Gives each tile of a kernel a layout encoding: `mma` for dot results
    and accumulators, `dot_operand` for their inputs, blocked layouts with
    16-byte chunks for memory accesses and elementwise work, and `slice`
    layouts for reductions. Elementwise ops take the layout of their
    operands (an mma layout wins, so attention's scores stay in registers),
    loop-carried tiles take the layout their loop yields, and a
    `tile.convert_layout` is inserted wherever a consumer needs another
    layout. A dot whose tile cannot be spread over the kernel's warps
    (fewer than 16 rows or 8 columns per warp) is a diagnostic giving the
    rows and columns each warp would get.
  }];
  let options = [
    Option<"defaultWarps", "warps", "unsigned", /*default=*/"4",
           "Warps of a function without a tile.warps attribute">,
  ];
  let dependentDialects = ["::tegula::tile::TileDialect"];
}

def TileTestLinearLayout
    : Pass<"tile-test-linear-layout", "::mlir::func::FuncOp"> {
  let summary = "Print the linear layout of every tile result (for tests)";
  let description = [{
    Emits a remark on each op whose results carry layout encodings, giving
    the register, lane and warp bases of the linear layout. The lit tests of
    the layouts use it.
  }];
}

#endif // TEGULA_TILE_PASSES
