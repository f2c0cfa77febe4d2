// Attention forward with an online softmax in base 2 (exp2, the scale folded
// with log2(e)), K and V streamed through two-stage pipelines one block ahead,
// and the base-2 log-sum-exp stored. Checked against the runtime's float64
// reference at ragged sizes (M = 20, N = 27: neither a multiple of 16).
// RUN: tile-interp %s --dims Z=1,H=2,M=20,N=27 --scalar scale=0.25 --check --reference '{"name": "attention_fwd", "lse_base": "2"}' | FileCheck %s
// CHECK: kernel attention_fwd: Z=1 H=2 M=20 N=27, grid [2, 2, 1], interpreted
// CHECK-DAG: check o: rel_l2 {{.*}}: PASS
// CHECK-DAG: check lse: rel_l2 {{.*}}: PASS

// One key block only (N < 16), two batches.
// RUN: tile-interp %s --dims Z=2,H=1,M=5,N=9 --scalar scale=0.5 --seed 3 --check --reference '{"name": "attention_fwd", "lse_base": "2"}' | FileCheck %s --check-prefix=SMALL
// SMALL: grid [1, 2, 1]
// SMALL-DAG: check o: rel_l2 {{.*}}: PASS
// SMALL-DAG: check lse: rel_l2 {{.*}}: PASS

// The natural-log reference does not match a base-2 lse.
// RUN: not tile-interp %s --dims Z=1,H=2,M=20,N=27 --scalar scale=0.25 --check --reference attention_fwd | FileCheck %s --check-prefix=BASE
// BASE-DAG: check o: rel_l2 {{.*}}: PASS
// BASE-DAG: check lse: rel_l2 {{.*}}: FAIL

func.func @attention_fwd(
    %qp: !tile.ptr<bf16> {tile.name = "q", tile.dims = ["Z", "H", "M", 16], tile.access = "read"},
    %kp: !tile.ptr<bf16> {tile.name = "k", tile.dims = ["Z", "H", "N", 16], tile.access = "read"},
    %vp: !tile.ptr<bf16> {tile.name = "v", tile.dims = ["Z", "H", "N", 16], tile.access = "read"},
    %op: !tile.ptr<bf16> {tile.name = "o", tile.dims = ["Z", "H", "M", 16], tile.access = "write"},
    %lp: !tile.ptr<f32> {tile.name = "lse", tile.dims = ["Z", "H", "M"], tile.access = "write"},
    %scale: f32 {tile.name = "scale"},
    %Z: i32 {tile.size_var = "Z"}, %H: i32 {tile.size_var = "H"},
    %M: i32 {tile.size_var = "M"}, %N: i32 {tile.size_var = "N"})
    attributes {tile.kernel, tile.grid = ["cdiv(M, 16)", "Z * H", "1"],
                tile.template = {BLOCK_M = 16 : i64, BLOCK_N = 16 : i64, D = 16 : i64}} {
  %q = tile.make_tensor %qp[%Z, %H, %M] : !tile.ptr<bf16> -> !tile.tensor<?x?x?x16xbf16>
  %k = tile.make_tensor %kp[%Z, %H, %N] : !tile.ptr<bf16> -> !tile.tensor<?x?x?x16xbf16>
  %v = tile.make_tensor %vp[%Z, %H, %N] : !tile.ptr<bf16> -> !tile.tensor<?x?x?x16xbf16>
  %o = tile.make_tensor %op[%Z, %H, %M] : !tile.ptr<bf16> -> !tile.tensor<?x?x?x16xbf16, mut>
  %lse = tile.make_tensor %lp[%Z, %H, %M] : !tile.ptr<f32> -> !tile.tensor<?x?x?xf32, mut>
  %pm = tile.program_id 0
  %pzh = tile.program_id 1
  %zi = arith.divsi %pzh, %H : i32
  %hi = arith.remsi %pzh, %H : i32
  %c0 = arith.constant 0 : i32
  %c16 = arith.constant 16 : i32
  %m0 = arith.muli %pm, %c16 : i32
  %ar = tile.arange : tensor<16xi32>
  %cols2 = tile.expand_dims %ar, 0 : tensor<16xi32> -> tensor<1x16xi32>
  %cols = tile.broadcast %cols2 : tensor<1x16xi32> -> tensor<16x16xi32>
  %ar2 = tile.expand_dims %ar, 1 : tensor<16xi32> -> tensor<16x1xi32>
  %arr = tile.broadcast %ar2 : tensor<16x1xi32> -> tensor<16x16xi32>
  %zs = tile.splat %zi : tensor<16x16xi32>
  %hs = tile.splat %hi : tensor<16x16xi32>
  %m0s = tile.splat %m0 : tensor<16x16xi32>
  %rows = arith.addi %arr, %m0s : tensor<16x16xi32>
  %qb = tile.load %q[%zs, %hs, %rows, %cols] : !tile.tensor<?x?x?x16xbf16>[tensor<16x16xi32>, tensor<16x16xi32>, tensor<16x16xi32>, tensor<16x16xi32>] -> tensor<16x16xbf16>

  // K and V blocks go through pipelines, one block ahead.
  %kpipe = tile.pipeline.create : !tile.pipeline<16x16xbf16, stages = 2>
  %vpipe = tile.pipeline.create : !tile.pipeline<16x16xbf16, stages = 2>
  tile.pipeline.push %kpipe, %k[%zs, %hs, %arr, %cols] : !tile.pipeline<16x16xbf16, stages = 2>, !tile.tensor<?x?x?x16xbf16>[tensor<16x16xi32>, tensor<16x16xi32>, tensor<16x16xi32>, tensor<16x16xi32>]
  tile.pipeline.push %vpipe, %v[%zs, %hs, %arr, %cols] : !tile.pipeline<16x16xbf16, stages = 2>, !tile.tensor<?x?x?x16xbf16>[tensor<16x16xi32>, tensor<16x16xi32>, tensor<16x16xi32>, tensor<16x16xi32>]

  // qk_scale = scale * log2(e)
  %log2e = arith.constant 1.44269504 : f32
  %qks = arith.mulf %scale, %log2e : f32
  %qkss = tile.splat %qks : tensor<16x16xf32>
  %ninf = arith.constant 0xFF800000 : f32
  %ninfs = tile.splat %ninf : tensor<16x16xf32>
  %m_init = arith.constant dense<0xFF800000> : tensor<16xf32>
  %l_init = arith.constant dense<0.0> : tensor<16xf32>
  %acc_init = arith.constant dense<0.0> : tensor<16x16xf32>
  %Ns = tile.splat %N : tensor<16x16xi32>
  %res:3 = scf.for %n0 = %c0 to %N step %c16
      iter_args(%mi = %m_init, %li = %l_init, %acc = %acc_init)
      -> (tensor<16xf32>, tensor<16xf32>, tensor<16x16xf32>) : i32 {
    // Push the next blocks (past N they are all masked), pop this one.
    %nn = arith.addi %n0, %c16 : i32
    %nns = tile.splat %nn : tensor<16x16xi32>
    %nrows = arith.addi %arr, %nns : tensor<16x16xi32>
    tile.pipeline.push %kpipe, %k[%zs, %hs, %nrows, %cols] : !tile.pipeline<16x16xbf16, stages = 2>, !tile.tensor<?x?x?x16xbf16>[tensor<16x16xi32>, tensor<16x16xi32>, tensor<16x16xi32>, tensor<16x16xi32>]
    tile.pipeline.push %vpipe, %v[%zs, %hs, %nrows, %cols] : !tile.pipeline<16x16xbf16, stages = 2>, !tile.tensor<?x?x?x16xbf16>[tensor<16x16xi32>, tensor<16x16xi32>, tensor<16x16xi32>, tensor<16x16xi32>]
    %kb = tile.pipeline.pop %kpipe : !tile.pipeline<16x16xbf16, stages = 2> -> tensor<16x16xbf16>
    %vb = tile.pipeline.pop %vpipe : !tile.pipeline<16x16xbf16, stages = 2> -> tensor<16x16xbf16>
    %kt = tile.trans %kb : tensor<16x16xbf16> -> tensor<16x16xbf16>
    %zero = arith.constant dense<0.0> : tensor<16x16xf32>
    %s = tile.dot %qb, %kt, %zero : tensor<16x16xbf16>, tensor<16x16xbf16> -> tensor<16x16xf32>
    %ss = arith.mulf %s, %qkss : tensor<16x16xf32>
    // Key columns past N get -inf.
    %n0s = tile.splat %n0 : tensor<16x16xi32>
    %kcol = arith.addi %cols, %n0s : tensor<16x16xi32>
    %valid = arith.cmpi slt, %kcol, %Ns : tensor<16x16xi32>
    %sm = arith.select %valid, %ss, %ninfs : tensor<16x16xi1>, tensor<16x16xf32>
    %rowmax = tile.reduce max %sm, 1 : tensor<16x16xf32> -> tensor<16xf32>
    %mnew = arith.maximumf %mi, %rowmax : tensor<16xf32>
    %mn2 = tile.expand_dims %mnew, 1 : tensor<16xf32> -> tensor<16x1xf32>
    %mnb = tile.broadcast %mn2 : tensor<16x1xf32> -> tensor<16x16xf32>
    %sd = arith.subf %sm, %mnb : tensor<16x16xf32>
    %p = math.exp2 %sd : tensor<16x16xf32>
    %md = arith.subf %mi, %mnew : tensor<16xf32>
    %alpha = math.exp2 %md : tensor<16xf32>
    %psum = tile.reduce sum %p, 1 : tensor<16x16xf32> -> tensor<16xf32>
    %la = arith.mulf %li, %alpha : tensor<16xf32>
    %lnew = arith.addf %la, %psum : tensor<16xf32>
    %al2 = tile.expand_dims %alpha, 1 : tensor<16xf32> -> tensor<16x1xf32>
    %alb = tile.broadcast %al2 : tensor<16x1xf32> -> tensor<16x16xf32>
    %accs = arith.mulf %acc, %alb : tensor<16x16xf32>
    %pb = arith.truncf %p : tensor<16x16xf32> to tensor<16x16xbf16>
    %accn = tile.dot %pb, %vb, %accs : tensor<16x16xbf16>, tensor<16x16xbf16> -> tensor<16x16xf32>
    scf.yield %mnew, %lnew, %accn : tensor<16xf32>, tensor<16xf32>, tensor<16x16xf32>
  }
  %l2 = tile.expand_dims %res#1, 1 : tensor<16xf32> -> tensor<16x1xf32>
  %lb = tile.broadcast %l2 : tensor<16x1xf32> -> tensor<16x16xf32>
  %out = arith.divf %res#2, %lb : tensor<16x16xf32>
  %outb = arith.truncf %out : tensor<16x16xf32> to tensor<16x16xbf16>
  tile.store %o[%zs, %hs, %rows, %cols], %outb : !tile.tensor<?x?x?x16xbf16, mut>[tensor<16x16xi32>, tensor<16x16xi32>, tensor<16x16xi32>, tensor<16x16xi32>], tensor<16x16xbf16>
  // lse = m + log2(l), in base 2.
  %log2l = math.log2 %res#1 : tensor<16xf32>
  %lsev = arith.addf %res#0, %log2l : tensor<16xf32>
  %z1 = tile.splat %zi : tensor<16xi32>
  %h1 = tile.splat %hi : tensor<16xi32>
  %m01 = tile.splat %m0 : tensor<16xi32>
  %r1 = arith.addi %ar, %m01 : tensor<16xi32>
  tile.store %lse[%z1, %h1, %r1], %lsev : !tile.tensor<?x?x?xf32, mut>[tensor<16xi32>, tensor<16xi32>, tensor<16xi32>], tensor<16xf32>
  return
}
