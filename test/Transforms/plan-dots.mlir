// RUN: tile-opt %s -split-input-file -tile-plan-dots -verify-diagnostics | FileCheck %s --enable-var-scope

// A GEMM on sm_90a with both operands from rings: wgmma, both read in
// place as pushed (A K-major, B N-major: order [1, 0]), 8 warps along M.
// CHECK-DAG: #[[$ROWS:.*]] = #tile.shared<swizzle = 128, order = [1, 0]>
// CHECK-LABEL: func.func @gemm
// CHECK: %[[A:.*]] = tile.pipeline.pop {{.*}} -> tensor<128x64xbf16, #[[$ROWS]]>
// CHECK: %[[B:.*]] = tile.pipeline.pop {{.*}} -> tensor<64x128xbf16, #[[$ROWS]]>
// CHECK: tile.dot %[[A]], %[[B]], %{{.*}} {plan = #tile.dot_plan<wgmma, warps = [8, 1], a = stage, b = stage>}
func.func @gemm(%n: i32) -> tensor<128x128xf32> attributes {tile.kernel, tile.warps = 8 : i32} {
  %pa = tile.pipeline.create : !tile.pipeline<128x64xbf16, stages = 2>
  %pb = tile.pipeline.create : !tile.pipeline<64x128xbf16, stages = 2>
  %zero = arith.constant dense<0.0> : tensor<128x128xf32>
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (tensor<128x128xf32>) : i32 {
    %a = tile.pipeline.pop %pa : !tile.pipeline<128x64xbf16, stages = 2> -> tensor<128x64xbf16>
    %b = tile.pipeline.pop %pb : !tile.pipeline<64x128xbf16, stages = 2> -> tensor<64x128xbf16>
    %d = tile.dot %a, %b, %acc : tensor<128x64xbf16>, tensor<64x128xbf16> -> tensor<128x128xf32>
    scf.yield %d : tensor<128x128xf32>
  }
  return %r : tensor<128x128xf32>
}

// -----

// Attention on sm_90a: S = Q K^T reads K through a transpose, so B is
// K-major (order [0, 1] on the transpose, the pop as pushed); P, computed
// in the loop, is A from registers for P V, whose B (V) is N-major. The
// scores reach a reduction: rows stay in one warp (the warpgroup split is
// that anyway).
// CHECK-DAG: #[[$ROWS:.*]] = #tile.shared<swizzle = 128, order = [1, 0]>
// CHECK-DAG: #[[$COLS:.*]] = #tile.shared<swizzle = 128, order = [0, 1]>
// CHECK-LABEL: func.func @attention
// CHECK: %[[Q:.*]] = tile.pipeline.pop {{.*}} -> tensor<64x64xbf16, #[[$ROWS]]>
// CHECK: %[[K:.*]] = tile.pipeline.pop {{.*}} -> tensor<64x64xbf16, #[[$ROWS]]>
// CHECK: %[[V:.*]] = tile.pipeline.pop {{.*}} -> tensor<64x64xbf16, #[[$ROWS]]>
// CHECK: %[[KT:.*]] = tile.trans %[[K]] : tensor<64x64xbf16, #[[$ROWS]]> -> tensor<64x64xbf16, #[[$COLS]]>
// CHECK: tile.dot %[[Q]], %[[KT]], %{{.*}} {plan = #tile.dot_plan<wgmma, warps = [4, 1], a = stage, b = stage>}
// CHECK: %[[P:.*]] = arith.truncf
// CHECK: tile.dot %[[P]], %[[V]], %{{.*}} {plan = #tile.dot_plan<wgmma, warps = [4, 1], a = registers, b = stage>}
// CHECK-SAME: : tensor<64x64xbf16>, tensor<64x64xbf16, #[[$ROWS]]>
func.func @attention(%n: i32) -> tensor<64xf32> attributes {tile.kernel, tile.warps = 4 : i32} {
  %pq = tile.pipeline.create : !tile.pipeline<64x64xbf16, stages = 1>
  %pk = tile.pipeline.create : !tile.pipeline<64x64xbf16, stages = 2>
  %pv = tile.pipeline.create : !tile.pipeline<64x64xbf16, stages = 2>
  %q = tile.pipeline.pop %pq : !tile.pipeline<64x64xbf16, stages = 1> -> tensor<64x64xbf16>
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (tensor<64x64xf32>) : i32 {
    %k = tile.pipeline.pop %pk : !tile.pipeline<64x64xbf16, stages = 2> -> tensor<64x64xbf16>
    %v = tile.pipeline.pop %pv : !tile.pipeline<64x64xbf16, stages = 2> -> tensor<64x64xbf16>
    %kt = tile.trans %k : tensor<64x64xbf16> -> tensor<64x64xbf16>
    %s = tile.dot %q, %kt, %zero : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xf32>
    %p = arith.truncf %s : tensor<64x64xf32> to tensor<64x64xbf16>
    %o = tile.dot %p, %v, %acc : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xf32>
    scf.yield %o : tensor<64x64xf32>
  }
  %m = tile.reduce max %r, 1 : tensor<64x64xf32> -> tensor<64xf32>
  return %m : tensor<64xf32>
}

// -----

// B popped transposed: the pop itself holds [N, K] read K-major, its
// encoding order [0, 1].
// CHECK-DAG: #[[$COLS:.*]] = #tile.shared<swizzle = 128, order = [0, 1]>
// CHECK-LABEL: func.func @transposed_pop
// CHECK: %[[B:.*]] = tile.pipeline.pop %{{.*}} transpose : {{.*}} -> tensor<64x64xbf16, #[[$COLS]]>
// CHECK: tile.dot %{{.*}}, %[[B]], %{{.*}} {plan = #tile.dot_plan<wgmma, warps = [4, 1], a = stage, b = stage>}
func.func @transposed_pop(%n: i32) -> tensor<64x64xf32> attributes {tile.kernel, tile.warps = 4 : i32} {
  %pa = tile.pipeline.create : !tile.pipeline<64x64xbf16, stages = 2>
  %pb = tile.pipeline.create : !tile.pipeline<64x64xbf16, stages = 2>
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (tensor<64x64xf32>) : i32 {
    %a = tile.pipeline.pop %pa : !tile.pipeline<64x64xbf16, stages = 2> -> tensor<64x64xbf16>
    %b = tile.pipeline.pop %pb transpose : !tile.pipeline<64x64xbf16, stages = 2> -> tensor<64x64xbf16>
    %d = tile.dot %a, %b, %acc : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xf32>
    scf.yield %d : tensor<64x64xf32>
  }
  return %r : tensor<64x64xf32>
}

// -----

// One pop, two dots: the 64-row dot reads it in place as B; the 16-row
// dot cannot be a warpgroup dot (wgmma computes 64 rows per warpgroup), so
// it stays mma.sync and takes registers loaded from the stage.
// CHECK-DAG: #[[$ROWS:.*]] = #tile.shared<swizzle = 128, order = [1, 0]>
// CHECK-LABEL: func.func @two_readers
// CHECK: %[[K:.*]] = tile.pipeline.pop {{.*}} -> tensor<64x64xbf16, #[[$ROWS]]>
// CHECK: tile.dot %{{.*}}, %[[K]], %{{.*}} {plan = #tile.dot_plan<wgmma, warps = [4, 1], a = registers, b = stage>}
// CHECK: tile.dot %{{.*}}, %[[K]], %{{.*}} {plan = #tile.dot_plan<mma_sync, warps = [1, 4], a = registers, b = staged_copy>}
func.func @two_readers(%n: i32, %x: tensor<64x64xbf16>, %y: tensor<16x64xbf16>) -> (tensor<64x64xf32>, tensor<16x64xf32>) attributes {tile.kernel, tile.warps = 4 : i32} {
  %pk = tile.pipeline.create : !tile.pipeline<64x64xbf16, stages = 2>
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %small = arith.constant dense<0.0> : tensor<16x64xf32>
  %k = tile.pipeline.pop %pk : !tile.pipeline<64x64xbf16, stages = 2> -> tensor<64x64xbf16>
  %d = tile.dot %x, %k, %zero : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xf32>
  %e = tile.dot %y, %k, %small : tensor<16x64xbf16>, tensor<64x64xbf16> -> tensor<16x64xf32>
  return %d, %e : tensor<64x64xf32>, tensor<16x64xf32>
}

// -----

// sm_80 has no warpgroup dots: every dot is mma.sync from registers, and
// nothing stays in its stage.
module attributes {tile.target = "sm_80"} {
// CHECK-LABEL: func.func @gemm_sm80
// CHECK: tile.pipeline.pop {{.*}} -> tensor<128x64xbf16>
// CHECK: tile.pipeline.pop {{.*}} -> tensor<64x128xbf16>
// CHECK: tile.dot {{.*}} {plan = #tile.dot_plan<mma_sync, warps = [4, 2], a = registers, b = registers>}
func.func @gemm_sm80(%n: i32) -> tensor<128x128xf32> attributes {tile.kernel, tile.warps = 8 : i32} {
  %pa = tile.pipeline.create : !tile.pipeline<128x64xbf16, stages = 2>
  %pb = tile.pipeline.create : !tile.pipeline<64x128xbf16, stages = 2>
  %zero = arith.constant dense<0.0> : tensor<128x128xf32>
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (tensor<128x128xf32>) : i32 {
    %a = tile.pipeline.pop %pa : !tile.pipeline<128x64xbf16, stages = 2> -> tensor<128x64xbf16>
    %b = tile.pipeline.pop %pb : !tile.pipeline<64x128xbf16, stages = 2> -> tensor<64x128xbf16>
    %d = tile.dot %a, %b, %acc : tensor<128x64xbf16>, tensor<64x128xbf16> -> tensor<128x128xf32>
    scf.yield %d : tensor<128x128xf32>
  }
  return %r : tensor<128x128xf32>
}
}
