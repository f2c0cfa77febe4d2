// RUN: tile-opt %s | tile-opt | FileCheck %s
// RUN: tile-opt %s --mlir-print-op-generic | tile-opt | FileCheck %s

// Round trip of every type and op of the tile dialect.

// Layout aliases print first.
// CHECK-DAG: #[[$BLOCKED:.*]] = #tile.blocked<sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
// CHECK-DAG: #[[$MMA:.*]] = #tile.mma<warpsPerCTA = [4, 1]>
// CHECK-DAG: #[[$OPA:.*]] = #tile.dot_operand<opIdx = 0, parent = #[[$MMA]]>
// CHECK-DAG: #[[$ROWS:.*]] = #tile.slice<dim = 1, parent = #[[$MMA]]>
// CHECK-DAG: #[[$SHARED:.*]] = #tile.shared<swizzle = 128, order = [1, 0]>
// CHECK-DAG: #[[$SHAREDT:.*]] = #tile.shared<swizzle = 128, order = [0, 1]>
// CHECK-DAG: #[[$SHARED64:.*]] = #tile.shared<swizzle = 64, order = [1, 0]>
// CHECK-DAG: #[[$SHARED32T:.*]] = #tile.shared<swizzle = 32, order = [0, 1]>

// CHECK-LABEL: func.func private @types
// CHECK-SAME: !tile.ptr<bf16>
// CHECK-SAME: !tile.tensor<?x?x128xbf16>
// CHECK-SAME: !tile.tensor<4x?xf32, mut>
// CHECK-SAME: !tile.pipeline<64x128xbf16, stages = 2>
// CHECK-SAME: !tile.ptr<i1>, !tile.ptr<i32>, !tile.ptr<i64>, !tile.ptr<f16>
func.func private @types(!tile.ptr<bf16>, !tile.tensor<?x?x128xbf16>,
                         !tile.tensor<4x?xf32, mut>,
                         !tile.pipeline<64x128xbf16, stages = 2>,
                         !tile.ptr<i1>, !tile.ptr<i32>, !tile.ptr<i64>,
                         !tile.ptr<f16>)

// CHECK-LABEL: func.func @program_ids
func.func @program_ids() -> (i32, i32) {
  // CHECK: %[[PID:.*]] = tile.program_id 2
  %pid = tile.program_id 2
  // CHECK: %[[NUM:.*]] = tile.num_programs 0
  %num = tile.num_programs 0
  // CHECK: return %[[PID]], %[[NUM]]
  return %pid, %num : i32, i32
}

// CHECK-LABEL: func.func @shapes
func.func @shapes(%x: f32, %v: tensor<64xf32>, %m: tensor<32x64xbf16>)
    -> (tensor<64xi32>, tensor<16x64xf32>, tensor<64x1xf32>,
        tensor<64x64xf32>, tensor<64x32xbf16>) {
  // CHECK: tile.arange : tensor<64xi32>
  %r = tile.arange : tensor<64xi32>
  // CHECK: tile.splat %{{.*}} : tensor<16x64xf32>
  %s = tile.splat %x : tensor<16x64xf32>
  // CHECK: %[[E:.*]] = tile.expand_dims %{{.*}}, 1 : tensor<64xf32> -> tensor<64x1xf32>
  %e = tile.expand_dims %v, 1 : tensor<64xf32> -> tensor<64x1xf32>
  // CHECK: tile.broadcast %[[E]] : tensor<64x1xf32> -> tensor<64x64xf32>
  %b = tile.broadcast %e : tensor<64x1xf32> -> tensor<64x64xf32>
  // CHECK: tile.trans %{{.*}} : tensor<32x64xbf16> -> tensor<64x32xbf16>
  %t = tile.trans %m : tensor<32x64xbf16> -> tensor<64x32xbf16>
  return %r, %s, %e, %b, %t : tensor<64xi32>, tensor<16x64xf32>,
      tensor<64x1xf32>, tensor<64x64xf32>, tensor<64x32xbf16>
}

// CHECK-LABEL: func.func @memory
func.func @memory(%qp: !tile.ptr<bf16>, %op: !tile.ptr<bf16>, %n: i32,
                  %i: tensor<32x64xi32>, %j: tensor<32x64xi32>,
                  %mask: tensor<32x64xi1>, %other: tensor<32x64xbf16>) -> i32 {
  // CHECK: %[[Q:.*]] = tile.make_tensor %{{.*}}[%{{.*}}] : !tile.ptr<bf16> -> !tile.tensor<?x64xbf16>
  %q = tile.make_tensor %qp[%n] : !tile.ptr<bf16> -> !tile.tensor<?x64xbf16>
  // CHECK: %[[O:.*]] = tile.make_tensor %{{.*}}[%{{.*}}] : !tile.ptr<bf16> -> !tile.tensor<?x64xbf16, mut>
  %o = tile.make_tensor %op[%n] : !tile.ptr<bf16> -> !tile.tensor<?x64xbf16, mut>
  // CHECK: tile.make_tensor %{{.*}}[%{{.*}}] strides[%[[S:.*]], %[[S]]] : !tile.ptr<bf16> -> !tile.tensor<?x64xbf16, mut, strided>
  %s = arith.constant 7 : i64
  %v = tile.make_tensor %op[%n] strides [%s, %s] : !tile.ptr<bf16> -> !tile.tensor<?x64xbf16, mut, strided>
  // CHECK: tile.dim %[[Q]], 0 : !tile.tensor<?x64xbf16>
  %d = tile.dim %q, 0 : !tile.tensor<?x64xbf16>
  // CHECK: %[[B:.*]] = tile.load %[[Q]][%{{.*}}, %{{.*}}] : !tile.tensor<?x64xbf16>[tensor<32x64xi32>, tensor<32x64xi32>] -> tensor<32x64xbf16>
  %b = tile.load %q[%i, %j] : !tile.tensor<?x64xbf16>[tensor<32x64xi32>, tensor<32x64xi32>] -> tensor<32x64xbf16>
  // CHECK: tile.load %[[Q]][%{{.*}}, %{{.*}}] mask %{{.*}} other %{{.*}} : !tile.tensor<?x64xbf16>[tensor<32x64xi32>, tensor<32x64xi32>] -> tensor<32x64xbf16>
  %c = tile.load %q[%i, %j] mask %mask other %other : !tile.tensor<?x64xbf16>[tensor<32x64xi32>, tensor<32x64xi32>] -> tensor<32x64xbf16>
  // CHECK: tile.store %[[O]][%{{.*}}, %{{.*}}], %[[B]] : !tile.tensor<?x64xbf16, mut>[tensor<32x64xi32>, tensor<32x64xi32>], tensor<32x64xbf16>
  tile.store %o[%i, %j], %b : !tile.tensor<?x64xbf16, mut>[tensor<32x64xi32>, tensor<32x64xi32>], tensor<32x64xbf16>
  // CHECK: tile.store %[[O]][%{{.*}}, %{{.*}}], %{{.*}} mask %{{.*}} : !tile.tensor<?x64xbf16, mut>
  tile.store %o[%i, %j], %c mask %mask : !tile.tensor<?x64xbf16, mut>[tensor<32x64xi32>, tensor<32x64xi32>], tensor<32x64xbf16>
  return %d : i32
}

// CHECK-LABEL: func.func @compute
func.func @compute(%a: tensor<64x32xf16>, %b: tensor<32x128xf16>,
                   %acc: tensor<64x128xf32>, %v: tensor<16xi32>)
    -> (tensor<64x128xf32>, tensor<64xf32>, tensor<128xf32>, i32) {
  // CHECK: tile.dot %{{.*}}, %{{.*}}, %{{.*}} : tensor<64x32xf16>, tensor<32x128xf16> -> tensor<64x128xf32>
  %d = tile.dot %a, %b, %acc : tensor<64x32xf16>, tensor<32x128xf16> -> tensor<64x128xf32>
  // CHECK: tile.reduce max %{{.*}}, 1 : tensor<64x128xf32> -> tensor<64xf32>
  %m = tile.reduce max %d, 1 : tensor<64x128xf32> -> tensor<64xf32>
  // CHECK: tile.reduce min %{{.*}}, 0 : tensor<64x128xf32> -> tensor<128xf32>
  %n = tile.reduce min %d, 0 : tensor<64x128xf32> -> tensor<128xf32>
  // CHECK: tile.reduce sum %{{.*}}, 0 : tensor<16xi32> -> i32
  %s = tile.reduce sum %v, 0 : tensor<16xi32> -> i32
  return %d, %m, %n, %s : tensor<64x128xf32>, tensor<64xf32>, tensor<128xf32>, i32
}

// CHECK-LABEL: func.func @pipelines
func.func @pipelines(%kp: !tile.ptr<bf16>, %n: i32, %i: tensor<64x128xi32>,
                     %j: tensor<64x128xi32>, %mask: tensor<64x128xi1>,
                     %other: tensor<64x128xbf16>) -> tensor<64x128xbf16> {
  %k = tile.make_tensor %kp[%n] : !tile.ptr<bf16> -> !tile.tensor<?x128xbf16>
  // CHECK: %[[P:.*]] = tile.pipeline.create : !tile.pipeline<64x128xbf16, stages = 3>
  %p = tile.pipeline.create : !tile.pipeline<64x128xbf16, stages = 3>
  // CHECK: tile.pipeline.push %[[P]], %{{.*}}[%{{.*}}, %{{.*}}] : !tile.pipeline<64x128xbf16, stages = 3>, !tile.tensor<?x128xbf16>[tensor<64x128xi32>, tensor<64x128xi32>]
  tile.pipeline.push %p, %k[%i, %j] : !tile.pipeline<64x128xbf16, stages = 3>, !tile.tensor<?x128xbf16>[tensor<64x128xi32>, tensor<64x128xi32>]
  // CHECK: tile.pipeline.push %[[P]], %{{.*}}[%{{.*}}, %{{.*}}] mask(%{{.*}} : tensor<64x128xi1>) other(%{{.*}} : tensor<64x128xbf16>) :
  tile.pipeline.push %p, %k[%i, %j] mask(%mask : tensor<64x128xi1>) other(%other : tensor<64x128xbf16>) : !tile.pipeline<64x128xbf16, stages = 3>, !tile.tensor<?x128xbf16>[tensor<64x128xi32>, tensor<64x128xi32>]
  // CHECK: tile.pipeline.pop %[[P]] : !tile.pipeline<64x128xbf16, stages = 3> -> tensor<64x128xbf16>
  %t = tile.pipeline.pop %p : !tile.pipeline<64x128xbf16, stages = 3> -> tensor<64x128xbf16>
  %u = tile.pipeline.pop %p : !tile.pipeline<64x128xbf16, stages = 3> -> tensor<64x128xbf16>
  %s = arith.addf %t, %u : tensor<64x128xbf16>
  // CHECK: tile.pipeline.pop %[[P]] transpose : !tile.pipeline<64x128xbf16, stages = 3> -> tensor<128x64xbf16>
  %w = tile.pipeline.pop %p transpose : !tile.pipeline<64x128xbf16, stages = 3> -> tensor<128x64xbf16>
  return %s : tensor<64x128xbf16>
}

// CHECK-LABEL: func.func @kernel_attributes
// CHECK-SAME: tile.access = "read", tile.dims = ["N", 64], tile.name = "q"
// CHECK-SAME: tile.size_var = "N"
// CHECK-SAME: tile.bytes = "4 * N", tile.flops = "2 * N"
// CHECK-SAME: tile.grid = ["cdiv(N, 64)", "1", "1"]
// CHECK-SAME: tile.kernel
// CHECK-SAME: tile.requires = ["N > 0"]
// CHECK-SAME: tile.template = {BLOCK = 64 : i64}
// CHECK-SAME: tile.warps = 8 : i32
func.func @kernel_attributes(
    %q: !tile.ptr<f32> {tile.name = "q", tile.dims = ["N", 64], tile.access = "read"},
    %n: i32 {tile.size_var = "N"})
    attributes {tile.kernel, tile.warps = 8 : i32,
                tile.grid = ["cdiv(N, 64)", "1", "1"], tile.requires = ["N > 0"],
                tile.flops = "2 * N", tile.bytes = "4 * N",
                tile.template = {BLOCK = 64 : i64}} {
  %c0 = arith.constant 0 : i32
  %c4 = arith.constant 4 : i32
  %c1 = arith.constant 1 : i32
  // CHECK: scf.for
  // CHECK: tile.pipeline_stages = 2 : i32
  scf.for %iv = %c0 to %c4 step %c1 : i32 {
  } {tile.pipeline_stages = 2 : i32}
  return
}

// Layout encodings and conversions between them.
// CHECK-LABEL: func.func @layouts
// CHECK-SAME: shared = #[[$SHARED]]
// CHECK: tile.convert_layout %{{.*}} : tensor<64x64xf32, #[[$BLOCKED]]> -> tensor<64x64xf32, #[[$MMA]]>
// CHECK: tile.convert_layout %{{.*}} : tensor<64x64xf16, #[[$BLOCKED]]> -> tensor<64x64xf16, #[[$OPA]]>
// CHECK: tile.reduce sum %{{.*}}, 1 : tensor<64x64xf32, #[[$MMA]]> -> tensor<64xf32, #[[$ROWS]]>
func.func @layouts(%x: tensor<64x64xf32, #tile.blocked<sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>>,
                   %h: tensor<64x64xf16, #tile.blocked<sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>>)
    -> (tensor<64xf32, #tile.slice<dim = 1, parent = #tile.mma<warpsPerCTA = [4, 1]>>>,
        tensor<64x64xf16, #tile.dot_operand<opIdx = 0, parent = #tile.mma<warpsPerCTA = [4, 1]>>>)
    attributes {shared = #tile.shared<swizzle = 128, order = [1, 0]>} {
  %m = tile.convert_layout %x : tensor<64x64xf32, #tile.blocked<sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>> -> tensor<64x64xf32, #tile.mma<warpsPerCTA = [4, 1]>>
  %a = tile.convert_layout %h : tensor<64x64xf16, #tile.blocked<sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>> -> tensor<64x64xf16, #tile.dot_operand<opIdx = 0, parent = #tile.mma<warpsPerCTA = [4, 1]>>>
  %r = tile.reduce sum %m, 1 : tensor<64x64xf32, #tile.mma<warpsPerCTA = [4, 1]>> -> tensor<64xf32, #tile.slice<dim = 1, parent = #tile.mma<warpsPerCTA = [4, 1]>>>
  return %r, %a : tensor<64xf32, #tile.slice<dim = 1, parent = #tile.mma<warpsPerCTA = [4, 1]>>>, tensor<64x64xf16, #tile.dot_operand<opIdx = 0, parent = #tile.mma<warpsPerCTA = [4, 1]>>>
}

// CHECK-LABEL: func.func @tile_ops
// CHECK: tile.permute %{{.*}}, [2, 0, 1] : tensor<4x8x16xf32> -> tensor<16x4x8xf32>
// CHECK: tile.reshape %{{.*}} : tensor<4x8x16xf32> -> tensor<32x16xf32>
// CHECK: tile.cumsum %{{.*}}, 1 : tensor<32x16xf32>
// CHECK: tile.dot %{{.*}}, %{{.*}}, %{{.*}} : tensor<32x16xf32>, tensor<16x16xf32> -> tensor<32x16xf32>
// CHECK: tile.dot %{{.*}}, %{{.*}}, %{{.*}} ieee : tensor<32x16xf32>, tensor<16x16xf32> -> tensor<32x16xf32>
func.func @tile_ops(%x: tensor<4x8x16xf32>, %b: tensor<16x16xf32>)
    -> (tensor<16x4x8xf32>, tensor<32x16xf32>, tensor<32x16xf32>) {
  %p = tile.permute %x, [2, 0, 1] : tensor<4x8x16xf32> -> tensor<16x4x8xf32>
  %r = tile.reshape %x : tensor<4x8x16xf32> -> tensor<32x16xf32>
  %c = tile.cumsum %r, 1 : tensor<32x16xf32>
  %d = tile.dot %r, %b, %c : tensor<32x16xf32>, tensor<16x16xf32> -> tensor<32x16xf32>
  %e = tile.dot %r, %b, %d ieee : tensor<32x16xf32>, tensor<16x16xf32> -> tensor<32x16xf32>
  return %p, %c, %e : tensor<16x4x8xf32>, tensor<32x16xf32>, tensor<32x16xf32>
}

// The dot plan and the two halves of a warpgroup dot.
// CHECK-LABEL: func.func @warpgroup_dot
// CHECK: tile.dot %{{.*}}, %{{.*}}, %{{.*}} {plan = #tile.dot_plan<wgmma, warps = [4, 1], a = stage, b = stage>} : tensor<64x64xbf16, #[[$SHARED]]>, tensor<64x64xbf16, #[[$SHAREDT]]> -> tensor<64x64xf32, #[[$MMA]]>
// CHECK: tile.dot %{{.*}}, %{{.*}}, %{{.*}} {plan = #tile.dot_plan<mma_sync, warps = [4, 1], a = registers, b = staged_copy>} : tensor<64x64xbf16, #[[$OPA]]>
// CHECK: %[[D:.*]], %[[T:.*]] = tile.dot_issue %{{.*}}, %{{.*}}, %{{.*}} : tensor<64x64xbf16, #[[$SHARED]]>, tensor<64x64xbf16, #[[$SHAREDT]]> -> tensor<64x64xf32, #[[$MMA]]>
// CHECK: %[[W:.*]] = tile.dot_wait %[[D]] after %[[T]] pending = 1 : tensor<64x64xf32, #[[$MMA]]>
// CHECK: tile.dot_wait %[[W]] pending = 0 : tensor<64x64xf32, #[[$MMA]]>
func.func @warpgroup_dot(%a: tensor<64x64xbf16, #tile.shared<swizzle = 128, order = [1, 0]>>,
                         %b: tensor<64x64xbf16, #tile.shared<swizzle = 128, order = [0, 1]>>,
                         %ra: tensor<64x64xbf16, #tile.dot_operand<opIdx = 0, parent = #tile.mma<warpsPerCTA = [4, 1]>>>,
                         %rb: tensor<64x64xbf16, #tile.dot_operand<opIdx = 1, parent = #tile.mma<warpsPerCTA = [4, 1]>>>,
                         %c: tensor<64x64xf32, #tile.mma<warpsPerCTA = [4, 1]>>) {
  %0 = tile.dot %a, %b, %c {plan = #tile.dot_plan<wgmma, warps = [4, 1], a = stage, b = stage>} : tensor<64x64xbf16, #tile.shared<swizzle = 128, order = [1, 0]>>, tensor<64x64xbf16, #tile.shared<swizzle = 128, order = [0, 1]>> -> tensor<64x64xf32, #tile.mma<warpsPerCTA = [4, 1]>>
  %1 = tile.dot %ra, %rb, %c {plan = #tile.dot_plan<mma_sync, warps = [4, 1], a = registers, b = staged_copy>} : tensor<64x64xbf16, #tile.dot_operand<opIdx = 0, parent = #tile.mma<warpsPerCTA = [4, 1]>>>, tensor<64x64xbf16, #tile.dot_operand<opIdx = 1, parent = #tile.mma<warpsPerCTA = [4, 1]>>> -> tensor<64x64xf32, #tile.mma<warpsPerCTA = [4, 1]>>
  %d, %t = tile.dot_issue %a, %b, %c : tensor<64x64xbf16, #tile.shared<swizzle = 128, order = [1, 0]>>, tensor<64x64xbf16, #tile.shared<swizzle = 128, order = [0, 1]>> -> tensor<64x64xf32, #tile.mma<warpsPerCTA = [4, 1]>>
  %w = tile.dot_wait %d after %t pending = 1 : tensor<64x64xf32, #tile.mma<warpsPerCTA = [4, 1]>>
  %last = tile.dot_wait %w pending = 0 : tensor<64x64xf32, #tile.mma<warpsPerCTA = [4, 1]>>
  return
}

// A register tile written where wgmma reads it, rows or columns contiguous.
// CHECK-LABEL: func.func @to_shared
// CHECK: tile.to_shared %{{.*}} : tensor<64x64xbf16, #[[$BLOCKED]]> -> tensor<64x64xbf16, #[[$SHARED]]>
// CHECK: tile.to_shared %{{.*}} : tensor<64x64xbf16, #[[$MMA]]> -> tensor<64x64xbf16, #[[$SHAREDT]]>
func.func @to_shared(%x: tensor<64x64xbf16, #tile.blocked<sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>>,
                     %y: tensor<64x64xbf16, #tile.mma<warpsPerCTA = [4, 1]>>) {
  %0 = tile.to_shared %x : tensor<64x64xbf16, #tile.blocked<sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>> -> tensor<64x64xbf16, #tile.shared<swizzle = 128, order = [1, 0]>>
  %1 = tile.to_shared %y : tensor<64x64xbf16, #tile.mma<warpsPerCTA = [4, 1]>> -> tensor<64x64xbf16, #tile.shared<swizzle = 128, order = [0, 1]>>
  return
}

// Rows of 64 and 32 bytes take the 64- and 32-byte swizzles: a [64, 32]
// bf16 stage as pushed, and a [32, 16] one read transposed (its stored rows
// are the stage's, 32 bytes).
// CHECK-LABEL: func.func @narrow_swizzles
// CHECK: tile.pipeline.pop %{{.*}} : !tile.pipeline<64x32xbf16, stages = 2> -> tensor<64x32xbf16, #[[$SHARED64]]>
// CHECK: tile.pipeline.pop %{{.*}} transpose : !tile.pipeline<32x16xbf16, stages = 2> -> tensor<16x32xbf16, #[[$SHARED32T]]>
func.func @narrow_swizzles(%p: !tile.pipeline<64x32xbf16, stages = 2>,
                           %q: !tile.pipeline<32x16xbf16, stages = 2>) {
  %v = tile.pipeline.pop %p : !tile.pipeline<64x32xbf16, stages = 2> -> tensor<64x32xbf16, #tile.shared<swizzle = 64, order = [1, 0]>>
  %k = tile.pipeline.pop %q transpose : !tile.pipeline<32x16xbf16, stages = 2> -> tensor<16x32xbf16, #tile.shared<swizzle = 32, order = [0, 1]>>
  return
}
