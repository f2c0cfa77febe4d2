#!/usr/bin/env bash
# Stop 46's device calls for the gate-free chunked linear attention
# (kernels/linear_attention_chunked.tile), staged here into .device-la:
#   bash scripts/gpu/linear-sweep.sh stage
#   TEGULA_STAGE_DIR=$PWD/.device-la TEGULA_COMPILE_ONLY=1 ONLY='^linear-' \
#     bash scripts/gpu/stage-kernels.sh
#   bash scripts/build-ops.sh; mkdir -p .device-la/ops/sm_90a;
#   cp -r python/tegula/_bundles/sm_90a/{gla,linear}-* .device-la/ops/sm_90a
# On the GPU (carry .device-la, python/tegula/libtegula_rt.so, .whl):
#   bash scripts/gpu/s46-device.sh checks   the block sweep, the kernels'
#                                          float64 checks and sanitizers,
#                                          check-gla-ops.py
#   bash scripts/gpu/s46-device.sh bench    ops-bench.sh --only linear
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
out=${OUT:-/tmp/s46}
mkdir -p "$out"
export TEGULA_OPS_BUNDLES=$root/.device-la/ops
nvidia-smi -L
case ${1:-} in
checks)
  timeout 170 bash scripts/gpu/linear-sweep.sh run >"$out/sweep.log" 2>&1
  echo "sweep exit $?"
  grep -E "^== |winner" "$out/sweep.log"
  STAGE=.device-la ONLY=linear JOBS=8 OUT=$out/ck timeout 90 \
    bash scripts/gpu/check-kernels.sh >"$out/check-kernels.log" 2>&1
  tail -3 "$out/check-kernels.log"
  timeout 200 python3 scripts/gpu/check-gla-ops.py >"$out/check-gla-ops.log" 2>&1
  echo "check-gla-ops exit $?"
  grep -E "FAIL|linear|check-gla-ops:" "$out/check-gla-ops.log"
  STAGE=.device-la ONLY=linear JOBS=8 OUT=$out/san timeout 150 \
    bash scripts/gpu/sanitize-kernels.sh >"$out/sanitize.log" 2>&1
  tail -3 "$out/sanitize.log"
  ;;
bench)
  OUT=$out/bench BUDGET=${BUDGET:-300} TIMEOUT=${TIMEOUT:-400} \
    bash scripts/gpu/ops-bench.sh --only linear
  ;;
esac
