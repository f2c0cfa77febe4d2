#!/usr/bin/env bash
# Compiles the shipped kernels here (tilec needs MLIR, the GPU machine has
# none) into .device-bundle/kernels/CONFIG/ for scripts/gpu/check-kernels.sh,
# and builds the MLIR-free runner next to them.
#   scripts/gpu/stage-kernels.sh            (after scripts/build.sh)
# TEGULA_STAGE_DIR puts the bundles elsewhere and TEGULA_COMPILE_ONLY=1 skips
# the runner and the inputs (scripts/compare-kernels.sh uses both); ONLY, a
# bash =~ regex, compiles only the configurations it matches (as
# check-kernels.sh's ONLY selects runs).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
stage=${TEGULA_STAGE_DIR:-$root/.device-bundle}
compile_only=${TEGULA_COMPILE_ONLY:-0}
[ "$compile_only" = 1 ] || "$root/scripts/gpu/run-gpu-tests.sh" >/dev/null
rm -rf "$stage/kernels"
# The compiles are queued and run together at the end, one per core
# (scripts/tilec-queue.sh).
source "$root/scripts/tilec-queue.sh"

# NAME FILE TARGET ARGS...: one compiled configuration.
compile() {
  local name=$1 file=$2 target=$3
  shift 3
  [ -z "${ONLY:-}" ] || [[ $name =~ $ONLY ]] || return 0
  mkdir -p "$stage/kernels/$name"
  tilec_queue "$root/kernels/$file" --target "$target" -o "$stage/kernels/$name" "$@"
}
for target in sm_80 sm_90a; do
  compile attn-d64-$target attention_fwd.tile $target -D D=64 --reference attention_fwd
  compile attn-d128-$target attention_fwd.tile $target -D D=128 --reference attention_fwd
  compile attn-d64-causal-$target attention_fwd.tile $target -D D=64 -D CAUSAL=true --reference attention_fwd
  compile attn-d64-s3-$target attention_fwd.tile $target -k attention_fwd -D D=64 -D BLOCK_N=64 -D STAGES=3 --reference attention_fwd
  compile attn-d64-s3-causal-$target attention_fwd.tile $target -k attention_fwd -D D=64 -D BLOCK_N=64 -D STAGES=3 -D CAUSAL=true --reference attention_fwd
  # One warpgroup (64-row blocks of a 64-wide head take 4 warps; the
  # bench's three-stage ones are checked by its sweep, and spill on sm_80).
  compile attn-d64-w4-$target attention_fwd.tile $target -k attention_fwd -D D=64 -D BLOCK_M=64 -D BLOCK_N=64 --reference attention_fwd
  compile attn-d64-w4-causal-$target attention_fwd.tile $target -k attention_fwd -D D=64 -D BLOCK_M=64 -D BLOCK_N=64 -D CAUSAL=true --reference attention_fwd
  compile attn-d128-causal-f16-$target attention_fwd.tile $target -D D=128 -D CAUSAL=true -D DT=f16 --reference attention_fwd
  compile attn-decode-$target attention_fwd.tile $target -D BLOCK_M=16 -D BLOCK_N=64 -D D=64 --reference attention_fwd
  # attention_gqa.tile's kernels, one directory each (a bundle names one
  # reference); bench/run.py (attention_family) times the sm_90a builds.
  for causal in false true; do
    c=$([ $causal = true ] && echo -causal || true)
    compile attn-gqa$c-$target attention_gqa.tile $target -k attention_gqa -D D=128 -D CAUSAL=$causal --reference attention_gqa
    compile attn-gqa-decode$c-$target attention_gqa.tile $target -k attention_gqa_decode -D D=128 -D CAUSAL=$causal --reference attention_gqa
    compile attn-gqa-split$c-$target attention_gqa.tile $target -k attention_gqa_decode_split -D D=128 -D CAUSAL=$causal --reference attention_split
  done
  compile attn-combine-$target attention_gqa.tile $target -k attention_combine -D D=128 --reference attention_combine
  compile attn-varlen-$target attention_varlen.tile $target -k attention_varlen -D D=128 --reference attention_varlen
  compile attn-varlen-causal-$target attention_varlen.tile $target -k attention_varlen -D D=128 -D CAUSAL=true --reference attention_varlen
  # The varlen training kernels (separate query and key bounds):
  # attention_varlen_fwd and attention_varlen_bwd.tile's three in one
  # directory, dK/dV's GROUPED build in another; each kernel's reference
  # is its own name.
  for d in 64 128; do
    for causal in false true; do
      c=$([ $causal = true ] && echo -causal || true)
      compile attn-varlen-train-d$d$c-$target attention_varlen.tile $target -k attention_varlen_fwd -D D=$d -D CAUSAL=$causal
      compile attn-varlen-train-d$d$c-$target attention_varlen_bwd.tile $target -D D=$d -D CAUSAL=$causal
      compile attn-varlen-train-grouped-d$d$c-$target attention_varlen_bwd.tile $target -k attention_varlen_bwd_dkdv -D D=$d -D CAUSAL=$causal -D GROUPED=true
    done
  done
  compile attn-varlen-train-d64-causal-f16-$target attention_varlen.tile $target -k attention_varlen_fwd -D D=64 -D CAUSAL=true -D DT=f16
  compile attn-varlen-train-d64-causal-f16-$target attention_varlen_bwd.tile $target -D D=64 -D CAUSAL=true -D DT=f16
  for page in 16 64 256; do
    compile attn-paged-p$page-$target attention_paged.tile $target -k attention_paged -D D=128 -D PAGE=$page --reference attention_paged
    compile attn-paged-flat-p$page-$target attention_paged.tile $target -k attention_paged_flat -D D=128 -D PAGE=$page --reference attention_paged
    compile attn-paged-split-p$page-$target attention_paged.tile $target -k attention_paged_split -D D=128 -D PAGE=$page --reference attention_paged_split
  done
  # attention_bwd.tile: its three kernels in one directory (one reference,
  # attention_bwd, checks them all); bench/run.py (attention_bwd) times the
  # sm_90a builds.
  compile attn-bwd-d64-$target attention_bwd.tile $target -D D=64 --reference attention_bwd
  compile attn-bwd-d64-causal-$target attention_bwd.tile $target -D D=64 -D CAUSAL=true --reference attention_bwd
  compile attn-bwd-d128-$target attention_bwd.tile $target -D D=128 --reference attention_bwd
  compile attn-bwd-d128-causal-$target attention_bwd.tile $target -D D=128 -D CAUSAL=true --reference attention_bwd
  compile attn-bwd-d64-causal-f16-$target attention_bwd.tile $target -D D=64 -D CAUSAL=true -D DT=f16 --reference attention_bwd
  # dK/dV for grouped K/V heads (H > HKV: GQA, MQA) is its GROUPED build.
  compile attn-bwd-grouped-d64-$target attention_bwd.tile $target -k attention_bwd_dkdv -D D=64 -D GROUPED=true --reference attention_bwd
  compile attn-bwd-grouped-d64-causal-$target attention_bwd.tile $target -k attention_bwd_dkdv -D D=64 -D CAUSAL=true -D GROUPED=true --reference attention_bwd
  compile attn-bwd-grouped-d128-$target attention_bwd.tile $target -k attention_bwd_dkdv -D D=128 -D GROUPED=true --reference attention_bwd
  compile attn-bwd-grouped-d128-causal-$target attention_bwd.tile $target -k attention_bwd_dkdv -D D=128 -D CAUSAL=true -D GROUPED=true --reference attention_bwd
  compile attn-bwd-grouped-d64-causal-f16-$target attention_bwd.tile $target -k attention_bwd_dkdv -D D=64 -D CAUSAL=true -D DT=f16 -D GROUPED=true --reference attention_bwd
  # Larger blocks that only sm_90a (wgmma, fewer registers) takes without
  # spills; bench/run.py times them beside the defaults.
  if [ $target = sm_90a ]; then
    for causal in false true; do
      c=$([ $causal = true ] && echo -causal || true)
      compile attn-bwd-large-d64$c-$target attention_bwd.tile $target -k attention_bwd_dkdv -D D=64 -D BLOCK_N=128 -D BLOCK_M=64 -D CAUSAL=$causal --reference attention_bwd
      compile attn-bwd-large-d64$c-$target attention_bwd.tile $target -k attention_bwd_dq -D D=64 -D BLOCK_M=128 -D BLOCK_N=128 -D CAUSAL=$causal --reference attention_bwd
      compile attn-bwd-large-d128$c-$target attention_bwd.tile $target -k attention_bwd_dkdv -D D=128 -D BLOCK_N=128 -D BLOCK_M=32 -D CAUSAL=$causal --reference attention_bwd
      compile attn-bwd-large-d128$c-$target attention_bwd.tile $target -k attention_bwd_dq -D D=128 -D BLOCK_M=128 -D BLOCK_N=64 -D CAUSAL=$causal --reference attention_bwd
      compile attn-bwd-large-grouped-d64$c-$target attention_bwd.tile $target -k attention_bwd_dkdv -D D=64 -D BLOCK_N=128 -D BLOCK_M=64 -D CAUSAL=$causal -D GROUPED=true --reference attention_bwd
      compile attn-bwd-large-grouped-d128$c-$target attention_bwd.tile $target -k attention_bwd_dkdv -D D=128 -D BLOCK_N=128 -D BLOCK_M=32 -D CAUSAL=$causal -D GROUPED=true --reference attention_bwd
    done
  fi
  compile rotary-$target rotary.tile $target -D D=128 --reference rotary
  compile rotary-partial-pairs-$target rotary.tile $target -D D=128 -D R=64 -D INTERLEAVED=true --reference rotary
  compile linattn-$target linear_attention.tile $target -D D=128
  compile linattn-states-$target linear_attention_states.tile $target -D D=64
  compile linattn-recurrent-$target linear_attention_recurrent.tile $target -D D=64 --reference linear_attention
  # GLA: each kernel is named for its float64 reference. gla.tile's kernels
  # at K = 64, V = 128 with h0 and per-chunk states; K = 8 (padded to 16);
  # K = 256 (BLOCK_V = 16: wider blocks spill); f16 with CHUNK = 32.
  # gla_bwd.tile's at CHUNK = 64 with h0 and dht; K = 256; K = 8 at
  # CHUNK = 32; f16.
  compile gla-k64-v128-$target gla.tile $target -D K=64 -D V=128 -D USE_H0=true -D STORE_STATES=true
  compile gla-k8-v16-$target gla.tile $target -D K=8 -D V=16 -D BLOCK_V=16
  # K = 256 and f16: the chunked forward's states in the inputs' dtype (HT),
  # as tegula.ops builds them.
  compile gla-k256-$target gla.tile $target -D K=256 -D V=256 -D BLOCK_V=16 -D USE_H0=true -D HT=bf16
  compile gla-f16-$target gla.tile $target -D K=128 -D V=64 -D DT=f16 -D GT=f16 -D CHUNK=32 -D STORE_STATES=true -D HT=f16
  compile gla-bwd-k64-v128-$target gla_bwd.tile $target -D K=64 -D V=128 -D USE_H0=true -D USE_DHT=true
  # The states and dh from chunk_gla_cumsum's sums (GC), in the inputs'
  # dtype (HT), with tegula.ops' blocks (scripts/build-ops.sh); so K = 256's
  # backward.
  states_v=()
  [ $target = sm_90a ] && states_v=(-D BLOCK_V=128 -D WARPS=4)
  compile gla-gc-$target gla.tile $target -k chunk_gla_states -D K=128 -D V=128 -D BLOCK_T=64 -D BLOCK_KS=64 "${states_v[@]}" -D USE_H0=true -D GC=true -D HT=bf16
  compile gla-gc-$target gla_bwd.tile $target -k chunk_gla_bwd_dh -D K=128 -D V=128 -D USE_DHT=true -D GC=true -D HT=bf16 -D BLOCK_T=64 -D BLOCK_KD=64 -D WARPS=4
  # tegula.ops' other GLA blocks: chunk_gla_output's 128 values at K = 128.
  compile gla-ops-$target gla.tile $target -k chunk_gla_output -D K=128 -D V=128 -D BLOCK_V=128 -D HT=bf16
  compile gla-bwd-k256-$target gla_bwd.tile $target -D K=256 -D V=256 -D HT=bf16
  compile gla-bwd-k8-c32-$target gla_bwd.tile $target -D K=8 -D V=16 -D BLOCK_V=16 -D CHUNK=32
  compile gla-bwd-f16-$target gla_bwd.tile $target -D K=128 -D V=64 -D DT=f16 -D USE_DHT=true
  # Gate-free chunked linear attention (linear_attention_chunked.tile):
  # K = 64, V = 128 with h0 and dht, states and dH in bf16 (tegula.ops');
  # K = 8 (padded to 16); K = 256; f16.
  compile linear-k64-v128-$target linear_attention_chunked.tile $target -D K=64 -D V=128 -D USE_H0=true -D USE_DHT=true -D HT=bf16
  compile linear-k8-v16-$target linear_attention_chunked.tile $target -D K=8 -D V=16 -D BLOCK_V=16 -D USE_H0=true
  compile linear-k256-$target linear_attention_chunked.tile $target -D K=256 -D V=256 -D HT=bf16
  compile linear-f16-$target linear_attention_chunked.tile $target -D K=128 -D V=64 -D DT=f16 -D HT=f16 -D USE_DHT=true
  compile matmul-$target matmul.tile $target
  compile matmul-f16-small-$target matmul.tile $target -D DT=f16 -D BLOCK_M=64 -D BLOCK_N=64 -D STAGES=3
  # rmsnorm.tile's four kernels at their defaults (the backward's dx in
  # blocks of 4096), the backward in blocks of 1024 (rows of several
  # blocks), and 16 warps of 16 columns (a row of 8192 in one block).
  compile rmsnorm-$target rmsnorm.tile $target
  compile rmsnorm-b1024-$target rmsnorm.tile $target -k rmsnorm_bwd_dx -D BLOCK=1024 -D WARPS=4
  compile rmsnorm-w16-$target rmsnorm.tile $target -k rmsnorm_bwd_dx -D WARPS=16 -D COLS=16
  compile matmul-gelu-$target matmul_gelu.tile $target
  compile matmul-gelu-exact-$target matmul_gelu.tile $target -D FAST_ERF=false
  compile cross-entropy-$target cross_entropy.tile $target
  # int64 targets, as tegula.ops builds it (scripts/build-ops.sh).
  compile cross-entropy-i64-$target cross_entropy.tile $target -D TI=i64
  # The tutorial LayerNorm's three kernels: one block per row (f16), and a
  # forward row loop over blocks of 128 (bf16).
  compile layer-norm-$target layer_norm.tile $target -D BLOCK=1024
  compile layer-norm-b128-bf16-$target layer_norm.tile $target -D BLOCK=128 -D DT=bf16
  # argmax/argmin (a test kernel), checked against numpy's indices.
  mkdir -p "$stage/kernels/argmax-$target"
  tilec_queue "$root/test/Frontend/argmax.tile" --target "$target" -o "$stage/kernels/argmax-$target"
  # atomic_add/atomic_max under contention, against numpy; device_assert
  # under -g, which must stop a launch whose inputs break it.
  mkdir -p "$stage/kernels/atomics-$target" "$stage/kernels/assert-$target"
  tilec_queue "$root/test/Frontend/atomics.tile" --target "$target" -o "$stage/kernels/atomics-$target"
  tilec_queue "$root/test/Frontend/device-assert.tile" -k positive -g --target "$target" -o "$stage/kernels/assert-$target"
  # 2-D index tiles: a 2-D gather from a 1-D tensor, an embedding lookup.
  mkdir -p "$stage/kernels/gather-$target"
  for k in gather2 emb; do
    tilec_queue "$root/test/Frontend/gather2d.tile" -k $k --target "$target" -o "$stage/kernels/gather-$target"
  done
  # Strided views (slices, transposes, broadcasts) through tile-run --stride.
  mkdir -p "$stage/kernels/strided-$target"
  tilec_queue "$root/test/Frontend/strided.tile" -k gemm --reference matmul --target "$target" -o "$stage/kernels/strided-$target"
  tilec_queue "$root/test/Frontend/strided.tile" -k scale2 --target "$target" -o "$stage/kernels/strided-$target"
  # cumsum, reshape/permute and f32 dots (test kernels and an f32 matmul),
  # checked against numpy (tile_ops_inputs.py).
  for t in cumsum:scans-f32: cumsum:scans-i32:"-D DT=i32 -D OUT=i32" \
           reshape-permute:shapes: dot-tf32:mm-tf32: dot-tf32:mm-ieee:"-D IEEE=true"; do
    IFS=: read -r file name defines <<<"$t"
    mkdir -p "$stage/kernels/$name-$target"
    # shellcheck disable=SC2086
    tilec_queue "$root/test/Frontend/$file.tile" --target "$target" $defines -o "$stage/kernels/$name-$target"
  done
  compile matmul-f32-$target matmul.tile $target -D DT=f32 -D BLOCK_M=64 -D BLOCK_N=64 -D STAGES=3
done
tilec_run_queue
[ "$compile_only" = 1 ] && exit 0
/usr/bin/python3 "$root/test/Kernels/Inputs/argmax_inputs.py" "$stage/kernels/argmax-inputs"
/usr/bin/python3 "$root/test/Kernels/Inputs/atomics_inputs.py" "$stage/kernels/atomics-inputs"
/usr/bin/python3 "$root/test/Kernels/Inputs/gather_inputs.py" "$stage/kernels/gather-inputs"
mkdir -p "$stage/kernels/assert-inputs" "$stage/kernels/strided-inputs"
/usr/bin/python3 -c "
import numpy as np, sys
g = np.random.default_rng(21)
x = g.standard_normal((5, 70)).astype(np.float32)
b = np.repeat(x[-1:], 5, axis=0)
for name, v in (('x', x), ('y', 2 * x), ('bx', b), ('by', 2 * b)):
    np.save(sys.argv[1] + '/' + name + '.npy', v)" "$stage/kernels/strided-inputs"
/usr/bin/python3 -c "import numpy as np, sys; np.save(sys.argv[1] + '/bad.npy', (90 - np.arange(100)).astype(np.float32)); np.save(sys.argv[1] + '/good.npy', np.arange(100, dtype=np.float32))" "$stage/kernels/assert-inputs"
/usr/bin/python3 "$root/test/Kernels/Inputs/tile_ops_inputs.py" "$stage/kernels/tile-ops-inputs"
python3 "$root/test/Kernels/Inputs/cross_entropy_inputs.py" "$stage/kernels/ce-inputs"
# The cu_seqlens, block tables and sequence lengths of the varlen and paged
# attention runs (random integers would not be valid ones).
python3 "$root/test/Kernels/Inputs/attention_inputs.py" "$stage/kernels/attn-inputs"
cp "$root/scripts/gpu/check-kernels.sh" "$root/scripts/gpu/kernel-configs.sh" "$stage/"
echo "staged $(ls "$stage/kernels" | wc -l) configurations in $stage/kernels"
