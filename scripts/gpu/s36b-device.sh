#!/usr/bin/env bash
# Stop 36's second set of device calls (bash scripts/gpu/s36b-device.sh
# STEP), after scripts/build-ops.sh and scripts/gpu/stage-kernels.sh here.
# Results go to $OUT in few files; logs stay in /tmp.
#   ops      (carry python/tegula/_bundles, python/tegula/libtegula_rt.so)
#            check-ops.sh: tegula.ops from a fresh venv (no tilec),
#            attention_varlen's checks included.
#   kernels  (carry .device-bundle without its bench/) tile-run --check of
#            the kernel-configs.sh runs matching $ONLY (default: the GLA,
#            varlen and strided runs; each run at most 60 s), then
#            compute-sanitizer's three tools on the runs matching $SAN
#            (default: $ONLY) within $SAN_TIMEOUT seconds (420).
set -u
out=${OUT:-/tmp/s36b}
mkdir -p "$out"
export PYTHONUNBUFFERED=1
case ${1:-} in
ops)
  timeout 280 bash scripts/gpu/check-ops.sh > "$out/ops.txt" 2>&1
  echo "check-ops rc=$? PASS $(grep -c '^PASS' "$out/ops.txt") FAIL $(grep -c '^FAIL' "$out/ops.txt")"
  grep -E '^FAIL|^INFO speed|Error' "$out/ops.txt" | cut -c1-400 | head -20
  ;;
kernels)
  only=${ONLY:-gla|varlen|strided}
  source scripts/gpu/kernel-configs.sh
  run=.device-bundle/bin/tile-run
  mkdir -p /tmp/s36b-k
  c() {
    local name=$1 bundle=$2
    shift 2
    [[ $name =~ $only ]] || return 0
    if timeout 60 "$run" "$bundle" "$@" > "/tmp/s36b-k/$name.log" 2>&1; then
      echo "PASS $name"
    else
      echo "FAIL $name: $(grep -E 'error|FAIL' "/tmp/s36b-k/$name.log" | head -2 | tr '\n' ' ')"
    fi
  }
  for_each_kernel_run c > "$out/kernels.txt"
  echo "kernels: PASS $(grep -c '^PASS' "$out/kernels.txt") FAIL $(grep -c '^FAIL' "$out/kernels.txt")"
  grep '^FAIL' "$out/kernels.txt" | head
  ONLY="${SAN:-$only}" OUT=/tmp/s36b-san timeout ${SAN_TIMEOUT:-420} \
    bash scripts/gpu/sanitize-kernels.sh > "$out/sanitizer.txt" 2>&1
  echo "sanitizer rc=$?"; tail -3 "$out/sanitizer.txt"
  grep -E '^DIRTY|^FAIL' "$out/sanitizer.txt" | head
  ;;
*) echo "usage: s36b-device.sh ops|kernels" >&2; exit 2 ;;
esac
