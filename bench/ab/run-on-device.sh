#!/usr/bin/env bash
# On the GPU machine, after bench/ab/stage.sh here: each configuration of
# bench/ab/configs.sh, base and new, checked against float64 at a ragged and
# a multiple-of-16 size (tile-run --check, fresh random inputs), then timed
# at the bench's shape (tile-run --bench: CUDA events, 10 warm-up, median of
# 100), base and new back to back.
set -u
root=$(pwd)
run=.device-bundle/bin/tile-run
out=.device-bundle/ab
source bench/ab/configs.sh
one() {
  local name=$1 kernel=$3 ragged=$4 div16=$5 bench=$6 side json log line
  for side in base new; do
    json=$out/$side/$name/$kernel.json
    # shellcheck disable=SC2086
    log=$({ $run "$json" $ragged --check; $run "$json" $div16 --check; } 2>&1)
    checks="PASS $(grep -c PASS <<<"$log") FAIL $(grep -cE 'FAIL|error' <<<"$log")"
    # shellcheck disable=SC2086
    line=$($run "$json" $bench --bench 2>&1 | grep -E '^bench|error' | tr '\n' ' ')
    printf '%-16s %-4s %s  %s\n' "$name" "$side" "$checks" "$line"
  done
}
for_each_config one
