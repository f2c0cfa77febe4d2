#!/usr/bin/env bash
# Stop 37's device calls (bash scripts/gpu/s37-device.sh STEP), after
# scripts/build-ops.sh and scripts/gpu/stage-kernels.sh here. Results go to
# $OUT in few files; logs stay in /tmp.
#   kernels  (carry .device-bundle) tile-run --check of the kernel-configs.sh
#            runs matching $ONLY (default: GLA, M != N attention, strided),
#            both targets; then compute-sanitizer's memcheck, racecheck and
#            synccheck on the sm_90a runs matching $SAN (default: the GLA
#            chunked forward and backward, M != N attention, varlen at
#            D = 64, the unit-stride GEMM).
#   ops      (carry python/tegula/_bundles, python/tegula/libtegula_rt.so,
#            .whl) check-ops.sh from a fresh venv (M != N cases included).
#   glatrain (same carry) scripts/gpu/s36-gla-train.sh: the GLA model
#            beside fla's (run it again on the warm machine if fla's
#            autotuning was cut off).
#   glabwd   (same carry) check-gla-ops.py (values against float64 in
#            both forward forms, opcheck, torch.compile, CUDA graph), then
#            gla-bwd-speed.py at $SIZES (default 64,128) beside fla
#            ($SPEED_ARGS, e.g. --no-fla).
set -u
out=${OUT:-/tmp/s37}
mkdir -p "$out"
export PYTHONUNBUFFERED=1
case ${1:-} in
kernels)
  only=${ONLY:-gla|strided|-mn-}
  san=${SAN:-sm_90a.*(gla-(cumsum|intra|output|states|bwd)|-mn-|varlen-(fwd|dkdv|dq)-d64|strided-gemm-unit)|(gla-(cumsum|intra|output|states|bwd)|-mn-|varlen-(fwd|dkdv|dq)-d64|strided-gemm-unit).*sm_90a}
  source scripts/gpu/kernel-configs.sh
  run=.device-bundle/bin/tile-run
  mkdir -p /tmp/s37-k
  c() {
    local name=$1 bundle=$2
    shift 2
    [[ $name =~ $only ]] || return 0
    if timeout 60 "$run" "$bundle" "$@" > "/tmp/s37-k/$name.log" 2>&1; then
      echo "PASS $name"
    else
      echo "FAIL $name: $(grep -E 'error|FAIL' "/tmp/s37-k/$name.log" | head -2 | tr '\n' ' ')"
    fi
  }
  for_each_kernel_run c > "$out/kernels.txt" 2>&1
  echo "kernels: PASS $(grep -c '^PASS' "$out/kernels.txt") FAIL $(grep -c '^FAIL' "$out/kernels.txt")"
  grep '^FAIL' "$out/kernels.txt" | head
  ONLY="$san" OUT=/tmp/s37-san timeout "${SAN_TIMEOUT:-360}" \
    bash scripts/gpu/sanitize-kernels.sh > "$out/sanitizer.txt" 2>&1
  echo "sanitizer rc=$?"; tail -3 "$out/sanitizer.txt"
  grep -E '^DIRTY|^FAIL' "$out/sanitizer.txt" | head
  ;;
ops)
  timeout 300 bash scripts/gpu/check-ops.sh > "$out/ops.txt" 2>&1
  echo "check-ops rc=$? PASS $(grep -c '^PASS' "$out/ops.txt") FAIL $(grep -c '^FAIL' "$out/ops.txt")"
  grep -E '^FAIL|^INFO speed|Error' "$out/ops.txt" | cut -c1-400 | head -20
  ;;
glatrain) OUT=$out bash scripts/gpu/s36-gla-train.sh ;;
glabwd)
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \
    --upgrade --target /tmp/site .whl/*.whl
  export PYTHONPATH=/tmp/site
  if [ "${CHECK:-1}" = 1 ]; then
    timeout 240 python3 scripts/gpu/check-gla-ops.py > "$out/gla-check.txt" 2>&1
    echo "check-gla-ops rc=$? PASS $(grep -c '^PASS' "$out/gla-check.txt") FAIL $(grep -c '^FAIL' "$out/gla-check.txt")"
    grep -E '^FAIL|Error' "$out/gla-check.txt" | cut -c1-400 | head
  fi
  # shellcheck disable=SC2086
  timeout "${SPEED_TIMEOUT:-330}" python3 scripts/gpu/gla-bwd-speed.py --no-check \
    --sizes "${SIZES:-64,128}" ${SPEED_ARGS:-} 2>&1 | tee "$out/gla-speed.txt" | tail -40
  ;;
*) echo "usage: s37-device.sh kernels|ops|glatrain|glabwd" >&2; exit 2 ;;
esac
