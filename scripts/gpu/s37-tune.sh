#!/usr/bin/env bash
# Stop 37: tunes the named bench bundles with tile-run --tune
# --against-first only (no per-config float64 check phase: that phase,
# tune-on-device.sh's, took about 60 s a bundle and the device time was
# short); each config is checked against config 0's outputs at the bench's
# shapes, and config 0 against float64 by kernel-configs.sh. The tables go
# to $OUT/tables.tar after each bundle (a timeout keeps those done).
#   bash scripts/gpu/s37-tune.sh NAME...   (carry .device-bundle/bench, bin)
set -u
want=" $* "
out=${OUT:-/tmp/s37-tune}
mkdir -p "$out"
inputs=.device-bundle/bench/inputs  # the varlen sweeps name it
source bench/tuning/sweeps.sh
t() {
  local name=$1 kernel=$3 tune=$5
  [[ $want == *" $name "* ]] || return 0
  echo "== $name"
  local start=$SECONDS
  # shellcheck disable=SC2086
  .device-bundle/bin/tile-run --tune ".device-bundle/bench/$name/$kernel.json" \
    $tune --against-first 2>&1 | tee -a "$out/tune.log" |
    grep -E 'winner|wrote|error|FAIL|failed'
  echo "   ($((SECONDS - start)) s)"
  (cd .device-bundle/bench && tar -cf "$out/tables.tar" */*.tuning.json)
}
for_each_sweep t
