// RUN: tile-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{blocked layout spreads a warp over 16 threads, not 32}}
func.func private @lanes(tensor<64xf32, #tile.blocked<sizePerThread = [1], threadsPerWarp = [16], warpsPerCTA = [4], order = [0]>>)

// -----

// expected-error @+1 {{blocked layout lists have different lengths}}
func.func private @lengths(tensor<64xf32, #tile.blocked<sizePerThread = [1, 1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]>>)

// -----

// expected-error @+1 {{blocked layout sizes must be powers of two}}
func.func private @pow2(tensor<64xf32, #tile.blocked<sizePerThread = [3], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]>>)

// -----

// expected-error @+1 {{blocked layout order is not a permutation}}
func.func private @order(tensor<8x8xf32, #tile.blocked<sizePerThread = [1, 1], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 1]>>)

// -----

// expected-error @+1 {{mma layout needs two power-of-two warp counts}}
func.func private @mma_warps(tensor<64x64xf32, #tile.mma<warpsPerCTA = [3, 1]>>)

// -----

// expected-error @+1 {{dot operand parent must be an mma layout}}
func.func private @operand_parent(tensor<64x64xf16, #tile.dot_operand<opIdx = 0, parent = #tile.blocked<sizePerThread = [1, 1], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>>>)

// -----

// expected-error @+1 {{dot operand index 2 is not 0 or 1}}
func.func private @operand_index(tensor<64x64xf16, #tile.dot_operand<opIdx = 2, parent = #tile.mma<warpsPerCTA = [4, 1]>>>)

// -----

// expected-error @+1 {{slice parent must be a layout}}
func.func private @slice_parent(tensor<64xf32, #tile.slice<dim = 0, parent = 1 : i32>>)

// -----

func.func @layout_rank(%x: f32) {
  // expected-error @+1 {{'tile.splat' op blocked layout of rank 1 on a rank-2 tile}}
  %t = tile.splat %x : tensor<4x64xf32, #tile.blocked<sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]>>
  return
}

// -----

func.func @not_a_layout(%x: f32) {
  // expected-error @+1 {{'tile.splat' op tile 'tensor<64xf32, 1 : i32>' has encoding 1 : i32, which is not a layout}}
  %t = tile.splat %x : tensor<64xf32, 1 : i32>
  return
}

// -----

func.func @operand_too_small(%x: f16) {
  // expected-error @+1 {{'tile.splat' op dot operand A [16, 8] has K = 8; mma.sync needs at least 16}}
  %t = tile.splat %x : tensor<16x8xf16, #tile.dot_operand<opIdx = 0, parent = #tile.mma<warpsPerCTA = [4, 1]>>>
  return
}

// -----

// The operands are laid out for another split of the warps than the
// accumulator's (a split past the extent is fine: warps replicate).
#mma = #tile.mma<warpsPerCTA = [8, 1]>
func.func @dot_warps(%a: tensor<16x32xf16, #tile.dot_operand<opIdx = 0, parent = #tile.mma<warpsPerCTA = [1, 8]>>>,
                     %b: tensor<32x64xf16, #tile.dot_operand<opIdx = 1, parent = #tile.mma<warpsPerCTA = [1, 8]>>>,
                     %c: tensor<16x64xf32, #mma>) {
  // expected-error @+1 {{'tile.dot' op operand a is laid out for #tile.mma<warpsPerCTA = [1, 8]> but the accumulator has #tile.mma<warpsPerCTA = [8, 1]>}}
  %d = tile.dot %a, %b, %c : tensor<16x32xf16, #tile.dot_operand<opIdx = 0, parent = #tile.mma<warpsPerCTA = [1, 8]>>>, tensor<32x64xf16, #tile.dot_operand<opIdx = 1, parent = #tile.mma<warpsPerCTA = [1, 8]>>> -> tensor<16x64xf32, #mma>
  return
}
