// Values of f16 and bf16 type are rounded (to nearest even) wherever they
// are produced: arithmetic computes in wider precision, then rounds.
// RUN: tile-interp %s --out out=%t.npy | FileCheck %s --check-prefix=OUT
// RUN: %python %S/Inputs/npy.py print %t.npy | FileCheck %s
// OUT: kernel rounding:, grid [1, 1, 1], interpreted

// CHECK: shape [4, 4]
// truncf f32 -> bf16 of 1 + 2^-8 (a tie: to even, 1), 1 + 3 * 2^-8 (a tie:
// to even, 1 + 2^-6), 1 + 2^-8 + 2^-20 (above the tie: 1 + 2^-7), 257
// (a tie between 256 and 258: 256)
// CHECK-NEXT: 1.0 1.015625 1.0078125 256.0
// bf16 addf 1 + d, d = v - 1 cast to bf16 first: 2^-8 + 2^-20 becomes
// 2^-8 (8 significant bits), so the third sum is a tie again: 1
// CHECK-NEXT: 1.0 1.015625 1.0 256.0
// f16: 1 + 2^-11 (tie: 1), 2049 (tie: 2048), 2051 (tie: 2052), 65520 (inf)
// CHECK-NEXT: 1.0 2048.0 2052.0 inf
// the bf16 sum of the bf16-rounded 0.1 (0.10009765625) four times, each
// step rounded to a multiple of the bf16 spacing (2^-10 below 0.25, 2^-9
// up to 0.5): 0.2001953125 exact, 0.30029296875 -> 154 * 2^-9 = 0.30078125,
// 0.40087890625 -> 205 * 2^-9 = 0.400390625
// CHECK-NEXT: 0.10009765625 0.2001953125 0.30078125 0.400390625

func.func @rounding(
    %op: !tile.ptr<f32> {tile.name = "out", tile.dims = [4, 4], tile.access = "write"})
    attributes {tile.kernel, tile.grid = ["1", "1", "1"]} {
  %o = tile.make_tensor %op[] : !tile.ptr<f32> -> !tile.tensor<4x4xf32, mut>
  %ar = tile.arange : tensor<4xi32>
  %v = arith.constant dense<[1.00390625, 1.01171875, 1.0039072036743164, 257.0]> : tensor<4xf32>
  %b = arith.truncf %v : tensor<4xf32> to tensor<4xbf16>
  %r0 = arith.extf %b : tensor<4xbf16> to tensor<4xf32>
  // 1 + (v - 1) in bf16, where v - 1 is exact in bf16.
  %d = arith.constant dense<[0.00390625, 0.01171875, 0.0039072036743164, 256.0]> : tensor<4xf32>
  %db = arith.truncf %d : tensor<4xf32> to tensor<4xbf16>
  %oneb = arith.constant dense<1.0> : tensor<4xbf16>
  %sb = arith.addf %oneb, %db : tensor<4xbf16>
  %r1 = arith.extf %sb : tensor<4xbf16> to tensor<4xf32>
  %h = arith.constant dense<[1.00048828125, 2049.0, 2051.0, 65520.0]> : tensor<4xf32>
  %hb = arith.truncf %h : tensor<4xf32> to tensor<4xf16>
  %r2 = arith.extf %hb : tensor<4xf16> to tensor<4xf32>
  // Running bf16 sums of 0.1.
  %tenth = arith.constant 0.1 : bf16
  %s1 = arith.addf %tenth, %tenth : bf16
  %s2 = arith.addf %s1, %tenth : bf16
  %s3 = arith.addf %s2, %tenth : bf16
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c2 = arith.constant 2 : i32
  %c3 = arith.constant 3 : i32
  %t = tile.splat %tenth : tensor<4xbf16>
  %t1 = tile.splat %s1 : tensor<4xbf16>
  %t2 = tile.splat %s2 : tensor<4xbf16>
  %t3 = tile.splat %s3 : tensor<4xbf16>
  %i0 = tile.splat %c0 : tensor<4xi32>
  %i1 = tile.splat %c1 : tensor<4xi32>
  %i2 = tile.splat %c2 : tensor<4xi32>
  %i3 = tile.splat %c3 : tensor<4xi32>
  %is0 = arith.cmpi eq, %ar, %i0 : tensor<4xi32>
  %is1 = arith.cmpi eq, %ar, %i1 : tensor<4xi32>
  %is2 = arith.cmpi eq, %ar, %i2 : tensor<4xi32>
  %a = arith.select %is2, %t2, %t3 : tensor<4xi1>, tensor<4xbf16>
  %bb = arith.select %is1, %t1, %a : tensor<4xi1>, tensor<4xbf16>
  %cc = arith.select %is0, %t, %bb : tensor<4xi1>, tensor<4xbf16>
  %r3 = arith.extf %cc : tensor<4xbf16> to tensor<4xf32>
  tile.store %o[%i0, %ar], %r0 : !tile.tensor<4x4xf32, mut>[tensor<4xi32>, tensor<4xi32>], tensor<4xf32>
  tile.store %o[%i1, %ar], %r1 : !tile.tensor<4x4xf32, mut>[tensor<4xi32>, tensor<4xi32>], tensor<4xf32>
  tile.store %o[%i2, %ar], %r2 : !tile.tensor<4x4xf32, mut>[tensor<4xi32>, tensor<4xi32>], tensor<4xf32>
  tile.store %o[%i3, %ar], %r3 : !tile.tensor<4x4xf32, mut>[tensor<4xi32>, tensor<4xi32>], tensor<4xf32>
  return
}
