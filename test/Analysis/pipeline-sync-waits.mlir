// RUN: tile-opt %s -tile-pipeline-loops -tile-plan-dots -tile-assign-layouts -tile-test-pipeline-sync -verify-diagnostics
// How many copy groups a waiting pop lets stay in flight: every push
// commits one group, so a pop's block has landed once no more than the
// groups committed after its push are pending.
//  - three: two rings of 3 stages, each pushed twice ahead (P0 Q0 P1 Q1),
//    then per iteration pop P, pop Q, push P, push Q. P's block has 3
//    groups after it, Q's 2: the one wait for both leaves 2 in flight.
//  - conditional: the push under `if` may not happen, so nothing younger
//    is certain: wait for every group; and how many blocks it finds
//    unpopped is not known, so its barrier stays conditional on writing the
//    stage just popped. The loops' pushes find S - 2 unpopped and never do.
//  - matmul: `pipelined(4)` over two loads. The prologue pushes carry the
//    loads' locations (the remarks on the load lines are theirs); in the
//    loop A's block has 5 groups after it, B's 4: 4 stay in flight.

module attributes {tile.target = "sm_90a"} {
  func.func @three(%arg0: !tile.ptr<f32> {tile.access = "read", tile.dims = ["N", 64], tile.name = "x"}, %arg1: !tile.ptr<f32> {tile.access = "write", tile.dims = [64, 64], tile.name = "y"}, %arg2: i32 {tile.size_var = "N"}) attributes {tile.grid = ["1", "1", "1"], tile.kernel, tile.requires = [], tile.template = {}, tile.warps = 4 : i32} {
    %0 = tile.make_tensor %arg0[%arg2] : !tile.ptr<f32> -> !tile.tensor<?x64xf32>
    %1 = tile.make_tensor %arg1[] : !tile.ptr<f32> -> !tile.tensor<64x64xf32, mut>
    %2 = tile.pipeline.create : !tile.pipeline<64x64xf32, stages = 3>
    %3 = tile.pipeline.create : !tile.pipeline<64x64xf32, stages = 3>
    %4 = tile.arange : tensor<64xi32>
    %5 = tile.arange : tensor<64xi32>
    %6 = tile.expand_dims %4, 1 : tensor<64xi32> -> tensor<64x1xi32>
    %7 = tile.broadcast %6 : tensor<64x1xi32> -> tensor<64x64xi32>
    %8 = tile.expand_dims %5, 0 : tensor<64xi32> -> tensor<1x64xi32>
    %9 = tile.broadcast %8 : tensor<1x64xi32> -> tensor<64x64xi32>
    // expected-remark @+1 {{ring 0 push 0: sync = full}}
    tile.pipeline.push %2, %0[%7, %9] : !tile.pipeline<64x64xf32, stages = 3>, !tile.tensor<?x64xf32>[tensor<64x64xi32>, tensor<64x64xi32>]
    %10 = tile.arange : tensor<64xi32>
    %11 = tile.arange : tensor<64xi32>
    %12 = tile.expand_dims %10, 1 : tensor<64xi32> -> tensor<64x1xi32>
    %13 = tile.broadcast %12 : tensor<64x1xi32> -> tensor<64x64xi32>
    %14 = tile.expand_dims %11, 0 : tensor<64xi32> -> tensor<1x64xi32>
    %15 = tile.broadcast %14 : tensor<1x64xi32> -> tensor<64x64xi32>
    // expected-remark @+1 {{ring 1 push 0: sync = none}}
    tile.pipeline.push %3, %0[%13, %15] : !tile.pipeline<64x64xf32, stages = 3>, !tile.tensor<?x64xf32>[tensor<64x64xi32>, tensor<64x64xi32>]
    %16 = tile.arange : tensor<64xi32>
    %cst = arith.constant dense<64> : tensor<64xi32>
    %17 = arith.addi %cst, %16 : tensor<64xi32>
    %18 = tile.arange : tensor<64xi32>
    %19 = tile.expand_dims %17, 1 : tensor<64xi32> -> tensor<64x1xi32>
    %20 = tile.broadcast %19 : tensor<64x1xi32> -> tensor<64x64xi32>
    %21 = tile.expand_dims %18, 0 : tensor<64xi32> -> tensor<1x64xi32>
    %22 = tile.broadcast %21 : tensor<1x64xi32> -> tensor<64x64xi32>
    // expected-remark @+1 {{ring 0 push 1: sync = none}}
    tile.pipeline.push %2, %0[%20, %22] : !tile.pipeline<64x64xf32, stages = 3>, !tile.tensor<?x64xf32>[tensor<64x64xi32>, tensor<64x64xi32>]
    %23 = tile.arange : tensor<64xi32>
    %cst_0 = arith.constant dense<64> : tensor<64xi32>
    %24 = arith.addi %cst_0, %23 : tensor<64xi32>
    %25 = tile.arange : tensor<64xi32>
    %26 = tile.expand_dims %24, 1 : tensor<64xi32> -> tensor<64x1xi32>
    %27 = tile.broadcast %26 : tensor<64x1xi32> -> tensor<64x64xi32>
    %28 = tile.expand_dims %25, 0 : tensor<64xi32> -> tensor<1x64xi32>
    %29 = tile.broadcast %28 : tensor<1x64xi32> -> tensor<64x64xi32>
    // expected-remark @+1 {{ring 1 push 1: sync = none}}
    tile.pipeline.push %3, %0[%27, %29] : !tile.pipeline<64x64xf32, stages = 3>, !tile.tensor<?x64xf32>[tensor<64x64xi32>, tensor<64x64xi32>]
    %cst_1 = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
    %c0_i32 = arith.constant 0 : i32
    %c4_i32 = arith.constant 4 : i32
    %c1_i32 = arith.constant 1 : i32
    %30 = scf.for %arg3 = %c0_i32 to %c4_i32 step %c1_i32 iter_args(%arg4 = %cst_1) -> (tensor<64x64xf32>)  : i32 {
      // expected-remark @+1 {{ring 0 pop 0: sync = full, copy groups left in flight = 2}}
      %37 = tile.pipeline.pop %2 : !tile.pipeline<64x64xf32, stages = 3> -> tensor<64x64xf32>
      %38 = arith.addf %arg4, %37 : tensor<64x64xf32>
      // expected-remark @+1 {{ring 1 pop 0: sync = none}}
      %39 = tile.pipeline.pop %3 : !tile.pipeline<64x64xf32, stages = 3> -> tensor<64x64xf32>
      %40 = arith.addf %38, %39 : tensor<64x64xf32>
      %c2_i32 = arith.constant 2 : i32
      %41 = arith.addi %arg3, %c2_i32 : i32
      %c64_i32 = arith.constant 64 : i32
      %42 = arith.muli %41, %c64_i32 : i32
      %43 = tile.arange : tensor<64xi32>
      %44 = tile.splat %42 : tensor<64xi32>
      %45 = arith.addi %44, %43 : tensor<64xi32>
      %46 = tile.arange : tensor<64xi32>
      %47 = tile.expand_dims %45, 1 : tensor<64xi32> -> tensor<64x1xi32>
      %48 = tile.broadcast %47 : tensor<64x1xi32> -> tensor<64x64xi32>
      %49 = tile.expand_dims %46, 0 : tensor<64xi32> -> tensor<1x64xi32>
      %50 = tile.broadcast %49 : tensor<1x64xi32> -> tensor<64x64xi32>
      // expected-remark @+1 {{ring 0 push 2: sync = none}}
      tile.pipeline.push %2, %0[%48, %50] : !tile.pipeline<64x64xf32, stages = 3>, !tile.tensor<?x64xf32>[tensor<64x64xi32>, tensor<64x64xi32>]
      %c2_i32_2 = arith.constant 2 : i32
      %51 = arith.addi %arg3, %c2_i32_2 : i32
      %c64_i32_3 = arith.constant 64 : i32
      %52 = arith.muli %51, %c64_i32_3 : i32
      %53 = tile.arange : tensor<64xi32>
      %54 = tile.splat %52 : tensor<64xi32>
      %55 = arith.addi %54, %53 : tensor<64xi32>
      %56 = tile.arange : tensor<64xi32>
      %57 = tile.expand_dims %55, 1 : tensor<64xi32> -> tensor<64x1xi32>
      %58 = tile.broadcast %57 : tensor<64x1xi32> -> tensor<64x64xi32>
      %59 = tile.expand_dims %56, 0 : tensor<64xi32> -> tensor<1x64xi32>
      %60 = tile.broadcast %59 : tensor<1x64xi32> -> tensor<64x64xi32>
      // expected-remark @+1 {{ring 1 push 2: sync = none}}
      tile.pipeline.push %3, %0[%58, %60] : !tile.pipeline<64x64xf32, stages = 3>, !tile.tensor<?x64xf32>[tensor<64x64xi32>, tensor<64x64xi32>]
      scf.yield %40 : tensor<64x64xf32>
    }
    %31 = tile.arange : tensor<64xi32>
    %32 = tile.arange : tensor<64xi32>
    %33 = tile.expand_dims %31, 1 : tensor<64xi32> -> tensor<64x1xi32>
    %34 = tile.broadcast %33 : tensor<64x1xi32> -> tensor<64x64xi32>
    %35 = tile.expand_dims %32, 0 : tensor<64xi32> -> tensor<1x64xi32>
    %36 = tile.broadcast %35 : tensor<1x64xi32> -> tensor<64x64xi32>
    tile.store %1[%34, %36], %30 : !tile.tensor<64x64xf32, mut>[tensor<64x64xi32>, tensor<64x64xi32>], tensor<64x64xf32>
    return
  }
  func.func @conditional(%arg0: !tile.ptr<f32> {tile.access = "read", tile.dims = ["N", 64], tile.name = "x"}, %arg1: !tile.ptr<f32> {tile.access = "write", tile.dims = [64, 64], tile.name = "y"}, %arg2: i32 {tile.size_var = "N"}) attributes {tile.grid = ["1", "1", "1"], tile.kernel, tile.requires = [], tile.template = {}, tile.warps = 4 : i32} {
    %0 = tile.make_tensor %arg0[%arg2] : !tile.ptr<f32> -> !tile.tensor<?x64xf32>
    %1 = tile.make_tensor %arg1[] : !tile.ptr<f32> -> !tile.tensor<64x64xf32, mut>
    %2 = tile.pipeline.create : !tile.pipeline<64x64xf32, stages = 3>
    %3 = tile.arange : tensor<64xi32>
    %4 = tile.arange : tensor<64xi32>
    %5 = tile.expand_dims %3, 1 : tensor<64xi32> -> tensor<64x1xi32>
    %6 = tile.broadcast %5 : tensor<64x1xi32> -> tensor<64x64xi32>
    %7 = tile.expand_dims %4, 0 : tensor<64xi32> -> tensor<1x64xi32>
    %8 = tile.broadcast %7 : tensor<1x64xi32> -> tensor<64x64xi32>
    // expected-remark @+1 {{ring 2 push 0: sync = full}}
    tile.pipeline.push %2, %0[%6, %8] : !tile.pipeline<64x64xf32, stages = 3>, !tile.tensor<?x64xf32>[tensor<64x64xi32>, tensor<64x64xi32>]
    %9 = tile.arange : tensor<64xi32>
    %cst = arith.constant dense<64> : tensor<64xi32>
    %10 = arith.addi %cst, %9 : tensor<64xi32>
    %11 = tile.arange : tensor<64xi32>
    %12 = tile.expand_dims %10, 1 : tensor<64xi32> -> tensor<64x1xi32>
    %13 = tile.broadcast %12 : tensor<64x1xi32> -> tensor<64x64xi32>
    %14 = tile.expand_dims %11, 0 : tensor<64xi32> -> tensor<1x64xi32>
    %15 = tile.broadcast %14 : tensor<1x64xi32> -> tensor<64x64xi32>
    // expected-remark @+1 {{ring 2 push 1: sync = none}}
    tile.pipeline.push %2, %0[%13, %15] : !tile.pipeline<64x64xf32, stages = 3>, !tile.tensor<?x64xf32>[tensor<64x64xi32>, tensor<64x64xi32>]
    %cst_0 = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
    %c0_i32 = arith.constant 0 : i32
    %c4_i32 = arith.constant 4 : i32
    %c1_i32 = arith.constant 1 : i32
    %16 = scf.for %arg3 = %c0_i32 to %c4_i32 step %c1_i32 iter_args(%arg4 = %cst_0) -> (tensor<64x64xf32>)  : i32 {
      // expected-remark @+1 {{ring 2 pop 0: sync = full, copy groups left in flight = 0}}
      %23 = tile.pipeline.pop %2 : !tile.pipeline<64x64xf32, stages = 3> -> tensor<64x64xf32>
      %24 = arith.addf %arg4, %23 : tensor<64x64xf32>
      %c2_i32 = arith.constant 2 : i32
      %25 = arith.cmpi slt, %arg3, %c2_i32 : i32
      scf.if %25 {
        %c2_i32_1 = arith.constant 2 : i32
        %26 = arith.addi %arg3, %c2_i32_1 : i32
        %c64_i32 = arith.constant 64 : i32
        %27 = arith.muli %26, %c64_i32 : i32
        %28 = tile.arange : tensor<64xi32>
        %29 = tile.splat %27 : tensor<64xi32>
        %30 = arith.addi %29, %28 : tensor<64xi32>
        %31 = tile.arange : tensor<64xi32>
        %32 = tile.expand_dims %30, 1 : tensor<64xi32> -> tensor<64x1xi32>
        %33 = tile.broadcast %32 : tensor<64x1xi32> -> tensor<64x64xi32>
        %34 = tile.expand_dims %31, 0 : tensor<64xi32> -> tensor<1x64xi32>
        %35 = tile.broadcast %34 : tensor<1x64xi32> -> tensor<64x64xi32>
        // expected-remark @+1 {{ring 2 push 2: sync = if-same-stage}}
        tile.pipeline.push %2, %0[%33, %35] : !tile.pipeline<64x64xf32, stages = 3>, !tile.tensor<?x64xf32>[tensor<64x64xi32>, tensor<64x64xi32>]
      } else {
      }
      scf.yield %24 : tensor<64x64xf32>
    }
    %17 = tile.arange : tensor<64xi32>
    %18 = tile.arange : tensor<64xi32>
    %19 = tile.expand_dims %17, 1 : tensor<64xi32> -> tensor<64x1xi32>
    %20 = tile.broadcast %19 : tensor<64x1xi32> -> tensor<64x64xi32>
    %21 = tile.expand_dims %18, 0 : tensor<64xi32> -> tensor<1x64xi32>
    %22 = tile.broadcast %21 : tensor<1x64xi32> -> tensor<64x64xi32>
    tile.store %1[%20, %22], %16 : !tile.tensor<64x64xf32, mut>[tensor<64x64xi32>, tensor<64x64xi32>], tensor<64x64xf32>
    return
  }
  func.func @matmul(%arg0: !tile.ptr<bf16> {tile.access = "read", tile.dims = ["M", "K"], tile.name = "a"}, %arg1: !tile.ptr<bf16> {tile.access = "read", tile.dims = ["K", "N"], tile.name = "b"}, %arg2: !tile.ptr<f32> {tile.access = "write", tile.dims = ["M", "N"], tile.name = "c"}, %arg3: i32 {tile.size_var = "M"}, %arg4: i32 {tile.size_var = "K"}, %arg5: i32 {tile.size_var = "N"}) attributes {tile.grid = ["cdiv(M, 64)", "cdiv(N, 64)", "1"], tile.kernel, tile.requires = [], tile.template = {}, tile.warps = 4 : i32} {
    %0 = tile.make_tensor %arg0[%arg3, %arg4] : !tile.ptr<bf16> -> !tile.tensor<?x?xbf16>
    %1 = tile.make_tensor %arg1[%arg4, %arg5] : !tile.ptr<bf16> -> !tile.tensor<?x?xbf16>
    %2 = tile.make_tensor %arg2[%arg3, %arg5] : !tile.ptr<f32> -> !tile.tensor<?x?xf32, mut>
    %3 = tile.program_id 0
    %c64_i32 = arith.constant 64 : i32
    %4 = arith.muli %3, %c64_i32 : i32
    %5 = tile.arange : tensor<64xi32>
    %6 = tile.splat %4 : tensor<64xi32>
    %7 = arith.addi %6, %5 : tensor<64xi32>
    %8 = tile.program_id 1
    %c64_i32_0 = arith.constant 64 : i32
    %9 = arith.muli %8, %c64_i32_0 : i32
    %10 = tile.arange : tensor<64xi32>
    %11 = tile.splat %9 : tensor<64xi32>
    %12 = arith.addi %11, %10 : tensor<64xi32>
    %cst = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
    %c0_i32 = arith.constant 0 : i32
    %c32_i32 = arith.constant 32 : i32
    %13 = scf.for %arg6 = %c0_i32 to %arg4 step %c32_i32 iter_args(%arg7 = %cst) -> (tensor<64x64xf32>)  : i32 {
      %18 = tile.arange : tensor<32xi32>
      %19 = tile.splat %arg6 : tensor<32xi32>
      %20 = arith.addi %19, %18 : tensor<32xi32>
      %21 = tile.expand_dims %7, 1 : tensor<64xi32> -> tensor<64x1xi32>
      %22 = tile.broadcast %21 : tensor<64x1xi32> -> tensor<64x32xi32>
      %23 = tile.expand_dims %20, 0 : tensor<32xi32> -> tensor<1x32xi32>
      %24 = tile.broadcast %23 : tensor<1x32xi32> -> tensor<64x32xi32>
      // expected-remark @+5 {{ring 3 push 0: sync = full}}
      // expected-remark @+4 {{ring 3 push 1: sync = none}}
      // expected-remark @+3 {{ring 3 push 2: sync = none}}
      // expected-remark @+2 {{ring 3 pop 0: sync = full, copy groups left in flight = 4}}
      // expected-remark @+1 {{ring 3 push 3: sync = none}}
      %25 = tile.load %0[%22, %24] : !tile.tensor<?x?xbf16>[tensor<64x32xi32>, tensor<64x32xi32>] -> tensor<64x32xbf16>
      %26 = tile.expand_dims %20, 1 : tensor<32xi32> -> tensor<32x1xi32>
      %27 = tile.broadcast %26 : tensor<32x1xi32> -> tensor<32x64xi32>
      %28 = tile.expand_dims %12, 0 : tensor<64xi32> -> tensor<1x64xi32>
      %29 = tile.broadcast %28 : tensor<1x64xi32> -> tensor<32x64xi32>
      // expected-remark @+5 {{ring 4 push 0: sync = none}}
      // expected-remark @+4 {{ring 4 push 1: sync = none}}
      // expected-remark @+3 {{ring 4 push 2: sync = none}}
      // expected-remark @+2 {{ring 4 pop 0: sync = none}}
      // expected-remark @+1 {{ring 4 push 3: sync = none}}
      %30 = tile.load %1[%27, %29] : !tile.tensor<?x?xbf16>[tensor<32x64xi32>, tensor<32x64xi32>] -> tensor<32x64xbf16>
      %31 = tile.dot %25, %30, %arg7 : tensor<64x32xbf16>, tensor<32x64xbf16> -> tensor<64x64xf32>
      scf.yield %31 : tensor<64x64xf32>
    } {tile.pipeline_stages = 4 : i32}
    %14 = tile.expand_dims %7, 1 : tensor<64xi32> -> tensor<64x1xi32>
    %15 = tile.broadcast %14 : tensor<64x1xi32> -> tensor<64x64xi32>
    %16 = tile.expand_dims %12, 0 : tensor<64xi32> -> tensor<1x64xi32>
    %17 = tile.broadcast %16 : tensor<1x64xi32> -> tensor<64x64xi32>
    tile.store %2[%15, %17], %13 : !tile.tensor<?x?xf32, mut>[tensor<64x64xi32>, tensor<64x64xi32>], tensor<64x64xf32>
    return
  }
}
