#!/usr/bin/env bash
# The block sweep behind scripts/build-ops.sh's linear attention builds
# (kernels/linear_attention_chunked.tile), sm_90a bf16, states and dH in
# bf16, CHUNK 64, at tegula.ops' bench shapes [8, 2048, 2048 / K, K].
#   here:       bash scripts/gpu/linear-sweep.sh stage   (after scripts/build.sh)
#   on the GPU: bash scripts/gpu/linear-sweep.sh run     (carry .device-la)
# stage compiles one bundle of configs per kernel and K into
# .device-la/sweep/K-KERNEL; run checks every config against float64 at a
# ragged size (tile-run --tune), then times them at the bench shape against
# the first config (--against-first) and prints each median and winner.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
dir=$root/.device-la/sweep
# KERNEL SWEPT-DEFINES (comma lists: a bundle of their cartesian product).
sweeps=(
  "chunk_linear_states -D BLOCK_V=64,128 -D BLOCK_KS=64,128 -D WARPS=4,8"
  "chunk_linear_output -D BLOCK_V=64,128 -D BLOCK_KO=64,128 -D WARPS=4,8"
  "chunk_linear_bwd_dh -D BLOCK_V=64,128 -D BLOCK_KD=64,128 -D WARPS=4,8"
  "chunk_linear_bwd_dqk -D BLOCK_K=32,64 -D BLOCK_V=32,64 -D WARPS=4,8"
  "chunk_linear_bwd_dv -D BLOCK_K=32,64 -D BLOCK_V=64,128 -D WARPS=4,8"
)
# At K = 256 only (compiled into .device-la/sweep/256w-KERNEL): a block of
# all 256 values (the outputs and states) and of 128 keys (dq, dk).
wide=(
  "chunk_linear_output -D BLOCK_V=256 -D BLOCK_KO=32,64,128 -D WARPS=8"
  "chunk_linear_states -D BLOCK_V=256 -D BLOCK_KS=32,64 -D WARPS=8"
  "chunk_linear_bwd_dqk -D BLOCK_K=128 -D BLOCK_V=32,64 -D WARPS=8"
)
case ${1:-} in
stage)
  rm -rf "$dir" && mkdir -p "$dir"
  source "$root/scripts/tilec-queue.sh"
  # queue_sweep NAME K KERNEL DEFINES...: one bundle of configs.
  queue_sweep() {
    local name=$1 kd=$2 kernel=$3
    shift 3
    mkdir -p "$dir/$name"
    tilec_queue "$root/kernels/linear_attention_chunked.tile" -k "$kernel" \
      --target sm_90a -o "$dir/$name" -D K=$kd -D V=$kd -D HT=bf16 \
      -D CHUNK=64 "$@"
  }
  for kd in 64 128 256; do
    for s in "${sweeps[@]}"; do
      set -- $s
      queue_sweep "$kd-$1" $kd "$@"
    done
  done
  for s in "${wide[@]}"; do
    set -- $s
    queue_sweep "256w-$1" 256 "$@"
  done
  tilec_run_queue
  mkdir -p "$root/.device-la/bin"
  cp "$root/build/bin/tile-run" "$root/.device-la/bin/"
  ;;
run)
  run=$root/.device-la/bin/tile-run
  for kd in ${SIZES:-64 128 256 256w}; do
    list=("${sweeps[@]}")
    [ "$kd" = 256w ] && list=("${wide[@]}")
    h=$((2048 / ${kd%w}))
    for s in "${list[@]}"; do
      set -- $s
      b=$dir/$kd-$1
      opt=""
      extra=(--scalar scale=0.125)
      case $1 in
      chunk_linear_states) opt=,N0=0 extra=() ;;
      chunk_linear_bwd_dh) opt=,N0=0,ND=0 ;;
      esac
      small="B=1,T=150,H=2,NT=3$opt"
      big="B=8,T=2048,H=$h,NT=32$opt"
      echo "== K=$kd $1"
      "$run" --tune "$b" --dims "$small" "${extra[@]}" 2>&1 | grep -v ': [0-9.]* us (ok)' || true
      "$run" --tune "$b" --against-first --dims "$big" "${extra[@]}" 2>&1 || true
    done
  done
  ;;
*)
  echo "usage: $0 stage|run" >&2
  exit 2
  ;;
esac
