#!/usr/bin/env bash
# Compiles the swept bench bundles of bench/tuning/sweeps.sh for sm_90a into
# .device-bundle/bench/ (or $TEGULA_STAGE_DIR/bench), each with its
# committed tuning table copied in first, so that tilec names it and the
# runtime launches the tuned winner (a table whose PTX hashes no longer
# match is stale, and the bench says so). With NAMEs, only those (to
# re-tune a few on the GPU: QUICK=1 bench/tuning/tune-on-device.sh
# NAME...); bench/stage.sh
# stages them all.
#   bash scripts/gpu/stage-sweeps.sh [NAME...]   (after scripts/build.sh)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bench=${TEGULA_STAGE_DIR:-$root/.device-bundle}/bench
want=" $* "
inputs=$bench/inputs  # the varlen sweeps name it
# NAME FILE KERNEL CHECK TUNE -- DEFINES: one swept bundle for the H100.
compile_sweep() {
  local name=$1 file=$2 kernel=$3
  [ "$want" = "  " ] || [[ $want == *" $name "* ]] || return 0
  shift 6
  rm -rf "${bench:?}/$name" && mkdir -p "$bench/$name"
  cp "$root/bench/tuning/tables/$name/"*.tuning.json "$bench/$name/" 2>/dev/null || true
  tilec_queue "$root/kernels/$file" -k "$kernel" --target sm_90a -o "$bench/$name" "$@"
}
# Queued, then run one per core (scripts/tilec-queue.sh).
source "$root/scripts/tilec-queue.sh"
source "$root/bench/tuning/sweeps.sh"
for_each_sweep compile_sweep
tilec_run_queue
