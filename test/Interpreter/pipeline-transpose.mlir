// A transposed pop reads the pushed 2x4 block as its 4x2 transpose.
// RUN: %python %S/Inputs/npy.py make %t.x.npy '<f4' 2,4 'i + 1'
// RUN: tile-interp %s -k transpose --in x=%t.x.npy --out out=%t.out.npy
// RUN: %python %S/Inputs/npy.py print %t.out.npy | FileCheck %s
// CHECK: shape [4, 2]
// CHECK-NEXT: 1.0 5.0
// CHECK-NEXT: 2.0 6.0
// CHECK-NEXT: 3.0 7.0
// CHECK-NEXT: 4.0 8.0

func.func @transpose(
    %xp: !tile.ptr<f32> {tile.name = "x", tile.dims = [2, 4], tile.access = "read"},
    %op: !tile.ptr<f32> {tile.name = "out", tile.dims = [4, 2], tile.access = "write"})
    attributes {tile.kernel} {
  %x = tile.make_tensor %xp[] : !tile.ptr<f32> -> !tile.tensor<2x4xf32>
  %o = tile.make_tensor %op[] : !tile.ptr<f32> -> !tile.tensor<4x2xf32, mut>
  %p = tile.pipeline.create : !tile.pipeline<2x4xf32, stages = 1>
  %r = tile.arange : tensor<2xi32>
  %c = tile.arange : tensor<4xi32>
  %re = tile.expand_dims %r, 1 : tensor<2xi32> -> tensor<2x1xi32>
  %rb = tile.broadcast %re : tensor<2x1xi32> -> tensor<2x4xi32>
  %ce = tile.expand_dims %c, 0 : tensor<4xi32> -> tensor<1x4xi32>
  %cb = tile.broadcast %ce : tensor<1x4xi32> -> tensor<2x4xi32>
  tile.pipeline.push %p, %x[%rb, %cb] : !tile.pipeline<2x4xf32, stages = 1>, !tile.tensor<2x4xf32>[tensor<2x4xi32>, tensor<2x4xi32>]
  %t = tile.pipeline.pop %p transpose : !tile.pipeline<2x4xf32, stages = 1> -> tensor<4x2xf32>
  %tr = tile.trans %rb : tensor<2x4xi32> -> tensor<4x2xi32>
  %tc = tile.trans %cb : tensor<2x4xi32> -> tensor<4x2xi32>
  tile.store %o[%tc, %tr], %t : !tile.tensor<4x2xf32, mut>[tensor<4x2xi32>, tensor<4x2xi32>], tensor<4x2xf32>
  return
}
