// RUN: tile-opt %s -tile-assign-layouts -tile-test-shared-memory-plan -verify-diagnostics
// The shared-memory plan: rings in order of creation (3 x 64x64 bf16 =
// 24576 bytes, then 2 x 16x64 bf16 = 4096), then one scratch area as large
// as the largest user: a 16x64 bf16 transpose (2048); a column sum over
// rows spread across 4 warps needs 4 x 64 f32 partial sums (1024); the
// layout conversions that move a 64-element f32 row between threads, 256.
// A later pop keeps them all before the rings' last use. The 64x64 pops are
// negated in bf16 before they are widened, so they keep the push's layout
// (a pop that is only widened is read in the f32 layout, which would need
// no scratch to store the sums; test/Transforms/assign-layouts.mlir).

module attributes {tile.target = "sm_90a"} {
  // expected-remark @+1 {{shared bytes = 30720, scratch at 28672 (2048 bytes)}}
  func.func @plan(%arg0: !tile.ptr<bf16> {tile.access = "read", tile.dims = ["N", 64], tile.name = "x"}, %arg1: !tile.ptr<f32> {tile.access = "write", tile.dims = [64], tile.name = "y"}, %arg2: i32 {tile.size_var = "N"}) attributes {tile.grid = ["1", "1", "1"], tile.kernel, tile.requires = [], tile.template = {}, tile.warps = 4 : i32} {
    %0 = tile.make_tensor %arg0[%arg2] : !tile.ptr<bf16> -> !tile.tensor<?x64xbf16>
    %1 = tile.make_tensor %arg1[] : !tile.ptr<f32> -> !tile.tensor<64xf32, mut>
    // expected-remark @+1 {{ring at 0}}
    %2 = tile.pipeline.create : !tile.pipeline<64x64xbf16, stages = 3>
    // expected-remark @+1 {{ring at 24576}}
    %3 = tile.pipeline.create : !tile.pipeline<16x64xbf16, stages = 2>
    %4 = tile.arange : tensor<64xi32>
    %5 = tile.arange : tensor<64xi32>
    %6 = tile.expand_dims %4, 1 : tensor<64xi32> -> tensor<64x1xi32>
    %7 = tile.broadcast %6 : tensor<64x1xi32> -> tensor<64x64xi32>
    %8 = tile.expand_dims %5, 0 : tensor<64xi32> -> tensor<1x64xi32>
    %9 = tile.broadcast %8 : tensor<1x64xi32> -> tensor<64x64xi32>
    tile.pipeline.push %2, %0[%7, %9] : !tile.pipeline<64x64xbf16, stages = 3>, !tile.tensor<?x64xbf16>[tensor<64x64xi32>, tensor<64x64xi32>]
    %10 = tile.arange : tensor<16xi32>
    %11 = tile.arange : tensor<64xi32>
    %12 = tile.expand_dims %10, 1 : tensor<16xi32> -> tensor<16x1xi32>
    %13 = tile.broadcast %12 : tensor<16x1xi32> -> tensor<16x64xi32>
    %14 = tile.expand_dims %11, 0 : tensor<64xi32> -> tensor<1x64xi32>
    %15 = tile.broadcast %14 : tensor<1x64xi32> -> tensor<16x64xi32>
    tile.pipeline.push %3, %0[%13, %15] : !tile.pipeline<16x64xbf16, stages = 2>, !tile.tensor<?x64xbf16>[tensor<16x64xi32>, tensor<16x64xi32>]
    %16 = tile.pipeline.pop %2 : !tile.pipeline<64x64xbf16, stages = 3> -> tensor<64x64xbf16>
    %17 = tile.pipeline.pop %3 : !tile.pipeline<16x64xbf16, stages = 2> -> tensor<16x64xbf16>
    %n16 = arith.negf %16 : tensor<64x64xbf16>
    %18 = arith.extf %n16 : tensor<64x64xbf16> to tensor<64x64xf32>
    // expected-remark @+1 {{tile.reduce scratch = 1024}}
    %19 = tile.reduce sum %18, 0 : tensor<64x64xf32> -> tensor<64xf32>
    // expected-remark @+1 {{tile.trans scratch = 2048}}
    %20 = tile.trans %17 : tensor<16x64xbf16> -> tensor<64x16xbf16>
    %21 = arith.extf %20 : tensor<64x16xbf16> to tensor<64x16xf32>
    %22 = tile.reduce sum %21, 1 : tensor<64x16xf32> -> tensor<64xf32>
    // expected-remark @+1 {{tile.convert_layout scratch = 256}}
    %23 = arith.addf %19, %22 : tensor<64xf32>
    %24 = tile.arange : tensor<64xi32>
    // A reduction's result is stored from its slice layout: no conversion.
    tile.store %1[%24], %23 : !tile.tensor<64xf32, mut>[tensor<64xi32>], tensor<64xf32>
    // A ring used after them: their scratch cannot go over the rings.
    %25 = tile.pipeline.pop %2 : !tile.pipeline<64x64xbf16, stages = 3> -> tensor<64x64xbf16>
    return
  }

  // After the last use of every ring (an epilogue), scratch goes over the
  // rings: 16384 bytes of ring, the reduction's 1024 bytes at 0.
  // expected-remark @+1 {{shared bytes = 16384, scratch at 16384 (0 bytes)}}
  func.func @epilogue(%arg0: !tile.ptr<bf16> {tile.access = "read", tile.dims = ["N", 64], tile.name = "x"}, %arg1: !tile.ptr<f32> {tile.access = "write", tile.dims = [64], tile.name = "y"}, %arg2: i32 {tile.size_var = "N"}) attributes {tile.grid = ["1", "1", "1"], tile.kernel, tile.requires = [], tile.template = {}, tile.warps = 4 : i32} {
    %0 = tile.make_tensor %arg0[%arg2] : !tile.ptr<bf16> -> !tile.tensor<?x64xbf16>
    %1 = tile.make_tensor %arg1[] : !tile.ptr<f32> -> !tile.tensor<64xf32, mut>
    // expected-remark @+1 {{ring at 0}}
    %2 = tile.pipeline.create : !tile.pipeline<64x64xbf16, stages = 2>
    %4 = tile.arange : tensor<64xi32>
    %6 = tile.expand_dims %4, 1 : tensor<64xi32> -> tensor<64x1xi32>
    %7 = tile.broadcast %6 : tensor<64x1xi32> -> tensor<64x64xi32>
    %8 = tile.expand_dims %4, 0 : tensor<64xi32> -> tensor<1x64xi32>
    %9 = tile.broadcast %8 : tensor<1x64xi32> -> tensor<64x64xi32>
    tile.pipeline.push %2, %0[%7, %9] : !tile.pipeline<64x64xbf16, stages = 2>, !tile.tensor<?x64xbf16>[tensor<64x64xi32>, tensor<64x64xi32>]
    %16 = tile.pipeline.pop %2 : !tile.pipeline<64x64xbf16, stages = 2> -> tensor<64x64xbf16>
    %n16 = arith.negf %16 : tensor<64x64xbf16>
    %18 = arith.extf %n16 : tensor<64x64xbf16> to tensor<64x64xf32>
    // expected-remark @+1 {{tile.reduce scratch = 1024 over the rings}}
    %19 = tile.reduce sum %18, 0 : tensor<64x64xf32> -> tensor<64xf32>
    %20 = tile.reduce sum %18, 1 : tensor<64x64xf32> -> tensor<64xf32>
    // The sums along the other dimension convert into the first's slice.
    // expected-remark @+1 {{tile.convert_layout scratch = 256 over the rings}}
    %21 = arith.addf %19, %20 : tensor<64xf32>
    tile.store %1[%4], %21 : !tile.tensor<64xf32, mut>[tensor<64xi32>], tensor<64xf32>
    return
  }
}
