// Out-of-bounds elements are masked: a load gives `other` (default 0), a
// store skips them, and an explicit mask combines by AND.

// A 2-D copy in 4x8 blocks of a 5x11 tensor (ragged in both dims) copies
// every element and writes nothing outside: compared with its own input.
// RUN: tile-interp %s -k copy2d --dims N=5,M=11 --dry-run --out x=%t.x.npy | FileCheck %s --check-prefix=DRY
// RUN: tile-interp %s -k copy2d --in x=%t.x.npy --ref y=%t.x.npy --check | FileCheck %s --check-prefix=COPY
// DRY: kernel copy2d: N=5 M=11, grid [2, 2, 1], interpreted
// DRY: dry run: all launch-time checks passed
// COPY: kernel copy2d: N=5 M=11, grid [2, 2, 1], interpreted
// COPY: check y: rel_l2 0.000e+00, max_abs 0.000e+00, tol 1.0e-05: PASS

// Loads at indices -1 and 5..6 of a 5-element tensor give `other`; an
// explicit mask (odd lanes) with other = 7.
// RUN: %python %S/Inputs/npy.py make %t.in.npy '<f4' 5 'i + 1'
// RUN: tile-interp %s -k pad --in x=%t.in.npy --out y=%t.y.npy --out z=%t.z.npy
// RUN: %python %S/Inputs/npy.py print %t.y.npy | FileCheck %s --check-prefix=PAD
// RUN: %python %S/Inputs/npy.py print %t.z.npy | FileCheck %s --check-prefix=ODD
// PAD: shape [8]
// PAD-NEXT: -1.5 1.0 2.0 3.0 4.0 5.0 -1.5 -1.5
// ODD: shape [5]
// ODD-NEXT: 7.0 2.0 7.0 4.0 7.0

// A store masked to lanes < 3 leaves elements 3 and 4 unwritten: reported.
// RUN: not tile-interp %s -k partial --dims N=5 2>&1 | FileCheck %s --check-prefix=UNWRITTEN
// UNWRITTEN: error: output 'y': 2 of 5 elements were not written (first at [3])

func.func @copy2d(
    %xp: !tile.ptr<f32> {tile.name = "x", tile.dims = ["N", "M"], tile.access = "read"},
    %yp: !tile.ptr<f32> {tile.name = "y", tile.dims = ["N", "M"], tile.access = "write"},
    %n: i32 {tile.size_var = "N"}, %m: i32 {tile.size_var = "M"})
    attributes {tile.kernel, tile.grid = ["cdiv(N, 4)", "cdiv(M, 8)", "1"]} {
  %x = tile.make_tensor %xp[%n, %m] : !tile.ptr<f32> -> !tile.tensor<?x?xf32>
  %y = tile.make_tensor %yp[%n, %m] : !tile.ptr<f32> -> !tile.tensor<?x?xf32, mut>
  %p0 = tile.program_id 0
  %p1 = tile.program_id 1
  %c4 = arith.constant 4 : i32
  %c8 = arith.constant 8 : i32
  %r0 = arith.muli %p0, %c4 : i32
  %c0 = arith.muli %p1, %c8 : i32
  %ar4 = tile.arange : tensor<4xi32>
  %ar8 = tile.arange : tensor<8xi32>
  %r0s = tile.splat %r0 : tensor<4xi32>
  %c0s = tile.splat %c0 : tensor<8xi32>
  %rows1 = arith.addi %ar4, %r0s : tensor<4xi32>
  %cols1 = arith.addi %ar8, %c0s : tensor<8xi32>
  %rows2 = tile.expand_dims %rows1, 1 : tensor<4xi32> -> tensor<4x1xi32>
  %cols2 = tile.expand_dims %cols1, 0 : tensor<8xi32> -> tensor<1x8xi32>
  %rows = tile.broadcast %rows2 : tensor<4x1xi32> -> tensor<4x8xi32>
  %cols = tile.broadcast %cols2 : tensor<1x8xi32> -> tensor<4x8xi32>
  %v = tile.load %x[%rows, %cols] : !tile.tensor<?x?xf32>[tensor<4x8xi32>, tensor<4x8xi32>] -> tensor<4x8xf32>
  tile.store %y[%rows, %cols], %v : !tile.tensor<?x?xf32, mut>[tensor<4x8xi32>, tensor<4x8xi32>], tensor<4x8xf32>
  return
}

func.func @pad(
    %xp: !tile.ptr<f32> {tile.name = "x", tile.dims = ["N"], tile.access = "read"},
    %yp: !tile.ptr<f32> {tile.name = "y", tile.dims = [8], tile.access = "write"},
    %zp: !tile.ptr<f32> {tile.name = "z", tile.dims = ["N"], tile.access = "write"},
    %n: i32 {tile.size_var = "N"})
    attributes {tile.kernel, tile.grid = ["1", "1", "1"]} {
  %x = tile.make_tensor %xp[%n] : !tile.ptr<f32> -> !tile.tensor<?xf32>
  %y = tile.make_tensor %yp[] : !tile.ptr<f32> -> !tile.tensor<8xf32, mut>
  %z = tile.make_tensor %zp[%n] : !tile.ptr<f32> -> !tile.tensor<?xf32, mut>
  %ar = tile.arange : tensor<8xi32>
  %one = arith.constant dense<1> : tensor<8xi32>
  %idx = arith.subi %ar, %one : tensor<8xi32>
  %true = arith.constant dense<true> : tensor<8xi1>
  %o = arith.constant dense<-1.5> : tensor<8xf32>
  %v = tile.load %x[%idx] mask %true other %o : !tile.tensor<?xf32>[tensor<8xi32>] -> tensor<8xf32>
  tile.store %y[%ar], %v : !tile.tensor<8xf32, mut>[tensor<8xi32>], tensor<8xf32>
  %odd = arith.andi %ar, %one : tensor<8xi32>
  %isodd = arith.cmpi eq, %odd, %one : tensor<8xi32>
  %seven = arith.constant dense<7.0> : tensor<8xf32>
  %w = tile.load %x[%ar] mask %isodd other %seven : !tile.tensor<?xf32>[tensor<8xi32>] -> tensor<8xf32>
  tile.store %z[%ar], %w : !tile.tensor<?xf32, mut>[tensor<8xi32>], tensor<8xf32>
  return
}

func.func @partial(
    %xp: !tile.ptr<f32> {tile.name = "x", tile.dims = ["N"], tile.access = "read"},
    %yp: !tile.ptr<f32> {tile.name = "y", tile.dims = ["N"], tile.access = "write"},
    %n: i32 {tile.size_var = "N"})
    attributes {tile.kernel, tile.grid = ["1", "1", "1"]} {
  %x = tile.make_tensor %xp[%n] : !tile.ptr<f32> -> !tile.tensor<?xf32>
  %y = tile.make_tensor %yp[%n] : !tile.ptr<f32> -> !tile.tensor<?xf32, mut>
  %ar = tile.arange : tensor<8xi32>
  %three = arith.constant dense<3> : tensor<8xi32>
  %lt = arith.cmpi slt, %ar, %three : tensor<8xi32>
  %v = tile.load %x[%ar] : !tile.tensor<?xf32>[tensor<8xi32>] -> tensor<8xf32>
  tile.store %y[%ar], %v mask %lt : !tile.tensor<?xf32, mut>[tensor<8xi32>], tensor<8xf32>
  return
}
