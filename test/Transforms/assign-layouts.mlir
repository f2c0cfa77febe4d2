// RUN: tile-opt %s -split-input-file -tile-plan-dots -tile-assign-layouts -verify-diagnostics | FileCheck %s --enable-var-scope

// Attention's inner loop: scores stay in the mma layout through the
// softmax, the row statistics in its slice, and the only conversions left
// are into dot-operand fragments (K^T is transposed straight into one).
// Constants are built in place. On sm_80: sm_90a stages the register
// operands for wgmma (plan-dots.mlir).

// CHECK-DAG: #[[$MMA:.*]] = #tile.mma<warpsPerCTA = [8, 1]>
// CHECK-DAG: #[[$ROWS:.*]] = #tile.slice<dim = 1, parent = #[[$MMA]]>
// CHECK-DAG: #[[$OPA:.*]] = #tile.dot_operand<opIdx = 0, parent = #[[$MMA]]>
// CHECK-DAG: #[[$OPB:.*]] = #tile.dot_operand<opIdx = 1, parent = #[[$MMA]]>
// CHECK-LABEL: func.func @attention_loop
// CHECK-DAG: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : tensor<128x64xf32, #[[$MMA]]>
// CHECK-DAG: %[[NINF:.*]] = arith.constant dense<0xFF800000> : tensor<128xf32, #[[$ROWS]]>
// CHECK: scf.for {{.*}} iter_args(%[[ACC:.*]] = %[[ZERO]], %[[M:.*]] = %[[NINF]]) -> (tensor<128x64xf32, #[[$MMA]]>, tensor<128xf32, #[[$ROWS]]>)
// CHECK: %[[QA:.*]] = tile.convert_layout %{{.*}} -> tensor<128x64xbf16, #[[$OPA]]>
// CHECK: %[[KB:.*]] = tile.trans %{{.*}} -> tensor<64x64xbf16, #[[$OPB]]>
// CHECK: %[[S:.*]] = tile.dot %[[QA]], %[[KB]], %[[ZERO]] {{.*}} -> tensor<128x64xf32, #[[$MMA]]>
// CHECK: %[[MX:.*]] = tile.reduce max %[[S]], 1 {{.*}} -> tensor<128xf32, #[[$ROWS]]>
// CHECK: %[[MN:.*]] = arith.maximumf %[[M]], %[[MX]] : tensor<128xf32, #[[$ROWS]]>
// CHECK: tile.expand_dims %[[MN]], 1 {{.*}} -> tensor<128x1xf32, #[[$MMA]]>
// CHECK: tile.broadcast {{.*}} -> tensor<128x64xf32, #[[$MMA]]>
// CHECK-NOT: tile.convert_layout
// CHECK: %[[P:.*]] = arith.truncf {{.*}} to tensor<128x64xbf16, #[[$MMA]]>
// CHECK: %[[PA:.*]] = tile.convert_layout %[[P]] : tensor<128x64xbf16, #[[$MMA]]> -> tensor<128x64xbf16, #[[$OPA]]>
// CHECK: %[[VB:.*]] = tile.convert_layout %{{.*}} -> tensor<64x64xbf16, #[[$OPB]]>
// CHECK: %[[ACC2:.*]] = tile.dot %[[PA]], %[[VB]], %[[ACC]]
// CHECK: scf.yield %[[ACC2]], %[[MN]] : tensor<128x64xf32, #[[$MMA]]>, tensor<128xf32, #[[$ROWS]]>
module attributes {tile.target = "sm_80"} {
func.func @attention_loop(%q: tensor<128x64xbf16>, %k: tensor<64x64xbf16>,
                          %v: tensor<64x64xbf16>, %n: i32) -> tensor<128x64xf32>
    attributes {tile.warps = 8 : i32} {
  %zero = arith.constant dense<0.0> : tensor<128x64xf32>
  %ninf = arith.constant dense<0xFF800000> : tensor<128xf32>
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero, %m = %ninf)
      -> (tensor<128x64xf32>, tensor<128xf32>) : i32 {
    %kt = tile.trans %k : tensor<64x64xbf16> -> tensor<64x64xbf16>
    %s = tile.dot %q, %kt, %zero : tensor<128x64xbf16>, tensor<64x64xbf16> -> tensor<128x64xf32>
    %mx = tile.reduce max %s, 1 : tensor<128x64xf32> -> tensor<128xf32>
    %mn = arith.maximumf %m, %mx : tensor<128xf32>
    %mc = tile.expand_dims %mn, 1 : tensor<128xf32> -> tensor<128x1xf32>
    %mb = tile.broadcast %mc : tensor<128x1xf32> -> tensor<128x64xf32>
    %d = arith.subf %s, %mb : tensor<128x64xf32>
    %p = math.exp2 %d : tensor<128x64xf32>
    %pb = arith.truncf %p : tensor<128x64xf32> to tensor<128x64xbf16>
    %acc2 = tile.dot %pb, %v, %acc : tensor<128x64xbf16>, tensor<64x64xbf16> -> tensor<128x64xf32>
    scf.yield %acc2, %mn : tensor<128x64xf32>, tensor<128xf32>
  }
  return %r#0 : tensor<128x64xf32>
}
}

// -----

// Memory accesses get 16-byte chunks along the contiguous dimension: 8
// bf16 or 4 f32 per thread. Index tiles are built in the access's layout.

// CHECK-DAG: #[[$F32:.*]] = #tile.blocked<sizePerThread = [1, 4], threadsPerWarp = [2, 16], warpsPerCTA = [4, 1], order = [1, 0]>
// CHECK-DAG: #[[$BF16:.*]] = #tile.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
// CHECK-LABEL: func.func @copy_cast
// CHECK: %[[I:.*]] = tile.splat %{{.*}} : tensor<32x64xi32, #[[$BF16]]>
// CHECK: %[[X:.*]] = tile.load %{{.*}}[%[[I]], %{{.*}}] : !tile.tensor<?x64xbf16>[tensor<32x64xi32, #[[$BF16]]>, tensor<32x64xi32, #[[$BF16]]>] -> tensor<32x64xbf16, #[[$BF16]]>
// CHECK: %[[Y:.*]] = arith.extf %[[X]] : tensor<32x64xbf16, #[[$BF16]]> to tensor<32x64xf32, #[[$BF16]]>
// CHECK: %[[YS:.*]] = tile.convert_layout %[[Y]] : tensor<32x64xf32, #[[$BF16]]> -> tensor<32x64xf32, #[[$F32]]>
// CHECK: tile.store %{{.*}}[%{{.*}}, %{{.*}}], %[[YS]] : !tile.tensor<?x64xf32, mut>[tensor<32x64xi32, #[[$F32]]>, tensor<32x64xi32, #[[$F32]]>], tensor<32x64xf32, #[[$F32]]>
func.func @copy_cast(%xp: !tile.ptr<bf16>, %yp: !tile.ptr<f32>, %n: i32)
    attributes {tile.kernel, tile.warps = 4 : i32} {
  %x = tile.make_tensor %xp[%n] : !tile.ptr<bf16> -> !tile.tensor<?x64xbf16>
  %y = tile.make_tensor %yp[%n] : !tile.ptr<f32> -> !tile.tensor<?x64xf32, mut>
  %i = tile.splat %n : tensor<32x64xi32>
  %v = tile.load %x[%i, %i] : !tile.tensor<?x64xbf16>[tensor<32x64xi32>, tensor<32x64xi32>] -> tensor<32x64xbf16>
  %w = arith.extf %v : tensor<32x64xbf16> to tensor<32x64xf32>
  tile.store %y[%i, %i], %w : !tile.tensor<?x64xf32, mut>[tensor<32x64xi32>, tensor<32x64xi32>], tensor<32x64xf32>
  return
}

// -----

// Decoding: M = 16 with 4 warps spreads the warps along N.
// CHECK: #[[$MMA4:.*]] = #tile.mma<warpsPerCTA = [1, 4]>
// CHECK-LABEL: func.func @decode_dot
// CHECK: tile.dot {{.*}} -> tensor<16x64xf32, #[[$MMA4]]>
func.func @decode_dot(%a: tensor<16x64xf16>, %b: tensor<64x64xf16>, %c: tensor<16x64xf32>)
    -> tensor<16x64xf32> attributes {tile.warps = 4 : i32} {
  %d = tile.dot %a, %b, %c : tensor<16x64xf16>, tensor<64x64xf16> -> tensor<16x64xf32>
  return %d : tensor<16x64xf32>
}

// -----

// M = 16 and N = 32 over 8 warps: no split gives every warp 16 rows and 8
// columns, so the warps go along N (8 columns each) and warps 4-7 hold
// copies of warps 0-3's fragments (the mma layout wraps past the extent).
// CHECK: #[[$REP:.*]] = #tile.mma<warpsPerCTA = [1, 8]>
// CHECK-LABEL: func.func @replicated_dot
// CHECK: tile.dot {{.*}} -> tensor<16x32xf32, #[[$REP]]>
func.func @replicated_dot(%a: tensor<16x64xf16>, %b: tensor<64x32xf16>, %c: tensor<16x32xf32>)
    -> tensor<16x32xf32> attributes {tile.warps = 8 : i32} {
  %d = tile.dot %a, %b, %c : tensor<16x64xf16>, tensor<64x32xf16> -> tensor<16x32xf32>
  return %d : tensor<16x32xf32>
}

// -----

// A push's indices take the layout of the data pushed (8 bf16 per thread,
// 16 bytes), not of the i32 indices themselves (4 per thread).
// CHECK: #[[$PUSH:.*]] = #tile.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
// CHECK-LABEL: func.func @push_layout
// CHECK: tile.pipeline.push {{.*}} : !tile.pipeline<32x64xbf16, stages = 2>, !tile.tensor<?x64xbf16>[tensor<32x64xi32, #[[$PUSH]]>, tensor<32x64xi32, #[[$PUSH]]>]
func.func @push_layout(%kp: !tile.ptr<bf16>, %n: i32) attributes {tile.kernel, tile.warps = 4 : i32} {
  %k = tile.make_tensor %kp[%n] : !tile.ptr<bf16> -> !tile.tensor<?x64xbf16>
  %p = tile.pipeline.create : !tile.pipeline<32x64xbf16, stages = 2>
  %i = tile.splat %n : tensor<32x64xi32>
  tile.pipeline.push %p, %k[%i, %i] : !tile.pipeline<32x64xbf16, stages = 2>, !tile.tensor<?x64xbf16>[tensor<32x64xi32>, tensor<32x64xi32>]
  return
}

// -----

// A loop result takes its iter_arg's layout. Three layouts are known when
// the result's is added, so the map grows then: the iter_arg's entry must be
// copied out first (a reference to it dangled; ASan: heap-use-after-free).
// CHECK: #[[$CARRIED:.*]] = #tile.blocked<sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [1], order = [0]>
// CHECK-LABEL: func.func @carried_result
// CHECK: scf.for {{.*}} -> (tensor<128xf32, #[[$CARRIED]]>)
// CHECK: return {{.*}} : tensor<128xf32, #[[$CARRIED]]>
func.func @carried_result(%n: i32) -> tensor<128xf32> attributes {tile.warps = 1 : i32} {
  %zero = arith.constant dense<0.0> : tensor<128xf32>
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero)
      -> (tensor<128xf32>) : i32 {
    %x = arith.addf %acc, %acc : tensor<128xf32>
    scf.yield %x : tensor<128xf32>
  }
  return %r : tensor<128xf32>
}

// -----

// A stage popped only to be widened is read in the wider type's layout (4
// f32 a thread, not the push's 8 bf16), which the f32 values it meets in the
// loop have: no conversion in the loop (cross-entropy's online logsumexp).
// CHECK-DAG: #[[$F32:.*]] = #tile.blocked<sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [8], order = [0]>
// CHECK-DAG: #[[$BF16:.*]] = #tile.blocked<sizePerThread = [8], threadsPerWarp = [32], warpsPerCTA = [8], order = [0]>
// CHECK-LABEL: func.func @widened_pop
// CHECK: scf.for
// CHECK: tile.pipeline.pop {{.*}} -> tensor<4096xbf16, #[[$F32]]>
// CHECK: tile.pipeline.push {{.*}}[tensor<4096xi32, #[[$BF16]]>]
// CHECK: arith.extf {{.*}} to tensor<4096xf32, #[[$F32]]>
// CHECK-NOT: tile.convert_layout
// CHECK: scf.yield
func.func @widened_pop(%xp: !tile.ptr<bf16>, %n: i32) -> tensor<4096xf32> attributes {tile.kernel, tile.warps = 8 : i32} {
  %x = tile.make_tensor %xp[%n] : !tile.ptr<bf16> -> !tile.tensor<?xbf16>
  %c0 = arith.constant 0 : i32
  %c4096 = arith.constant 4096 : i32
  %init = arith.constant dense<0xFF800000> : tensor<4096xf32>
  %p = tile.pipeline.create : !tile.pipeline<4096xbf16, stages = 2>
  %r = scf.for %i = %c0 to %n step %c4096 iter_args(%m = %init) -> (tensor<4096xf32>) : i32 {
    %v = tile.pipeline.pop %p : !tile.pipeline<4096xbf16, stages = 2> -> tensor<4096xbf16>
    %cols = tile.splat %i : tensor<4096xi32>
    tile.pipeline.push %p, %x[%cols] : !tile.pipeline<4096xbf16, stages = 2>, !tile.tensor<?xbf16>[tensor<4096xi32>]
    %w = arith.extf %v : tensor<4096xbf16> to tensor<4096xf32>
    %m2 = arith.maximumf %m, %w : tensor<4096xf32>
    scf.yield %m2 : tensor<4096xf32>
  }
  return %r : tensor<4096xf32>
}

// -----

// A running sum started from zeros follows the tile it adds up (bf16 loads
// in 16-byte chunks of 8, widened to f32), not the zeros' default layout
// (chunks of 4 f32): the zeros are rebuilt in the loads' layout once,
// before the loop, and the body converts nothing. (It converted through
// shared memory on every iteration: RMSNorm's and LayerNorm's loops.)
// CHECK-DAG: #[[$LOADED:.*]] = #tile.blocked<sizePerThread = [8], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]>
// CHECK-LABEL: func.func @running_sum
// CHECK: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : tensor<1024xf32, #[[$LOADED]]>
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %[[ZERO]]) -> (tensor<1024xf32, #[[$LOADED]]>)
// CHECK-NOT: tile.convert_layout
// CHECK: scf.yield
func.func @running_sum(%xp: !tile.ptr<bf16>, %n: i32) -> tensor<1024xf32> attributes {tile.warps = 4 : i32} {
  %x = tile.make_tensor %xp[%n] : !tile.ptr<bf16> -> !tile.tensor<?xbf16>
  %zero = arith.constant dense<0.0> : tensor<1024xf32>
  %c0 = arith.constant 0 : i32
  %c1024 = arith.constant 1024 : i32
  %r = scf.for %i = %c0 to %n step %c1024 iter_args(%acc = %zero)
      -> (tensor<1024xf32>) : i32 {
    %ar = tile.arange : tensor<1024xi32>
    %s = tile.splat %i : tensor<1024xi32>
    %idx = arith.addi %s, %ar : tensor<1024xi32>
    %t = tile.load %x[%idx] : !tile.tensor<?xbf16>[tensor<1024xi32>] -> tensor<1024xbf16>
    %w = arith.extf %t : tensor<1024xbf16> to tensor<1024xf32>
    %sq = arith.mulf %w, %w : tensor<1024xf32>
    %sum = arith.addf %acc, %sq : tensor<1024xf32>
    scf.yield %sum : tensor<1024xf32>
  }
  return %r : tensor<1024xf32>
}

// -----

// Index and mask math (aranges, splats and integer arithmetic over them)
// has only a default layout, like a constant: LayerNorm's variance loop,
// `where(c0 + arange(B) < N, x - mu, 0.0)`, keeps the layout of the f16
// load (8 a thread), not the i32 default of the compare (4 a thread), and
// `cols`, used by the load and the compare, is built in that layout. (The
// select followed the compare, converting x - mu and cols through shared
// memory on every iteration.)
// CHECK-DAG: #[[$LOADED:.*]] = #tile.blocked<sizePerThread = [8], threadsPerWarp = [32], warpsPerCTA = [8], order = [0]>
// CHECK-LABEL: func.func @masked_centered
// CHECK: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : tensor<2048xf32, #[[$LOADED]]>
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %[[ZERO]]) -> (tensor<2048xf32, #[[$LOADED]]>)
// CHECK-NOT: tile.convert_layout
// CHECK: %[[X:.*]] = tile.load {{.*}} -> tensor<2048xf16, #[[$LOADED]]>
// CHECK-NOT: tile.convert_layout
// CHECK: %[[IN:.*]] = arith.cmpi slt, %{{.*}}, %{{.*}} : tensor<2048xi32, #[[$LOADED]]>
// CHECK-NOT: tile.convert_layout
// CHECK: arith.select %[[IN]], %{{.*}}, %[[ZERO]] : tensor<2048xi1, #[[$LOADED]]>, tensor<2048xf32, #[[$LOADED]]>
// CHECK-NOT: tile.convert_layout
// CHECK: scf.yield
func.func @masked_centered(%xp: !tile.ptr<f16>, %n: i32, %mu: f32) -> tensor<2048xf32> attributes {tile.warps = 8 : i32} {
  %x = tile.make_tensor %xp[%n] : !tile.ptr<f16> -> !tile.tensor<?xf16>
  %zero = arith.constant dense<0.0> : tensor<2048xf32>
  %c0 = arith.constant 0 : i32
  %c2048 = arith.constant 2048 : i32
  %r = scf.for %i = %c0 to %n step %c2048 iter_args(%acc = %zero)
      -> (tensor<2048xf32>) : i32 {
    %ar = tile.arange : tensor<2048xi32>
    %s = tile.splat %i : tensor<2048xi32>
    %cols = arith.addi %s, %ar : tensor<2048xi32>
    %ns = tile.splat %n : tensor<2048xi32>
    %in = arith.cmpi slt, %cols, %ns : tensor<2048xi32>
    %t = tile.load %x[%cols] : !tile.tensor<?xf16>[tensor<2048xi32>] -> tensor<2048xf16>
    %w = arith.extf %t : tensor<2048xf16> to tensor<2048xf32>
    %mus = tile.splat %mu : tensor<2048xf32>
    %d = arith.subf %w, %mus : tensor<2048xf32>
    %c = arith.select %in, %d, %zero : tensor<2048xi1>, tensor<2048xf32>
    %sq = arith.mulf %c, %c : tensor<2048xf32>
    %sum = arith.addf %acc, %sq : tensor<2048xf32>
    scf.yield %sum : tensor<2048xf32>
  }
  return %r : tensor<2048xf32>
}

// -----

// Rotary: cos (f32, 16-byte chunks of 4) multiplies x (bf16, chunks of 8).
// The product follows x, and cos is loaded straight into x's layout (two
// chunks a thread) rather than moved there through shared memory; the
// index tiles the two loads share are built in it too.
// CHECK-DAG: #[[$X:.*]] = #tile.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
// CHECK-LABEL: func.func @rotary_like
// CHECK-NOT: tile.convert_layout
// CHECK: %[[C:.*]] = tile.load %{{.*}} : !tile.tensor<?x64xf32>{{.*}} -> tensor<16x64xf32, #[[$X]]>
// CHECK-NOT: tile.convert_layout
// CHECK: %[[XS:.*]] = tile.load %{{.*}} : !tile.tensor<?x64xbf16, mut>{{.*}} -> tensor<16x64xbf16, #[[$X]]>
// CHECK-NOT: tile.convert_layout
// CHECK: arith.mulf %{{.*}}, %[[C]] : tensor<16x64xf32, #[[$X]]>
// CHECK-NOT: tile.convert_layout
// CHECK: tile.store
func.func @rotary_like(%xp: !tile.ptr<bf16>, %cp: !tile.ptr<f32>, %n: i32) attributes {tile.kernel, tile.warps = 4 : i32} {
  %x = tile.make_tensor %xp[%n] : !tile.ptr<bf16> -> !tile.tensor<?x64xbf16, mut>
  %cs = tile.make_tensor %cp[%n] : !tile.ptr<f32> -> !tile.tensor<?x64xf32>
  %r = tile.arange : tensor<16xi32>
  %re = tile.expand_dims %r, 1 : tensor<16xi32> -> tensor<16x1xi32>
  %rows = tile.broadcast %re : tensor<16x1xi32> -> tensor<16x64xi32>
  %i = tile.arange : tensor<64xi32>
  %ie = tile.expand_dims %i, 0 : tensor<64xi32> -> tensor<1x64xi32>
  %cols = tile.broadcast %ie : tensor<1x64xi32> -> tensor<16x64xi32>
  %c = tile.load %cs[%rows, %cols] : !tile.tensor<?x64xf32>[tensor<16x64xi32>, tensor<16x64xi32>] -> tensor<16x64xf32>
  %xv = tile.load %x[%rows, %cols] : !tile.tensor<?x64xbf16, mut>[tensor<16x64xi32>, tensor<16x64xi32>] -> tensor<16x64xbf16>
  %xf = arith.extf %xv : tensor<16x64xbf16> to tensor<16x64xf32>
  %y = arith.mulf %xf, %c : tensor<16x64xf32>
  %yb = arith.truncf %y : tensor<16x64xf32> to tensor<16x64xbf16>
  tile.store %x[%rows, %cols], %yb : !tile.tensor<?x64xbf16, mut>[tensor<16x64xi32>, tensor<16x64xi32>], tensor<16x64xbf16>
  return
}

// -----

// A loop-invariant bf16 tile (q, loaded before the loop, 8 a thread)
// times a tile computed in the loop (an f32 load's, 4 a thread): the
// product follows the loop's tile, so the conversion falls on q, outside
// the loop's computation (LICM hoists it), and not on every iteration's
// product. The row sums of the product are stored from the reduction's
// slice layout: no conversion (and no shared-memory round trip) before
// the store.
// CHECK-DAG: #[[$F32:.*]] = #tile.blocked<sizePerThread = [1, 4], threadsPerWarp = [2, 16], warpsPerCTA = [2, 1], order = [1, 0]>
// CHECK-DAG: #[[$ROWS:.*]] = #tile.slice<dim = 1, parent = #[[$F32]]>
// CHECK-LABEL: func.func @invariant_operand
// CHECK: scf.for
// CHECK: %[[G:.*]] = tile.load {{.*}} -> tensor<16x64xf32, #[[$F32]]>
// CHECK: %[[QF:.*]] = tile.convert_layout %{{.*}} : tensor<16x64xf32, #{{.*}}> -> tensor<16x64xf32, #[[$F32]]>
// CHECK: %[[P:.*]] = arith.mulf %[[QF]], %[[G]] : tensor<16x64xf32, #[[$F32]]>
// CHECK: %[[S:.*]] = tile.reduce sum %[[P]], 1 {{.*}} -> tensor<16xf32, #[[$ROWS]]>
// CHECK-NOT: tile.convert_layout
// CHECK: tile.store %{{.*}}, %[[S]] : {{.*}}, tensor<16xf32, #[[$ROWS]]>
func.func @invariant_operand(%qp: !tile.ptr<bf16>, %gp: !tile.ptr<f32>, %ap: !tile.ptr<f32>, %n: i32) attributes {tile.kernel, tile.warps = 2 : i32} {
  %q = tile.make_tensor %qp[%n] : !tile.ptr<bf16> -> !tile.tensor<?x64xbf16>
  %g = tile.make_tensor %gp[%n] : !tile.ptr<f32> -> !tile.tensor<?x64xf32>
  %a = tile.make_tensor %ap[%n] : !tile.ptr<f32> -> !tile.tensor<?x16xf32, mut>
  %r = tile.arange : tensor<16xi32>
  %re = tile.expand_dims %r, 1 : tensor<16xi32> -> tensor<16x1xi32>
  %rows = tile.broadcast %re : tensor<16x1xi32> -> tensor<16x64xi32>
  %i = tile.arange : tensor<64xi32>
  %ie = tile.expand_dims %i, 0 : tensor<64xi32> -> tensor<1x64xi32>
  %cols = tile.broadcast %ie : tensor<1x64xi32> -> tensor<16x64xi32>
  %qv = tile.load %q[%rows, %cols] : !tile.tensor<?x64xbf16>[tensor<16x64xi32>, tensor<16x64xi32>] -> tensor<16x64xbf16>
  %qf = arith.extf %qv : tensor<16x64xbf16> to tensor<16x64xf32>
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c16 = arith.constant 16 : i32
  scf.for %j = %c0 to %c16 step %c1 : i32 {
    %gv = tile.load %g[%rows, %cols] : !tile.tensor<?x64xf32>[tensor<16x64xi32>, tensor<16x64xi32>] -> tensor<16x64xf32>
    %p = arith.mulf %qf, %gv : tensor<16x64xf32>
    %s = tile.reduce sum %p, 1 : tensor<16x64xf32> -> tensor<16xf32>
    %col = tile.splat %j : tensor<16xi32>
    tile.store %a[%r, %col], %s : !tile.tensor<?x16xf32, mut>[tensor<16xi32>, tensor<16xi32>], tensor<16xf32>
  }
  return
}

// -----

// A row statistic of a dot's result (attention's lse) is stored from the
// dot's slice layout: the threads of a row's quad store the same value to
// one address, with no conversion (and no shared-memory round trip) first.
// CHECK-DAG: #[[$MMA8:.*]] = #tile.mma<warpsPerCTA = [4, 1]>
// CHECK-DAG: #[[$MROWS:.*]] = #tile.slice<dim = 1, parent = #[[$MMA8]]>
// CHECK-LABEL: func.func @dot_row_statistic
// CHECK: %[[D:.*]] = tile.dot {{.*}} -> tensor<64x64xf32, #[[$MMA8]]>
// CHECK: %[[M:.*]] = tile.reduce max %[[D]], 1 {{.*}} -> tensor<64xf32, #[[$MROWS]]>
// CHECK-NOT: tile.convert_layout
// CHECK: tile.store %{{.*}}, %[[M]] : {{.*}}, tensor<64xf32, #[[$MROWS]]>
func.func @dot_row_statistic(%a: tensor<64x64xbf16>, %b: tensor<64x64xbf16>, %lp: !tile.ptr<f32>, %n: i32) attributes {tile.kernel, tile.warps = 4 : i32} {
  %l = tile.make_tensor %lp[%n] : !tile.ptr<f32> -> !tile.tensor<?xf32, mut>
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %d = tile.dot %a, %b, %zero : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xf32>
  %m = tile.reduce max %d, 1 : tensor<64x64xf32> -> tensor<64xf32>
  %r = tile.arange : tensor<64xi32>
  tile.store %l[%r], %m : !tile.tensor<?xf32, mut>[tensor<64xi32>], tensor<64xf32>
  return
}
