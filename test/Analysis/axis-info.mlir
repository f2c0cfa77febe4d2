// RUN: tile-opt %s -tile-assign-layouts -tile-test-axis-info -verify-diagnostics
// What the axis analysis knows of each access's index tiles and mask, and
// the vector width it gives (written as in a .tile file):
//   rows = program_id(0) * 32 + arange(32); cols = arange(64)
//   load(x[rows, cols], mask = rows[:, None] < M)   x: f16[M, 64]   -> 8 (16 bytes)
//   store(y[rows, cols * 2], t)                     step 2          -> 1
//   store(y[rows, cols], t)                         y: f16[M, N], runtime N -> 1
//   load(x[rows, cols], mask = cols[None, :] < 48)  mask constant over 16 -> 8
//   store(y[rows, cols], u, mask = cols[None, :] < 36)  over 4 only -> 1

module attributes {tile.target = "sm_90a"} {
  func.func @copy(%arg0: !tile.ptr<f16> {tile.access = "read", tile.dims = ["M", 64], tile.name = "x"}, %arg1: !tile.ptr<f16> {tile.access = "write", tile.dims = ["M", "N"], tile.name = "y"}, %arg2: i32 {tile.size_var = "M"}, %arg3: i32 {tile.size_var = "N"}) attributes {tile.grid = ["cdiv(M, 32)", "1", "1"], tile.kernel, tile.requires = [], tile.template = {}, tile.warps = 4 : i32} {
    %0 = tile.make_tensor %arg0[%arg2] : !tile.ptr<f16> -> !tile.tensor<?x64xf16>
    %1 = tile.make_tensor %arg1[%arg2, %arg3] : !tile.ptr<f16> -> !tile.tensor<?x?xf16, mut>
    %2 = tile.program_id 0
    %c32_i32 = arith.constant 32 : i32
    %3 = arith.muli %2, %c32_i32 : i32
    %4 = tile.arange : tensor<32xi32>
    %5 = tile.splat %3 : tensor<32xi32>
    %6 = arith.addi %5, %4 : tensor<32xi32>
    %7 = tile.arange : tensor<64xi32>
    %8 = tile.expand_dims %6, 1 : tensor<32xi32> -> tensor<32x1xi32>
    %9 = tile.broadcast %8 : tensor<32x1xi32> -> tensor<32x64xi32>
    %10 = tile.expand_dims %7, 0 : tensor<64xi32> -> tensor<1x64xi32>
    %11 = tile.broadcast %10 : tensor<1x64xi32> -> tensor<32x64xi32>
    %12 = tile.expand_dims %6, 1 : tensor<32xi32> -> tensor<32x1xi32>
    %13 = tile.splat %arg2 : tensor<32x1xi32>
    %14 = arith.cmpi slt, %12, %13 : tensor<32x1xi32>
    %15 = tile.broadcast %14 : tensor<32x1xi1> -> tensor<32x64xi1>
    // expected-remark @+1 {{index 0: steps = [1, 0], divisor = 32; index 1: steps = [0, 1], divisor = 1073741824; mask constancy = [1, 1073741824]; vector width = 8}}
    %16 = tile.load %0[%9, %11] mask %15 : !tile.tensor<?x64xf16>[tensor<32x64xi32>, tensor<32x64xi32>] -> tensor<32x64xf16>
    %cst = arith.constant dense<2> : tensor<64xi32>
    %17 = arith.muli %7, %cst : tensor<64xi32>
    %18 = tile.expand_dims %6, 1 : tensor<32xi32> -> tensor<32x1xi32>
    %19 = tile.broadcast %18 : tensor<32x1xi32> -> tensor<32x64xi32>
    %20 = tile.expand_dims %17, 0 : tensor<64xi32> -> tensor<1x64xi32>
    %21 = tile.broadcast %20 : tensor<1x64xi32> -> tensor<32x64xi32>
    // expected-remark @+1 {{index 0: steps = [1, 0], divisor = 32; index 1: steps = [0, 2], divisor = 1073741824; vector width = 1}}
    tile.store %1[%19, %21], %16 : !tile.tensor<?x?xf16, mut>[tensor<32x64xi32>, tensor<32x64xi32>], tensor<32x64xf16>
    %22 = tile.expand_dims %6, 1 : tensor<32xi32> -> tensor<32x1xi32>
    %23 = tile.broadcast %22 : tensor<32x1xi32> -> tensor<32x64xi32>
    %24 = tile.expand_dims %7, 0 : tensor<64xi32> -> tensor<1x64xi32>
    %25 = tile.broadcast %24 : tensor<1x64xi32> -> tensor<32x64xi32>
    // expected-remark @+1 {{index 0: steps = [1, 0], divisor = 32; index 1: steps = [0, 1], divisor = 1073741824; vector width = 1}}
    tile.store %1[%23, %25], %16 : !tile.tensor<?x?xf16, mut>[tensor<32x64xi32>, tensor<32x64xi32>], tensor<32x64xf16>
    %26 = tile.expand_dims %6, 1 : tensor<32xi32> -> tensor<32x1xi32>
    %27 = tile.broadcast %26 : tensor<32x1xi32> -> tensor<32x64xi32>
    %28 = tile.expand_dims %7, 0 : tensor<64xi32> -> tensor<1x64xi32>
    %29 = tile.broadcast %28 : tensor<1x64xi32> -> tensor<32x64xi32>
    %30 = tile.expand_dims %7, 0 : tensor<64xi32> -> tensor<1x64xi32>
    %cst_0 = arith.constant dense<48> : tensor<1x64xi32>
    %31 = arith.cmpi slt, %30, %cst_0 : tensor<1x64xi32>
    %32 = tile.broadcast %31 : tensor<1x64xi1> -> tensor<32x64xi1>
    // expected-remark @+1 {{index 0: steps = [1, 0], divisor = 32; index 1: steps = [0, 1], divisor = 1073741824; mask constancy = [1073741824, 16]; vector width = 8}}
    %33 = tile.load %0[%27, %29] mask %32 : !tile.tensor<?x64xf16>[tensor<32x64xi32>, tensor<32x64xi32>] -> tensor<32x64xf16>
    %34 = tile.expand_dims %6, 1 : tensor<32xi32> -> tensor<32x1xi32>
    %35 = tile.broadcast %34 : tensor<32x1xi32> -> tensor<32x64xi32>
    %36 = tile.expand_dims %7, 0 : tensor<64xi32> -> tensor<1x64xi32>
    %37 = tile.broadcast %36 : tensor<1x64xi32> -> tensor<32x64xi32>
    %38 = tile.expand_dims %7, 0 : tensor<64xi32> -> tensor<1x64xi32>
    %cst_1 = arith.constant dense<36> : tensor<1x64xi32>
    %39 = arith.cmpi slt, %38, %cst_1 : tensor<1x64xi32>
    %40 = tile.broadcast %39 : tensor<1x64xi1> -> tensor<32x64xi1>
    // expected-remark @+1 {{index 0: steps = [1, 0], divisor = 32; index 1: steps = [0, 1], divisor = 1073741824; mask constancy = [1073741824, 4]; vector width = 1}}
    tile.store %1[%35, %37], %33 mask %40 : !tile.tensor<?x?xf16, mut>[tensor<32x64xi32>, tensor<32x64xi32>], tensor<32x64xf16>
    return
  }
}
