// RUN: tile-opt %s --tile-scf-to-cf-last-first | FileCheck %s
// The same CF, block for block, as upstream's convert-scf-to-cf, which
// lowers each block's ops first to last and so moves every later op again
// at each one (N^2 in a block of N guarded stores; test/Target/
// compile-time-scaling.test).
// RUN: tile-opt %s --tile-scf-to-cf-last-first > %t.ours
// RUN: tile-opt %s --convert-scf-to-cf > %t.upstream
// RUN: diff %t.ours %t.upstream

// CHECK-LABEL: func.func @guarded
// CHECK: cf.cond_br %arg0, ^[[THEN0:bb[0-9]+]], ^[[AFTER0:bb[0-9]+]]
// CHECK: ^[[THEN0]]:
// CHECK: llvm.store %arg2
// CHECK: ^[[AFTER0]]:
// CHECK: cf.cond_br %arg1, ^[[THEN1:bb[0-9]+]], ^[[AFTER1:bb[0-9]+]]
// CHECK: ^[[THEN1]]:
// CHECK: cf.cond_br %arg0, ^[[INNER:bb[0-9]+]], ^[[JOIN:bb[0-9]+]]
// CHECK: ^[[INNER]]:
// CHECK: llvm.store %arg3
// CHECK: ^[[JOIN]]:
// CHECK: ^[[AFTER1]]:
// CHECK: cf.br ^[[HEAD:bb[0-9]+]](
// CHECK: ^[[HEAD]](
// CHECK-NOT: scf.
// CHECK: return
func.func @guarded(%a: i1, %b: i1, %x: f32, %y: f32, %p: !llvm.ptr<1>, %n: index) {
  scf.if %a {
    llvm.store %x, %p : f32, !llvm.ptr<1>
  }
  scf.if %b {
    scf.if %a {
      llvm.store %y, %p : f32, !llvm.ptr<1>
    }
  }
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %x) -> (f32) {
    %s = scf.if %a -> (f32) {
      %t = arith.addf %acc, %y : f32
      scf.yield %t : f32
    } else {
      scf.yield %acc : f32
    }
    scf.yield %s : f32
  }
  llvm.store %r, %p : f32, !llvm.ptr<1>
  return
}
