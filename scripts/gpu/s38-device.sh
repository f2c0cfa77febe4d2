#!/usr/bin/env bash
# Stop 38's last device call, after scripts/build-ops.sh and
# scripts/gpu/stage-sweeps.sh here (carry .device-bundle/bench,
# .device-bundle/bin, python/tegula/_bundles, python/tegula/libtegula_rt.so):
#   1. tunes the swept bundles named in $TUNE (bench/tuning/tune-on-device.sh
#      with QUICK=1: no float64 phase);
#   2. check-ops.sh: tegula.ops from a fresh venv against float64 (the
#      strided layouts, M != N and the attention eager path included);
#   3. the host cost per op call (ops-bench.sh --only host).
set -u
out=${OUT:-/tmp/s38}
mkdir -p "$out"
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
start=$SECONDS
# shellcheck disable=SC2086
[ -n "${TUNE:-}" ] && QUICK=1 OUT=$out bash bench/tuning/tune-on-device.sh $TUNE
echo "tuning: $((SECONDS - start)) s"
timeout "${OPS_TIMEOUT:-200}" bash scripts/gpu/check-ops.sh > "$out/ops.txt" 2>&1
echo "check-ops rc=$? PASS $(grep -c '^PASS' "$out/ops.txt") FAIL $(grep -c '^FAIL' "$out/ops.txt") ($((SECONDS - start)) s)"
grep -E '^FAIL|^INFO speed|Error' "$out/ops.txt" | cut -c1-300 | head -20
TIMEOUT=60 BUDGET=50 OUT=$out/bench bash scripts/gpu/ops-bench.sh --only host \
  --calls 1000 2>&1 | grep -E "^host |us per call|checks passed"
echo "done: $((SECONDS - start)) s"
