#!/usr/bin/env bash
# Builds the kernels tegula.ops ships into python/tegula/_bundles/ (or
# $TEGULA_OPS_BUNDLES) and copies libtegula_rt.so beside the package (or
# into $TEGULA_OPS_LIB_DIR), so that `pip install ./python` needs no tilec:
# docs/ops.md, "Shipped kernels".
#
# Every op kernel is one of the bench's sweeps (bench/tuning/sweeps.sh): the
# same defines, compiled for
#   sm_90a  the whole sweep, with the committed H100 tuning table copied in
#           first (tilec names it; the runtime launches the tuned winner);
#   sm_80   the sweep's first configuration only (no table is tuned there;
#           an untuned launch runs config 0), whose PTX the driver also
#           JIT-compiles for GPUs newer than both targets.
# Each in bf16 (DT's default) and f16 (-D DT=f16: the bf16 tables'
# winners, given the f16 PTX's hashes). Bundle folders are TARGET/NAME and
# TARGET/NAME-f16, NAME the sweep's; python/tegula/_prebuilt.py looks
# them up by the same names.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${TEGULA_BUILD_DIR:-$root/build}
[ -x "$build/bin/tilec" ] || { echo "error: no $build/bin/tilec (scripts/build.sh builds it)" >&2; exit 1; }
out=${TEGULA_OPS_BUNDLES:-$root/python/tegula/_bundles}
lib_out=${TEGULA_OPS_LIB_DIR:-$root/python/tegula}
# The sweeps tegula.ops launches (python/tegula/_prebuilt.py, SWEEPS).
ops_sweeps='^attn-(fwd-lse|bwd-dkdv|bwd-dkdv-grouped|bwd-dq)-d(64|128)(-causal)?$'

rm -rf "$out"
mkdir -p "$out"
# Every compile is queued (tilec_queue) and they all run at the end, one
# per core, each bundle copied from the cache when this tilec built it
# from the same source before (scripts/tilec-queue.sh).
source "$root/scripts/tilec-queue.sh"

# first_config DEFINES...: the defines with each comma list cut to its
# first value.
first_config() {
  local arg
  for arg in "$@"; do
    if [[ $arg == *=*,* ]]; then
      printf '%s\n' "${arg%%,*}"
    else
      printf '%s\n' "$arg"
    fi
  done
}

# compile_op NAME FILE KERNEL CHECK TUNE -- DEFINES (for_each_sweep's form).
compile_op() {
  local name=$1 file=$2 kernel=$3
  shift 6
  [[ $name =~ $ops_sweeps ]] || return 0
  local dt suffix dir
  for dt in bf16 f16; do
    # bf16 is DT's default: left unset, the PTX is the bench's, which the
    # committed table was tuned for.
    local dtype=()
    [ $dt = f16 ] && dtype=(-D DT=f16)
    suffix=$([ $dt = f16 ] && echo -f16 || true)
    dir=$out/sm_90a/$name$suffix
    mkdir -p "$dir"
    if [ $dt = bf16 ]; then
      cp "$root/bench/tuning/tables/$name/"*.tuning.json "$dir/" 2>/dev/null || true
    fi
    tilec_queue "$root/kernels/$file" -k "$kernel" --target sm_90a -o "$dir" \
      "$@" "${dtype[@]}"
    dir=$out/sm_80/$name$suffix
    mkdir -p "$dir"
    mapfile -t first < <(first_config "$@")
    tilec_queue "$root/kernels/$file" -k "$kernel" --target sm_80 -o "$dir" \
      "${first[@]}" "${dtype[@]}"
  done
}
inputs=/unused
source "$root/bench/tuning/sweeps.sh"
for_each_sweep compile_op

# The backward's preprocess (delta = rowsum(do * o)) is no sweep: its
# default build, at each head size.
for target in sm_80 sm_90a; do
  for d in 64 128; do
    for dt in bf16 f16; do
      suffix=$([ $dt = f16 ] && echo -f16 || true)
      dir=$out/$target/attn-bwd-preprocess-d$d$suffix
      mkdir -p "$dir"
      tilec_queue "$root/kernels/attention_bwd.tile" -k attention_bwd_preprocess \
        --target $target -o "$dir" -D D=$d -D DT=$dt
    done
  done
done

# Rotary (rotary and rotary_inplace in one bundle) at the head and rotary
# sizes of python/tegula/_prebuilt.py's ROTARY_DIMS, both pairings: its
# defaults (the bench's tuned BLOCK_T is the default, 16).
for target in sm_80 sm_90a; do
  for dims in 64:64 64:32 128:128 128:64; do
    d=${dims%:*} r=${dims#*:}
    for interleaved in false true; do
      for dt in bf16 f16; do
        name=rotary-d$d-r$r$([ $interleaved = true ] && echo -interleaved || true)
        name=$name$([ $dt = f16 ] && echo -f16 || true)
        mkdir -p "$out/$target/$name"
        tilec_queue "$root/kernels/rotary.tile" --target $target -o "$out/$target/$name" \
          -D D=$d -D R=$r -D INTERLEAVED=$interleaved -D DT=$dt
      done
    done
  done
done

# RMSNorm and cross-entropy, forward and backward (every kernel of each
# file in one bundle), at their defaults; cross-entropy's targets int64, as
# PyTorch holds them (no conversion launch a call).
for target in sm_80 sm_90a; do
  for dt in bf16 f16; do
    suffix=$([ $dt = f16 ] && echo -f16 || true)
    for pair in rmsnorm:rmsnorm cross_entropy:cross-entropy; do
      file=${pair%:*} name=${pair#*:}$suffix
      extra=()
      [ "$file" = cross_entropy ] && extra=(-D TI=i64)
      mkdir -p "$out/$target/$name"
      tilec_queue "$root/kernels/$file.tile" --target $target -o "$out/$target/$name" \
        -D DT=$dt "${extra[@]}"
    done
  done
done
# RMSNorm in f32 too: an autocast model's residual stream and weights.
for target in sm_80 sm_90a; do
  mkdir -p "$out/$target/rmsnorm-f32"
  tilec_queue "$root/kernels/rmsnorm.tile" --target $target \
    -o "$out/$target/rmsnorm-f32" -D DT=f32
done

# GLA (kernels/gla.tile forward, kernels/gla_bwd.tile backward) at the
# (K, V) head sizes of python/tegula/_prebuilt.py's GLA_DIMS: per size and
# dtype, the forward with and without an initial state (-h0) in one
# launch and in three (states, then each chunk's scores and outputs, chunks
# of 64: gla-fwd2, gla-chunks), the
# backward's dS walk with each of its optional tensors (-h0, -dht) and its
# per-chunk kernels (gla-bwd; states and dH in the inputs' dtype, as
# fla's); the backward also runs gla-fwd2's states and
# gla-chunks' gate sums and scores. CHUNK is 64 throughout
# (GLA_FWD_CHUNK, GLA_BWD_CHUNK); at K = 256 the one-launch forward needs
# BLOCK_V = 16.
# gla TARGET NAME FILE KERNEL... -- DEFINES...: queues the builds (one
# tilec a kernel).
gla() {
  local target=$1 name=$2 file=$3 kernels=() k
  shift 3
  while [ "$1" != -- ]; do kernels+=("$1"); shift; done
  shift
  mkdir -p "$out/$target/$name"
  for k in "${kernels[@]}"; do
    tilec_queue "$root/kernels/$file" -k "$k" --target "$target" \
      -o "$out/$target/$name" "$@"
  done
}
for target in sm_80 sm_90a; do
  for dims in 8:16 64:64 64:128 128:128 256:256; do
    k=${dims%:*} v=${dims#*:}
    block_v=()
    [ "$k" = 256 ] && block_v=(-D BLOCK_V=16)
    [ "$v" = 16 ] && block_v=(-D BLOCK_V=16)
    # Blocks by tile-run --bench at [8, 2048, 2048 / K, K] bf16 on an H100
    # (docs/measurements/2026-11-27-h100-s40.log, call 4):
    # chunk_gla_output at K = 256 128 values on 8 warps (0.27 ms against
    # 0.41 for 64 on 4, H200), at K = 128 128 on 4 (0.189 against 0.283);
    # chunk_gla_states at K >= 128 128 values on 4 warps (0.159 against
    # 0.174 at K = 128). chunk_gla_intra at its defaults (PAIRS on 2 warps,
    # BLOCK_KI = 32: stop 41, call 1; gla.tile's comment).
    chunk_v=()
    [ "$v" = 16 ] && chunk_v=(-D BLOCK_V=16)
    out_v=("${chunk_v[@]}")
    [ "$k" = 256 ] && out_v=(-D BLOCK_V=128 -D WARPS=8)
    # (sm_80 at K = 128: 64 values; 128 spill there with f16, whose a v
    # is three bf16x3 dots.)
    [ "$k" = 128 ] && [ $target = sm_90a ] && out_v=(-D BLOCK_V=128)
    states_v=("${chunk_v[@]}")
    # (sm_80's registers do not hold 128 values: it spills there.)
    [ "$k" -ge 128 ] && [ $target = sm_90a ] &&
      states_v=(-D BLOCK_V=128 -D WARPS=4)
    for dt in bf16 f16; do
      sfx=$([ $dt = f16 ] && echo -f16 || true)
      common=(-D K="$k" -D V="$v" -D DT=$dt -D CHUNK=64)
      for h0 in false true; do
        f=$([ $h0 = true ] && echo -h0 || true)
        gla $target "gla-fwd-k$k-v$v$f$sfx" gla.tile chunk_gla_fwd \
          recurrent_gla_fwd -- -D K="$k" -D V="$v" -D DT=$dt -D CHUNK=16 \
          "${block_v[@]}" -D USE_H0=$h0
        # The chunked forward's (and the backward's) states: chunks of 64,
        # in blocks of 64 keys (programs independent over K; at K = 256,
        # 16 values with all of K in a program took 2.2 ms on an H200 at
        # [8, 2048, 8, 256]).
        # From chunk_gla_cumsum's sums (GC: no scan a block; so chunk_gla_bwd_dh
        # below), in the inputs' dtype (HT; so dh below): 0.257 against 0.306
        # ms for f32 at K = V = 128, H100, stop 39. The backward recomputes
        # them with this build.
        gla $target "gla-fwd2-k$k-v$v$f$sfx" gla.tile chunk_gla_states \
          -- -D K="$k" -D V="$v" -D DT=$dt -D CHUNK=64 -D BLOCK_T=64 \
          -D BLOCK_KS=64 "${states_v[@]}" -D USE_H0=$h0 -D HT=$dt -D GC=true
        # dH in chunks' steps of 64 rows, 64 keys and 64 values a program
        # on 4 warps: 0.118, 0.170 and 0.293 ms against 0.158, 0.297 and
        # 0.646 for steps of 16 rows, all of K, 8 warps at K = 64, 128, 256
        # (call 4 as above).
        for dht in false true; do
          f2=$f$([ $dht = true ] && echo -dht || true)
          gla $target "gla-bwd-dh-k$k-v$v$f2$sfx" gla_bwd.tile \
            chunk_gla_bwd_dh -- "${common[@]}" -D USE_H0=$h0 -D USE_DHT=$dht \
            -D GC=true -D HT=$dt -D BLOCK_T=64 -D BLOCK_KD=64 -D BLOCK_V=64 \
            -D WARPS=4
        done
      done
      gla $target "gla-bwd-k$k-v$v$sfx" gla_bwd.tile chunk_gla_bwd_da \
        chunk_gla_bwd_dqk_intra -- "${common[@]}"
      gla $target "gla-bwd-k$k-v$v$sfx" gla_bwd.tile chunk_gla_bwd_dqkg \
        chunk_gla_bwd_dv -- "${common[@]}" -D HT=$dt
      # The chunked forward's gate sums, scores and outputs, per chunk of 64.
      gla $target "gla-chunks-k$k-v$v$sfx" gla.tile chunk_gla_cumsum \
        chunk_gla_intra -- -D K="$k" -D V="$v" -D DT=$dt -D CHUNK=64
      gla $target "gla-chunks-k$k-v$v$sfx" gla.tile chunk_gla_output -- \
        -D K="$k" -D V="$v" -D DT=$dt -D CHUNK=64 "${out_v[@]}" -D HT=$dt
    done
  done
done

# Gate-free linear attention (kernels/linear_attention_chunked.tile:
# tegula.ops.chunk_linear_attention) at the same (K, V) sizes, CHUNK 64,
# states and dH in the inputs' dtype: the states with and without h0, the
# outputs, dH with each of its optional tensors, the per-chunk gradients,
# and the recurrent forward (fused_recurrent_linear_attention) with and
# without h0.
# Blocks: the kernels' defaults (spill-free on both targets), and on sm_90a
# the winners of scripts/gpu/linear-sweep.sh at [8, 2048, 2048 / K, K]
# bf16 on an H200 (docs/measurements/2026-11-28-h200-s46.log, call 1; us,
# winner against the default): K = 64 dq/dk on 4 warps 134 against 167;
# K = 128 outputs in blocks of 128 values and keys 110 against 138, dv of
# 128 values 111 against 120, states 128 values 79 against 80; K = 256
# outputs as at K = 128 165 against 230, dv 128 values on 8 warps 150
# against 175, states 128 values 144 against 146.
for target in sm_80 sm_90a; do
  for dims in 8:16 64:64 64:128 128:128 256:256; do
    k=${dims%:*} v=${dims#*:}
    chunk_v=()
    [ "$v" = 16 ] && chunk_v=(-D BLOCK_V=16)
    states_b=() out_b=() dqk_b=() dv_b=()
    if [ $target = sm_90a ]; then
      [ "$k" = 64 ] && dqk_b=(-D WARPS=4)
      [ "$k" = 128 ] && dqk_b=(-D WARPS=4) dv_b=(-D BLOCK_V=128)
      [ "$k" -ge 128 ] && states_b=(-D BLOCK_V=128) &&
        out_b=(-D BLOCK_V=128 -D BLOCK_KO=128)
      [ "$k" = 256 ] && dv_b=(-D BLOCK_V=128 -D WARPS=8)
    fi
    for dt in bf16 f16; do
      sfx=$([ $dt = f16 ] && echo -f16 || true)
      common=(-D K="$k" -D V="$v" -D DT=$dt -D CHUNK=64 -D HT=$dt "${chunk_v[@]}")
      for h0 in false true; do
        f=$([ $h0 = true ] && echo -h0 || true)
        gla $target "linear-states-k$k-v$v$f$sfx" linear_attention_chunked.tile \
          chunk_linear_states -- "${common[@]}" "${states_b[@]}" -D USE_H0=$h0
        gla $target "linear-recurrent-k$k-v$v$f$sfx" linear_attention_chunked.tile \
          recurrent_linear_fwd -- -D K="$k" -D V="$v" -D DT=$dt "${chunk_v[@]}" \
          -D USE_H0=$h0
        for dht in false true; do
          f2=$f$([ $dht = true ] && echo -dht || true)
          gla $target "linear-bwd-dh-k$k-v$v$f2$sfx" linear_attention_chunked.tile \
            chunk_linear_bwd_dh -- "${common[@]}" -D USE_H0=$h0 -D USE_DHT=$dht
        done
      done
      gla $target "linear-chunks-k$k-v$v$sfx" linear_attention_chunked.tile \
        chunk_linear_output -- "${common[@]}" "${out_b[@]}"
      gla $target "linear-bwd-k$k-v$v$sfx" linear_attention_chunked.tile \
        chunk_linear_bwd_dqk -- "${common[@]}" "${dqk_b[@]}"
      gla $target "linear-bwd-k$k-v$v$sfx" linear_attention_chunked.tile \
        chunk_linear_bwd_dv -- "${common[@]}" "${dv_b[@]}"
    done
  done
done

# Paged decode (kernels/attention_paged.tile: by page, flat, split-KV) at
# _prebuilt.py's DECODE_HEAD_DIMS and PAGES, and the split's merge
# (attention_combine of attention_gqa.tile) at each head size.
for target in sm_80 sm_90a; do
  for d in 64 128; do
    for dt in bf16 f16; do
      sfx=$([ $dt = f16 ] && echo -f16 || true)
      dir=$out/$target/attention-combine-d$d$sfx
      mkdir -p "$dir"
      tilec_queue "$root/kernels/attention_gqa.tile" -k attention_combine \
        --target $target -o "$dir" -D D=$d -D DT=$dt
      for page in 16 64 256; do
        kernels=(attention_paged_flat attention_paged_split)
        # By page only where the op reads it so: pages of at least
        # _prebuilt.PAGED_MIN_PAGE (64).
        [ $page -ge 64 ] && kernels+=(attention_paged)
        for kernel in "${kernels[@]}"; do
          dir=$out/$target/${kernel//_/-}-d$d-p$page$sfx
          mkdir -p "$dir"
          tilec_queue "$root/kernels/attention_paged.tile" -k $kernel \
            --target $target -o "$dir" -D D=$d -D PAGE=$page -D DT=$dt
        done
      done
    done
  done
done
# Varlen attention (kernels/attention_varlen.tile's attention_varlen_fwd,
# attention_varlen_bwd.tile's preprocess, dK/dV and dQ) at
# _prebuilt.VARLEN_HEAD_DIMS, causal and not (the preprocess has no mask),
# dK/dV also GROUPED. Bundle names are _prebuilt.varlen_bundle's.
# varlen_blocks TARGET ROLE D: the blocks of a build. sm_90a's are
# scripts/gpu/varlen-sweep.sh's winners over a packed batch of 12
# sequences (16384 tokens, up to 3000 a sequence), the same causal or not
# (H200, docs/measurements/2026-11-28-h200-s47.log call 5; us at D = 64 /
# 128 not causal, default -> pick): fwd 873 -> 675 / 1147 -> 588, dQ 815
# (the default) / 1620 -> 686, dK/dV 2116 -> 1638 / 2109 -> 1351, grouped
# 2230 -> 1565 / 2289 -> 1386. sm_80 keeps the defaults: 128 x 128 blocks
# at D = 128 take 224 KiB of shared memory, past the A100's 163.
varlen_blocks() {
  [ "$1" = sm_90a ] || return 0
  case $2:$3 in
  fwd:64) echo "-D BLOCK_M=128 -D BLOCK_N=64" ;;
  fwd:128) echo "-D BLOCK_M=128 -D BLOCK_N=128" ;;
  bwd-dq:128) echo "-D BLOCK_M=128 -D BLOCK_N=64" ;;
  bwd-dkdv*:64) echo "-D BLOCK_N=128 -D BLOCK_M=64" ;;
  bwd-dkdv*:128) echo "-D BLOCK_N=128 -D BLOCK_M=32" ;;
  esac
}
for target in sm_80 sm_90a; do
  for d in 64 128; do
    for dt in bf16 f16; do
      sfx=$([ $dt = f16 ] && echo -f16 || true)
      dir=$out/$target/attention-varlen-bwd-preprocess-d$d$sfx
      mkdir -p "$dir"
      tilec_queue "$root/kernels/attention_varlen_bwd.tile" \
        -k attention_varlen_bwd_preprocess --target $target -o "$dir" \
        -D D=$d -D DT=$dt
      for causal in false true; do
        csfx=$([ $causal = true ] && echo -causal || true)
        for spec in fwd:attention_varlen.tile bwd-dq:attention_varlen_bwd.tile \
            bwd-dkdv:attention_varlen_bwd.tile \
            bwd-dkdv-grouped:attention_varlen_bwd.tile; do
          role=${spec%:*} file=${spec#*:}
          kernel=attention_varlen_${role//-/_}
          grouped=()
          if [ "$role" = bwd-dkdv-grouped ]; then
            kernel=attention_varlen_bwd_dkdv grouped=(-D GROUPED=true)
          fi
          dir=$out/$target/attention-varlen-$role-d$d$csfx$sfx
          mkdir -p "$dir"
          # shellcheck disable=SC2046  # the blocks are words
          tilec_queue "$root/kernels/$file" -k $kernel --target $target \
            -o "$dir" -D D=$d -D DT=$dt -D CAUSAL=$causal "${grouped[@]}" \
            $(varlen_blocks $target $role $d)
        done
      done
    done
  done
done
# The queued compiles, independent: one per core at a time (fails if any
# does).
tilec_run_queue >/dev/null
# The f16 builds of the tuned sweeps take the bf16 tables' winners with
# their own PTX hashes (bench/tuning/derive_dtype.py says why).
for table in "$root"/bench/tuning/tables/*/*.tuning.json; do
  dir=$out/sm_90a/$(basename "$(dirname "$table")")
  [ ! -d "$dir-f16" ] ||
    python3 "$root/bench/tuning/derive_dtype.py" "$table" "$dir" "$dir-f16"
done

cp "$build/lib/libtegula_rt.so" "$lib_out/libtegula_rt.so"
echo "tegula.ops: $(find "$out" -name '*.json' ! -name '*.tuning.json' | wc -l) bundles in $out ($(du -sh "$out" | cut -f1)), libtegula_rt.so in $lib_out"
