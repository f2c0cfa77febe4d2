// Integer and float arithmetic, comparisons, selects, casts and math on
// tiles, with expected values worked out by hand from x = [-3, ..., 4].
// RUN: tile-interp %s --out ints=%t.ints.npy --out floats=%t.floats.npy | FileCheck %s --check-prefix=OUT
// RUN: %python %S/Inputs/npy.py print %t.ints.npy | FileCheck %s --check-prefix=INT
// RUN: %python %S/Inputs/npy.py print %t.floats.npy | FileCheck %s --check-prefix=FLT
// OUT: kernel elementwise:, grid [1, 1, 1], interpreted

// INT: shape [12, 8]
// divsi x / 2 truncates toward zero
// INT-NEXT: -1 -1 0 0 0 1 1 2
// remsi x % 2 has the sign of x
// INT-NEXT: -1 0 -1 0 1 0 1 0
// floordivsi, ceildivsi
// INT-NEXT: -2 -1 -1 0 0 1 1 2
// INT-NEXT: -1 -1 0 0 1 1 2 2
// shrsi, shrui by 1 on i32
// INT-NEXT: -2 -1 -1 0 0 1 1 2
// INT-NEXT: 2147483646 2147483647 2147483647 0 0 1 1 2
// muli by 2^30 wraps at 32 bits
// INT-NEXT: 1073741824 -2147483648 -1073741824 0 1073741824 -2147483648 -1073741824 0
// maxsi(x, 0), andi x & 3, xori x ^ -1
// INT-NEXT: 0 0 0 0 1 2 3 4
// INT-NEXT: 1 2 3 0 1 2 3 0
// INT-NEXT: 2 1 0 -1 -2 -3 -4 -5
// extui and extsi of (x < 0)
// INT-NEXT: 1 1 1 0 0 0 0 0
// INT-NEXT: -1 -1 -1 0 0 0 0 0

// FLT: shape [6, 8]
// f = sitofp(x) * 0.5
// FLT-NEXT: -1.5 -1.0 -0.5 0.0 0.5 1.0 1.5 2.0
// exp2(f): 2^-1.5 = 0.35355339, 2^-0.5 = 0.70710678 (to f32)
// FLT-NEXT: 0.35355338{{[0-9]*}} 0.5 0.7071067{{[0-9]*}} 1.0 1.414213{{[0-9]*}} 2.0 2.828427{{[0-9]*}} 4.0
// 1 / f (1 / 0 is inf)
// FLT-NEXT: -0.6666666{{[0-9]*}} -1.0 -2.0 inf 2.0 1.0 0.6666666{{[0-9]*}} 0.5
// select(f < 0, -f, sqrt(f))
// FLT-NEXT: 1.5 1.0 0.5 0.0 0.7071067{{[0-9]*}} 1.0 1.2247449{{[0-9]*}} 1.414213{{[0-9]*}}
// fptosi(f) truncates, back to float
// FLT-NEXT: -1.0 -1.0 0.0 0.0 0.0 1.0 1.0 2.0
// maximumf(f, 0) + math.absf(f)
// FLT-NEXT: 1.5 1.0 0.5 0.0 1.0 2.0 3.0 4.0

func.func @elementwise(
    %ip: !tile.ptr<i32> {tile.name = "ints", tile.dims = [12, 8], tile.access = "write"},
    %fp: !tile.ptr<f32> {tile.name = "floats", tile.dims = [6, 8], tile.access = "write"})
    attributes {tile.kernel, tile.grid = ["1", "1", "1"]} {
  %oi = tile.make_tensor %ip[] : !tile.ptr<i32> -> !tile.tensor<12x8xi32, mut>
  %of = tile.make_tensor %fp[] : !tile.ptr<f32> -> !tile.tensor<6x8xf32, mut>
  %ar = tile.arange : tensor<8xi32>
  %c3 = arith.constant dense<3> : tensor<8xi32>
  %x = arith.subi %ar, %c3 : tensor<8xi32>
  %two = arith.constant dense<2> : tensor<8xi32>
  %one = arith.constant dense<1> : tensor<8xi32>
  %zero = arith.constant dense<0> : tensor<8xi32>
  %i0 = arith.divsi %x, %two : tensor<8xi32>
  %i1 = arith.remsi %x, %two : tensor<8xi32>
  %i2 = arith.floordivsi %x, %two : tensor<8xi32>
  %i3 = arith.ceildivsi %x, %two : tensor<8xi32>
  %i4 = arith.shrsi %x, %one : tensor<8xi32>
  %i5 = arith.shrui %x, %one : tensor<8xi32>
  %big = arith.constant dense<1073741824> : tensor<8xi32>
  %i6 = arith.muli %x, %big : tensor<8xi32>
  %i7 = arith.maxsi %x, %zero : tensor<8xi32>
  %three = arith.constant dense<3> : tensor<8xi32>
  %i8 = arith.andi %x, %three : tensor<8xi32>
  %m1 = arith.constant dense<-1> : tensor<8xi32>
  %i9 = arith.xori %x, %m1 : tensor<8xi32>
  %neg = arith.cmpi slt, %x, %zero : tensor<8xi32>
  %i10 = arith.extui %neg : tensor<8xi1> to tensor<8xi32>
  %i11 = arith.extsi %neg : tensor<8xi1> to tensor<8xi32>
  %r0 = arith.constant dense<0> : tensor<8xi32>
  %r1 = arith.constant dense<1> : tensor<8xi32>
  %r2 = arith.constant dense<2> : tensor<8xi32>
  %r3 = arith.constant dense<3> : tensor<8xi32>
  %r4 = arith.constant dense<4> : tensor<8xi32>
  %r5 = arith.constant dense<5> : tensor<8xi32>
  %r6 = arith.constant dense<6> : tensor<8xi32>
  %r7 = arith.constant dense<7> : tensor<8xi32>
  %r8 = arith.constant dense<8> : tensor<8xi32>
  %r9 = arith.constant dense<9> : tensor<8xi32>
  %r10 = arith.constant dense<10> : tensor<8xi32>
  %r11 = arith.constant dense<11> : tensor<8xi32>
  tile.store %oi[%r0, %ar], %i0 : !tile.tensor<12x8xi32, mut>[tensor<8xi32>, tensor<8xi32>], tensor<8xi32>
  tile.store %oi[%r1, %ar], %i1 : !tile.tensor<12x8xi32, mut>[tensor<8xi32>, tensor<8xi32>], tensor<8xi32>
  tile.store %oi[%r2, %ar], %i2 : !tile.tensor<12x8xi32, mut>[tensor<8xi32>, tensor<8xi32>], tensor<8xi32>
  tile.store %oi[%r3, %ar], %i3 : !tile.tensor<12x8xi32, mut>[tensor<8xi32>, tensor<8xi32>], tensor<8xi32>
  tile.store %oi[%r4, %ar], %i4 : !tile.tensor<12x8xi32, mut>[tensor<8xi32>, tensor<8xi32>], tensor<8xi32>
  tile.store %oi[%r5, %ar], %i5 : !tile.tensor<12x8xi32, mut>[tensor<8xi32>, tensor<8xi32>], tensor<8xi32>
  tile.store %oi[%r6, %ar], %i6 : !tile.tensor<12x8xi32, mut>[tensor<8xi32>, tensor<8xi32>], tensor<8xi32>
  tile.store %oi[%r7, %ar], %i7 : !tile.tensor<12x8xi32, mut>[tensor<8xi32>, tensor<8xi32>], tensor<8xi32>
  tile.store %oi[%r8, %ar], %i8 : !tile.tensor<12x8xi32, mut>[tensor<8xi32>, tensor<8xi32>], tensor<8xi32>
  tile.store %oi[%r9, %ar], %i9 : !tile.tensor<12x8xi32, mut>[tensor<8xi32>, tensor<8xi32>], tensor<8xi32>
  tile.store %oi[%r10, %ar], %i10 : !tile.tensor<12x8xi32, mut>[tensor<8xi32>, tensor<8xi32>], tensor<8xi32>
  tile.store %oi[%r11, %ar], %i11 : !tile.tensor<12x8xi32, mut>[tensor<8xi32>, tensor<8xi32>], tensor<8xi32>

  %xf = arith.sitofp %x : tensor<8xi32> to tensor<8xf32>
  %half = arith.constant dense<0.5> : tensor<8xf32>
  %f = arith.mulf %xf, %half : tensor<8xf32>
  %f1 = math.exp2 %f : tensor<8xf32>
  %fone = arith.constant dense<1.0> : tensor<8xf32>
  %f2 = arith.divf %fone, %f : tensor<8xf32>
  %fzero = arith.constant dense<0.0> : tensor<8xf32>
  %fneg = arith.cmpf olt, %f, %fzero : tensor<8xf32>
  %nf = arith.negf %f : tensor<8xf32>
  %sq = math.sqrt %f : tensor<8xf32>
  %f3 = arith.select %fneg, %nf, %sq : tensor<8xi1>, tensor<8xf32>
  %ti = arith.fptosi %f : tensor<8xf32> to tensor<8xi32>
  %f4 = arith.sitofp %ti : tensor<8xi32> to tensor<8xf32>
  %mx = arith.maximumf %f, %fzero : tensor<8xf32>
  %ab = math.absf %f : tensor<8xf32>
  %f5 = arith.addf %mx, %ab : tensor<8xf32>
  tile.store %of[%r0, %ar], %f : !tile.tensor<6x8xf32, mut>[tensor<8xi32>, tensor<8xi32>], tensor<8xf32>
  tile.store %of[%r1, %ar], %f1 : !tile.tensor<6x8xf32, mut>[tensor<8xi32>, tensor<8xi32>], tensor<8xf32>
  tile.store %of[%r2, %ar], %f2 : !tile.tensor<6x8xf32, mut>[tensor<8xi32>, tensor<8xi32>], tensor<8xf32>
  tile.store %of[%r3, %ar], %f3 : !tile.tensor<6x8xf32, mut>[tensor<8xi32>, tensor<8xi32>], tensor<8xf32>
  tile.store %of[%r4, %ar], %f4 : !tile.tensor<6x8xf32, mut>[tensor<8xi32>, tensor<8xi32>], tensor<8xf32>
  tile.store %of[%r5, %ar], %f5 : !tile.tensor<6x8xf32, mut>[tensor<8xi32>, tensor<8xi32>], tensor<8xf32>
  return
}
