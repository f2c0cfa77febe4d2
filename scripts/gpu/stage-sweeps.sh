#!/usr/bin/env bash
# Stages the named swept bench bundles (bench/tuning/sweeps.sh) for sm_90a
# into .device-bundle/bench/, each with its committed table, as
# bench/stage.sh does for all of them: for re-tuning a few bundles on the
# GPU (scripts/gpu/s37-tune.sh) without compiling the whole bench.
#   bash scripts/gpu/stage-sweeps.sh NAME...   (after scripts/build.sh)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${TEGULA_BUILD_DIR:-$root/build}
bench=${TEGULA_STAGE_DIR:-$root/.device-bundle}/bench
want=" $* "
inputs=$bench/inputs  # the varlen sweeps name it
compile_sweep() {
  local name=$1 file=$2 kernel=$3
  [[ $want == *" $name "* ]] || return 0
  shift 6
  rm -rf "${bench:?}/$name" && mkdir -p "$bench/$name"
  cp "$root/bench/tuning/tables/$name/"*.tuning.json "$bench/$name/" 2>/dev/null || true
  "$build/bin/tilec" "$root/kernels/$file" -k "$kernel" --target sm_90a \
    -o "$bench/$name" "$@" 2>&1 | grep -v 'warning: .*spills' || true
  echo "staged $name"
}
source "$root/bench/tuning/sweeps.sh"
for_each_sweep compile_sweep
