// RUN: tile-opt %s -split-input-file -tile-test-linear-layout -verify-diagnostics

// Blocked: 8 contiguous bf16 per thread (16 bytes), 16 lanes along a row,
// 2 rows per warp, 4 warps down; a 64-row tile repeats 8 times in registers.
func.func @blocked(%x: bf16) {
  // expected-remark @+1 {{layout: reg = [[0, 1], [0, 2], [0, 4], [8, 0], [16, 0], [32, 0]], lane = [[0, 8], [0, 16], [0, 32], [0, 64], [1, 0]], warp = [[2, 0], [4, 0]]}}
  %t = tile.splat %x : tensor<64x128xbf16, #tile.blocked<sizePerThread = [1, 8], threadsPerWarp = [2, 16], warpsPerCTA = [4, 1], order = [1, 0]>>
  return
}

// -----

// A tile smaller than the pattern wraps: zero bases replicate it.
func.func @blocked_wraps(%x: f32) {
  // expected-remark @+1 {{layout: reg = [[1], [2]], lane = [[4], [8], [0], [0], [0]], warp = [[0], [0]]}}
  %t = tile.splat %x : tensor<16xf32, #tile.blocked<sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]>>
  return
}

// -----

// mma.sync m16n8k16 accumulators: lane 4g+t holds rows g, g+8 and columns
// 2t, 2t+1; each of 4 warps owns 32 contiguous rows.
func.func @mma(%x: f32) {
  // expected-remark @+1 {{layout: reg = [[0, 1], [8, 0], [0, 8], [0, 16], [16, 0]], lane = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = [[32, 0], [64, 0]]}}
  %t = tile.splat %x : tensor<128x32xf32, #tile.mma<warpsPerCTA = [4, 1]>>
  return
}

// -----

// Warps split over both dimensions.
func.func @mma_2d(%x: f32) {
  // expected-remark @+1 {{layout: reg = [[0, 1], [8, 0], [0, 8], [16, 0]], lane = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = [[32, 0], [0, 16], [0, 32]]}}
  %t = tile.splat %x : tensor<64x64xf32, #tile.mma<warpsPerCTA = [2, 4]>>
  return
}

// -----

// Operand A fragments: a0..a7 cover K 0,1 / rows +8 / K +8; warps along N
// (none here) would replicate.
func.func @dot_operand_a(%x: bf16) {
  // expected-remark @+1 {{layout: reg = [[0, 1], [8, 0], [0, 8], [0, 16], [16, 0]], lane = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = [[32, 0]]}}
  %t = tile.splat %x : tensor<64x32xbf16, #tile.dot_operand<opIdx = 0, parent = #tile.mma<warpsPerCTA = [2, 1]>>>
  return
}

// -----

// Operand B [K, N]: b0/b1 adjacent K, b2/b3 K + 8; warps along M replicate.
func.func @dot_operand_b(%x: f16) {
  // expected-remark @+1 {{layout: reg = [[1, 0], [8, 0], [0, 8]], lane = [[2, 0], [4, 0], [0, 1], [0, 2], [0, 4]], warp = [[0, 0], [0, 16]]}}
  %t = tile.splat %x : tensor<16x32xf16, #tile.dot_operand<opIdx = 1, parent = #tile.mma<warpsPerCTA = [2, 2]>>>
  return
}

// -----

// Reducing an mma tile along its rows leaves the row coordinates: the lanes
// of a group of four and the column registers become replicas.
func.func @slice_of_mma(%x: f32) {
  // expected-remark @+1 {{layout: reg = [[8], [16]], lane = [[0], [0], [1], [2], [4]], warp = [[32], [64]]}}
  %t = tile.splat %x : tensor<128xf32, #tile.slice<dim = 1, parent = #tile.mma<warpsPerCTA = [4, 1]>>>
  return
}

// -----

// A column of an mma tile (about to be broadcast across it) replicates
// over the lanes and registers that would hold other columns.
func.func @mma_column(%x: f32) {
  // expected-remark @+1 {{layout: reg = [[0, 0], [8, 0], [16, 0]], lane = [[0, 0], [0, 0], [1, 0], [2, 0], [4, 0]], warp = [[32, 0], [64, 0]]}}
  %t = tile.splat %x : tensor<128x1xf32, #tile.mma<warpsPerCTA = [4, 1]>>
  return
}

// -----

// A reshape's result layout in the source's coordinates (what the lowering
// compares): flat position 512 is row 8, 64 is row 1. Here it equals the
// source's blocked layout (reg [0, 1], [0, 2], [8, 0]; lanes along the row
// then one row; warps rows 2 and 4), so the reshape stays in registers.
func.func @reshape_flat(%x: tensor<16x64xf32, #tile.blocked<sizePerThread = [1, 4], threadsPerWarp = [2, 16], warpsPerCTA = [4, 1], order = [1, 0]>>) {
  // expected-remark @+2 {{layout: reg = [[1], [2], [512]], lane = [[4], [8], [16], [32], [64]], warp = [[128], [256]]}}
  // expected-remark @+1 {{result in source: reg = [[0, 1], [0, 2], [8, 0]], lane = [[0, 4], [0, 8], [0, 16], [0, 32], [1, 0]], warp = [[2, 0], [4, 0]]}}
  %r = tile.reshape %x : tensor<16x64xf32, #tile.blocked<sizePerThread = [1, 4], threadsPerWarp = [2, 16], warpsPerCTA = [4, 1], order = [1, 0]>> -> tensor<1024xf32, #tile.blocked<sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]>>
  return
}

// -----

// A permute's: result dimension i is source dimension order[i], so a
// result basis [a, b, c] is [b, c, a] in the source.
func.func @permute3(%x: tensor<4x8x16xf32, #tile.blocked<sizePerThread = [1, 1, 4], threadsPerWarp = [1, 8, 4], warpsPerCTA = [4, 1, 1], order = [2, 1, 0]>>) {
  // expected-remark @+2 {{layout: reg = [[0, 0, 1], [0, 0, 2]], lane = [[0, 0, 4], [0, 1, 0], [0, 2, 0], [1, 0, 0], [2, 0, 0]], warp = [[4, 0, 0], [8, 0, 0]]}}
  // expected-remark @+1 {{result in source: reg = [[0, 1, 0], [0, 2, 0]], lane = [[0, 4, 0], [1, 0, 0], [2, 0, 0], [0, 0, 1], [0, 0, 2]], warp = [[0, 0, 4], [0, 0, 8]]}}
  %p = tile.permute %x, [2, 0, 1] : tensor<4x8x16xf32, #tile.blocked<sizePerThread = [1, 1, 4], threadsPerWarp = [1, 8, 4], warpsPerCTA = [4, 1, 1], order = [2, 1, 0]>> -> tensor<16x4x8xf32, #tile.blocked<sizePerThread = [1, 1, 4], threadsPerWarp = [4, 4, 2], warpsPerCTA = [4, 1, 1], order = [2, 1, 0]>>
  return
}

// -----

// A 16 x 16 result over 1 x 4 warps: each warp's block is 16 x 8, so warp
// bit 0 steps 8 columns and warp bit 1 wraps past the extent to zero:
// warps 2 and 3 hold copies of warps 0 and 1.
func.func @mma_replicated(%x: f32) {
  // expected-remark @+1 {{layout: reg = [[0, 1], [8, 0]], lane = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = [[0, 8], [0, 0]]}}
  %t = tile.splat %x : tensor<16x16xf32, #tile.mma<warpsPerCTA = [1, 4]>>
  return
}

// -----

// Its operands: B's columns wrap the same way; A is the same in every warp.
func.func @dot_operand_b_replicated(%x: f16) {
  // expected-remark @+1 {{layout: reg = [[1, 0], [8, 0]], lane = [[2, 0], [4, 0], [0, 1], [0, 2], [0, 4]], warp = [[0, 8], [0, 0]]}}
  %t = tile.splat %x : tensor<16x16xf16, #tile.dot_operand<opIdx = 1, parent = #tile.mma<warpsPerCTA = [1, 4]>>>
  return
}

// -----

func.func @dot_operand_a_replicated(%x: f16) {
  // expected-remark @+1 {{layout: reg = [[0, 1], [8, 0], [0, 8]], lane = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = [[0, 0], [0, 0]]}}
  %t = tile.splat %x : tensor<16x16xf16, #tile.dot_operand<opIdx = 0, parent = #tile.mma<warpsPerCTA = [1, 4]>>>
  return
}

// -----

// A along M past the extent: 16 rows over 4 x 1 warps, all copies.
func.func @dot_operand_a_rows_replicated(%x: f16) {
  // expected-remark @+1 {{layout: reg = [[0, 1], [8, 0], [0, 8]], lane = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = [[0, 0], [0, 0]]}}
  %t = tile.splat %x : tensor<16x16xf16, #tile.dot_operand<opIdx = 0, parent = #tile.mma<warpsPerCTA = [4, 1]>>>
  return
}
