// RUN: tile-opt %s -split-input-file -verify-diagnostics

func.func @arange_not_pow2() {
  // expected-error @+1 {{'tile.arange' op tile 'tensor<48xi32>' has extent 48 in dimension 0, which is not a power of two}}
  %r = tile.arange : tensor<48xi32>
  return
}

// -----

func.func @splat_too_big(%x: f32) {
  // expected-error @+1 {{'tile.splat' op tile 'tensor<2048x1024xf32>' holds 2097152 elements, more than the limit of 1048576}}
  %t = tile.splat %x : tensor<2048x1024xf32>
  return
}

// -----

func.func @splat_dynamic(%x: f32) {
  // expected-error @+1 {{'tile.splat' op tile 'tensor<?xf32>' has a dynamic extent in dimension 0; tile extents are compile-time}}
  %t = tile.splat %x : tensor<?xf32>
  return
}

// -----

func.func @operand_not_pow2(%x: tensor<3x64xf32>) {
  // expected-error @+1 {{'tile.reduce' op tile 'tensor<3x64xf32>' has extent 3 in dimension 0, which is not a power of two}}
  %r = tile.reduce sum %x, 1 : tensor<3x64xf32> -> tensor<3xf32>
  return
}

// -----

func.func @broadcast_non_unit(%x: tensor<2x64xf32>) {
  // expected-error @+1 {{'tile.broadcast' op cannot broadcast extent 2 to 4 in dimension 0; only unit extents broadcast}}
  %b = tile.broadcast %x : tensor<2x64xf32> -> tensor<4x64xf32>
  return
}

// -----

func.func @expand_dims_axis(%x: tensor<64xf32>) {
  // expected-error @+1 {{'tile.expand_dims' op axis 2 is out of range for a rank-1 tile; expected 0 to 1}}
  %e = tile.expand_dims %x, 2 : tensor<64xf32> -> tensor<64x1xf32>
  return
}

// -----

func.func @expand_dims_shape(%x: tensor<64xf32>) {
  // expected-error @+1 {{'tile.expand_dims' op result shape 64x1 is not the source shape with a unit extent at 0 (1x64)}}
  %e = tile.expand_dims %x, 0 : tensor<64xf32> -> tensor<64x1xf32>
  return
}

// -----

func.func @trans_shape(%x: tensor<32x64xf32>) {
  // expected-error @+1 {{'tile.trans' op result shape 32x64 is not the transpose of 32x64}}
  %t = tile.trans %x : tensor<32x64xf32> -> tensor<32x64xf32>
  return
}

// -----

func.func @make_tensor_element(%p: !tile.ptr<f16>, %n: i32) {
  // expected-error @+1 {{'tile.make_tensor' op pointer element type 'f16' differs from the tensor's 'bf16'}}
  %t = tile.make_tensor %p[%n] : !tile.ptr<f16> -> !tile.tensor<?xbf16>
  return
}

// -----

func.func @make_tensor_strides(%p: !tile.ptr<f32>, %n: i32, %s: i64) {
  // expected-error @+1 {{'tile.make_tensor' op takes 1 strides but '!tile.tensor<?x8xf32, strided>' needs 2}}
  %t = tile.make_tensor %p[%n] strides [%s] : !tile.ptr<f32> -> !tile.tensor<?x8xf32, strided>
  return
}

// -----

func.func @make_tensor_row_major_strides(%p: !tile.ptr<f32>, %n: i32, %s: i64) {
  // expected-error @+1 {{'tile.make_tensor' op takes 1 strides but '!tile.tensor<?xf32>' needs 0}}
  %t = tile.make_tensor %p[%n] strides [%s] : !tile.ptr<f32> -> !tile.tensor<?xf32>
  return
}

// -----

func.func @make_tensor_dims(%p: !tile.ptr<f32>, %n: i32) {
  // expected-error @+1 {{'tile.make_tensor' op binds 1 dynamic extents but '!tile.tensor<?x?xf32>' has 2}}
  %t = tile.make_tensor %p[%n] : !tile.ptr<f32> -> !tile.tensor<?x?xf32>
  return
}

// -----

// Extents are i32 from the ABI to the bounds checks: a fixed one over
// 2^31 - 1 would be truncated by the lowering (and read negative by
// tile.dim), so it is refused here.
func.func @make_tensor_extent(%p: !tile.ptr<f32>) {
  // expected-error @+1 {{'tile.make_tensor' op extent 4294967400 of '!tile.tensor<4294967400xf32>' does not fit in i32, the type of extents}}
  %t = tile.make_tensor %p[] : !tile.ptr<f32> -> !tile.tensor<4294967400xf32>
  return
}

// -----

func.func @dim_range(%t: !tile.tensor<?x64xf32>) {
  // expected-error @+1 {{'tile.dim' op dimension 2 is out of range for a rank-2 tensor}}
  %d = tile.dim %t, 2 : !tile.tensor<?x64xf32>
  return
}

// -----

func.func @load_rank(%t: !tile.tensor<?x64xf32>, %i: tensor<32xi32>) {
  // expected-error @+1 {{'tile.load' op indexes a rank-2 tensor '!tile.tensor<?x64xf32>' with 1 index; give exactly one index per dimension}}
  %v = tile.load %t[%i] : !tile.tensor<?x64xf32>[tensor<32xi32>] -> tensor<32xf32>
  return
}

// -----

func.func @load_index_shape(%t: !tile.tensor<?x64xf32>, %i: tensor<32x64xi32>, %j: tensor<1x64xi32>) {
  // expected-error @+1 {{'tile.load' op index 1 has shape 1x64 but the block has shape 32x64; broadcast every index to the block's shape}}
  %v = tile.load %t[%i, %j] : !tile.tensor<?x64xf32>[tensor<32x64xi32>, tensor<1x64xi32>] -> tensor<32x64xf32>
  return
}

// -----

func.func @load_element(%t: !tile.tensor<?xf32>, %i: tensor<32xi32>) {
  // expected-error @+1 {{'tile.load' op result element type 'bf16' differs from the tensor's 'f32'}}
  %v = tile.load %t[%i] : !tile.tensor<?xf32>[tensor<32xi32>] -> tensor<32xbf16>
  return
}

// -----

func.func @store_read_only(%t: !tile.tensor<?xf32>, %i: tensor<32xi32>, %v: tensor<32xf32>) {
  // expected-error @+1 {{'tile.store' op stores to the read-only tensor '!tile.tensor<?xf32>'; declare the parameter 'mut tensor'}}
  tile.store %t[%i], %v : !tile.tensor<?xf32>[tensor<32xi32>], tensor<32xf32>
  return
}

// -----

func.func @store_element(%t: !tile.tensor<?xf32, mut>, %i: tensor<32xi32>, %v: tensor<32xbf16>) {
  // expected-error @+1 {{'tile.store' op stores 'bf16' values into a tensor of 'f32'; cast them first}}
  tile.store %t[%i], %v : !tile.tensor<?xf32, mut>[tensor<32xi32>], tensor<32xbf16>
  return
}

// -----

func.func @store_rank(%t: !tile.tensor<?x4x4xf32, mut>, %i: tensor<32xi32>, %v: tensor<32xf32>) {
  // expected-error @+1 {{'tile.store' op indexes a rank-3 tensor '!tile.tensor<?x4x4xf32, mut>' with 2 indexes; give exactly one index per dimension}}
  tile.store %t[%i, %i], %v : !tile.tensor<?x4x4xf32, mut>[tensor<32xi32>, tensor<32xi32>], tensor<32xf32>
  return
}

// -----

func.func @dot_small_k(%a: tensor<64x8xbf16>, %b: tensor<8x64xbf16>, %c: tensor<64x64xf32>) {
  // expected-error @+1 {{'tile.dot' op K = 8 is below 16: tensor-core dot needs M, N and K of at least 16 (a is [64, 8], b is [8, 64])}}
  %d = tile.dot %a, %b, %c : tensor<64x8xbf16>, tensor<8x64xbf16> -> tensor<64x64xf32>
  return
}

// -----

func.func @dot_small_m(%a: tensor<8x32xf16>, %b: tensor<32x64xf16>, %c: tensor<8x64xf32>) {
  // expected-error @+1 {{'tile.dot' op M = 8 is below 16}}
  %d = tile.dot %a, %b, %c : tensor<8x32xf16>, tensor<32x64xf16> -> tensor<8x64xf32>
  return
}

// -----

func.func @dot_small_n(%a: tensor<16x32xf16>, %b: tensor<32x8xf16>, %c: tensor<16x8xf32>) {
  // expected-error @+1 {{'tile.dot' op N = 8 is below 16}}
  %d = tile.dot %a, %b, %c : tensor<16x32xf16>, tensor<32x8xf16> -> tensor<16x8xf32>
  return
}

// -----

func.func @dot_mixed(%a: tensor<64x32xbf16>, %b: tensor<32x64xf16>, %c: tensor<64x64xf32>) {
  // expected-error @+1 {{'tile.dot' op operands have different element types ('bf16' and 'f16'); cast one to the other}}
  %d = tile.dot %a, %b, %c : tensor<64x32xbf16>, tensor<32x64xf16> -> tensor<64x64xf32>
  return
}

// -----

func.func @dot_k_mismatch(%a: tensor<64x32xbf16>, %b: tensor<64x64xbf16>, %c: tensor<64x64xf32>) {
  // expected-error @+1 {{'tile.dot' op contracts a [64, 32] tile with a [64, 64] tile: K differs (32 vs 64)}}
  %d = tile.dot %a, %b, %c : tensor<64x32xbf16>, tensor<64x64xbf16> -> tensor<64x64xf32>
  return
}

// -----

func.func @dot_acc(%a: tensor<64x32xbf16>, %b: tensor<32x64xbf16>, %c: tensor<32x64xf32>) {
  // expected-error @+1 {{'tile.dot' op accumulator is [32, 64] but a @ b is [64, 64]}}
  %d = tile.dot %a, %b, %c : tensor<64x32xbf16>, tensor<32x64xbf16> -> tensor<32x64xf32>
  return
}

// -----

func.func @dot_rank(%a: tensor<64xbf16>, %b: tensor<64xbf16>, %c: tensor<64xf32>) {
  // expected-error @+1 {{'tile.dot' op operands must be 2-D tiles, got 'tensor<64xbf16>', 'tensor<64xbf16>' and 'tensor<64xf32>'}}
  %d = tile.dot %a, %b, %c : tensor<64xbf16>, tensor<64xbf16> -> tensor<64xf32>
  return
}

// -----

func.func @reduce_axis(%x: tensor<64x64xf32>) {
  // expected-error @+1 {{'tile.reduce' op axis 2 is out of range for a rank-2 tile}}
  %r = tile.reduce sum %x, 2 : tensor<64x64xf32> -> tensor<64xf32>
  return
}

// -----

func.func @reduce_scalar(%x: tensor<64xf32>) {
  // expected-error @+1 {{'tile.reduce' op reducing the only axis gives a scalar, not 'tensor<1xf32>'}}
  %r = tile.reduce sum %x, 0 : tensor<64xf32> -> tensor<1xf32>
  return
}

// -----

func.func @reduce_shape(%x: tensor<32x64xf32>) {
  // expected-error @+1 {{'tile.reduce' op result 'tensor<64xf32>' is not the source with axis 1 removed (32)}}
  %r = tile.reduce max %x, 1 : tensor<32x64xf32> -> tensor<64xf32>
  return
}

// -----

// A K-tile pipeline does not take a V-tile block.
func.func @push_mismatch(%v: !tile.tensor<?x64xbf16>, %i: tensor<64x64xi32>) {
  %kp = tile.pipeline.create : !tile.pipeline<64x128xbf16, stages = 2>
  // expected-error @+1 {{'tile.pipeline.push' op pushes a block of type 'tensor<64x64xbf16>' into a pipeline of type '!tile.pipeline<64x128xbf16, stages = 2>', whose stages hold 'tensor<64x128xbf16>'}}
  tile.pipeline.push %kp, %v[%i, %i] : !tile.pipeline<64x128xbf16, stages = 2>, !tile.tensor<?x64xbf16>[tensor<64x64xi32>, tensor<64x64xi32>]
  return
}

// -----

func.func @push_dtype(%v: !tile.tensor<?x128xf16>, %i: tensor<64x128xi32>) {
  %kp = tile.pipeline.create : !tile.pipeline<64x128xbf16, stages = 2>
  // expected-error @+1 {{'tile.pipeline.push' op pushes a block of type 'tensor<64x128xf16>' into a pipeline of type '!tile.pipeline<64x128xbf16, stages = 2>'}}
  tile.pipeline.push %kp, %v[%i, %i] : !tile.pipeline<64x128xbf16, stages = 2>, !tile.tensor<?x128xf16>[tensor<64x128xi32>, tensor<64x128xi32>]
  return
}

// -----

func.func @push_rank(%v: !tile.tensor<?x128xbf16>, %i: tensor<64x128xi32>) {
  %kp = tile.pipeline.create : !tile.pipeline<64x128xbf16, stages = 2>
  // expected-error @+1 {{'tile.pipeline.push' op indexes a rank-2 tensor '!tile.tensor<?x128xbf16>' with 1 index; give exactly one index per dimension}}
  tile.pipeline.push %kp, %v[%i] : !tile.pipeline<64x128xbf16, stages = 2>, !tile.tensor<?x128xbf16>[tensor<64x128xi32>]
  return
}

// -----

func.func @pop_mismatch() {
  %vp = tile.pipeline.create : !tile.pipeline<64x64xbf16, stages = 2>
  // expected-error @+1 {{'tile.pipeline.pop' op pops a 'tensor<64x128xbf16>' from a pipeline of type '!tile.pipeline<64x64xbf16, stages = 2>', whose stages hold 'tensor<64x64xbf16>'}}
  %t = tile.pipeline.pop %vp : !tile.pipeline<64x64xbf16, stages = 2> -> tensor<64x128xbf16>
  return
}

// -----

func.func @program_id_axis() {
  // expected-error @+1 {{'tile.program_id' op attribute 'axis' failed to satisfy constraint: 32-bit signless integer attribute whose minimum value is 0 whose maximum value is 2}}
  %p = tile.program_id 3
  return
}

// -----

// The mask's type follows from the result's, so a mask of another shape is
// a type error at its use.
// expected-note @+1 {{prior use here}}
func.func @load_mask_shape(%t: !tile.tensor<?xf32>, %i: tensor<32xi32>, %m: tensor<16xi1>) {
  // expected-error @+1 {{use of value '%m' expects different type than prior uses: 'tensor<32xi1>' vs 'tensor<16xi1>'}}
  %v = tile.load %t[%i] mask %m : !tile.tensor<?xf32>[tensor<32xi32>] -> tensor<32xf32>
  return
}

// -----

func.func @pop_transpose_shape() {
  %vp = tile.pipeline.create : !tile.pipeline<64x32xbf16, stages = 2>
  // expected-error @+1 {{'tile.pipeline.pop' op pops a 'tensor<64x32xbf16>' from a pipeline of type '!tile.pipeline<64x32xbf16, stages = 2>'}}
  %t = tile.pipeline.pop %vp transpose : !tile.pipeline<64x32xbf16, stages = 2> -> tensor<64x32xbf16>
  return
}

// -----

func.func @pop_transpose_rank() {
  %vp = tile.pipeline.create : !tile.pipeline<64xbf16, stages = 2>
  // expected-error @+1 {{'tile.pipeline.pop' op transposes a rank-1 pipeline block; only 2-D blocks transpose}}
  %t = tile.pipeline.pop %vp transpose : !tile.pipeline<64xbf16, stages = 2> -> tensor<64xbf16>
  return
}

// -----

func.func @push_mask_shape(%k: !tile.tensor<?x64xbf16>, %i: tensor<32x64xi32>, %m: tensor<32x32xi1>) {
  %p = tile.pipeline.create : !tile.pipeline<32x64xbf16, stages = 2>
  // expected-error @+1 {{'tile.pipeline.push' op mask 'tensor<32x32xi1>' is not an i1 tile of the block's shape}}
  tile.pipeline.push %p, %k[%i, %i] mask(%m : tensor<32x32xi1>) : !tile.pipeline<32x64xbf16, stages = 2>, !tile.tensor<?x64xbf16>[tensor<32x64xi32>, tensor<32x64xi32>]
  return
}

// -----

func.func @push_other_type(%k: !tile.tensor<?x64xbf16>, %i: tensor<32x64xi32>, %o: tensor<32x64xf32>) {
  %p = tile.pipeline.create : !tile.pipeline<32x64xbf16, stages = 2>
  // expected-error @+1 {{'tile.pipeline.push' op other 'tensor<32x64xf32>' is not a tile of the block's type 'tensor<32x64xbf16>'}}
  tile.pipeline.push %p, %k[%i, %i] other(%o : tensor<32x64xf32>) : !tile.pipeline<32x64xbf16, stages = 2>, !tile.tensor<?x64xbf16>[tensor<32x64xi32>, tensor<32x64xi32>]
  return
}

// -----

func.func @permute_not_permutation(%x: tensor<4x8x16xf32>) {
  // expected-error @+1 {{'tile.permute' op order is not a permutation of 0 to 2}}
  %p = tile.permute %x, [0, 0, 1] : tensor<4x8x16xf32> -> tensor<4x4x8xf32>
  return
}

// -----

func.func @permute_order_rank(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'tile.permute' op order has 3 entries for a rank-2 source and a rank-2 result}}
  %p = tile.permute %x, [0, 1, 2] : tensor<4x8xf32> -> tensor<4x8xf32>
  return
}

// -----

func.func @permute_shape(%x: tensor<4x8x16xf32>) {
  // expected-error @+1 {{'tile.permute' op result shape 16x8x4 is not 4x8x16 permuted by the order}}
  %p = tile.permute %x, [2, 0, 1] : tensor<4x8x16xf32> -> tensor<16x8x4xf32>
  return
}

// -----

func.func @reshape_count(%x: tensor<16x64xf32>) {
  // expected-error @+1 {{'tile.reshape' op reshapes 16x64 (1024 elements) to 2048 (2048 elements)}}
  %r = tile.reshape %x : tensor<16x64xf32> -> tensor<2048xf32>
  return
}

// -----

func.func @cumsum_axis(%x: tensor<16x64xf32>) {
  // expected-error @+1 {{'tile.cumsum' op axis 2 is out of range for a rank-2 tile}}
  %c = tile.cumsum %x, 2 : tensor<16x64xf32>
  return
}

// -----

func.func @cumsum_type(%x: tensor<64xbf16>) {
  // expected-error @+1 {{'tile.cumsum' op operand #0 must be ranked tensor of 32-bit float or 32-bit signless integer values}}
  %c = tile.cumsum %x, 0 : tensor<64xbf16>
  return
}

// -----

func.func @dot_ieee_bf16(%a: tensor<16x16xbf16>, %acc: tensor<16x16xf32>) {
  // expected-error @+1 {{'tile.dot' op ieee applies to f32 operands, not 'bf16' (whose products are exact already)}}
  %d = tile.dot %a, %a, %acc ieee : tensor<16x16xbf16>, tensor<16x16xbf16> -> tensor<16x16xf32>
  return
}

// -----

func.func @plan_stage_not_shared(%a: tensor<64x64xbf16>, %b: tensor<64x64xbf16>, %c: tensor<64x64xf32>) {
  // expected-error @+1 {{'tile.dot' op reads b in place from its stage, but 'tensor<64x64xbf16>' has no #tile.shared encoding}}
  %d = tile.dot %a, %b, %c {plan = #tile.dot_plan<wgmma, warps = [4, 1], a = registers, b = stage>} : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xf32>
  return
}

// -----

func.func @plan_registers_shared(%a: tensor<64x64xbf16, #tile.shared<swizzle = 128, order = [1, 0]>>, %b: tensor<64x64xbf16>, %c: tensor<64x64xf32>) {
  // expected-error @+1 {{'tile.dot' op reads a from registers, but 'tensor<64x64xbf16, #tile.shared<swizzle = 128, order = [1, 0]>>' stays in shared memory}}
  %d = tile.dot %a, %b, %c {plan = #tile.dot_plan<mma_sync, warps = [4, 1], a = registers, b = registers>} : tensor<64x64xbf16, #tile.shared<swizzle = 128, order = [1, 0]>>, tensor<64x64xbf16> -> tensor<64x64xf32>
  return
}

// -----

func.func @plan_wgmma_f32(%a: tensor<64x64xf32>, %b: tensor<64x64xf32, #tile.shared<swizzle = 128, order = [1, 0]>>, %c: tensor<64x64xf32>) {
  // expected-error @+1 {{'tile.dot' op is planned as wgmma, which takes f16 or bf16 operands, not 'f32'}}
  %d = tile.dot %a, %b, %c {plan = #tile.dot_plan<wgmma, warps = [4, 1], a = registers, b = stage>} : tensor<64x64xf32>, tensor<64x64xf32, #tile.shared<swizzle = 128, order = [1, 0]>> -> tensor<64x64xf32>
  return
}

// -----

func.func @plan_warps_differ(%a: tensor<64x64xbf16>, %b: tensor<64x64xbf16>, %c: tensor<64x64xf32, #tile.mma<warpsPerCTA = [4, 1]>>) {
  // expected-error @+1 {{'tile.dot' op accumulator has #tile.mma<warpsPerCTA = [4, 1]> but the plan splits warps as #tile.dot_plan<mma_sync, warps = [2, 2], a = registers, b = registers>}}
  %d = tile.dot %a, %b, %c {plan = #tile.dot_plan<mma_sync, warps = [2, 2], a = registers, b = registers>} : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xf32, #tile.mma<warpsPerCTA = [4, 1]>>
  return
}

// -----

func.func @issue_b_registers(%a: tensor<64x64xbf16, #tile.shared<swizzle = 128, order = [1, 0]>>, %b: tensor<64x64xbf16, #tile.dot_operand<opIdx = 1, parent = #tile.mma<warpsPerCTA = [4, 1]>>>, %c: tensor<64x64xf32, #tile.mma<warpsPerCTA = [4, 1]>>) {
  // expected-error @+1 {{'tile.dot_issue' op reads b in place from its stage, but}}
  %d, %t = tile.dot_issue %a, %b, %c : tensor<64x64xbf16, #tile.shared<swizzle = 128, order = [1, 0]>>, tensor<64x64xbf16, #tile.dot_operand<opIdx = 1, parent = #tile.mma<warpsPerCTA = [4, 1]>>> -> tensor<64x64xf32, #tile.mma<warpsPerCTA = [4, 1]>>
  return
}

// -----

func.func @issue_no_mma(%a: tensor<64x64xbf16, #tile.shared<swizzle = 128, order = [1, 0]>>, %b: tensor<64x64xbf16, #tile.shared<swizzle = 128, order = [1, 0]>>, %c: tensor<64x64xf32>) {
  // expected-error @+1 {{'tile.dot_issue' op accumulator 'tensor<64x64xf32>' has no #tile.mma layout}}
  %d, %t = tile.dot_issue %a, %b, %c : tensor<64x64xbf16, #tile.shared<swizzle = 128, order = [1, 0]>>, tensor<64x64xbf16, #tile.shared<swizzle = 128, order = [1, 0]>> -> tensor<64x64xf32>
  return
}

// -----

func.func @wait_other_acc(%a: tensor<64x64xbf16, #tile.shared<swizzle = 128, order = [1, 0]>>, %b: tensor<64x64xbf16, #tile.shared<swizzle = 128, order = [1, 0]>>, %c: tensor<64x64xf32, #tile.mma<warpsPerCTA = [4, 1]>>) {
  %d, %t = tile.dot_issue %a, %b, %c : tensor<64x64xbf16, #tile.shared<swizzle = 128, order = [1, 0]>>, tensor<64x64xbf16, #tile.shared<swizzle = 128, order = [1, 0]>> -> tensor<64x64xf32, #tile.mma<warpsPerCTA = [4, 1]>>
  // expected-error @+1 {{'tile.dot_wait' op waits on a token, but acc is not the result of the tile.dot_issue that returned it}}
  %w = tile.dot_wait %c after %t pending = 0 : tensor<64x64xf32, #tile.mma<warpsPerCTA = [4, 1]>>
  return
}

// -----

func.func @wait_negative(%c: tensor<64x64xf32, #tile.mma<warpsPerCTA = [4, 1]>>) {
  // expected-error @+1 {{'tile.dot_wait' op attribute 'pending' failed to satisfy constraint}}
  %w = tile.dot_wait %c pending = -1 : tensor<64x64xf32, #tile.mma<warpsPerCTA = [4, 1]>>
  return
}

// -----

func.func @to_shared_registers(%a: tensor<64x64xbf16>) {
  // expected-error @+1 {{'tile.to_shared' op result 'tensor<64x64xbf16>' has no #tile.shared encoding}}
  %s = tile.to_shared %a : tensor<64x64xbf16> -> tensor<64x64xbf16>
  return
}

// -----

func.func @to_shared_twice(%a: tensor<64x64xbf16, #tile.shared<swizzle = 128, order = [1, 0]>>) {
  // expected-error @+1 {{'tile.to_shared' op source 'tensor<64x64xbf16, #tile.shared<swizzle = 128, order = [1, 0]>>' is in shared memory already}}
  %s = tile.to_shared %a : tensor<64x64xbf16, #tile.shared<swizzle = 128, order = [1, 0]>> -> tensor<64x64xbf16, #tile.shared<swizzle = 128, order = [1, 0]>>
  return
}

// -----

func.func @to_shared_few_rows(%a: tensor<64x4xbf16>) {
  // expected-error @+1 {{'tile.to_shared' op stores 'tensor<64x4xbf16, #tile.shared<swizzle = 128, order = [0, 1]>>' in 4 rows, not whole 8-row swizzle periods}}
  %s = tile.to_shared %a : tensor<64x4xbf16> -> tensor<64x4xbf16, #tile.shared<swizzle = 128, order = [0, 1]>>
  return
}
