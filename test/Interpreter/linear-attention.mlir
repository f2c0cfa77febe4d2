// Causal linear attention, naive (quadratic) form: o_t = scale * sum over
// s <= t of (q_t . k_s) v_s, one block of 16 query rows per program, looping
// over key blocks up to the diagonal. Checked against the runtime's float64
// reference at ragged sizes (T = 37).
// RUN: tile-interp %s --dims B=2,T=37,H=2 --scalar scale=0.125 --check --reference linear_attention | FileCheck %s
// CHECK: kernel linear_attention: B=2 T=37 H=2, grid [3, 4, 1], interpreted
// CHECK: check o: rel_l2 {{.*}}: PASS
// The reference reads the scale from the scalar: another scale fails.
// RUN: not tile-interp %s --dims B=1,T=20,H=1 --scalar scale=0.125 --check --reference '{"name": "linear_attention", "scale": 0.25}' | FileCheck %s --check-prefix=SCALE
// SCALE: check o: rel_l2 {{.*}}: FAIL

func.func @linear_attention(
    %qp: !tile.ptr<bf16> {tile.name = "q", tile.dims = ["B", "T", "H", 16], tile.access = "read"},
    %kp: !tile.ptr<bf16> {tile.name = "k", tile.dims = ["B", "T", "H", 16], tile.access = "read"},
    %vp: !tile.ptr<bf16> {tile.name = "v", tile.dims = ["B", "T", "H", 16], tile.access = "read"},
    %op: !tile.ptr<bf16> {tile.name = "o", tile.dims = ["B", "T", "H", 16], tile.access = "write"},
    %scale: f32 {tile.name = "scale"},
    %B: i32 {tile.size_var = "B"}, %T: i32 {tile.size_var = "T"},
    %H: i32 {tile.size_var = "H"})
    attributes {tile.kernel, tile.grid = ["cdiv(T, 16)", "B * H", "1"],
                tile.template = {BT = 16 : i64, D = 16 : i64}} {
  %q = tile.make_tensor %qp[%B, %T, %H] : !tile.ptr<bf16> -> !tile.tensor<?x?x?x16xbf16>
  %k = tile.make_tensor %kp[%B, %T, %H] : !tile.ptr<bf16> -> !tile.tensor<?x?x?x16xbf16>
  %v = tile.make_tensor %vp[%B, %T, %H] : !tile.ptr<bf16> -> !tile.tensor<?x?x?x16xbf16>
  %o = tile.make_tensor %op[%B, %T, %H] : !tile.ptr<bf16> -> !tile.tensor<?x?x?x16xbf16, mut>
  %pt = tile.program_id 0
  %pbh = tile.program_id 1
  %bi = arith.divsi %pbh, %H : i32
  %hi = arith.remsi %pbh, %H : i32
  %c0 = arith.constant 0 : i32
  %c16 = arith.constant 16 : i32
  %t0 = arith.muli %pt, %c16 : i32
  %tend = arith.addi %t0, %c16 : i32
  %ar = tile.arange : tensor<16xi32>
  %cols2 = tile.expand_dims %ar, 0 : tensor<16xi32> -> tensor<1x16xi32>
  %cols = tile.broadcast %cols2 : tensor<1x16xi32> -> tensor<16x16xi32>
  %ar2 = tile.expand_dims %ar, 1 : tensor<16xi32> -> tensor<16x1xi32>
  %arr = tile.broadcast %ar2 : tensor<16x1xi32> -> tensor<16x16xi32>
  %bs = tile.splat %bi : tensor<16x16xi32>
  %hs = tile.splat %hi : tensor<16x16xi32>
  %t0s = tile.splat %t0 : tensor<16x16xi32>
  %rows = arith.addi %arr, %t0s : tensor<16x16xi32>
  %qb = tile.load %q[%bs, %rows, %hs, %cols] : !tile.tensor<?x?x?x16xbf16>[tensor<16x16xi32>, tensor<16x16xi32>, tensor<16x16xi32>, tensor<16x16xi32>] -> tensor<16x16xbf16>
  %zero = arith.constant dense<0.0> : tensor<16x16xf32>
  %acc = scf.for %s0 = %c0 to %tend step %c16 iter_args(%a = %zero) -> (tensor<16x16xf32>) : i32 {
    %s0s = tile.splat %s0 : tensor<16x16xi32>
    %krows = arith.addi %arr, %s0s : tensor<16x16xi32>
    %kb = tile.load %k[%bs, %krows, %hs, %cols] : !tile.tensor<?x?x?x16xbf16>[tensor<16x16xi32>, tensor<16x16xi32>, tensor<16x16xi32>, tensor<16x16xi32>] -> tensor<16x16xbf16>
    %vb = tile.load %v[%bs, %krows, %hs, %cols] : !tile.tensor<?x?x?x16xbf16>[tensor<16x16xi32>, tensor<16x16xi32>, tensor<16x16xi32>, tensor<16x16xi32>] -> tensor<16x16xbf16>
    %kt = tile.trans %kb : tensor<16x16xbf16> -> tensor<16x16xbf16>
    %s = tile.dot %qb, %kt, %zero : tensor<16x16xbf16>, tensor<16x16xbf16> -> tensor<16x16xf32>
    // Causal: key s contributes to query t when s <= t.
    %kcol = arith.addi %cols, %s0s : tensor<16x16xi32>
    %keep = arith.cmpi sle, %kcol, %rows : tensor<16x16xi32>
    %sm = arith.select %keep, %s, %zero : tensor<16x16xi1>, tensor<16x16xf32>
    %pb = arith.truncf %sm : tensor<16x16xf32> to tensor<16x16xbf16>
    %an = tile.dot %pb, %vb, %a : tensor<16x16xbf16>, tensor<16x16xbf16> -> tensor<16x16xf32>
    scf.yield %an : tensor<16x16xf32>
  }
  %scs = tile.splat %scale : tensor<16x16xf32>
  %out = arith.mulf %acc, %scs : tensor<16x16xf32>
  %outb = arith.truncf %out : tensor<16x16xf32> to tensor<16x16xbf16>
  tile.store %o[%bs, %rows, %hs, %cols], %outb : !tile.tensor<?x?x?x16xbf16, mut>[tensor<16x16xi32>, tensor<16x16xi32>, tensor<16x16xi32>, tensor<16x16xi32>], tensor<16x16xbf16>
  return
}
