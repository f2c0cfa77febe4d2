#!/usr/bin/env bash
# Offline tuning on the GPU, end to end (docs/tuning.md).
#
#   here:       bash scripts/gpu/check-tuning.sh --stage   (after scripts/build.sh
#               and scripts/gpu/stage-kernels.sh; compiles a matmul sweep into
#               .device-bundle/tune/)
#   on the GPU: bash scripts/gpu/check-tuning.sh           (carry .device-bundle)
#
# tile-run --tune checks every config of the sweep against the float64
# reference and times it at three shape buckets, writing
# matmul.tuning.json; then each bucket is launched again (--check) and must
# run its tuned winner; a size between buckets takes the nearest; and
# TEGULA_CONFIG pins a config. One PASS/FAIL line per check; logs in $OUT.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
stage=${STAGE:-$root/.device-bundle}
sweep=$stage/tune/matmul

if [ "${1:-}" = --stage ]; then
  set -e
  rm -rf "$sweep" && mkdir -p "$sweep"
  "$root/build/bin/tilec" "$root/kernels/matmul.tile" --target sm_90a \
    -D BLOCK_M=64,128 -D BLOCK_N=64,128 -D BLOCK_K=32,64 -o "$sweep"
  exit 0
fi

out=${OUT:-/tmp/check-tuning}
mkdir -p "$out"
run=$stage/bin/tile-run
failed=0
ok() { echo "PASS $1"; }
bad() { echo "FAIL $1"; failed=$((failed + 1)); }

# Small enough that the float64 reference (on the host) stays quick.
shapes=(M=2048,N=2048,K=1024 M=1024,N=1024,K=512 M=333,N=190,K=271)
args=()
for s in "${shapes[@]}"; do args+=(--dims "$s"); done
if "$run" --tune "$sweep/matmul.json" "${args[@]}" --warmup 5 --rep 30 \
    >"$out/tune.log" 2>&1; then
  ok "tune: $(grep -c '^\[' "$out/tune.log") config runs"
else
  bad "tune (see tune.log)"
fi
cat "$out/tune.log"
cp "$sweep/matmul.tuning.json" "$out/" 2>/dev/null

# Each tuned bucket runs its winner, checked against float64.
for s in "${shapes[@]}"; do
  log=$out/run-$s.log
  if "$run" "$sweep/matmul.json" --dims "$s" --check >"$log" 2>&1 &&
      grep -q '^config: .*(tuned' "$log"; then
    ok "tuned launch $s: $(grep '^config:' "$log")"
  else
    bad "tuned launch $s: $(grep -E '^config:|error' "$log" | head -2 | tr '\n' ' ')"
  fi
done
# Between buckets: the nearest.
log=$out/run-nearest.log
if "$run" "$sweep/matmul.json" --dims M=600,N=3000,K=300 --check >"$log" 2>&1 &&
    grep -q '^config: .*nearest' "$log"; then
  ok "nearest bucket: $(grep '^config:' "$log")"
else
  bad "nearest bucket: $(grep -E '^config:|error' "$log" | head -2 | tr '\n' ' ')"
fi
# A pinned config wins over the table.
log=$out/run-pinned.log
if TEGULA_CONFIG='BLOCK_M=64,BLOCK_N=64,BLOCK_K=32' "$run" "$sweep/matmul.json" \
    --dims M=2048,N=2048,K=1024 --check >"$log" 2>&1 &&
    grep -q '^config: BLOCK_M=64,BLOCK_N=64,BLOCK_K=32 (pinned' "$log"; then
  ok "pinned: $(grep '^config:' "$log")"
else
  bad "pinned: $(grep -E '^config:|error' "$log" | head -2 | tr '\n' ' ')"
fi
echo "check-tuning: $failed failed"
exit $((failed > 0))
