// RUN: tile-opt %s -tile-assign-layouts -tile-test-pipeline-sync -verify-diagnostics
// Which pipeline pops and pushes synchronize: two rings popped then pushed
// in a loop body. The first pop of a block waits and meets at a barrier;
// the second is covered by it. Each push in the body follows its ring's one
// pop since that barrier; it finds c = 0 blocks of its ring unpopped, so it
// writes stage (pops + c) % 2, never the one just popped ((pops - 1) % 2,
// the same only when c = S - 1): no barrier. Before the loop, the second
// push is covered by the first's barrier.

module attributes {tile.target = "sm_90a"} {
  func.func @sum(%arg0: !tile.ptr<f32> {tile.access = "read", tile.dims = ["N", 64], tile.name = "x"}, %arg1: !tile.ptr<f32> {tile.access = "write", tile.dims = [64, 64], tile.name = "y"}, %arg2: i32 {tile.size_var = "N"}) attributes {tile.grid = ["1", "1", "1"], tile.kernel, tile.requires = [], tile.template = {}, tile.warps = 4 : i32} {
    %0 = tile.make_tensor %arg0[%arg2] : !tile.ptr<f32> -> !tile.tensor<?x64xf32>
    %1 = tile.make_tensor %arg1[] : !tile.ptr<f32> -> !tile.tensor<64x64xf32, mut>
    %2 = tile.pipeline.create : !tile.pipeline<64x64xf32, stages = 2>
    %3 = tile.pipeline.create : !tile.pipeline<64x64xf32, stages = 2>
    %4 = tile.arange : tensor<64xi32>
    %5 = tile.arange : tensor<64xi32>
    %6 = tile.expand_dims %4, 1 : tensor<64xi32> -> tensor<64x1xi32>
    %7 = tile.broadcast %6 : tensor<64x1xi32> -> tensor<64x64xi32>
    %8 = tile.expand_dims %5, 0 : tensor<64xi32> -> tensor<1x64xi32>
    %9 = tile.broadcast %8 : tensor<1x64xi32> -> tensor<64x64xi32>
    // expected-remark @+1 {{ring 0 push 0: sync = full}}
    tile.pipeline.push %2, %0[%7, %9] : !tile.pipeline<64x64xf32, stages = 2>, !tile.tensor<?x64xf32>[tensor<64x64xi32>, tensor<64x64xi32>]
    %10 = tile.arange : tensor<64xi32>
    %11 = tile.arange : tensor<64xi32>
    %12 = tile.expand_dims %10, 1 : tensor<64xi32> -> tensor<64x1xi32>
    %13 = tile.broadcast %12 : tensor<64x1xi32> -> tensor<64x64xi32>
    %14 = tile.expand_dims %11, 0 : tensor<64xi32> -> tensor<1x64xi32>
    %15 = tile.broadcast %14 : tensor<1x64xi32> -> tensor<64x64xi32>
    // expected-remark @+1 {{ring 1 push 0: sync = none}}
    tile.pipeline.push %3, %0[%13, %15] : !tile.pipeline<64x64xf32, stages = 2>, !tile.tensor<?x64xf32>[tensor<64x64xi32>, tensor<64x64xi32>]
    %cst = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
    %c0_i32 = arith.constant 0 : i32
    %c4_i32 = arith.constant 4 : i32
    %c1_i32 = arith.constant 1 : i32
    %16 = scf.for %arg3 = %c0_i32 to %c4_i32 step %c1_i32 iter_args(%arg4 = %cst) -> (tensor<64x64xf32>)  : i32 {
      // expected-remark @+1 {{ring 0 pop 0: sync = full, copy groups left in flight = 0}}
      %27 = tile.pipeline.pop %2 : !tile.pipeline<64x64xf32, stages = 2> -> tensor<64x64xf32>
      %28 = arith.addf %arg4, %27 : tensor<64x64xf32>
      // expected-remark @+1 {{ring 1 pop 0: sync = none}}
      %29 = tile.pipeline.pop %3 : !tile.pipeline<64x64xf32, stages = 2> -> tensor<64x64xf32>
      %30 = arith.addf %28, %29 : tensor<64x64xf32>
      %c1_i32_0 = arith.constant 1 : i32
      %31 = arith.addi %arg3, %c1_i32_0 : i32
      %c64_i32 = arith.constant 64 : i32
      %32 = arith.muli %31, %c64_i32 : i32
      %33 = tile.arange : tensor<64xi32>
      %34 = tile.splat %32 : tensor<64xi32>
      %35 = arith.addi %34, %33 : tensor<64xi32>
      %36 = tile.arange : tensor<64xi32>
      %37 = tile.expand_dims %35, 1 : tensor<64xi32> -> tensor<64x1xi32>
      %38 = tile.broadcast %37 : tensor<64x1xi32> -> tensor<64x64xi32>
      %39 = tile.expand_dims %36, 0 : tensor<64xi32> -> tensor<1x64xi32>
      %40 = tile.broadcast %39 : tensor<1x64xi32> -> tensor<64x64xi32>
      // expected-remark @+1 {{ring 0 push 1: sync = none}}
      tile.pipeline.push %2, %0[%38, %40] : !tile.pipeline<64x64xf32, stages = 2>, !tile.tensor<?x64xf32>[tensor<64x64xi32>, tensor<64x64xi32>]
      %c1_i32_1 = arith.constant 1 : i32
      %41 = arith.addi %arg3, %c1_i32_1 : i32
      %c64_i32_2 = arith.constant 64 : i32
      %42 = arith.muli %41, %c64_i32_2 : i32
      %43 = tile.arange : tensor<64xi32>
      %44 = tile.splat %42 : tensor<64xi32>
      %45 = arith.addi %44, %43 : tensor<64xi32>
      %46 = tile.arange : tensor<64xi32>
      %47 = tile.expand_dims %45, 1 : tensor<64xi32> -> tensor<64x1xi32>
      %48 = tile.broadcast %47 : tensor<64x1xi32> -> tensor<64x64xi32>
      %49 = tile.expand_dims %46, 0 : tensor<64xi32> -> tensor<1x64xi32>
      %50 = tile.broadcast %49 : tensor<1x64xi32> -> tensor<64x64xi32>
      // expected-remark @+1 {{ring 1 push 1: sync = none}}
      tile.pipeline.push %3, %0[%48, %50] : !tile.pipeline<64x64xf32, stages = 2>, !tile.tensor<?x64xf32>[tensor<64x64xi32>, tensor<64x64xi32>]
      scf.yield %30 : tensor<64x64xf32>
    }
    // expected-remark @+1 {{ring 0 pop 1: sync = full, copy groups left in flight = 0}}
    %17 = tile.pipeline.pop %2 : !tile.pipeline<64x64xf32, stages = 2> -> tensor<64x64xf32>
    %18 = arith.addf %16, %17 : tensor<64x64xf32>
    // expected-remark @+1 {{ring 1 pop 1: sync = none}}
    %19 = tile.pipeline.pop %3 : !tile.pipeline<64x64xf32, stages = 2> -> tensor<64x64xf32>
    %20 = arith.addf %18, %19 : tensor<64x64xf32>
    %21 = tile.arange : tensor<64xi32>
    %22 = tile.arange : tensor<64xi32>
    %23 = tile.expand_dims %21, 1 : tensor<64xi32> -> tensor<64x1xi32>
    %24 = tile.broadcast %23 : tensor<64x1xi32> -> tensor<64x64xi32>
    %25 = tile.expand_dims %22, 0 : tensor<64xi32> -> tensor<1x64xi32>
    %26 = tile.broadcast %25 : tensor<1x64xi32> -> tensor<64x64xi32>
    tile.store %1[%24, %26], %20 : !tile.tensor<64x64xf32, mut>[tensor<64x64xi32>, tensor<64x64xi32>], tensor<64x64xf32>
    return
  }
}
