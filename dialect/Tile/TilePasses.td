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

def TileFastMath : Pass<"tile-fast-math", "::mlir::func::FuncOp"> {
  let summary = "Mark the fast-math forms a kernel allows on its ops";
  let description = [{
    The language's fast math by default (docs/language-extensions.md),
    decided once and recorded on the ops, where the lowering and the
    interpreter read it. In a function without `tile.exact_math`:

    - every floating-point arith op gets `fastmath<contract>`: a multiply
      feeding an add may become one fma (NVPTX fuses only flagged ops);
    - `math.exp` and `math.exp2` get `fastmath<afn>`, which this compiler
      reads as "flush-to-zero ex2": `ex2.approx.ftz.f32`, results below
      2^-126 flushed to +0 (the interpreter flushes them too). Without it
      they lower to the non-flushing `ex2.approx.f32`.

    Flags already present are kept; a `tile.exact_math` function is left
    as it is. The frontend runs it on the tile IR it generates, so
    `tilec --emit tile` shows the flags:

    ```mlir
    %s = arith.addf %p, %z fastmath<contract> : tensor<128xf32>
    %e = math.exp2 %s fastmath<afn> : tensor<128xf32>
    ```
  }];
}

def TilePlanDots : Pass<"tile-plan-dots", "::mlir::func::FuncOp"> {
  let summary = "Choose each dot's instruction family and operand sources";
  let description = [{
    Decides, for every `tile.dot`, before layouts are assigned, and records
    it as the dot's `plan` (#tile.dot_plan):

    - the warp split of its result (TargetInfo::dotWarpSplit; rows kept in
      one warp when some dot's result reaches a reduction);
    - the family: `wgmma` where the target has warpgroup dots, the split
      gives each warpgroup 64 rows, the operands are f16 or bf16 into f32,
      K is a multiple of 16 and B is read in place; `mma_sync` otherwise;
    - each operand's source: `stage` (read in place: popped, or popped and
      transposed, from a swizzled ring stage a matrix descriptor can read),
      `staged_copy` (registers loaded from a stage another dot reads in
      place) or `registers`.

    A pop stays in its stage when some wgmma dot reads it there and every
    other reader is a dot; dropping a pop can turn a dot back to mma.sync,
    so the choice repeats until nothing changes. Tiles read in place get a
    `#tile.shared<swizzle = S, order = ...>` encoding (the pop, and the
    transpose a dot reads through; S the swizzle of the stage's rows:
    128, 64 or 32 bytes), which layout assignment keeps.

    ```mlir
    %d = tile.dot %a, %b, %acc
        {plan = #tile.dot_plan<wgmma, warps = [8, 1], a = stage, b = stage>}
        : tensor<128x64xbf16, #tile.shared<swizzle = 128, order = [1, 0]>>,
          tensor<64x128xbf16, #tile.shared<swizzle = 128, order = [1, 0]>>
        -> tensor<128x128xf32>
    ```
  }];
  let options = [
    Option<"defaultWarps", "warps", "unsigned", /*default=*/"4",
           "Warps of a function without a tile.warps attribute">,
  ];
  let dependentDialects = ["::tegula::tile::TileDialect"];
}

def TileAssignLayouts : Pass<"tile-assign-layouts", "::mlir::func::FuncOp"> {
  let summary = "Give every tile a layout, converting where users differ";
  let description = [{
    Gives each tile of a kernel a layout encoding: `mma` for dot results
    and accumulators, `dot_operand` for their inputs, blocked layouts with
    16-byte chunks for memory accesses and elementwise work, and `slice`
    layouts for reductions; a dot's mma layout and its operands read in
    place (#tile.shared) come from its plan (tile-plan-dots, which must
    run first). Elementwise ops take the layout of their
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

def TileVersionLoops : Pass<"tile-version-loops", "::mlir::func::FuncOp"> {
  let summary = "Run a loop's pushes without bounds checks while in range";
  let description = [{
    Splits an `scf.for` whose `tile.pipeline.push`es are bounds-checked at
    a point computed before it: the leading iterations, in which every
    qualifying push (affine indices whose uniform parts are affine in the
    induction variable) stays inside its tensor or is masked off, run a
    copy of the loop whose pushes are marked `inside`; the rest run the
    original. Both loops share the rings, so the pipeline flows on.
  }];
  let dependentDialects = ["::tegula::tile::TileDialect",
                           "::mlir::arith::ArithDialect"];
}

def TileSplitAsyncDots : Pass<"tile-split-async-dots", "::mlir::func::FuncOp"> {
  let summary = "Split wgmma dots into an issue and a wait";
  let description = [{
    Every `tile.dot` planned as `wgmma` becomes a `tile.dot_issue`, which
    returns the accumulator and the token of its group, followed by a
    `tile.dot_wait ... pending = 0` that waits for it. Runs on laid-out IR;
    mma.sync dots stay as they are.

    ```mlir
    %d, %t = tile.dot_issue %a, %b, %acc : ...
    %r = tile.dot_wait %d after %t pending = 0 : tensor<128x128xf32, #mma>
    ```
  }];
  let dependentDialects = ["::tegula::tile::TileDialect"];
}

def TileDeferDotWaits : Pass<"tile-defer-dot-waits", "::mlir::func::FuncOp"> {
  let summary = "Let a loop's warpgroup dots run on into the next iteration";
  let description = [{
    A `tile.dot_issue` reading both operands in place from rings, whose
    wait's result only accumulates into itself across an `scf.for`, and
    the loop's only warpgroup dot: its wait becomes `pending = 1`, so it
    waits for the previous iteration's group instead of its own and the
    tensor cores work while the warps wait for the next stage. Its rings
    get one more stage, the one the group in flight still reads, and a
    `tile.dot_wait ... pending = 0` after the loop collects the last
    group. Kernels whose shared memory would then exceed the target's keep
    waiting for each group. Runs after tile-split-async-dots.
  }];
  let dependentDialects = ["::tegula::tile::TileDialect"];
}

def TileSinkDotWaits : Pass<"tile-sink-dot-waits", "::mlir::func::FuncOp"> {
  let summary = "Wait for a warpgroup dot where its result is first read";
  let description = [{
    A `tile.dot_wait ... pending = 0` right after the `tile.dot_issue` of a
    dot that reads both operands from shared memory moves down to the first
    operation of its block that reads its result, and its `pending` becomes
    the number of groups issued in between, so those groups run while the
    warps use the result. It does not pass a pipeline push, a
    `tile.to_shared`, or an operation whose regions hold either or issue or
    wait for dots. Runs after tile-defer-dot-waits.

    ```mlir
    %s, %t = tile.dot_issue %k, %q, %zero : ...
    %d, %u = tile.dot_issue %v, %g, %zero : ...
    %sr = tile.dot_wait %s after %t pending = 1 : tensor<128x32xf32, #mma>
    ```
  }];
  let dependentDialects = ["::tegula::tile::TileDialect"];
}

#endif // TEGULA_TILE_PASSES
