// RUN: tile-opt %s -split-input-file -tile-assign-layouts -convert-tile-to-nvvm -verify-diagnostics | FileCheck %s

// Pops and pushes count per ring, whatever SSA value names it: the loop
// carries %p (a pipeline `var`), so the push after it writes the ring whose
// stage the pop before it read. That push must keep its (conditional)
// barrier; keyed by SSA value it looked unread and lost it.
// CHECK-LABEL: func.func @carried_ring
// CHECK: scf.for
// CHECK: scf.yield
// CHECK: llvm.inline_asm has_side_effects {{.*}}@p bar.sync 0;
// CHECK: "cp.async.ca.shared.global [$0], [$1], 4, $2;"
func.func @carried_ring(%xp: !tile.ptr<f32>, %n: i32) -> tensor<64xf32>
    attributes {tile.kernel, tile.warps = 4 : i32} {
  %x = tile.make_tensor %xp[%n] : !tile.ptr<f32> -> !tile.tensor<?xf32>
  %i = tile.arange : tensor<64xi32>
  %p = tile.pipeline.create : !tile.pipeline<64xf32, stages = 2>
  tile.pipeline.push %p, %x[%i] : !tile.pipeline<64xf32, stages = 2>, !tile.tensor<?xf32>[tensor<64xi32>]
  tile.pipeline.push %p, %x[%i] : !tile.pipeline<64xf32, stages = 2>, !tile.tensor<?xf32>[tensor<64xi32>]
  %t = tile.pipeline.pop %p : !tile.pipeline<64xf32, stages = 2> -> tensor<64xf32>
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %q = scf.for %k = %c0 to %n step %c1 iter_args(%r = %p)
      -> (!tile.pipeline<64xf32, stages = 2>) : i32 {
    scf.yield %r : !tile.pipeline<64xf32, stages = 2>
  }
  tile.pipeline.push %q, %x[%i] : !tile.pipeline<64xf32, stages = 2>, !tile.tensor<?xf32>[tensor<64xi32>]
  return %t : tensor<64xf32>
}

// -----

// A pipeline chosen at run time between two rings has no one set of
// counters to synchronize on (the frontend rejects such vars): an error at
// the first use, not a lowering that barriers the wrong ring.
func.func @chosen_ring(%xp: !tile.ptr<f32>, %n: i32, %c: i1)
    attributes {tile.kernel, tile.warps = 4 : i32} {
  %x = tile.make_tensor %xp[%n] : !tile.ptr<f32> -> !tile.tensor<?xf32>
  %p = tile.pipeline.create : !tile.pipeline<64xf32, stages = 2>
  %q = tile.pipeline.create : !tile.pipeline<64xf32, stages = 2>
  %r = scf.if %c -> (!tile.pipeline<64xf32, stages = 2>) {
    scf.yield %q : !tile.pipeline<64xf32, stages = 2>
  } else {
    scf.yield %p : !tile.pipeline<64xf32, stages = 2>
  }
  %i = tile.arange : tensor<64xi32>
  // expected-error @+1 {{this pipeline may name different rings depending on run-time control flow; which ring a pipeline names must be known at compile time}}
  tile.pipeline.push %r, %x[%i] : !tile.pipeline<64xf32, stages = 2>, !tile.tensor<?xf32>[tensor<64xi32>]
  return
}

// -----

// An index tile of unknown form (one offset a register) keeps its bounds
// compare in a push, and loses it in a push marked `inside`; the copy then
// carries no ignore-src operand.
// CHECK-LABEL: func.func @inside_elementwise
// CHECK: arith.cmpi ult
// CHECK: "cp.async.ca.shared.global [$0], [$1], 4, $2;"
// CHECK-NOT: arith.cmpi ult
// CHECK: "cp.async.ca.shared.global [$0], [$1], 4;"
// CHECK-NOT: arith.cmpi ult
// CHECK: return
func.func @inside_elementwise(%xp: !tile.ptr<f32>, %n: i32, %i: tensor<64xi32>)
    attributes {tile.kernel, tile.warps = 2 : i32} {
  %x = tile.make_tensor %xp[%n] : !tile.ptr<f32> -> !tile.tensor<?xf32>
  %p = tile.pipeline.create : !tile.pipeline<64xf32, stages = 2>
  tile.pipeline.push %p, %x[%i] : !tile.pipeline<64xf32, stages = 2>, !tile.tensor<?xf32>[tensor<64xi32>]
  tile.pipeline.push %p, %x[%i] inside : !tile.pipeline<64xf32, stages = 2>, !tile.tensor<?xf32>[tensor<64xi32>]
  return
}
