// RUN: tile-opt %s -tile-test-global-accesses -verify-diagnostics
// What each global access says of itself (GlobalAccessOpInterface), which
// MemoryOrder, PipelineLoops and AxisInfo act on: the kernel parameter its
// view is made from, its index and mask tiles, whether it writes, whether
// its copies read after it returns (a push), which accesses it commutes
// with (atomics of one kind: the two adds, not the max), and whether its
// lowering moves vectors (atomics: one element per instruction).

module attributes {tile.target = "sm_90a"} {
  func.func @accesses(%arg0: !tile.ptr<f32> {tile.access = "read", tile.dims = ["N"], tile.name = "x"}, %arg1: !tile.ptr<f32> {tile.access = "readwrite", tile.dims = ["N"], tile.name = "h"}, %arg2: i32 {tile.size_var = "N"}) attributes {tile.grid = ["1", "1", "1"], tile.kernel, tile.requires = [], tile.template = {}, tile.warps = 4 : i32} {
    %x = tile.make_tensor %arg0[%arg2] : !tile.ptr<f32> -> !tile.tensor<?xf32>
    %h = tile.make_tensor %arg1[%arg2] : !tile.ptr<f32> -> !tile.tensor<?xf32, mut>
    %i = tile.arange : tensor<128xi32>
    %n = tile.splat %arg2 : tensor<128xi32>
    %m = arith.cmpi slt, %i, %n : tensor<128xi32>
    // expected-remark @+1 {{reads 'x' through 1 index tile, masked, vectors}}
    %v = tile.load %x[%i] mask %m : !tile.tensor<?xf32>[tensor<128xi32>] -> tensor<128xf32>
    // expected-remark @+1 {{writes 'h' through 1 index tile, one element at a time}}
    tile.atomic_rmw add %h[%i], %v : !tile.tensor<?xf32, mut>[tensor<128xi32>], tensor<128xf32>
    // expected-remark @+1 {{writes 'h' through 1 index tile, masked, one element at a time}}
    tile.atomic_rmw max %h[%i], %v mask %m : !tile.tensor<?xf32, mut>[tensor<128xi32>], tensor<128xf32>
    // expected-remark @+1 {{writes 'h' through 1 index tile, commutes with access 1, one element at a time}}
    tile.atomic_rmw add %h[%i], %v : !tile.tensor<?xf32, mut>[tensor<128xi32>], tensor<128xf32>
    %p = tile.pipeline.create : !tile.pipeline<128xf32, stages = 2>
    // expected-remark @+1 {{reads 'x' through 1 index tile, reads after returning, vectors}}
    tile.pipeline.push %p, %x[%i] : !tile.pipeline<128xf32, stages = 2>, !tile.tensor<?xf32>[tensor<128xi32>]
    // expected-remark @+1 {{writes 'h' through 1 index tile, vectors}}
    tile.store %h[%i], %v : !tile.tensor<?xf32, mut>[tensor<128xi32>], tensor<128xf32>
    return
  }
}
