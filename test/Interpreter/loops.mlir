// scf.for with carried scalars and tiles, an empty loop, scf.if with
// results, scf.while.
// RUN: tile-interp %s --out out=%t.npy | FileCheck %s --check-prefix=OUT
// RUN: %python %S/Inputs/npy.py print %t.npy | FileCheck %s
// OUT: kernel loops:, grid [2, 1, 1], interpreted
// CHECK: shape [2, 4]
// program 0: sum 0..9 = 45; tile acc after 5 steps of += arange = [0, 5, 10,
// 15] summed = 30; empty loop keeps 7; if (pid even) -> 100; while doubling
// 1 until >= 100 takes 7 steps.
// CHECK-NEXT: 45 30 107 7
// program 1: the same with the if's else branch: 45 30 7 + 200 = 207, 7
// CHECK-NEXT: 45 30 207 7

func.func @loops(
    %op: !tile.ptr<i32> {tile.name = "out", tile.dims = [2, 4], tile.access = "write"})
    attributes {tile.kernel, tile.grid = ["2", "1", "1"]} {
  %o = tile.make_tensor %op[] : !tile.ptr<i32> -> !tile.tensor<2x4xi32, mut>
  %pid = tile.program_id 0
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c2 = arith.constant 2 : i32
  %c7 = arith.constant 7 : i32
  %c10 = arith.constant 10 : i32
  %c100 = arith.constant 100 : i32
  %c200 = arith.constant 200 : i32
  %sum = scf.for %i = %c0 to %c10 step %c1 iter_args(%s = %c0) -> (i32) : i32 {
    %n = arith.addi %s, %i : i32
    scf.yield %n : i32
  }
  %ar = tile.arange : tensor<4xi32>
  %z = arith.constant dense<0> : tensor<4xi32>
  %acc = scf.for %i = %c0 to %c10 step %c2 iter_args(%a = %z) -> (tensor<4xi32>) : i32 {
    %n = arith.addi %a, %ar : tensor<4xi32>
    scf.yield %n : tensor<4xi32>
  }
  %accsum = tile.reduce sum %acc, 0 : tensor<4xi32> -> i32
  %kept = scf.for %i = %c10 to %c0 step %c1 iter_args(%k = %c7) -> (i32) : i32 {
    scf.yield %c0 : i32
  }
  %par = arith.remsi %pid, %c2 : i32
  %even = arith.cmpi eq, %par, %c0 : i32
  %branch = scf.if %even -> (i32) {
    scf.yield %c100 : i32
  } else {
    scf.yield %c200 : i32
  }
  %ifv = arith.addi %kept, %branch : i32
  %steps:2 = scf.while (%v = %c1, %n = %c0) : (i32, i32) -> (i32, i32) {
    %lt = arith.cmpi slt, %v, %c100 : i32
    scf.condition(%lt) %v, %n : i32, i32
  } do {
  ^bb0(%v: i32, %n: i32):
    %v2 = arith.muli %v, %c2 : i32
    %n2 = arith.addi %n, %c1 : i32
    scf.yield %v2, %n2 : i32, i32
  }
  %r = tile.splat %pid : tensor<1xi32>
  %col0 = arith.constant dense<0> : tensor<1xi32>
  %col1 = arith.constant dense<1> : tensor<1xi32>
  %col2 = arith.constant dense<2> : tensor<1xi32>
  %col3 = arith.constant dense<3> : tensor<1xi32>
  %v0 = tile.splat %sum : tensor<1xi32>
  %v1 = tile.splat %accsum : tensor<1xi32>
  %v2 = tile.splat %ifv : tensor<1xi32>
  %v3 = tile.splat %steps#1 : tensor<1xi32>
  tile.store %o[%r, %col0], %v0 : !tile.tensor<2x4xi32, mut>[tensor<1xi32>, tensor<1xi32>], tensor<1xi32>
  tile.store %o[%r, %col1], %v1 : !tile.tensor<2x4xi32, mut>[tensor<1xi32>, tensor<1xi32>], tensor<1xi32>
  tile.store %o[%r, %col2], %v2 : !tile.tensor<2x4xi32, mut>[tensor<1xi32>, tensor<1xi32>], tensor<1xi32>
  tile.store %o[%r, %col3], %v3 : !tile.tensor<2x4xi32, mut>[tensor<1xi32>, tensor<1xi32>], tensor<1xi32>
  return
}
