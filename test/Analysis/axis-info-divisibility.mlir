// RUN: tile-opt %s -tile-assign-layouts -tile-test-axis-info -verify-diagnostics
// Divisibility that makes runtime-shaped accesses vector-wide: `requires
// K % 8 == 0` marks K (tile.divisibility), and a loop's induction variable
// is as divisible as its start and step. f16 rows of K elements:
//  - rows: k0 = 0, 64, ...: 8 elements (16 bytes) per access;
//    k1 = 4, 68, ...: only 4-aligned: 4 elements (8 bytes);
//  - unknown: nothing known of K, so rows may start anywhere: 1.

module attributes {tile.target = "sm_90a"} {
  func.func @rows(%arg0: !tile.ptr<f16> {tile.access = "read", tile.dims = ["M", "K"], tile.name = "x"}, %arg1: !tile.ptr<f16> {tile.access = "write", tile.dims = ["M", "K"], tile.name = "y"}, %arg2: i32 {tile.size_var = "M"}, %arg3: i32 {tile.divisibility = 8 : i64, tile.size_var = "K"}) attributes {tile.grid = ["cdiv(M, 16)", "1", "1"], tile.kernel, tile.requires = ["K % 8 == 0"], tile.template = {}, tile.warps = 4 : i32} {
    %0 = tile.make_tensor %arg0[%arg2, %arg3] : !tile.ptr<f16> -> !tile.tensor<?x?xf16>
    %1 = tile.make_tensor %arg1[%arg2, %arg3] : !tile.ptr<f16> -> !tile.tensor<?x?xf16, mut>
    %2 = tile.program_id 0
    %c16_i32 = arith.constant 16 : i32
    %3 = arith.muli %2, %c16_i32 : i32
    %4 = tile.arange : tensor<16xi32>
    %5 = tile.splat %3 : tensor<16xi32>
    %6 = arith.addi %5, %4 : tensor<16xi32>
    %c0_i32 = arith.constant 0 : i32
    %c64_i32 = arith.constant 64 : i32
    scf.for %arg4 = %c0_i32 to %arg3 step %c64_i32  : i32 {
      %7 = tile.arange : tensor<64xi32>
      %8 = tile.splat %arg4 : tensor<64xi32>
      %9 = arith.addi %8, %7 : tensor<64xi32>
      %10 = tile.expand_dims %6, 1 : tensor<16xi32> -> tensor<16x1xi32>
      %11 = tile.broadcast %10 : tensor<16x1xi32> -> tensor<16x64xi32>
      %12 = tile.expand_dims %9, 0 : tensor<64xi32> -> tensor<1x64xi32>
      %13 = tile.broadcast %12 : tensor<1x64xi32> -> tensor<16x64xi32>
      %14 = tile.expand_dims %6, 1 : tensor<16xi32> -> tensor<16x1xi32>
      %15 = tile.broadcast %14 : tensor<16x1xi32> -> tensor<16x64xi32>
      %16 = tile.expand_dims %9, 0 : tensor<64xi32> -> tensor<1x64xi32>
      %17 = tile.broadcast %16 : tensor<1x64xi32> -> tensor<16x64xi32>
      // expected-remark @+1 {{index 0: steps = [1, 0], divisor = 16; index 1: steps = [0, 1], divisor = 64; vector width = 8}}
      %18 = tile.load %0[%15, %17] : !tile.tensor<?x?xf16>[tensor<16x64xi32>, tensor<16x64xi32>] -> tensor<16x64xf16>
      // expected-remark @+1 {{index 0: steps = [1, 0], divisor = 16; index 1: steps = [0, 1], divisor = 64; vector width = 8}}
      tile.store %1[%11, %13], %18 : !tile.tensor<?x?xf16, mut>[tensor<16x64xi32>, tensor<16x64xi32>], tensor<16x64xf16>
    }
    %c4_i32 = arith.constant 4 : i32
    %c64_i32_0 = arith.constant 64 : i32
    scf.for %arg4 = %c4_i32 to %arg3 step %c64_i32_0  : i32 {
      %7 = tile.arange : tensor<64xi32>
      %8 = tile.splat %arg4 : tensor<64xi32>
      %9 = arith.addi %8, %7 : tensor<64xi32>
      %10 = tile.expand_dims %6, 1 : tensor<16xi32> -> tensor<16x1xi32>
      %11 = tile.broadcast %10 : tensor<16x1xi32> -> tensor<16x64xi32>
      %12 = tile.expand_dims %9, 0 : tensor<64xi32> -> tensor<1x64xi32>
      %13 = tile.broadcast %12 : tensor<1x64xi32> -> tensor<16x64xi32>
      %14 = tile.expand_dims %6, 1 : tensor<16xi32> -> tensor<16x1xi32>
      %15 = tile.broadcast %14 : tensor<16x1xi32> -> tensor<16x64xi32>
      %16 = tile.expand_dims %9, 0 : tensor<64xi32> -> tensor<1x64xi32>
      %17 = tile.broadcast %16 : tensor<1x64xi32> -> tensor<16x64xi32>
      // expected-remark @+1 {{index 0: steps = [1, 0], divisor = 16; index 1: steps = [0, 1], divisor = 4; vector width = 4}}
      %18 = tile.load %0[%15, %17] : !tile.tensor<?x?xf16>[tensor<16x64xi32>, tensor<16x64xi32>] -> tensor<16x64xf16>
      // expected-remark @+1 {{index 0: steps = [1, 0], divisor = 16; index 1: steps = [0, 1], divisor = 4; vector width = 4}}
      tile.store %1[%11, %13], %18 : !tile.tensor<?x?xf16, mut>[tensor<16x64xi32>, tensor<16x64xi32>], tensor<16x64xf16>
    }
    return
  }
  func.func @unknown(%arg0: !tile.ptr<f16> {tile.access = "read", tile.dims = ["M", "K"], tile.name = "x"}, %arg1: !tile.ptr<f16> {tile.access = "write", tile.dims = ["M", "K"], tile.name = "y"}, %arg2: i32 {tile.size_var = "M"}, %arg3: i32 {tile.size_var = "K"}) attributes {tile.grid = ["cdiv(M, 16)", "1", "1"], tile.kernel, tile.requires = [], tile.template = {}, tile.warps = 4 : i32} {
    %0 = tile.make_tensor %arg0[%arg2, %arg3] : !tile.ptr<f16> -> !tile.tensor<?x?xf16>
    %1 = tile.make_tensor %arg1[%arg2, %arg3] : !tile.ptr<f16> -> !tile.tensor<?x?xf16, mut>
    %2 = tile.program_id 0
    %c16_i32 = arith.constant 16 : i32
    %3 = arith.muli %2, %c16_i32 : i32
    %4 = tile.arange : tensor<16xi32>
    %5 = tile.splat %3 : tensor<16xi32>
    %6 = arith.addi %5, %4 : tensor<16xi32>
    %c0_i32 = arith.constant 0 : i32
    %c64_i32 = arith.constant 64 : i32
    scf.for %arg4 = %c0_i32 to %arg3 step %c64_i32  : i32 {
      %7 = tile.arange : tensor<64xi32>
      %8 = tile.splat %arg4 : tensor<64xi32>
      %9 = arith.addi %8, %7 : tensor<64xi32>
      %10 = tile.expand_dims %6, 1 : tensor<16xi32> -> tensor<16x1xi32>
      %11 = tile.broadcast %10 : tensor<16x1xi32> -> tensor<16x64xi32>
      %12 = tile.expand_dims %9, 0 : tensor<64xi32> -> tensor<1x64xi32>
      %13 = tile.broadcast %12 : tensor<1x64xi32> -> tensor<16x64xi32>
      %14 = tile.expand_dims %6, 1 : tensor<16xi32> -> tensor<16x1xi32>
      %15 = tile.broadcast %14 : tensor<16x1xi32> -> tensor<16x64xi32>
      %16 = tile.expand_dims %9, 0 : tensor<64xi32> -> tensor<1x64xi32>
      %17 = tile.broadcast %16 : tensor<1x64xi32> -> tensor<16x64xi32>
      // expected-remark @+1 {{index 0: steps = [1, 0], divisor = 16; index 1: steps = [0, 1], divisor = 64; vector width = 1}}
      %18 = tile.load %0[%15, %17] : !tile.tensor<?x?xf16>[tensor<16x64xi32>, tensor<16x64xi32>] -> tensor<16x64xf16>
      // expected-remark @+1 {{index 0: steps = [1, 0], divisor = 16; index 1: steps = [0, 1], divisor = 64; vector width = 1}}
      tile.store %1[%11, %13], %18 : !tile.tensor<?x?xf16, mut>[tensor<16x64xi32>, tensor<16x64xi32>], tensor<16x64xf16>
    }
    return
  }
}
