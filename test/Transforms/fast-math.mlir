// RUN: tile-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(tile-fast-math))' | FileCheck %s --enable-var-scope

// Fast math by default: floating-point arith gets `contract`, exp and exp2
// get `afn` (flush-to-zero ex2), flags already there are kept; other math,
// integer arith and tile ops are left alone.
// CHECK-LABEL: func.func @fast(
// CHECK: arith.mulf %{{.*}}, %{{.*}} fastmath<contract> : tensor<8xf32>
// CHECK: arith.addf %{{.*}}, %{{.*}} fastmath<nnan,contract> : tensor<8xf32>
// CHECK: math.exp2 %{{.*}} fastmath<afn> : tensor<8xf32>
// CHECK: math.exp %{{.*}} fastmath<afn> : tensor<8xf32>
// CHECK: math.log %{{.*}} : tensor<8xf32>
// CHECK: math.sin %{{.*}} fastmath<nnan> : tensor<8xf32>
// CHECK: arith.addi %{{.*}}, %{{.*}} : tensor<8xi32>
// CHECK: arith.cmpf olt, %{{.*}}, %{{.*}} fastmath<contract> : tensor<8xf32>
func.func @fast(%x: tensor<8xf32>, %y: tensor<8xf32>, %i: tensor<8xi32>)
    -> (tensor<8xf32>, tensor<8xf32>, tensor<8xi32>, tensor<8xi1>)
    attributes {tile.kernel} {
  %p = arith.mulf %x, %y : tensor<8xf32>
  %s = arith.addf %p, %y fastmath<nnan> : tensor<8xf32>
  %e2 = math.exp2 %s : tensor<8xf32>
  %e = math.exp %e2 : tensor<8xf32>
  %l = math.log %e : tensor<8xf32>
  %sn = math.sin %l fastmath<nnan> : tensor<8xf32>
  %j = arith.addi %i, %i : tensor<8xi32>
  %c = arith.cmpf olt, %sn, %x : tensor<8xf32>
  return %sn, %p, %j, %c : tensor<8xf32>, tensor<8xf32>, tensor<8xi32>, tensor<8xi1>
}

// -----

// A tile.exact_math kernel keeps every op as written.
// CHECK-LABEL: func.func @exact(
// CHECK: arith.mulf %{{.*}}, %{{.*}} : tensor<8xf32>
// CHECK-NEXT: arith.addf %{{.*}}, %{{.*}} : tensor<8xf32>
// CHECK-NEXT: math.exp2 %{{.*}} : tensor<8xf32>
// CHECK-NEXT: math.exp %{{.*}} : tensor<8xf32>
// CHECK-NOT: fastmath
func.func @exact(%x: tensor<8xf32>, %y: tensor<8xf32>) -> tensor<8xf32>
    attributes {tile.kernel, tile.exact_math} {
  %p = arith.mulf %x, %y : tensor<8xf32>
  %s = arith.addf %p, %y : tensor<8xf32>
  %e2 = math.exp2 %s : tensor<8xf32>
  %e = math.exp %e2 : tensor<8xf32>
  return %e : tensor<8xf32>
}

// -----

// Conversions keep their rounding: no contract on truncf or extf (with it
// on both, extf(truncf(x)) folds to x), while the subtraction gets it.
// CHECK-LABEL: func.func @round_trip(
// CHECK: %[[H:.*]] = arith.truncf %{{.*}} : tensor<8xf32> to tensor<8xbf16>
// CHECK: %[[W:.*]] = arith.extf %[[H]] : tensor<8xbf16> to tensor<8xf32>
// CHECK: arith.subf %{{.*}}, %[[W]] fastmath<contract> : tensor<8xf32>
func.func @round_trip(%x: tensor<8xf32>) -> tensor<8xf32>
    attributes {tile.kernel} {
  %h = arith.truncf %x : tensor<8xf32> to tensor<8xbf16>
  %w = arith.extf %h : tensor<8xbf16> to tensor<8xf32>
  %lo = arith.subf %x, %w : tensor<8xf32>
  return %lo : tensor<8xf32>
}
