// exp and exp2 flagged `afn` flush results below 2^-126 (FLT_MIN) to +0 as
// the GPU's ex2.approx.ftz.f32 does. tile-fast-math flags them in every
// kernel but one marked tile.exact_math, where subnormal results survive
// (docs/language-extensions.md, "Fast math by default"). The GPU check of
// the same bound: test/GPU (run by the lead).
// RUN: tile-opt %s -pass-pipeline='builtin.module(func.func(tile-fast-math))' -o %t.fast.mlir
// RUN: tile-interp %t.fast.mlir --out out=%t.npy | FileCheck %s --check-prefix=OUT
// RUN: %python %S/Inputs/npy.py print %t.npy | FileCheck %s --check-prefix=FTZ
// RUN: sed 's/tile.kernel,/tile.kernel, tile.exact_math,/' %s | tile-opt -pass-pipeline='builtin.module(func.func(tile-fast-math))' -o %t.exact.mlir
// RUN: tile-interp %t.exact.mlir --out out=%t.exact.npy
// RUN: %python %S/Inputs/npy.py print %t.exact.npy | FileCheck %s --check-prefix=EXACT
// The interpreter reads the op's flag, not the kernel's attribute.
// RUN: tile-interp %s --out out=%t.unflagged.npy
// RUN: %python %S/Inputs/npy.py print %t.unflagged.npy | FileCheck %s --check-prefix=EXACT
// OUT: kernel flush:, grid [1, 1, 1], interpreted

// exp2 of -126, -127, -149, 1; exp of -87, -88 (e^-88 = 6.05e-39 < 2^-126),
// -103, 0.
// FTZ: shape [8]
// FTZ-NEXT: 1.1754943508222875e-38 0.0 0.0 2.0 {{1.64581.*e-38}} 0.0 0.0 1.0
// EXACT: shape [8]
// EXACT-NEXT: 1.1754943508222875e-38 5.877471754111438e-39 1.401298464324817e-45 2.0 {{1.64581.*e-38}} {{6.0546.*e-39}} {{1.4.*e-45}} 1.0

func.func @flush(
    %op: !tile.ptr<f32> {tile.name = "out", tile.dims = [8], tile.access = "write"})
    attributes {tile.kernel, tile.grid = ["1", "1", "1"]} {
  %o = tile.make_tensor %op[] : !tile.ptr<f32> -> !tile.tensor<8xf32, mut>
  %ar = tile.arange : tensor<8xi32>
  %x = arith.constant dense<[-126.0, -127.0, -149.0, 1.0, -87.0, -88.0, -103.0, 0.0]> : tensor<8xf32>
  %y2 = math.exp2 %x : tensor<8xf32>
  %ye = math.exp %x : tensor<8xf32>
  %c4 = arith.constant 4 : i32
  %four = tile.splat %c4 : tensor<8xi32>
  %first = arith.cmpi slt, %ar, %four : tensor<8xi32>
  %r = arith.select %first, %y2, %ye : tensor<8xi1>, tensor<8xf32>
  tile.store %o[%ar], %r : !tile.tensor<8xf32, mut>[tensor<8xi32>], tensor<8xf32>
  return
}
