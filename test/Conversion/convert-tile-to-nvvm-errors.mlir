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

// Over the budget because of one op's scratch: the error is at that op and
// names it (a cumsum before layouts takes a 32-bit slot per element:
// 256 x 256 x 4 = 262144 bytes). No ring is used after it, so its scratch
// reuses the ring's memory and the ring is not counted.
module attributes {tile.target = "sm_80"} {
func.func @scratch_over_budget(%x: f32) attributes {tile.kernel, tile.warps = 4 : i32} {
  %p = tile.pipeline.create : !tile.pipeline<64x64xf32, stages = 1>
  %s = tile.splat %x : tensor<256x256xf32>
  // expected-error @+1 {{'cumsum' of tile<f32>[256, 256] needs 262144 bytes of shared-memory scratch, over the 166912 bytes sm_80 allows per block; use a smaller tile}}
  %c = tile.cumsum %s, 0 : tensor<256x256xf32>
  return
}
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
