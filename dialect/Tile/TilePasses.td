//===- TilePasses.td - Transforms of the tile dialect ------*- tablegen -*-===//
//
// The passes that rewrite tile IR into tile IR (as an MLIR dialect's
// Passes.td). The lowering out of it is in TileConversionPasses.td, the
// passes that print analyses for lit in test/lib/TestPasses.td.
//
//===----------------------------------------------------------------------===//

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

def TilePipelineLoops : Pass<"tile-pipeline-loops", "::mlir::func::FuncOp"> {
  let summary = "Prefetch the loads of pipelined(S) loops through rings";
  let description = [{
    In an `scf.for` marked `tile.pipeline_stages = S`, every `tile.load`
    whose indices, mask and other depend only on the induction variable and
    values defined outside the loop becomes a pipeline of S stages: a
    prologue pushes the blocks of the first S - 1 iterations, and each
    iteration pops its block and pushes the block S - 1 iterations ahead
    (masked off past the end). Loads that depend on loop-carried values
    stay as they are. On targets with warpgroup dots, a block loaded before
    a loop only to be a dot's A operand in it goes through a one-stage ring
    too, so that the dot reads it from shared memory.
  }];
  let dependentDialects = ["::tegula::tile::TileDialect",
                           "::mlir::arith::ArithDialect"];
}

def TileDeferDotWaits : Pass<"tile-defer-dot-waits", "::mlir::func::FuncOp"> {
  let summary = "Let a loop's warpgroup dots run on into the next iteration";
  let description = [{
    A warpgroup dot (both operands read in place, #tile.shared) that only
    accumulates into itself across an `scf.for` returns with its group
    still in flight (`tile.dots_in_flight = 1`): it waits for the previous
    iteration's group instead of its own, so the tensor cores work while
    the warps wait for the next stage. Its rings get one more stage, the
    one the group in flight still reads, and a `tile.dot_wait` after the
    loop collects the last group. Runs on laid-out IR, for targets with
    warpgroup dots; kernels whose shared memory would then exceed the
    target's keep waiting in each dot.
  }];
  let dependentDialects = ["::tegula::tile::TileDialect"];
}

#endif // TEGULA_TILE_PASSES
