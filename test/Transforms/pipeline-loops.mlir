// RUN: tile-opt %s -tile-pipeline-loops | FileCheck %s
// The transformed kernel computes what the original does, on random inputs:
// RUN: tile-interp %s -k row_sums --dims N=40 --seed 7 --out out=%t.ref.npy
// RUN: tile-opt %s -tile-pipeline-loops -o %t.mlir
// RUN: tile-interp %t.mlir -k row_sums --dims N=40 --seed 7 --ref out=%t.ref.npy --check | FileCheck %s --check-prefix=SAME
// SAME: check out: rel_l2 0.000e+00, max_abs 0.000e+00, {{.*}} PASS

// A load in a pipelined(3) loop becomes a 3-stage ring: two pushes before
// the loop, then a pop and a push two iterations ahead (masked off past
// the end) in each iteration. The load that depends on a loop-carried
// value stays a load.
// CHECK-LABEL: func.func @row_sums
// CHECK: %[[RING:.*]] = tile.pipeline.create : !tile.pipeline<8x16xf32, stages = 3>
// CHECK: arith.cmpi slt, %{{.*}}, %[[UB:.*]] : i32
// CHECK: tile.pipeline.push %[[RING]], {{.*}} mask
// CHECK: arith.cmpi slt, %{{.*}}, %[[UB]] : i32
// CHECK: tile.pipeline.push %[[RING]], {{.*}} mask
// CHECK: scf.for %[[IV:.*]] = %{{.*}} to %[[UB]] step %{{.*}} iter_args
// CHECK: tile.pipeline.pop %[[RING]]
// CHECK: tile.pipeline.push %[[RING]], {{.*}} mask
// CHECK: tile.load
// CHECK-NOT: tile.pipeline
// CHECK: tile.pipeline_stages = 3 : i32
func.func @row_sums(
    %xp: !tile.ptr<f32> {tile.name = "x", tile.dims = ["N", 16], tile.access = "read"},
    %op: !tile.ptr<f32> {tile.name = "out", tile.dims = [8, 16], tile.access = "write"},
    %n: i32 {tile.size_var = "N"})
    attributes {tile.kernel, tile.grid = ["1", "1", "1"]} {
  %x = tile.make_tensor %xp[%n] : !tile.ptr<f32> -> !tile.tensor<?x16xf32>
  %o = tile.make_tensor %op[] : !tile.ptr<f32> -> !tile.tensor<8x16xf32, mut>
  %c0 = arith.constant 0 : i32
  %c8 = arith.constant 8 : i32
  %r = tile.arange : tensor<8xi32>
  %re = tile.expand_dims %r, 1 : tensor<8xi32> -> tensor<8x1xi32>
  %rb = tile.broadcast %re : tensor<8x1xi32> -> tensor<8x16xi32>
  %c = tile.arange : tensor<16xi32>
  %ce = tile.expand_dims %c, 0 : tensor<16xi32> -> tensor<1x16xi32>
  %cb = tile.broadcast %ce : tensor<1x16xi32> -> tensor<8x16xi32>
  %zero = arith.constant dense<0.0> : tensor<8x16xf32>
  %zi = arith.constant dense<0> : tensor<8x16xi32>
  %acc:2 = scf.for %i = %c0 to %n step %c8 iter_args(%a = %zero, %shift = %zi)
      -> (tensor<8x16xf32>, tensor<8x16xi32>) : i32 {
    %s = tile.splat %i : tensor<8x16xi32>
    %rows = arith.addi %s, %rb : tensor<8x16xi32>
    %blk = tile.load %x[%rows, %cb] : !tile.tensor<?x16xf32>[tensor<8x16xi32>, tensor<8x16xi32>] -> tensor<8x16xf32>
    %moved = arith.addi %rows, %shift : tensor<8x16xi32>
    %dep = tile.load %x[%moved, %cb] : !tile.tensor<?x16xf32>[tensor<8x16xi32>, tensor<8x16xi32>] -> tensor<8x16xf32>
    %t = arith.addf %a, %blk : tensor<8x16xf32>
    %u = arith.addf %t, %dep : tensor<8x16xf32>
    scf.yield %u, %shift : tensor<8x16xf32>, tensor<8x16xi32>
  } {tile.pipeline_stages = 3 : i32}
  tile.store %o[%rb, %cb], %acc#0 : !tile.tensor<8x16xf32, mut>[tensor<8x16xi32>, tensor<8x16xi32>], tensor<8x16xf32>
  return
}
