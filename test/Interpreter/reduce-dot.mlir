// tile.reduce along each axis and to a scalar, tile.trans, and tile.dot
// (f16 operands, f32 accumulation) against a float64 matmul of the inputs.
// RUN: %python %S/Inputs/npy.py make %t.x.npy '<i4' 4,8 'i'
// RUN: tile-interp %s -k reduce --in x=%t.x.npy --out out=%t.out.npy | FileCheck %s --check-prefix=OUT
// RUN: %python %S/Inputs/npy.py print %t.out.npy | FileCheck %s --check-prefix=RED
// OUT: kernel reduce:, grid [1, 1, 1], interpreted
// x[r, c] = 8r + c
// RED: shape [4, 8]
// sum over c: 64r + 28
// RED-NEXT: 28 92 156 220 0 0 0 0
// max over r: row 3
// RED-NEXT: 24 25 26 27 28 29 30 31
// min over c: 8r; then the sum of everything, 496, in lane 4
// RED-NEXT: 0 8 16 24 496 0 0 0
// trans: column 1 of x
// RED-NEXT: 1 9 17 25 0 0 0 0

// RUN: tile-interp %s -k matmul --dry-run --out a=%t.a.npy --out b=%t.b.npy --out c=%t.c.npy
// RUN: %python %S/Inputs/npy.py matmul %t.ref.npy %t.a.npy %t.b.npy %t.c.npy
// RUN: tile-interp %s -k matmul --ref d=%t.ref.npy --check --tol 1e-6 | FileCheck %s --check-prefix=DOT
// DOT: check d: rel_l2 {{.*}}, tol 1.0e-06: PASS

func.func @reduce(
    %xp: !tile.ptr<i32> {tile.name = "x", tile.dims = [4, 8], tile.access = "read"},
    %op: !tile.ptr<i32> {tile.name = "out", tile.dims = [4, 8], tile.access = "write"})
    attributes {tile.kernel} {
  %x = tile.make_tensor %xp[] : !tile.ptr<i32> -> !tile.tensor<4x8xi32>
  %o = tile.make_tensor %op[] : !tile.ptr<i32> -> !tile.tensor<4x8xi32, mut>
  %ar4 = tile.arange : tensor<4xi32>
  %ar8 = tile.arange : tensor<8xi32>
  %r2 = tile.expand_dims %ar4, 1 : tensor<4xi32> -> tensor<4x1xi32>
  %c2 = tile.expand_dims %ar8, 0 : tensor<8xi32> -> tensor<1x8xi32>
  %rows = tile.broadcast %r2 : tensor<4x1xi32> -> tensor<4x8xi32>
  %cols = tile.broadcast %c2 : tensor<1x8xi32> -> tensor<4x8xi32>
  %zero = arith.constant dense<0> : tensor<4x8xi32>
  tile.store %o[%rows, %cols], %zero : !tile.tensor<4x8xi32, mut>[tensor<4x8xi32>, tensor<4x8xi32>], tensor<4x8xi32>
  %v = tile.load %x[%rows, %cols] : !tile.tensor<4x8xi32>[tensor<4x8xi32>, tensor<4x8xi32>] -> tensor<4x8xi32>
  %s = tile.reduce sum %v, 1 : tensor<4x8xi32> -> tensor<4xi32>
  %m = tile.reduce max %v, 0 : tensor<4x8xi32> -> tensor<8xi32>
  %n = tile.reduce min %v, 1 : tensor<4x8xi32> -> tensor<4xi32>
  %total = tile.reduce sum %s, 0 : tensor<4xi32> -> i32
  %c0 = arith.constant dense<0> : tensor<4xi32>
  %c1 = arith.constant dense<1> : tensor<8xi32>
  %c2r = arith.constant dense<2> : tensor<4xi32>
  %c3 = arith.constant dense<3> : tensor<4xi32>
  %c4 = arith.constant dense<4> : tensor<1xi32>
  %c2s = arith.constant dense<2> : tensor<1xi32>
  tile.store %o[%c0, %ar4], %s : !tile.tensor<4x8xi32, mut>[tensor<4xi32>, tensor<4xi32>], tensor<4xi32>
  tile.store %o[%c1, %ar8], %m : !tile.tensor<4x8xi32, mut>[tensor<8xi32>, tensor<8xi32>], tensor<8xi32>
  tile.store %o[%c2r, %ar4], %n : !tile.tensor<4x8xi32, mut>[tensor<4xi32>, tensor<4xi32>], tensor<4xi32>
  %tt = tile.splat %total : tensor<1xi32>
  tile.store %o[%c2s, %c4], %tt : !tile.tensor<4x8xi32, mut>[tensor<1xi32>, tensor<1xi32>], tensor<1xi32>
  %t = tile.trans %v : tensor<4x8xi32> -> tensor<8x4xi32>
  %one = arith.constant dense<1> : tensor<4xi32>
  %three = arith.constant dense<3> : tensor<4xi32>
  %col1 = tile.load %x[%ar4, %one] : !tile.tensor<4x8xi32>[tensor<4xi32>, tensor<4xi32>] -> tensor<4xi32>
  %trow = tile.reduce max %t, 0 : tensor<8x4xi32> -> tensor<4xi32>
  // Row 1 of trans(x) is column 1 of x; pick it with a masked sum.
  %ar8b = tile.arange : tensor<8xi32>
  %sel2 = tile.expand_dims %ar8b, 1 : tensor<8xi32> -> tensor<8x1xi32>
  %selb = tile.broadcast %sel2 : tensor<8x1xi32> -> tensor<8x4xi32>
  %ones = arith.constant dense<1> : tensor<8x4xi32>
  %is1 = arith.cmpi eq, %selb, %ones : tensor<8x4xi32>
  %z84 = arith.constant dense<0> : tensor<8x4xi32>
  %picked = arith.select %is1, %t, %z84 : tensor<8x4xi1>, tensor<8x4xi32>
  %row1 = tile.reduce sum %picked, 0 : tensor<8x4xi32> -> tensor<4xi32>
  tile.store %o[%three, %ar4], %row1 : !tile.tensor<4x8xi32, mut>[tensor<4xi32>, tensor<4xi32>], tensor<4xi32>
  return
}

func.func @matmul(
    %ap: !tile.ptr<f16> {tile.name = "a", tile.dims = [16, 32], tile.access = "read"},
    %bp: !tile.ptr<f16> {tile.name = "b", tile.dims = [32, 16], tile.access = "read"},
    %cp: !tile.ptr<f32> {tile.name = "c", tile.dims = [16, 16], tile.access = "read"},
    %dp: !tile.ptr<f32> {tile.name = "d", tile.dims = [16, 16], tile.access = "write"})
    attributes {tile.kernel} {
  %a = tile.make_tensor %ap[] : !tile.ptr<f16> -> !tile.tensor<16x32xf16>
  %b = tile.make_tensor %bp[] : !tile.ptr<f16> -> !tile.tensor<32x16xf16>
  %c = tile.make_tensor %cp[] : !tile.ptr<f32> -> !tile.tensor<16x16xf32>
  %d = tile.make_tensor %dp[] : !tile.ptr<f32> -> !tile.tensor<16x16xf32, mut>
  %ar16 = tile.arange : tensor<16xi32>
  %ar32 = tile.arange : tensor<32xi32>
  %r16 = tile.expand_dims %ar16, 1 : tensor<16xi32> -> tensor<16x1xi32>
  %c16 = tile.expand_dims %ar16, 0 : tensor<16xi32> -> tensor<1x16xi32>
  %r32 = tile.expand_dims %ar32, 1 : tensor<32xi32> -> tensor<32x1xi32>
  %c32 = tile.expand_dims %ar32, 0 : tensor<32xi32> -> tensor<1x32xi32>
  %ai = tile.broadcast %r16 : tensor<16x1xi32> -> tensor<16x32xi32>
  %aj = tile.broadcast %c32 : tensor<1x32xi32> -> tensor<16x32xi32>
  %bi = tile.broadcast %r32 : tensor<32x1xi32> -> tensor<32x16xi32>
  %bj = tile.broadcast %c16 : tensor<1x16xi32> -> tensor<32x16xi32>
  %ci = tile.broadcast %r16 : tensor<16x1xi32> -> tensor<16x16xi32>
  %cj = tile.broadcast %c16 : tensor<1x16xi32> -> tensor<16x16xi32>
  %av = tile.load %a[%ai, %aj] : !tile.tensor<16x32xf16>[tensor<16x32xi32>, tensor<16x32xi32>] -> tensor<16x32xf16>
  %bv = tile.load %b[%bi, %bj] : !tile.tensor<32x16xf16>[tensor<32x16xi32>, tensor<32x16xi32>] -> tensor<32x16xf16>
  %cv = tile.load %c[%ci, %cj] : !tile.tensor<16x16xf32>[tensor<16x16xi32>, tensor<16x16xi32>] -> tensor<16x16xf32>
  %dv = tile.dot %av, %bv, %cv : tensor<16x32xf16>, tensor<32x16xf16> -> tensor<16x16xf32>
  tile.store %d[%ci, %cj], %dv : !tile.tensor<16x16xf32, mut>[tensor<16x16xi32>, tensor<16x16xi32>], tensor<16x16xf32>
  return
}
