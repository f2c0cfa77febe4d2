// Rotary embedding, "halves" layout (GPT-NeoX), partial: R = 8 of D = 16
// features rotate, the rest are copied. Checked against the runtime's float64
// reference at ragged sizes (T = 10 is not a multiple of the 4-row block).
// RUN: tile-interp %s -k rotary_halves --dims B=2,T=10,H=3 --check --reference rotary | FileCheck %s
// RUN: tile-interp %s -k rotary_halves --dims B=1,T=7,H=2 --seed 5 --check --reference rotary | FileCheck %s --check-prefix=SEED
// CHECK: kernel rotary_halves: B=2 T=10 H=3, grid [3, 2, 3], interpreted
// CHECK: check out: rel_l2 {{.*}}: PASS
// SEED: kernel rotary_halves: B=1 T=7 H=2, grid [2, 1, 2], interpreted
// SEED: check out: rel_l2 {{.*}}: PASS

// The reference really sees the rotation: a kernel that copies x fails.
// RUN: not tile-interp %s -k rotary_wrong --dims B=2,T=10,H=3 --check --reference rotary | FileCheck %s --check-prefix=WRONG
// WRONG: check out: rel_l2 {{.*}}: FAIL

func.func @rotary_halves(
    %xp: !tile.ptr<bf16> {tile.name = "x", tile.dims = ["B", "T", "H", 16], tile.access = "read"},
    %cp: !tile.ptr<f32> {tile.name = "cos", tile.dims = ["T", 4], tile.access = "read"},
    %sp: !tile.ptr<f32> {tile.name = "sin", tile.dims = ["T", 4], tile.access = "read"},
    %op: !tile.ptr<bf16> {tile.name = "out", tile.dims = ["B", "T", "H", 16], tile.access = "write"},
    %B: i32 {tile.size_var = "B"}, %T: i32 {tile.size_var = "T"},
    %H: i32 {tile.size_var = "H"})
    attributes {tile.kernel, tile.grid = ["cdiv(T, 4)", "B", "H"],
                tile.template = {D = 16 : i64, R = 8 : i64}} {
  %x = tile.make_tensor %xp[%B, %T, %H] : !tile.ptr<bf16> -> !tile.tensor<?x?x?x16xbf16>
  %cos = tile.make_tensor %cp[%T] : !tile.ptr<f32> -> !tile.tensor<?x4xf32>
  %sin = tile.make_tensor %sp[%T] : !tile.ptr<f32> -> !tile.tensor<?x4xf32>
  %out = tile.make_tensor %op[%B, %T, %H] : !tile.ptr<bf16> -> !tile.tensor<?x?x?x16xbf16, mut>
  %p0 = tile.program_id 0
  %b = tile.program_id 1
  %h = tile.program_id 2
  %c4 = arith.constant 4 : i32
  %c8 = arith.constant 8 : i32
  %t0 = arith.muli %p0, %c4 : i32
  %ar4 = tile.arange : tensor<4xi32>
  %t0s = tile.splat %t0 : tensor<4xi32>
  %rows1 = arith.addi %ar4, %t0s : tensor<4xi32>
  %rows2 = tile.expand_dims %rows1, 1 : tensor<4xi32> -> tensor<4x1xi32>
  %rows = tile.broadcast %rows2 : tensor<4x1xi32> -> tensor<4x16xi32>
  %ar16 = tile.arange : tensor<16xi32>
  %cols2 = tile.expand_dims %ar16, 0 : tensor<16xi32> -> tensor<1x16xi32>
  %cols = tile.broadcast %cols2 : tensor<1x16xi32> -> tensor<4x16xi32>
  %bs = tile.splat %b : tensor<4x16xi32>
  %hs = tile.splat %h : tensor<4x16xi32>
  %xv = tile.load %x[%bs, %rows, %hs, %cols] : !tile.tensor<?x?x?x16xbf16>[tensor<4x16xi32>, tensor<4x16xi32>, tensor<4x16xi32>, tensor<4x16xi32>] -> tensor<4x16xbf16>
  // Features d < R rotate with their partner d + R/2 (first half) or
  // d - R/2 (second half), using cos/sin column d mod R/2.
  %c4s = tile.splat %c4 : tensor<4x16xi32>
  %c8s = tile.splat %c8 : tensor<4x16xi32>
  %rot = arith.cmpi slt, %cols, %c8s : tensor<4x16xi32>
  %first = arith.cmpi slt, %cols, %c4s : tensor<4x16xi32>
  %ci = arith.remsi %cols, %c4s : tensor<4x16xi32>
  %up = arith.addi %cols, %c4s : tensor<4x16xi32>
  %down = arith.subi %cols, %c4s : tensor<4x16xi32>
  %pd = arith.select %first, %up, %down : tensor<4x16xi1>, tensor<4x16xi32>
  %one = arith.constant dense<1.0> : tensor<4x16xf32>
  %zero = arith.constant dense<0.0> : tensor<4x16xf32>
  %zerob = arith.constant dense<0.0> : tensor<4x16xbf16>
  // Copied features read cos = 1, sin = 0 through `other`.
  %cv = tile.load %cos[%rows, %ci] mask %rot other %one : !tile.tensor<?x4xf32>[tensor<4x16xi32>, tensor<4x16xi32>] -> tensor<4x16xf32>
  %sv = tile.load %sin[%rows, %ci] mask %rot other %zero : !tile.tensor<?x4xf32>[tensor<4x16xi32>, tensor<4x16xi32>] -> tensor<4x16xf32>
  %xpv = tile.load %x[%bs, %rows, %hs, %pd] mask %rot other %zerob : !tile.tensor<?x?x?x16xbf16>[tensor<4x16xi32>, tensor<4x16xi32>, tensor<4x16xi32>, tensor<4x16xi32>] -> tensor<4x16xbf16>
  %xf = arith.extf %xv : tensor<4x16xbf16> to tensor<4x16xf32>
  %xpf = arith.extf %xpv : tensor<4x16xbf16> to tensor<4x16xf32>
  %neg = arith.negf %xpf : tensor<4x16xf32>
  %signed = arith.select %first, %neg, %xpf : tensor<4x16xi1>, tensor<4x16xf32>
  %a = arith.mulf %xf, %cv : tensor<4x16xf32>
  %bb = arith.mulf %signed, %sv : tensor<4x16xf32>
  %r = arith.addf %a, %bb : tensor<4x16xf32>
  %rb = arith.truncf %r : tensor<4x16xf32> to tensor<4x16xbf16>
  tile.store %out[%bs, %rows, %hs, %cols], %rb : !tile.tensor<?x?x?x16xbf16, mut>[tensor<4x16xi32>, tensor<4x16xi32>, tensor<4x16xi32>, tensor<4x16xi32>], tensor<4x16xbf16>
  return
}

func.func @rotary_wrong(
    %xp: !tile.ptr<bf16> {tile.name = "x", tile.dims = ["B", "T", "H", 16], tile.access = "read"},
    %cp: !tile.ptr<f32> {tile.name = "cos", tile.dims = ["T", 4], tile.access = "read"},
    %sp: !tile.ptr<f32> {tile.name = "sin", tile.dims = ["T", 4], tile.access = "read"},
    %op: !tile.ptr<bf16> {tile.name = "out", tile.dims = ["B", "T", "H", 16], tile.access = "write"},
    %B: i32 {tile.size_var = "B"}, %T: i32 {tile.size_var = "T"},
    %H: i32 {tile.size_var = "H"})
    attributes {tile.kernel, tile.grid = ["cdiv(T, 4)", "B", "H"]} {
  %x = tile.make_tensor %xp[%B, %T, %H] : !tile.ptr<bf16> -> !tile.tensor<?x?x?x16xbf16>
  %out = tile.make_tensor %op[%B, %T, %H] : !tile.ptr<bf16> -> !tile.tensor<?x?x?x16xbf16, mut>
  %p0 = tile.program_id 0
  %b = tile.program_id 1
  %h = tile.program_id 2
  %c4 = arith.constant 4 : i32
  %t0 = arith.muli %p0, %c4 : i32
  %ar4 = tile.arange : tensor<4xi32>
  %t0s = tile.splat %t0 : tensor<4xi32>
  %rows1 = arith.addi %ar4, %t0s : tensor<4xi32>
  %rows2 = tile.expand_dims %rows1, 1 : tensor<4xi32> -> tensor<4x1xi32>
  %rows = tile.broadcast %rows2 : tensor<4x1xi32> -> tensor<4x16xi32>
  %ar16 = tile.arange : tensor<16xi32>
  %cols2 = tile.expand_dims %ar16, 0 : tensor<16xi32> -> tensor<1x16xi32>
  %cols = tile.broadcast %cols2 : tensor<1x16xi32> -> tensor<4x16xi32>
  %bs = tile.splat %b : tensor<4x16xi32>
  %hs = tile.splat %h : tensor<4x16xi32>
  %xv = tile.load %x[%bs, %rows, %hs, %cols] : !tile.tensor<?x?x?x16xbf16>[tensor<4x16xi32>, tensor<4x16xi32>, tensor<4x16xi32>, tensor<4x16xi32>] -> tensor<4x16xbf16>
  tile.store %out[%bs, %rows, %hs, %cols], %xv : !tile.tensor<?x?x?x16xbf16, mut>[tensor<4x16xi32>, tensor<4x16xi32>, tensor<4x16xi32>, tensor<4x16xi32>], tensor<4x16xbf16>
  return
}
