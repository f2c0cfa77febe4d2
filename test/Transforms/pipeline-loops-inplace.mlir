// RUN: tile-opt %s -tile-pipeline-loops | FileCheck %s
// Pipelined or not, the kernel computes the same (each step reads the block
// the step before stored):
// RUN: tile-interp %s -k prefix --dims N=1024 --seed 3 --out x=%t.ref.npy
// RUN: tile-opt %s -tile-pipeline-loops -o %t.mlir
// RUN: tile-interp %t.mlir -k prefix --dims N=1024 --seed 3 --ref x=%t.ref.npy --check | FileCheck %s --check-prefix=SAME
// SAME: check x: {{.*}} PASS

// A load from a tensor the loop stores to is not fetched ahead: the block
// would be read before the earlier iterations' stores into it. A load from
// a tensor the loop does not write still is.
// CHECK-LABEL: func.func @prefix
// CHECK: %[[RING:.*]] = tile.pipeline.create : !tile.pipeline<128xi32, stages = 2>
// CHECK-NOT: tile.pipeline.create
// CHECK: scf.for
// CHECK: tile.pipeline.pop %[[RING]]
// CHECK: tile.load %[[X:[0-9a-z_]+]][
// CHECK: tile.store %[[X]][
func.func @prefix(
    %xp: !tile.ptr<i32> {tile.name = "x", tile.dims = ["N"], tile.access = "readwrite"},
    %yp: !tile.ptr<i32> {tile.name = "y", tile.dims = ["N"], tile.access = "read"},
    %n: i32 {tile.size_var = "N"})
    attributes {tile.kernel, tile.grid = ["1", "1", "1"]} {
  %x = tile.make_tensor %xp[%n] : !tile.ptr<i32> -> !tile.tensor<?xi32, mut>
  %y = tile.make_tensor %yp[%n] : !tile.ptr<i32> -> !tile.tensor<?xi32>
  %c1 = arith.constant 1 : i32
  %c6 = arith.constant 6 : i32
  %c128 = arith.constant 128 : i32
  %r = tile.arange : tensor<128xi32>
  scf.for %s = %c1 to %c6 step %c1 : i32 {
    %base = arith.muli %s, %c128 : i32
    %prev = arith.subi %base, %c128 : i32
    %pb = tile.splat %prev : tensor<128xi32>
    %pi = arith.addi %pb, %r : tensor<128xi32>
    %bb = tile.splat %base : tensor<128xi32>
    %bi = arith.addi %bb, %r : tensor<128xi32>
    %add = tile.load %y[%bi] : !tile.tensor<?xi32>[tensor<128xi32>] -> tensor<128xi32>
    %t = tile.load %x[%pi] : !tile.tensor<?xi32, mut>[tensor<128xi32>] -> tensor<128xi32>
    %u = arith.addi %t, %add : tensor<128xi32>
    tile.store %x[%bi], %u : !tile.tensor<?xi32, mut>[tensor<128xi32>], tensor<128xi32>
  } {tile.pipeline_stages = 2 : i32}
  return
}
