#!/usr/bin/env bash
# On the GPU machine, after bench/stage.sh here (carry .device-bundle):
# tunes every swept bundle of bench/tuning/sweeps.sh at the bench's shapes
# and leaves the tables in $OUT/tables.tar (NAME/KERNEL.tuning.json) and the
# log in $OUT/tune.log; bench/tuning/import.sh copies them into
# bench/tuning/tables/ here.
#
# Each bundle: every config first runs the sweep's CHECK against float64 at
# a small ragged size (tile-run --tune on a scratch copy, 1 warm-up and 3
# timed launches, whose table is thrown away); a bundle with a failing
# config is not tuned. Then tile-run --tune --against-first at the bench's
# shapes (10 warm-up, median of 100 launches; each config checked against
# the first config's outputs, as float64 there would take minutes). QUICK=1
# skips the float64 phase (about 60 s a bundle; config 0 is checked against
# float64 by scripts/gpu/check-kernels.sh) when device time is short. Each
# bundle's time goes to the log, and $OUT/tables.tar is rewritten after
# each, so a timeout keeps the tables done.
#   bash bench/tuning/tune-on-device.sh [NAME...]   (default: every sweep)
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
stage=${STAGE:-$root/.device-bundle}
bench=$stage/bench
inputs=$bench/inputs
run=$stage/bin/tile-run
out=${OUT:-/tmp/tune}
scratch=$(mktemp -d)
mkdir -p "$out"
source "$root/bench/tuning/sweeps.sh"

# NAME FILE KERNEL CHECK TUNE -- DEFINES: checks, then tunes, one bundle.
tune_one() {
  local name=$1 kernel=$3 check=$4 tune=$5 log rc
  if [ -n "$only" ] && [[ " $only " != *" $name "* ]]; then
    return
  fi
  echo "== $name"
  local began=$SECONDS
  if [ -n "$check" ] && [ "${QUICK:-0}" != 1 ]; then
    rm -rf "${scratch:?}/$name" && cp -r "$bench/$name" "$scratch/$name"
    # shellcheck disable=SC2086
    log=$("$run" --tune "$scratch/$name/$kernel.json" $check --warmup 1 \
      --iters 3 2>&1)
    rc=$?
    # Not the scratch table's "wrote" line: the summary counts those.
    grep -v '^wrote ' <<<"$log"
    if [ $rc -ne 0 ] || grep -q ': failed' <<<"$log"; then
      echo "FAIL $name: a config fails the float64 check; not tuned"
      return
    fi
  fi
  # shellcheck disable=SC2086
  if ! "$run" --tune "$bench/$name/$kernel.json" $tune --against-first; then
    echo "FAIL $name: tile-run --tune failed"
  fi
  echo "   ($((SECONDS - began)) s)"
  (cd "$bench" && tar -cf "$out/tables.tar" */*.tuning.json)
}
only="$*"
start=$SECONDS
for_each_sweep tune_one 2>&1 | tee "$out/tune.log"
tuned=$(grep -c '^wrote .*tuning.json' "$out/tune.log")
failed=$(grep -c '^FAIL ' "$out/tune.log")
(cd "$bench" && tar -cf "$out/tables.tar" */*.tuning.json)
echo "tune-on-device: $tuned bundles tuned, $failed failed, $((SECONDS - start)) s; tables in $out/tables.tar" |
  tee -a "$out/tune.log"
rm -rf "$scratch"
exit $((failed > 0))
