// RUN: tile-opt %s -canonicalize | FileCheck %s

// CHECK-DAG: #[[$ACC:.*]] = #tile.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
// CHECK-DAG: #[[$SLICE:.*]] = #tile.slice<dim = 1, parent = #[[$ACC]]>

// tile.dim folds to a constant for a static extent and to the bound operand
// of tile.make_tensor for a dynamic one.

// CHECK-LABEL: func.func @dim_folds
// CHECK-SAME: (%[[P:.*]]: !tile.ptr<f32>, %[[Z:.*]]: i32, %[[N:.*]]: i32)
func.func @dim_folds(%p: !tile.ptr<f32>, %z: i32, %n: i32) -> (i32, i32, i32) {
  %t = tile.make_tensor %p[%z, %n] : !tile.ptr<f32> -> !tile.tensor<?x8x?xf32>
  %d0 = tile.dim %t, 0 : !tile.tensor<?x8x?xf32>
  %d1 = tile.dim %t, 1 : !tile.tensor<?x8x?xf32>
  %d2 = tile.dim %t, 2 : !tile.tensor<?x8x?xf32>
  // CHECK: %[[C8:.*]] = arith.constant 8 : i32
  // CHECK: return %[[Z]], %[[C8]], %[[N]]
  return %d0, %d1, %d2 : i32, i32, i32
}

// CHECK-LABEL: func.func @dim_of_argument
// CHECK: tile.dim
func.func @dim_of_argument(%t: !tile.tensor<?xf32>) -> i32 {
  %d = tile.dim %t, 0 : !tile.tensor<?xf32>
  return %d : i32
}

// Pops are not merged or dropped even when they look alike: each one
// advances the ring.
// CHECK-LABEL: func.func @pops_stay
// CHECK-COUNT-2: tile.pipeline.pop
func.func @pops_stay() -> (tensor<16x16xf16>, tensor<16x16xf16>) {
  %p = tile.pipeline.create : !tile.pipeline<16x16xf16, stages = 2>
  %a = tile.pipeline.pop %p : !tile.pipeline<16x16xf16, stages = 2> -> tensor<16x16xf16>
  %b = tile.pipeline.pop %p : !tile.pipeline<16x16xf16, stages = 2> -> tensor<16x16xf16>
  return %a, %b : tensor<16x16xf16>, tensor<16x16xf16>
}

// Conversions: identity folds away, chains collapse, and cheap producers
// are rebuilt in the wanted layout.
#b = #tile.blocked<sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
#b2 = #tile.blocked<sizePerThread = [4, 1], threadsPerWarp = [8, 4], warpsPerCTA = [1, 4], order = [0, 1]>
#m = #tile.mma<warpsPerCTA = [4, 1]>
// CHECK-LABEL: func.func @conversions
// CHECK-SAME: (%[[X:.*]]: tensor<64x64xf32, #{{.*}}>, %[[S:.*]]: f32)
func.func @conversions(%x: tensor<64x64xf32, #b>, %s: f32)
    -> (tensor<64x64xf32, #b>, tensor<64x64xf32, #m>, tensor<64x64xf32, #m>,
        tensor<64x64xf32, #m>) {
  %same = tile.convert_layout %x : tensor<64x64xf32, #b> -> tensor<64x64xf32, #b>
  // CHECK-DAG: %[[C:.*]] = tile.convert_layout %[[X]] : tensor<64x64xf32, #{{.*}}> -> tensor<64x64xf32, #{{.*}}mma>
  %t = tile.convert_layout %x : tensor<64x64xf32, #b> -> tensor<64x64xf32, #b2>
  %chain = tile.convert_layout %t : tensor<64x64xf32, #b2> -> tensor<64x64xf32, #m>
  // CHECK-DAG: %[[SP:.*]] = tile.splat %[[S]] : tensor<64x64xf32, #{{.*}}mma>
  %splat = tile.splat %s : tensor<64x64xf32, #b>
  %ws = tile.convert_layout %splat : tensor<64x64xf32, #b> -> tensor<64x64xf32, #m>
  // CHECK-DAG: %[[CST:.*]] = arith.constant dense<1.000000e+00> : tensor<64x64xf32, #{{.*}}mma>
  %one = arith.constant dense<1.0> : tensor<64x64xf32, #b>
  %wc = tile.convert_layout %one : tensor<64x64xf32, #b> -> tensor<64x64xf32, #m>
  // CHECK: return %[[X]], %[[C]], %[[SP]], %[[CST]]
  return %same, %chain, %ws, %wc : tensor<64x64xf32, #b>, tensor<64x64xf32, #m>, tensor<64x64xf32, #m>, tensor<64x64xf32, #m>
}

// A conversion of index math moves up to the aranges and splats it came
// from, where it disappears: indices are built in the access's layout.
#row = #tile.blocked<sizePerThread = [1, 1], threadsPerWarp = [32, 1], warpsPerCTA = [4, 1], order = [1, 0]>
#acc = #tile.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
#vec = #tile.blocked<sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]>
// CHECK-LABEL: func.func @index_math
// CHECK-NOT: tile.convert_layout
// CHECK-DAG: %[[R:.*]] = tile.arange : tensor<32xi32, #[[$SLICE]]>
// CHECK-DAG: %[[S:.*]] = tile.splat %{{.*}} : tensor<32xi32, #[[$SLICE]]>
// CHECK: %[[A:.*]] = arith.addi %[[S]], %[[R]] : tensor<32xi32, #[[$SLICE]]>
// CHECK: %[[E:.*]] = tile.expand_dims %[[A]], 1 : {{.*}} -> tensor<32x1xi32, #[[$ACC]]>
// CHECK: %[[B:.*]] = tile.broadcast %[[E]] : tensor<32x1xi32, #[[$ACC]]> -> tensor<32x64xi32, #[[$ACC]]>
// CHECK: return %[[B]]
func.func @index_math(%n: i32) -> tensor<32x64xi32, #acc> {
  %r = tile.arange : tensor<32xi32, #vec>
  %s = tile.splat %n : tensor<32xi32, #vec>
  %a = arith.addi %s, %r : tensor<32xi32, #vec>
  %c = tile.convert_layout %a : tensor<32xi32, #vec> -> tensor<32xi32, #tile.slice<dim = 1, parent = #row>>
  %e = tile.expand_dims %c, 1 : tensor<32xi32, #tile.slice<dim = 1, parent = #row>> -> tensor<32x1xi32, #row>
  %b = tile.broadcast %e : tensor<32x1xi32, #row> -> tensor<32x64xi32, #row>
  %w = tile.convert_layout %b : tensor<32x64xi32, #row> -> tensor<32x64xi32, #acc>
  return %w : tensor<32x64xi32, #acc>
}

// Pops and transposes read shared memory: a conversion of their only use
// folds into them, and a transpose of a pop reads the stage transposed.
#kb = #tile.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
#mma2 = #tile.mma<warpsPerCTA = [4, 1]>
#opb = #tile.dot_operand<opIdx = 1, parent = #mma2>
// CHECK-LABEL: func.func @pop_and_trans
// CHECK: %[[KT:.*]] = tile.pipeline.pop %{{.*}} transpose : {{.*}} -> tensor<64x64xbf16, #[[OPB:[a-z0-9_]+]]>
// CHECK: %[[V:.*]] = tile.pipeline.pop %{{.*}} : {{.*}} -> tensor<64x64xbf16, #[[OPB]]>
// CHECK-NOT: tile.convert_layout
// CHECK-NOT: tile.trans
// CHECK: return %[[KT]], %[[V]]
func.func @pop_and_trans() -> (tensor<64x64xbf16, #opb>, tensor<64x64xbf16, #opb>) {
  %kp = tile.pipeline.create : !tile.pipeline<64x64xbf16, stages = 2>
  %vp = tile.pipeline.create : !tile.pipeline<64x64xbf16, stages = 2>
  %k = tile.pipeline.pop %kp : !tile.pipeline<64x64xbf16, stages = 2> -> tensor<64x64xbf16, #kb>
  %v = tile.pipeline.pop %vp : !tile.pipeline<64x64xbf16, stages = 2> -> tensor<64x64xbf16, #kb>
  %kt = tile.trans %k : tensor<64x64xbf16, #kb> -> tensor<64x64xbf16, #kb>
  %a = tile.convert_layout %kt : tensor<64x64xbf16, #kb> -> tensor<64x64xbf16, #opb>
  %b = tile.convert_layout %v : tensor<64x64xbf16, #kb> -> tensor<64x64xbf16, #opb>
  return %a, %b : tensor<64x64xbf16, #opb>, tensor<64x64xbf16, #opb>
}

// Index math with several uses is rebuilt for each conversion of it, in
// that conversion's layout: no index tile moves through shared memory.
// Index math with a memory source is not (the conversion would only move).
#i4 = #tile.blocked<sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]>
#i8 = #tile.blocked<sizePerThread = [8], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]>
// CHECK-LABEL: func.func @shared_index_math
// CHECK-SAME: -> (tensor<1024xi32, #[[L8:[a-z0-9_]+]]>, tensor<1024xi1, #[[L8]]>, tensor<1024xi32, #[[L4:[a-z0-9_]+]]>
// CHECK-DAG: %[[C4:.*]] = arith.addi %{{.*}}, %{{.*}} : tensor<1024xi32, #[[L4]]>
// CHECK-DAG: %[[R8:.*]] = tile.arange : tensor<1024xi32, #[[L8]]>
// CHECK-DAG: %[[C8:.*]] = arith.addi %{{.*}}, %[[R8]] : tensor<1024xi32, #[[L8]]>
// CHECK-DAG: %[[R8B:.*]] = tile.arange : tensor<1024xi32, #[[L8]]>
// CHECK-DAG: %[[C8B:.*]] = arith.addi %{{.*}}, %[[R8B]] : tensor<1024xi32, #[[L8]]>
// CHECK-DAG: %[[M8:.*]] = arith.cmpi slt, %[[C8B]], %{{.*}} : tensor<1024xi32, #[[L8]]>
// CHECK-DAG: %[[LD:.*]] = tile.load %{{.*}}[%[[C4]]] : {{.*}} -> tensor<1024xi32, #[[L4]]>
// CHECK-DAG: %[[G:.*]] = arith.addi %[[LD]], %[[C4]] : tensor<1024xi32, #[[L4]]>
// CHECK-DAG: %[[GC:.*]] = tile.convert_layout %[[G]] : {{.*}} -> tensor<1024xi32, #[[L8]]>
// CHECK: return %[[C8]], %[[M8]], %[[C4]], %[[GC]], %[[G]]
func.func @shared_index_math(%p: !tile.ptr<i32>, %c0: i32, %n: i32)
    -> (tensor<1024xi32, #i8>, tensor<1024xi1, #i8>, tensor<1024xi32, #i4>,
        tensor<1024xi32, #i8>, tensor<1024xi32, #i4>) {
  %t = tile.make_tensor %p[%n] : !tile.ptr<i32> -> !tile.tensor<?xi32>
  %r = tile.arange : tensor<1024xi32, #i4>
  %s = tile.splat %c0 : tensor<1024xi32, #i4>
  %cols = arith.addi %s, %r : tensor<1024xi32, #i4>
  %ns = tile.splat %n : tensor<1024xi32, #i4>
  %in = arith.cmpi slt, %cols, %ns : tensor<1024xi32, #i4>
  %c8 = tile.convert_layout %cols : tensor<1024xi32, #i4> -> tensor<1024xi32, #i8>
  %m8 = tile.convert_layout %in : tensor<1024xi1, #i4> -> tensor<1024xi1, #i8>
  %g = tile.load %t[%cols] : !tile.tensor<?xi32>[tensor<1024xi32, #i4>] -> tensor<1024xi32, #i4>
  %gathered = arith.addi %g, %cols : tensor<1024xi32, #i4>
  %g8 = tile.convert_layout %gathered : tensor<1024xi32, #i4> -> tensor<1024xi32, #i8>
  return %c8, %m8, %cols, %g8, %gathered : tensor<1024xi32, #i8>, tensor<1024xi1, #i8>, tensor<1024xi32, #i4>, tensor<1024xi32, #i8>, tensor<1024xi32, #i4>
}

// A load every user of which converts it to one blocked layout with at
// least as many consecutive elements a thread reads straight into that
// layout; into one with fewer (narrower vectors) it does not.
#f4 = #tile.blocked<sizePerThread = [1, 4], threadsPerWarp = [2, 16], warpsPerCTA = [4, 1], order = [1, 0]>
#f8 = #tile.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
// CHECK-LABEL: func.func @load_in_converted_layout
// CHECK-NOT: tile.convert_layout
// CHECK: %[[W:.*]] = tile.load %{{.*}}[%{{.*}}, %{{.*}}] mask %{{.*}} : {{.*}} -> tensor<16x64xf32, #[[$ACC]]>
// CHECK: %[[N:.*]] = tile.load %{{.*}}[%{{.*}}, %{{.*}}] : {{.*}} -> tensor<16x64xf32, #[[F4:[a-z0-9_]+]]>
// CHECK: %[[NC:.*]] = tile.convert_layout %[[N]] : tensor<16x64xf32, #[[F4]]> -> tensor<16x64xf32, #{{.*}}>
// CHECK: return %[[W]], %[[W]], %[[NC]]
#f1 = #tile.blocked<sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]>
func.func @load_in_converted_layout(%p: !tile.ptr<f32>, %n: i32)
    -> (tensor<16x64xf32, #f8>, tensor<16x64xf32, #f8>,
        tensor<16x64xf32, #f1>) {
  %t = tile.make_tensor %p[%n] : !tile.ptr<f32> -> !tile.tensor<?x64xf32>
  %r = tile.splat %n : tensor<16x64xi32, #f4>
  %c = tile.arange : tensor<64xi32, #tile.slice<dim = 0, parent = #f4>>
  %ce = tile.expand_dims %c, 0 : tensor<64xi32, #tile.slice<dim = 0, parent = #f4>> -> tensor<1x64xi32, #f4>
  %cb = tile.broadcast %ce : tensor<1x64xi32, #f4> -> tensor<16x64xi32, #f4>
  %m = arith.cmpi slt, %cb, %r : tensor<16x64xi32, #f4>
  %x = tile.load %t[%r, %cb] mask %m : !tile.tensor<?x64xf32>[tensor<16x64xi32, #f4>, tensor<16x64xi32, #f4>] -> tensor<16x64xf32, #f4>
  %a = tile.convert_layout %x : tensor<16x64xf32, #f4> -> tensor<16x64xf32, #f8>
  %b = tile.convert_layout %x : tensor<16x64xf32, #f4> -> tensor<16x64xf32, #f8>
  %y = tile.load %t[%r, %cb] : !tile.tensor<?x64xf32>[tensor<16x64xi32, #f4>, tensor<16x64xi32, #f4>] -> tensor<16x64xf32, #f4>
  %z = tile.convert_layout %y : tensor<16x64xf32, #f4> -> tensor<16x64xf32, #f1>
  return %a, %b, %z : tensor<16x64xf32, #f8>, tensor<16x64xf32, #f8>, tensor<16x64xf32, #f1>
}

// A row statistic loaded and scaled each iteration, then broadcast against
// a dot's result (attention's lse): the conversion crosses the scaling
// (float arithmetic whose conversion vanishes at its sources) and the load
// reads straight into the slice of the mma layout, 8 elements a thread,
// with no move through shared memory. A GEMM's bias of 256 columns (64 a
// thread in that slice) still loads once in its own layout and converts.
#mma8 = #tile.mma<warpsPerCTA = [8, 1]>
#v4 = #tile.blocked<sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [8], order = [0]>
// CHECK-LABEL: func.func @load_in_dot_slice
// CHECK-NOT: tile.convert_layout
// CHECK: %[[L:.*]] = tile.load %{{.*}}[%{{.*}}] : {{.*}} -> tensor<32xf32, #[[S:[a-z0-9_]+]]>
// CHECK: %[[M:.*]] = arith.mulf %[[L]], %{{.*}} : tensor<32xf32, #[[S]]>
// CHECK: %[[B:.*]] = tile.load %{{.*}}[%{{.*}}] : {{.*}} -> tensor<256xf32, #[[V4:[a-z0-9_]+]]>
// CHECK: %[[BC:.*]] = tile.convert_layout %[[B]] : tensor<256xf32, #[[V4]]> -> tensor<256xf32, #{{.*}}>
// CHECK: return %[[M]], %[[BC]]
func.func @load_in_dot_slice(%p: !tile.ptr<f32>, %n: i32, %m0: i32)
    -> (tensor<32xf32, #tile.slice<dim = 0, parent = #mma8>>,
        tensor<256xf32, #tile.slice<dim = 0, parent = #mma8>>) {
  %t = tile.make_tensor %p[%n] : !tile.ptr<f32> -> !tile.tensor<?xf32>
  %r = tile.arange : tensor<32xi32, #v4>
  %s = tile.splat %m0 : tensor<32xi32, #v4>
  %i = arith.addi %s, %r : tensor<32xi32, #v4>
  %x = tile.load %t[%i] : !tile.tensor<?xf32>[tensor<32xi32, #v4>] -> tensor<32xf32, #v4>
  %k = arith.constant dense<1.44269502> : tensor<32xf32, #v4>
  %y = arith.mulf %x, %k : tensor<32xf32, #v4>
  %c = tile.convert_layout %y : tensor<32xf32, #v4> -> tensor<32xf32, #tile.slice<dim = 0, parent = #mma8>>
  %rb = tile.arange : tensor<256xi32, #v4>
  %b = tile.load %t[%rb] : !tile.tensor<?xf32>[tensor<256xi32, #v4>] -> tensor<256xf32, #v4>
  %bc = tile.convert_layout %b : tensor<256xf32, #v4> -> tensor<256xf32, #tile.slice<dim = 0, parent = #mma8>>
  return %c, %bc : tensor<32xf32, #tile.slice<dim = 0, parent = #mma8>>, tensor<256xf32, #tile.slice<dim = 0, parent = #mma8>>
}
