// RUN: tile-opt %s -split-input-file -convert-tile-to-nvvm -verify-diagnostics

// Shared memory is planned before lowering; a kernel over the target's
// budget (the module's tile.target) is an error giving both figures. Four
// stages of 128 x 128 f32 rings need 262144 bytes; sm_80 offers 166912.
module attributes {tile.target = "sm_80"} {
// expected-error @+1 {{kernel needs 262144 bytes of shared memory but sm_80 allows 166912 per block; use fewer stages or smaller blocks}}
func.func @over_budget() attributes {tile.kernel, tile.warps = 4 : i32} {
  %p = tile.pipeline.create : !tile.pipeline<128x128xf32, stages = 4>
  return
}
}

// -----

// Within the budget: no error.
module attributes {tile.target = "sm_80"} {
func.func @within_budget() attributes {tile.kernel, tile.warps = 4 : i32} {
  %p = tile.pipeline.create : !tile.pipeline<128x128xf32, stages = 2>
  return
}
}

// -----

// No tile.target: the default target (sm_90a, 232448 bytes) holds what sm_80
// would not.
func.func @default_target() attributes {tile.kernel, tile.warps = 4 : i32} {
  %p = tile.pipeline.create : !tile.pipeline<128x128xf32, stages = 3>
  return
}

// -----

// An op no pattern lowers is reported as a limitation of the compiler at
// its location, not as MLIR's "failed to legalize": per-thread registers of
// a non-splat tile constant would need each thread's elements picked at run
// time.
#blocked = #tile.blocked<sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]>
func.func @dense_constant() -> tensor<4xi32, #blocked> attributes {tile.warps = 4 : i32} {
  // expected-error @+1 {{cannot compile this 'arith.constant' for the GPU: the lowering has no rule for it in this form (a limitation of the compiler, not an error in the program; please report it with this program)}}
  %c = arith.constant dense<[1, 2, 3, 4]> : tensor<4xi32, #blocked>
  return %c : tensor<4xi32, #blocked>
}
