// Pipelines are FIFOs of pushed blocks: a push copies the masked block (out
// of bounds gives `other`), a pop returns the oldest.
// RUN: %python %S/Inputs/npy.py make %t.x.npy '<f4' 10 'i + 1'
// RUN: tile-interp %s -k fifo --in x=%t.x.npy --out out=%t.out.npy | FileCheck %s --check-prefix=OUT
// RUN: %python %S/Inputs/npy.py print %t.out.npy | FileCheck %s
// OUT: kernel fifo: N=10, grid [1, 1, 1], interpreted
// CHECK: shape [4, 4]
// pushed x[0:4], x[4:8], x[8:12] (8..11 past N = 10: other -1), popped in order
// CHECK-NEXT: 1.0 2.0 3.0 4.0
// CHECK-NEXT: 5.0 6.0 7.0 8.0
// CHECK-NEXT: 9.0 10.0 -1.0 -1.0
// pushed after a pop with mask lanes < 2, default other 0
// CHECK-NEXT: 1.0 2.0 0.0 0.0

// RUN: not tile-interp %s -k empty --dims N=4 2>&1 | FileCheck %s --check-prefix=EMPTY
// EMPTY: error: {{.*}}pipelines.mlir:[[@LINE+49]]:{{[0-9]+}}: 'tile.pipeline.pop': pop with no push outstanding (program [0, 0, 0])
// RUN: not tile-interp %s -k overfull --dims N=4 2>&1 | FileCheck %s --check-prefix=FULL
// FULL: error: {{.*}}pipelines.mlir:{{[0-9]+}}:{{[0-9]+}}: 'tile.pipeline.push': a push with all 1 stages already outstanding

func.func @fifo(
    %xp: !tile.ptr<f32> {tile.name = "x", tile.dims = ["N"], tile.access = "read"},
    %op: !tile.ptr<f32> {tile.name = "out", tile.dims = [4, 4], tile.access = "write"},
    %n: i32 {tile.size_var = "N"})
    attributes {tile.kernel} {
  %x = tile.make_tensor %xp[%n] : !tile.ptr<f32> -> !tile.tensor<?xf32>
  %o = tile.make_tensor %op[] : !tile.ptr<f32> -> !tile.tensor<4x4xf32, mut>
  %p = tile.pipeline.create : !tile.pipeline<4xf32, stages = 3>
  %ar = tile.arange : tensor<4xi32>
  %four = arith.constant dense<4> : tensor<4xi32>
  %i1 = arith.addi %ar, %four : tensor<4xi32>
  %i2 = arith.addi %i1, %four : tensor<4xi32>
  %m1 = arith.constant dense<-1.0> : tensor<4xf32>
  tile.pipeline.push %p, %x[%ar] : !tile.pipeline<4xf32, stages = 3>, !tile.tensor<?xf32>[tensor<4xi32>]
  tile.pipeline.push %p, %x[%i1] : !tile.pipeline<4xf32, stages = 3>, !tile.tensor<?xf32>[tensor<4xi32>]
  tile.pipeline.push %p, %x[%i2] other(%m1 : tensor<4xf32>) : !tile.pipeline<4xf32, stages = 3>, !tile.tensor<?xf32>[tensor<4xi32>]
  %a = tile.pipeline.pop %p : !tile.pipeline<4xf32, stages = 3> -> tensor<4xf32>
  %two = arith.constant dense<2> : tensor<4xi32>
  %lt2 = arith.cmpi slt, %ar, %two : tensor<4xi32>
  tile.pipeline.push %p, %x[%ar] mask(%lt2 : tensor<4xi1>) : !tile.pipeline<4xf32, stages = 3>, !tile.tensor<?xf32>[tensor<4xi32>]
  %b = tile.pipeline.pop %p : !tile.pipeline<4xf32, stages = 3> -> tensor<4xf32>
  %c = tile.pipeline.pop %p : !tile.pipeline<4xf32, stages = 3> -> tensor<4xf32>
  %d = tile.pipeline.pop %p : !tile.pipeline<4xf32, stages = 3> -> tensor<4xf32>
  %r0 = arith.constant dense<0> : tensor<4xi32>
  %r1 = arith.constant dense<1> : tensor<4xi32>
  %r2 = arith.constant dense<2> : tensor<4xi32>
  %r3 = arith.constant dense<3> : tensor<4xi32>
  tile.store %o[%r0, %ar], %a : !tile.tensor<4x4xf32, mut>[tensor<4xi32>, tensor<4xi32>], tensor<4xf32>
  tile.store %o[%r1, %ar], %b : !tile.tensor<4x4xf32, mut>[tensor<4xi32>, tensor<4xi32>], tensor<4xf32>
  tile.store %o[%r2, %ar], %c : !tile.tensor<4x4xf32, mut>[tensor<4xi32>, tensor<4xi32>], tensor<4xf32>
  tile.store %o[%r3, %ar], %d : !tile.tensor<4x4xf32, mut>[tensor<4xi32>, tensor<4xi32>], tensor<4xf32>
  return
}

func.func @empty(
    %xp: !tile.ptr<f32> {tile.name = "x", tile.dims = ["N"], tile.access = "read"},
    %op: !tile.ptr<f32> {tile.name = "out", tile.dims = ["N"], tile.access = "write"},
    %n: i32 {tile.size_var = "N"})
    attributes {tile.kernel} {
  %x = tile.make_tensor %xp[%n] : !tile.ptr<f32> -> !tile.tensor<?xf32>
  %o = tile.make_tensor %op[%n] : !tile.ptr<f32> -> !tile.tensor<?xf32, mut>
  %p = tile.pipeline.create : !tile.pipeline<4xf32, stages = 2>
  %ar = tile.arange : tensor<4xi32>
  tile.pipeline.push %p, %x[%ar] : !tile.pipeline<4xf32, stages = 2>, !tile.tensor<?xf32>[tensor<4xi32>]
  %a = tile.pipeline.pop %p : !tile.pipeline<4xf32, stages = 2> -> tensor<4xf32>
  %b = tile.pipeline.pop %p : !tile.pipeline<4xf32, stages = 2> -> tensor<4xf32>
  tile.store %o[%ar], %b : !tile.tensor<?xf32, mut>[tensor<4xi32>], tensor<4xf32>
  return
}

func.func @overfull(
    %xp: !tile.ptr<f32> {tile.name = "x", tile.dims = ["N"], tile.access = "read"},
    %op: !tile.ptr<f32> {tile.name = "out", tile.dims = ["N"], tile.access = "write"},
    %n: i32 {tile.size_var = "N"})
    attributes {tile.kernel} {
  %x = tile.make_tensor %xp[%n] : !tile.ptr<f32> -> !tile.tensor<?xf32>
  %p = tile.pipeline.create : !tile.pipeline<4xf32, stages = 1>
  %ar = tile.arange : tensor<4xi32>
  tile.pipeline.push %p, %x[%ar] : !tile.pipeline<4xf32, stages = 1>, !tile.tensor<?xf32>[tensor<4xi32>]
  tile.pipeline.push %p, %x[%ar] : !tile.pipeline<4xf32, stages = 1>, !tile.tensor<?xf32>[tensor<4xi32>]
  return
}

// A push marked `inside` (loop versioning: its GPU copies skip their
// bounds checks) that reads outside its tensor where its mask allows.
// RUN: not tile-interp %s -k outside --dims N=6 2>&1 | FileCheck %s --check-prefix=OUTSIDE
// OUTSIDE: error: {{.*}}pipelines.mlir:[[@LINE+9]]:3: 'tile.pipeline.push': a push marked `inside` reads 2 elements outside the tensor (program [0, 0, 0])
// RUN: tile-interp %s -k outside --dims N=8 | FileCheck %s --check-prefix=INSIDE
// INSIDE: kernel outside: N=8, grid [1, 1, 1], interpreted
func.func @outside(
    %xp: !tile.ptr<f32> {tile.name = "x", tile.dims = ["N"], tile.access = "read"},
    %n: i32 {tile.size_var = "N"}) attributes {tile.kernel} {
  %x = tile.make_tensor %xp[%n] : !tile.ptr<f32> -> !tile.tensor<?xf32>
  %p = tile.pipeline.create : !tile.pipeline<8xf32, stages = 1>
  %ar = tile.arange : tensor<8xi32>
  tile.pipeline.push %p, %x[%ar] inside : !tile.pipeline<8xf32, stages = 1>, !tile.tensor<?xf32>[tensor<8xi32>]
  return
}
