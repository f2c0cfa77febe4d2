// RUN: tile-opt %s -split-input-file -convert-tile-to-nvvm | FileCheck %s --enable-var-scope

// Loads and stores of index tiles of unknown form: a tile is one vector of
// registers per thread; each register's address is computed in 64 bits
// from row-major strides (a static extent folds into them), its mask is
// one unsigned compare per dimension, a masked-off load is skipped by its
// predicate (its register holds zero first), a masked-off store is skipped.
#blocked = #tile.blocked<sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
// CHECK-LABEL: func.func @load_store
// CHECK-SAME: (%[[X:.*]]: !llvm.ptr<1>, %[[Y:.*]]: !llvm.ptr<1>, %[[N:.*]]: i32, %[[I:.*]]: vector<4xi32>, %[[J:.*]]: vector<4xi32>)
// CHECK-SAME: tile.shared_bytes = 0
// CHECK: %[[ROWS:.*]] = llvm.extractvalue %{{.*}}[1] : !llvm.struct<(ptr<1>, i32, i32)>
// CHECK: %[[COLS:.*]] = llvm.extractvalue %{{.*}}[2] : !llvm.struct<(ptr<1>, i32, i32)>
// CHECK: %[[ROWSTRIDE:.*]] = arith.muli %{{.*}}, %c32_i64 : i64
// CHECK: %[[I0:.*]] = vector.extract %[[I]][0] : i32 from vector<4xi32>
// CHECK: %[[J0:.*]] = vector.extract %[[J]][0] : i32 from vector<4xi32>
// CHECK: %[[INROW:.*]] = arith.cmpi ult, %[[I0]], %[[ROWS]] : i32
// CHECK: %[[I064:.*]] = arith.extsi %[[I0]] : i32 to i64
// CHECK: arith.muli %[[I064]], %[[ROWSTRIDE]] : i64
// CHECK: %[[INCOL:.*]] = arith.cmpi ult, %[[J0]], %[[COLS]] : i32
// CHECK: %[[MASK:.*]] = arith.andi %[[INROW]], %[[INCOL]] : i1
// CHECK-NOT: arith.select
// CHECK: %[[ADDR:.*]] = llvm.getelementptr %{{.*}}[%{{.*}}] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
// CHECK: llvm.inline_asm has_side_effects asm_dialect = att "mov.b32 $0, $3;\0A\09@$2 ld.global.b32 $0, [$1+0];", "=&r,l,b,r" %[[ADDR]], %[[MASK]], %{{.*}} : (!llvm.ptr<1>, i1, i32) -> i32
// CHECK-COUNT-3: ld.global.b32 $0, [$1+0];
// CHECK: vector.from_elements {{.*}} : vector<4xf32>
// CHECK: scf.if %{{.*}} {
// CHECK-NEXT: llvm.store %{{.*}}, %{{.*}} : f32, !llvm.ptr<1>
func.func @load_store(%xp: !tile.ptr<f32>, %yp: !tile.ptr<f32>, %n: i32,
                      %i: tensor<16x32xi32, #blocked>, %j: tensor<16x32xi32, #blocked>)
    attributes {tile.kernel, tile.warps = 4 : i32} {
  %x = tile.make_tensor %xp[%n] : !tile.ptr<f32> -> !tile.tensor<?x32xf32>
  %y = tile.make_tensor %yp[%n] : !tile.ptr<f32> -> !tile.tensor<?x32xf32, mut>
  %v = tile.load %x[%i, %j] : !tile.tensor<?x32xf32>[tensor<16x32xi32, #blocked>, tensor<16x32xi32, #blocked>] -> tensor<16x32xf32, #blocked>
  tile.store %y[%i, %j], %v : !tile.tensor<?x32xf32, mut>[tensor<16x32xi32, #blocked>, tensor<16x32xi32, #blocked>], tensor<16x32xf32, #blocked>
  return
}

// -----

// Program ids, aranges from lane and warp bits, splats.
#row = #tile.blocked<sizePerThread = [2], threadsPerWarp = [32], warpsPerCTA = [2], order = [0]>
// CHECK-LABEL: func.func @ids
// CHECK: %[[TID:.*]] = nvvm.read.ptx.sreg.tid.x : i32
// CHECK: %[[LANE:.*]] = arith.andi %[[TID]], %{{.*}} {tegula.lane} : i32
// CHECK: %[[WARPID:.*]] = arith.shrui %[[TID]], %{{.*}} : i32
// CHECK: %[[WARP:.*]] = nvvm.shfl.sync idx %{{.*}}, %[[WARPID]], %{{.*}}, %{{.*}} {tegula.warp} : i32 -> i32
// CHECK: nvvm.read.ptx.sreg.ctaid.y : i32
// CHECK: nvvm.read.ptx.sreg.nctaid.z : i32
// CHECK: arith.shrui %[[LANE]]
// CHECK: arith.shrui %[[WARP]]
// CHECK: vector.from_elements %{{.*}}, %{{.*}} : vector<2xi32>
// CHECK: vector.broadcast %{{.*}} : f32 to vector<2xf32>
func.func @ids(%s: f32) -> (i32, i32, tensor<128xi32, #row>, tensor<128xf32, #row>)
    attributes {tile.warps = 2 : i32} {
  %p = tile.program_id 1
  %n = tile.num_programs 2
  %r = tile.arange : tensor<128xi32, #row>
  %f = tile.splat %s : tensor<128xf32, #row>
  return %p, %n, %r, %f : i32, i32, tensor<128xi32, #row>, tensor<128xf32, #row>
}

// -----

// A dot on tensor cores: bf16 pairs packed into 32-bit registers, one
// mma.sync m16n8k16 per (16 rows, 8 columns, 16 K) fragment.
#mma = #tile.mma<warpsPerCTA = [1, 1]>
#a = #tile.dot_operand<opIdx = 0, parent = #mma>
#b = #tile.dot_operand<opIdx = 1, parent = #mma>
// CHECK-LABEL: func.func @dot
// CHECK-SAME: (%{{.*}}: vector<16xbf16>, %{{.*}}: vector<16xbf16>, %{{.*}}: vector<8xf32>)
// CHECK: vector.from_elements %{{.*}}, %{{.*}} : vector<2xbf16>
// CHECK: llvm.bitcast %{{.*}} : vector<2xbf16> to i32
// CHECK: nvvm.mma.sync A[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] B[%{{.*}}, %{{.*}}] C[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}]
// CHECK-SAME: multiplicandAPtxType = #nvvm.mma_type<bf16>
// CHECK-SAME: shape = #nvvm.shape<m = 16, n = 8, k = 16>
// CHECK-COUNT-3: nvvm.mma.sync
// CHECK-NOT: nvvm.mma.sync
// CHECK: return {{.*}} : vector<8xf32>
func.func @dot(%a: tensor<16x32xbf16, #a>, %b: tensor<32x16xbf16, #b>,
               %c: tensor<16x16xf32, #mma>) -> tensor<16x16xf32, #mma>
    attributes {tile.warps = 1 : i32} {
  %d = tile.dot %a, %b, %c : tensor<16x32xbf16, #a>, tensor<32x16xbf16, #b> -> tensor<16x16xf32, #mma>
  return %d : tensor<16x16xf32, #mma>
}

// -----

// f16 fragments go to mma.sync as vector<2xf16>.
#mma = #tile.mma<warpsPerCTA = [1, 1]>
#a = #tile.dot_operand<opIdx = 0, parent = #mma>
#b = #tile.dot_operand<opIdx = 1, parent = #mma>
// CHECK-LABEL: func.func @dot_f16
// CHECK: nvvm.mma.sync A[{{.*}}] B[{{.*}}] C[{{.*}}] {{.*}} : (vector<2xf16>, vector<2xf16>, f32) -> !llvm.struct<(f32, f32, f32, f32)>
func.func @dot_f16(%a: tensor<16x16xf16, #a>, %b: tensor<16x16xf16, #b>,
                   %c: tensor<16x16xf32, #mma>) -> tensor<16x16xf32, #mma>
    attributes {tile.warps = 1 : i32} {
  %d = tile.dot %a, %b, %c : tensor<16x16xf16, #a>, tensor<16x16xf16, #b> -> tensor<16x16xf32, #mma>
  return %d : tensor<16x16xf32, #mma>
}

// -----

// Row maxima of an mma tile: registers of a row first, then butterfly
// shuffles over the two lane bits that move along columns; no shared memory.
#mma = #tile.mma<warpsPerCTA = [4, 1]>
// CHECK-LABEL: func.func @row_max
// CHECK-SAME: tile.shared_bytes = 0
// CHECK: arith.maximumf
// CHECK: nvvm.shfl.sync bfly %{{.*}}, %{{.*}}, %[[ONE:.*]], %{{.*}} : f32 -> f32
// CHECK: nvvm.shfl.sync bfly %{{.*}}, %{{.*}}, %[[TWO:.*]], %{{.*}} : f32 -> f32
// CHECK-NOT: nvvm.barrier0
// CHECK: return
func.func @row_max(%s: tensor<64x32xf32, #mma>) -> tensor<64xf32, #tile.slice<dim = 1, parent = #mma>>
    attributes {tile.warps = 4 : i32} {
  %m = tile.reduce max %s, 1 : tensor<64x32xf32, #mma> -> tensor<64xf32, #tile.slice<dim = 1, parent = #mma>>
  return %m : tensor<64xf32, #tile.slice<dim = 1, parent = #mma>>
}

// -----

// Column sums cross the warps: partials go through shared memory between
// two barriers.
#mma = #tile.mma<warpsPerCTA = [4, 1]>
// CHECK-LABEL: func.func @column_sum
// CHECK-SAME: tile.shared_bytes = 512
// CHECK: nvvm.shfl.sync bfly
// CHECK: llvm.mlir.addressof @__tegula_shared : !llvm.ptr<3>
// CHECK: llvm.store %{{.*}}, %{{.*}} : f32, !llvm.ptr<3>
// CHECK: nvvm.barrier0
// CHECK-COUNT-4: llvm.load %{{.*}} : !llvm.ptr<3> -> f32
// CHECK: nvvm.barrier0
func.func @column_sum(%s: tensor<64x32xf32, #mma>) -> tensor<32xf32, #tile.slice<dim = 0, parent = #mma>>
    attributes {tile.warps = 4 : i32} {
  %m = tile.reduce sum %s, 0 : tensor<64x32xf32, #mma> -> tensor<32xf32, #tile.slice<dim = 0, parent = #mma>>
  return %m : tensor<32xf32, #tile.slice<dim = 0, parent = #mma>>
}

// -----

// An i64 reduction shuffles each value as two 32-bit halves and combines in
// 64 bits; partials cross warps as i64 (8 bytes a slot).
#blocked = #tile.blocked<sizePerThread = [1, 2], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]>
// CHECK-LABEL: func.func @i64_reductions
// CHECK-SAME: tile.shared_bytes = 256
// CHECK: arith.maxsi %{{.*}}, %{{.*}} : i64
// CHECK: %[[LO:.*]] = arith.trunci %[[V:.*]] : i64 to i32
// CHECK: %[[HI64:.*]] = arith.shrui %[[V]], %{{.*}} : i64
// CHECK: %[[HI:.*]] = arith.trunci %[[HI64]] : i64 to i32
// CHECK: %[[SLO:.*]] = nvvm.shfl.sync bfly %{{.*}}, %[[LO]], %{{.*}}, %{{.*}} : i32 -> i32
// CHECK: arith.extui %[[SLO]] : i32 to i64
// CHECK: %[[SHI:.*]] = nvvm.shfl.sync bfly %{{.*}}, %[[HI]], %{{.*}}, %{{.*}} : i32 -> i32
// CHECK: arith.extui %[[SHI]] : i32 to i64
// CHECK: arith.shli
// CHECK: arith.ori
// CHECK: arith.maxsi %{{.*}}, %{{.*}} : i64
// CHECK: arith.addi %{{.*}}, %{{.*}} : i64
// CHECK: llvm.store %{{.*}}, %{{.*}} : i64, !llvm.ptr<3>
// CHECK: nvvm.barrier0
// CHECK-COUNT-4: llvm.load %{{.*}} : !llvm.ptr<3> -> i64
func.func @i64_reductions(%s: tensor<32x8xi64, #blocked>)
    -> (tensor<32xi64, #tile.slice<dim = 1, parent = #blocked>>, tensor<8xi64, #tile.slice<dim = 0, parent = #blocked>>)
    attributes {tile.warps = 4 : i32} {
  %m = tile.reduce max %s, 1 : tensor<32x8xi64, #blocked> -> tensor<32xi64, #tile.slice<dim = 1, parent = #blocked>>
  %t = tile.reduce sum %s, 0 : tensor<32x8xi64, #blocked> -> tensor<8xi64, #tile.slice<dim = 0, parent = #blocked>>
  return %m, %t : tensor<32xi64, #tile.slice<dim = 1, parent = #blocked>>, tensor<8xi64, #tile.slice<dim = 0, parent = #blocked>>
}

// -----

// Half-precision partials cross warps as f32: the scratch area holds 4
// bytes a slot (4 warps x 32 outputs x 4 bytes), not 2.
#blocked = #tile.blocked<sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]>
// CHECK-LABEL: func.func @f16_across_warps
// CHECK-SAME: tile.shared_bytes = 512
// CHECK: llvm.store %{{.*}}, %{{.*}} : f32, !llvm.ptr<3>
func.func @f16_across_warps(%s: tensor<4x32xf16, #blocked>) -> tensor<32xf16, #tile.slice<dim = 0, parent = #blocked>>
    attributes {tile.warps = 4 : i32} {
  %t = tile.reduce sum %s, 0 : tensor<4x32xf16, #blocked> -> tensor<32xf16, #tile.slice<dim = 0, parent = #blocked>>
  return %t : tensor<32xf16, #tile.slice<dim = 0, parent = #blocked>>
}

// -----

// Unit dimensions and broadcasts stay in registers (shuffles of the
// register vector); the accumulator-to-operand-A conversion of attention is
// a register permutation too; a blocked-to-mma conversion goes through
// shared memory.
#mma = #tile.mma<warpsPerCTA = [4, 1]>
#a = #tile.dot_operand<opIdx = 0, parent = #mma>
#blocked = #tile.blocked<sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
// The row statistics hold rows g and g + 8 (2 registers); as a [64, 1]
// column they gain a replicated column register, and broadcast over 16
// columns each register feeds the column registers of its row.
// CHECK-LABEL: func.func @layouts
// CHECK-SAME: tile.shared_bytes = 4096
// CHECK: %[[COL:.*]] = vector.shuffle %{{.*}}, %{{.*}} [0, 0, 1, 1] : vector<2xf32>, vector<2xf32>
// CHECK: vector.shuffle %[[COL]], %[[COL]] [0, 0, 2, 2, 0, 0, 2, 2] : vector<4xf32>, vector<4xf32>
// CHECK: vector.shuffle %{{.*}}, %{{.*}} [0, 1, 2, 3, 4, 5, 6, 7] : vector<8xbf16>, vector<8xbf16>
// Through shared memory, each thread's runs of a row move as vectors: 4
// f32 from the blocked layout, pairs into the mma layout.
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<3>
// CHECK: nvvm.barrier0
// CHECK: llvm.load %{{.*}} {alignment = 8 : i64} : !llvm.ptr<3> -> vector<2xf32>
// CHECK: nvvm.barrier0
func.func @layouts(%rows: tensor<64xf32, #tile.slice<dim = 1, parent = #mma>>,
                   %p: tensor<64x16xbf16, #mma>, %x: tensor<64x16xf32, #blocked>)
    -> (tensor<64x16xf32, #mma>, tensor<64x16xbf16, #a>, tensor<64x16xf32, #mma>)
    attributes {tile.warps = 4 : i32} {
  %e = tile.expand_dims %rows, 1 : tensor<64xf32, #tile.slice<dim = 1, parent = #mma>> -> tensor<64x1xf32, #mma>
  %b = tile.broadcast %e : tensor<64x1xf32, #mma> -> tensor<64x16xf32, #mma>
  %pa = tile.convert_layout %p : tensor<64x16xbf16, #mma> -> tensor<64x16xbf16, #a>
  %xm = tile.convert_layout %x : tensor<64x16xf32, #blocked> -> tensor<64x16xf32, #mma>
  return %b, %pa, %xm : tensor<64x16xf32, #mma>, tensor<64x16xbf16, #a>, tensor<64x16xf32, #mma>
}

// -----

// Transcendentals use the approximate SFU instructions in f32; exp2 flagged
// `afn` (tile-fast-math) is the flush-to-zero ex2, unflagged the other.
#blocked = #tile.blocked<sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [1], order = [0]>
// CHECK-LABEL: func.func @math
// CHECK: arith.extf %{{.*}} : bf16 to f32
// CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"(%{{.*}}) : (f32) -> f32
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: llvm.call_intrinsic "llvm.nvvm.lg2.approx.f"
// CHECK: llvm.intr.sqrt
// CHECK: llvm.call_intrinsic "llvm.nvvm.rsqrt.approx.f"
// CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.f32"(%{{.*}}) : (f32) -> f32
func.func @math(%x: tensor<32xbf16, #blocked>, %y: tensor<32xf32, #blocked>)
    -> (tensor<32xbf16, #blocked>, tensor<32xf32, #blocked>, tensor<32xf32, #blocked>, tensor<32xf32, #blocked>, tensor<32xf32, #blocked>)
    attributes {tile.warps = 1 : i32} {
  %e = math.exp2 %x fastmath<afn> : tensor<32xbf16, #blocked>
  %l = math.log2 %y : tensor<32xf32, #blocked>
  %s = math.sqrt %y : tensor<32xf32, #blocked>
  %r = math.rsqrt %y : tensor<32xf32, #blocked>
  %n = math.exp2 %y : tensor<32xf32, #blocked>
  return %e, %l, %s, %r, %n : tensor<32xbf16, #blocked>, tensor<32xf32, #blocked>, tensor<32xf32, #blocked>, tensor<32xf32, #blocked>, tensor<32xf32, #blocked>
}

// -----

// Pipelines: rings planned at the start of shared memory, counters in
// allocas; a push stores its block into stage (pushes % stages) after a
// barrier; a pop waits at a barrier and reads stage (pops % stages).
#blocked = #tile.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
// CHECK-LABEL: func.func @pipeline
// CHECK-SAME: tile.shared_bytes = 8192
// CHECK: llvm.alloca %{{.*}} x i32 : (i32) -> !llvm.ptr
// CHECK: nvvm.barrier0
// CHECK: %[[PUSHED:.*]] = llvm.load %{{.*}} : !llvm.ptr -> i32
// CHECK: arith.remui %[[PUSHED]], %{{.*}} : i32
// CHECK: llvm.store %{{.*}}, %{{.*}} : bf16, !llvm.ptr<3>
// CHECK: nvvm.barrier0
// CHECK: %[[POPPED:.*]] = llvm.load %{{.*}} : !llvm.ptr -> i32
// CHECK: arith.remui %[[POPPED]], %{{.*}} : i32
// CHECK: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<8xbf16>
func.func @pipeline(%kp: !tile.ptr<bf16>, %n: i32, %i: tensor<32x64xi32, #blocked>)
    -> tensor<32x64xbf16, #blocked> attributes {tile.kernel, tile.warps = 4 : i32} {
  %k = tile.make_tensor %kp[%n] : !tile.ptr<bf16> -> !tile.tensor<?x64xbf16>
  %p = tile.pipeline.create : !tile.pipeline<32x64xbf16, stages = 2>
  tile.pipeline.push %p, %k[%i, %i] : !tile.pipeline<32x64xbf16, stages = 2>, !tile.tensor<?x64xbf16>[tensor<32x64xi32, #blocked>, tensor<32x64xi32, #blocked>]
  %t = tile.pipeline.pop %p : !tile.pipeline<32x64xbf16, stages = 2> -> tensor<32x64xbf16, #blocked>
  return %t : tensor<32x64xbf16, #blocked>
}

// -----

// Indices built from aranges are contiguous along the block's fastest
// dimension and aligned, and the row length (64) keeps groups whole: each
// thread moves its 4 f32 per row with one 16-byte access.
#blocked = #tile.blocked<sizePerThread = [1, 4], threadsPerWarp = [2, 16], warpsPerCTA = [4, 1], order = [1, 0]>
#rows = #tile.slice<dim = 1, parent = #blocked>
#cols = #tile.slice<dim = 0, parent = #blocked>
// CHECK-LABEL: func.func @vectorized
// CHECK-COUNT-4: ld.global.v4.b32 {$0, $1, $2, $3}, [$4+{{[0-9]+}}];
// CHECK-NOT: ld.global.b32
// CHECK-COUNT-4: llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<1>
// CHECK-LABEL: func.func @not_vectorized
// CHECK-COUNT-16: ld.global.b32 $0, [$1+{{[0-9]+}}];
func.func @vectorized(%xp: !tile.ptr<f32>, %yp: !tile.ptr<f32>, %n: i32)
    attributes {tile.kernel, tile.warps = 4 : i32} {
  %x = tile.make_tensor %xp[%n] : !tile.ptr<f32> -> !tile.tensor<?x64xf32>
  %y = tile.make_tensor %yp[%n] : !tile.ptr<f32> -> !tile.tensor<?x64xf32, mut>
  %c32 = arith.constant 32 : i32
  %pid = tile.program_id 0
  %row0 = arith.muli %pid, %c32 : i32
  %r = tile.arange : tensor<32xi32, #rows>
  %s = tile.splat %row0 : tensor<32xi32, #rows>
  %rr = arith.addi %s, %r : tensor<32xi32, #rows>
  %re = tile.expand_dims %rr, 1 : tensor<32xi32, #rows> -> tensor<32x1xi32, #blocked>
  %ri = tile.broadcast %re : tensor<32x1xi32, #blocked> -> tensor<32x64xi32, #blocked>
  %c = tile.arange : tensor<64xi32, #cols>
  %ce = tile.expand_dims %c, 0 : tensor<64xi32, #cols> -> tensor<1x64xi32, #blocked>
  %ci = tile.broadcast %ce : tensor<1x64xi32, #blocked> -> tensor<32x64xi32, #blocked>
  %v = tile.load %x[%ri, %ci] : !tile.tensor<?x64xf32>[tensor<32x64xi32, #blocked>, tensor<32x64xi32, #blocked>] -> tensor<32x64xf32, #blocked>
  tile.store %y[%ri, %ci], %v : !tile.tensor<?x64xf32, mut>[tensor<32x64xi32, #blocked>, tensor<32x64xi32, #blocked>], tensor<32x64xf32, #blocked>
  return
}
// Column indices of unknown provenance: one access per element.
func.func @not_vectorized(%xp: !tile.ptr<f32>, %n: i32, %ci: tensor<32x64xi32, #blocked>)
    -> tensor<32x64xf32, #blocked> attributes {tile.kernel, tile.warps = 4 : i32} {
  %x = tile.make_tensor %xp[%n] : !tile.ptr<f32> -> !tile.tensor<?x64xf32>
  %v = tile.load %x[%ci, %ci] : !tile.tensor<?x64xf32>[tensor<32x64xi32, #blocked>, tensor<32x64xi32, #blocked>] -> tensor<32x64xf32, #blocked>
  return %v : tensor<32x64xf32, #blocked>
}

// -----

// Masks keep vectors when they are constant over each group: a column bound
// of 48 (a multiple of 4) never splits a group of 4 aligned columns; a bound
// of unknown divisibility (%m) may, so that access moves one element at a
// time.
#blocked = #tile.blocked<sizePerThread = [1, 4], threadsPerWarp = [2, 16], warpsPerCTA = [4, 1], order = [1, 0]>
#rows = #tile.slice<dim = 1, parent = #blocked>
#cols = #tile.slice<dim = 0, parent = #blocked>
// CHECK-LABEL: func.func @masked_vectorized
// CHECK-COUNT-4: ld.global.v4.b32 {$0, $1, $2, $3}, [$4+{{[0-9]+}}];
// CHECK-COUNT-4: llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<1>
// CHECK-LABEL: func.func @masked_not_vectorized
// CHECK-COUNT-16: ld.global.b32 $0, [$1+{{[0-9]+}}];
func.func @masked_vectorized(%xp: !tile.ptr<f32>, %yp: !tile.ptr<f32>, %n: i32)
    attributes {tile.kernel, tile.warps = 4 : i32} {
  %x = tile.make_tensor %xp[%n] : !tile.ptr<f32> -> !tile.tensor<?x64xf32>
  %y = tile.make_tensor %yp[%n] : !tile.ptr<f32> -> !tile.tensor<?x64xf32, mut>
  %r = tile.arange : tensor<32xi32, #rows>
  %re = tile.expand_dims %r, 1 : tensor<32xi32, #rows> -> tensor<32x1xi32, #blocked>
  %ri = tile.broadcast %re : tensor<32x1xi32, #blocked> -> tensor<32x64xi32, #blocked>
  %c = tile.arange : tensor<64xi32, #cols>
  %c48 = arith.constant dense<48> : tensor<64xi32, #cols>
  %keep = arith.cmpi slt, %c, %c48 : tensor<64xi32, #cols>
  %ke = tile.expand_dims %keep, 0 : tensor<64xi1, #cols> -> tensor<1x64xi1, #blocked>
  %mask = tile.broadcast %ke : tensor<1x64xi1, #blocked> -> tensor<32x64xi1, #blocked>
  %ce = tile.expand_dims %c, 0 : tensor<64xi32, #cols> -> tensor<1x64xi32, #blocked>
  %ci = tile.broadcast %ce : tensor<1x64xi32, #blocked> -> tensor<32x64xi32, #blocked>
  %v = tile.load %x[%ri, %ci] mask %mask : !tile.tensor<?x64xf32>[tensor<32x64xi32, #blocked>, tensor<32x64xi32, #blocked>] -> tensor<32x64xf32, #blocked>
  tile.store %y[%ri, %ci], %v mask %mask : !tile.tensor<?x64xf32, mut>[tensor<32x64xi32, #blocked>, tensor<32x64xi32, #blocked>], tensor<32x64xf32, #blocked>
  return
}
func.func @masked_not_vectorized(%xp: !tile.ptr<f32>, %n: i32, %m: i32)
    -> tensor<32x64xf32, #blocked> attributes {tile.kernel, tile.warps = 4 : i32} {
  %x = tile.make_tensor %xp[%n] : !tile.ptr<f32> -> !tile.tensor<?x64xf32>
  %r = tile.arange : tensor<32xi32, #rows>
  %re = tile.expand_dims %r, 1 : tensor<32xi32, #rows> -> tensor<32x1xi32, #blocked>
  %ri = tile.broadcast %re : tensor<32x1xi32, #blocked> -> tensor<32x64xi32, #blocked>
  %c = tile.arange : tensor<64xi32, #cols>
  %bound = tile.splat %m : tensor<64xi32, #cols>
  %keep = arith.cmpi slt, %c, %bound : tensor<64xi32, #cols>
  %ke = tile.expand_dims %keep, 0 : tensor<64xi1, #cols> -> tensor<1x64xi1, #blocked>
  %mask = tile.broadcast %ke : tensor<1x64xi1, #blocked> -> tensor<32x64xi1, #blocked>
  %ce = tile.expand_dims %c, 0 : tensor<64xi32, #cols> -> tensor<1x64xi32, #blocked>
  %ci = tile.broadcast %ce : tensor<1x64xi32, #blocked> -> tensor<32x64xi32, #blocked>
  %v = tile.load %x[%ri, %ci] mask %mask : !tile.tensor<?x64xf32>[tensor<32x64xi32, #blocked>, tensor<32x64xi32, #blocked>] -> tensor<32x64xf32, #blocked>
  return %v : tensor<32x64xf32, #blocked>
}

// -----

// A push whose block moves in aligned 16-byte groups copies with cp.async
// (a masked-off group's ignore-src predicate is set: it reads nothing and
// zero-fills); the pop waits for the copies before its barrier.
#blocked = #tile.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
#rows = #tile.slice<dim = 1, parent = #blocked>
#cols = #tile.slice<dim = 0, parent = #blocked>
// CHECK-LABEL: func.func @async_push
// CHECK: nvvm.barrier0
// CHECK: %[[SKIP:.*]] = arith.xori %{{.*}}, %true : i1
// CHECK: llvm.inline_asm has_side_effects asm_dialect = att "cp.async.cg.shared.global [$0], [$1], 16, $2;", "l,l,b,~{memory}" %{{.*}}, %{{.*}}, %[[SKIP]] : (!llvm.ptr<3>, !llvm.ptr<1>, i1) -> ()
// CHECK: nvvm.cp.async.commit.group
// CHECK: nvvm.cp.async.wait.group 0
// CHECK-NEXT: nvvm.barrier0
func.func @async_push(%kp: !tile.ptr<bf16>, %n: i32, %row0: i32)
    -> tensor<32x64xbf16, #blocked> attributes {tile.kernel, tile.warps = 4 : i32} {
  %k = tile.make_tensor %kp[%n] : !tile.ptr<bf16> -> !tile.tensor<?x64xbf16>
  %p = tile.pipeline.create : !tile.pipeline<32x64xbf16, stages = 2>
  %r = tile.arange : tensor<32xi32, #rows>
  %s = tile.splat %row0 : tensor<32xi32, #rows>
  %rr = arith.addi %s, %r : tensor<32xi32, #rows>
  %re = tile.expand_dims %rr, 1 : tensor<32xi32, #rows> -> tensor<32x1xi32, #blocked>
  %ri = tile.broadcast %re : tensor<32x1xi32, #blocked> -> tensor<32x64xi32, #blocked>
  %c = tile.arange : tensor<64xi32, #cols>
  %ce = tile.expand_dims %c, 0 : tensor<64xi32, #cols> -> tensor<1x64xi32, #blocked>
  %ci = tile.broadcast %ce : tensor<1x64xi32, #blocked> -> tensor<32x64xi32, #blocked>
  tile.pipeline.push %p, %k[%ri, %ci] : !tile.pipeline<32x64xbf16, stages = 2>, !tile.tensor<?x64xbf16>[tensor<32x64xi32, #blocked>, tensor<32x64xi32, #blocked>]
  %t = tile.pipeline.pop %p : !tile.pipeline<32x64xbf16, stages = 2> -> tensor<32x64xbf16, #blocked>
  return %t : tensor<32x64xbf16, #blocked>
}

// -----

// A loop body that pops two rings and then pushes their next blocks needs
// one wait and one barrier: the second pop is covered by the first's wait
// (no push came between), and each push's barrier is taken only when it
// would write the stage its ring's last pop read. Before the loop, the
// first push needs a barrier and the second, whose ring nobody read since,
// none.
#blocked = #tile.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
// CHECK-LABEL: func.func @pipeline_sync
// CHECK: nvvm.barrier0
// CHECK-NOT: nvvm.barrier0
// CHECK: scf.for
// CHECK: nvvm.cp.async.wait.group 0
// CHECK-NEXT: nvvm.barrier0
// CHECK-NOT: nvvm.cp.async.wait.group
// CHECK-NOT: nvvm.barrier0
// CHECK: scf.if
// CHECK: llvm.inline_asm has_side_effects {{.*}}"{ .reg .pred p; setp.ne.b32 p, $0, 0; @p bar.sync 0; }", "r"
// CHECK-NOT: nvvm.barrier0
// CHECK: llvm.inline_asm has_side_effects {{.*}}@p bar.sync 0;
// CHECK-NOT: nvvm.barrier0
// CHECK: scf.yield
func.func @pipeline_sync(%kp: !tile.ptr<bf16>, %vp: !tile.ptr<bf16>, %n: i32,
                         %ri: tensor<32x64xi32, #blocked>, %ci: tensor<32x64xi32, #blocked>,
                         %more: i1) -> tensor<32x64xbf16, #blocked>
    attributes {tile.kernel, tile.warps = 4 : i32} {
  %k = tile.make_tensor %kp[%n] : !tile.ptr<bf16> -> !tile.tensor<?x64xbf16>
  %v = tile.make_tensor %vp[%n] : !tile.ptr<bf16> -> !tile.tensor<?x64xbf16>
  %kr = tile.pipeline.create : !tile.pipeline<32x64xbf16, stages = 2>
  %vr = tile.pipeline.create : !tile.pipeline<32x64xbf16, stages = 2>
  tile.pipeline.push %kr, %k[%ri, %ci] : !tile.pipeline<32x64xbf16, stages = 2>, !tile.tensor<?x64xbf16>[tensor<32x64xi32, #blocked>, tensor<32x64xi32, #blocked>]
  tile.pipeline.push %vr, %v[%ri, %ci] : !tile.pipeline<32x64xbf16, stages = 2>, !tile.tensor<?x64xbf16>[tensor<32x64xi32, #blocked>, tensor<32x64xi32, #blocked>]
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant dense<0.0> : tensor<32x64xbf16, #blocked>
  %sum = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %zero) -> (tensor<32x64xbf16, #blocked>) {
    %kt = tile.pipeline.pop %kr : !tile.pipeline<32x64xbf16, stages = 2> -> tensor<32x64xbf16, #blocked>
    %vt = tile.pipeline.pop %vr : !tile.pipeline<32x64xbf16, stages = 2> -> tensor<32x64xbf16, #blocked>
    scf.if %more {
      tile.pipeline.push %kr, %k[%ri, %ci] : !tile.pipeline<32x64xbf16, stages = 2>, !tile.tensor<?x64xbf16>[tensor<32x64xi32, #blocked>, tensor<32x64xi32, #blocked>]
      tile.pipeline.push %vr, %v[%ri, %ci] : !tile.pipeline<32x64xbf16, stages = 2>, !tile.tensor<?x64xbf16>[tensor<32x64xi32, #blocked>, tensor<32x64xi32, #blocked>]
    }
    %kv = arith.addf %kt, %vt : tensor<32x64xbf16, #blocked>
    %next = arith.addf %acc, %kv : tensor<32x64xbf16, #blocked>
    scf.yield %next : tensor<32x64xbf16, #blocked>
  }
  return %sum : tensor<32x64xbf16, #blocked>
}

// -----

// Pops straight into mma operand fragments use ldmatrix: A fragments
// (pairs along the stage's rows) with plain loads, B fragments whose pairs
// run down the stage's columns with .trans loads. Rows of 128 bytes are
// swizzled: the 16-byte chunk is XORed with the row modulo 8.
#mma = #tile.mma<warpsPerCTA = [1, 1]>
#a = #tile.dot_operand<opIdx = 0, parent = #mma>
#b = #tile.dot_operand<opIdx = 1, parent = #mma>
// CHECK-LABEL: func.func @ldmatrix_pops
// CHECK: %[[FLIP:.*]] = arith.muli %{{.*}}, %c8_i32{{.*}} : i32
// CHECK-NEXT: arith.xori %{{.*}}, %[[FLIP]] : i32
// CHECK-COUNT-4: nvvm.ldmatrix %{{.*}} {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<row>, num = 4 : i32, shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>} : (!llvm.ptr<3>) -> !llvm.struct<(i32, i32, i32, i32)>
// CHECK-COUNT-4: nvvm.ldmatrix %{{.*}} {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<col>, num = 4 : i32
// CHECK-NOT: llvm.load %{{.*}} : !llvm.ptr<3> -> bf16
func.func @ldmatrix_pops() -> (tensor<16x64xbf16, #a>, tensor<64x16xbf16, #b>)
    attributes {tile.warps = 1 : i32} {
  %pa = tile.pipeline.create : !tile.pipeline<16x64xbf16, stages = 2>
  %pb = tile.pipeline.create : !tile.pipeline<64x16xbf16, stages = 2>
  %x = tile.pipeline.pop %pa : !tile.pipeline<16x64xbf16, stages = 2> -> tensor<16x64xbf16, #a>
  %y = tile.pipeline.pop %pb : !tile.pipeline<64x16xbf16, stages = 2> -> tensor<64x16xbf16, #b>
  return %x, %y : tensor<16x64xbf16, #a>, tensor<64x16xbf16, #b>
}

// -----

// A transposed pop reads the result's layout in the stage's coordinates:
// K^T as operand B of a [K = 64, N = 16] dot from a [16, 64] K stage has its
// pairs along the stage's rows, so plain (not .trans) ldmatrix serves it.
#mma = #tile.mma<warpsPerCTA = [1, 1]>
#b = #tile.dot_operand<opIdx = 1, parent = #mma>
// CHECK-LABEL: func.func @transposed_pop
// CHECK-COUNT-4: nvvm.ldmatrix %{{.*}} {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<row>, num = 4 : i32
// CHECK-NOT: mma_layout<col>
// CHECK: return
func.func @transposed_pop() -> tensor<64x16xbf16, #b> attributes {tile.warps = 1 : i32} {
  %kp = tile.pipeline.create : !tile.pipeline<16x64xbf16, stages = 2>
  %kt = tile.pipeline.pop %kp transpose : !tile.pipeline<16x64xbf16, stages = 2> -> tensor<64x16xbf16, #b>
  return %kt : tensor<64x16xbf16, #b>
}

// -----

// A kernel's bool parameter is 32 bits in the ABI: the argument becomes i32
// and the body uses `!= 0`. Other functions keep their i1.
// CHECK-LABEL: func.func @bool_param
// CHECK-SAME: (%[[FLAG:.*]]: i32, %{{.*}}: f32) -> f32
// CHECK: %[[BIT:.*]] = arith.cmpi ne, %[[FLAG]], %{{.*}} : i32
// CHECK: arith.select %[[BIT]]
func.func @bool_param(%flag: i1, %x: f32) -> f32 attributes {tile.kernel} {
  %neg = arith.negf %x : f32
  %r = arith.select %flag, %neg, %x : f32
  return %r : f32
}
// CHECK-LABEL: func.func @bool_helper
// CHECK-SAME: (%{{.*}}: i1)
func.func @bool_helper(%flag: i1) -> i1 {
  return %flag : i1
}
