#!/usr/bin/env bash
# The block sweep behind scripts/build-ops.sh's varlen attention builds
# (tegula.ops.attention_varlen: attention_varlen_fwd, and
# attention_varlen_bwd.tile's dQ, dK/dV and grouped dK/dV), sm_90a bf16, at
# both head sizes, causal and not, over the bench's packed batch (cu-bench:
# 12 sequences of 256 to 3000 tokens, 16384 in all; H = 2048 / D query
# heads, H / 4 K/V heads; dK/dV's ungrouped build at HKV = H).
#   here:       bash scripts/gpu/varlen-sweep.sh stage   (after scripts/build.sh)
#   on the GPU: bash scripts/gpu/varlen-sweep.sh run     (carry .device-vl)
#   here:       bash scripts/gpu/varlen-sweep.sh stage-picks   (after
#               scripts/build-ops.sh): the shipped sm_90a varlen bundles
#               laid out as scripts/gpu/kernel-configs.sh's varlen runs
#               read them, in .device-vl/stage (STAGE for check-kernels.sh
#               and sanitize-kernels.sh, ONLY='^attn-varlen-(fwd|delta|dkdv|dq)-')
# stage compiles one bundle of configs per kernel, head size and mask into
# .device-vl/sweep/NAME; run checks every config against float64 at ragged
# sequences (tile-run --tune; cu-203 queries over cu-k-137 keys, an empty
# query sequence and more keys than queries among them), then times them
# at the bench's batch against the first config (--against-first), the
# kernel's default blocks.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
dir=$root/.device-vl
# NAME FILE KERNEL SWEPT-DEFINES (comma lists: their cartesian product; the
# default blocks first).
sweeps() {
  local d=$1
  local fwd_m=$([ $d = 64 ] && echo 128,64 || echo 64,128)
  local dq_m=$([ $d = 64 ] && echo 128,64 || echo 64,128)
  local dq_n=$([ $d = 64 ] && echo 32,16,64 || echo 16,32,64)
  local dkdv_m=$([ $d = 64 ] && echo 32,16,64 || echo 16,32)
  echo "fwd attention_varlen.tile attention_varlen_fwd -D BLOCK_M=$fwd_m -D BLOCK_N=32,64,128"
  echo "dq attention_varlen_bwd.tile attention_varlen_bwd_dq -D BLOCK_M=$dq_m -D BLOCK_N=$dq_n"
  echo "dkdv attention_varlen_bwd.tile attention_varlen_bwd_dkdv -D BLOCK_N=64,128 -D BLOCK_M=$dkdv_m"
  echo "dkdv-grouped attention_varlen_bwd.tile attention_varlen_bwd_dkdv -D GROUPED=true -D BLOCK_N=64,128 -D BLOCK_M=$dkdv_m"
}
case ${1:-} in
stage)
  rm -rf "$dir/sweep" "$dir/inputs" && mkdir -p "$dir/sweep" "$dir/inputs"
  source "$root/scripts/tilec-queue.sh"
  for d in 64 128; do
    for causal in false true; do
      c=$([ $causal = true ] && echo -causal || true)
      while read -r name file kernel defines; do
        out=$dir/sweep/$name-d$d$c
        mkdir -p "$out"
        # shellcheck disable=SC2086  # the defines are words
        tilec_queue "$root/kernels/$file" -k "$kernel" --target sm_90a \
          -o "$out" -D D=$d -D CAUSAL=$causal $defines
      done < <(sweeps $d)
    done
  done
  tilec_run_queue
  python3 "$root/test/Kernels/Inputs/attention_inputs.py" "$dir/inputs" >/dev/null
  python3 - "$dir/inputs" "$root/test/Kernels/Inputs" <<'PY'
import itertools, sys
sys.path.insert(0, sys.argv[2])
from attention_inputs import write_npy
# bench/stage.sh's packed batch (bench/attention_family.py's lengths).
lens = [3000, 256, 1800, 700, 2048, 333, 1024, 2500, 512, 1111, 1500]
lens.append(16384 - sum(lens))
write_npy(sys.argv[1] + "/cu-bench.npy", [0] + list(itertools.accumulate(lens)))
PY
  mkdir -p "$dir/bin"
  cp "$root/build/bin/tile-run" "$dir/bin/"
  ;;
stage-picks)
  ops=$root/python/tegula/_bundles/sm_90a k=$dir/stage/kernels
  rm -rf "$dir/stage" && mkdir -p "$k/attn-inputs" "$dir/stage/bin"
  python3 "$root/test/Kernels/Inputs/attention_inputs.py" "$k/attn-inputs" >/dev/null
  cp "$root/build/bin/tile-run" "$dir/stage/bin/"
  for name in d64 d64-causal d128 d128-causal d64-causal-f16; do
    d=${name%%-*} d=${d#d} c="" f=""
    [[ $name == *causal* ]] && c=-causal
    [[ $name == *f16 ]] && f=-f16
    b=$k/attn-varlen-train-$name-sm_90a g=$k/attn-varlen-train-grouped-$name-sm_90a
    mkdir -p "$b" "$g"
    cp "$ops"/attention-varlen-{fwd,bwd-dq,bwd-dkdv}-d$d$c$f/* "$b/"
    cp "$ops"/attention-varlen-bwd-preprocess-d$d$f/* "$b/"
    cp "$ops"/attention-varlen-bwd-dkdv-grouped-d$d$c$f/* "$g/"
  done
  ;;
run)
  run=$dir/bin/tile-run in=$dir/inputs
  small="--in cu_seqlens_q=$in/cu-203.npy --in cu_seqlens_k=$in/cu-k-137.npy"
  big="--in cu_seqlens_q=$in/cu-bench.npy --in cu_seqlens_k=$in/cu-bench.npy"
  for d in ${SIZES:-64 128}; do
    h=$((2048 / d))
    scale=$([ $d = 64 ] && echo 0.125 || echo 0.088)
    for c in "" -causal; do
      while read -r name _; do
        b=$dir/sweep/$name-d$d$c
        seq=max_seqlen_q hkv=$((h / 4)) hkv_small=2
        case $name in
        dkdv) seq=max_seqlen_k hkv=$h hkv_small=8 ;;
        dkdv-grouped) seq=max_seqlen_k ;;
        esac
        echo "== D=$d$c $name"
        "$run" --tune "$b" --dims TQ=203,TK=137,H=8,HKV=$hkv_small,S=6 $small \
          --scalar $seq=74 --scalar scale=$scale 2>&1 |
          grep -v ': [0-9.]* us (ok)' || true
        "$run" --tune "$b" --against-first \
          --dims TQ=16384,TK=16384,H=$h,HKV=$hkv,S=13 $big \
          --scalar $seq=3000 --scalar scale=$scale 2>&1 || true
      done < <(sweeps $d)
    done
  done
  ;;
*)
  echo "usage: $0 stage|stage-picks|run" >&2
  exit 2
  ;;
esac
