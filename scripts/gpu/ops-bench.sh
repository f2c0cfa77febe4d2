#!/usr/bin/env bash
# On the GPU machine: bench/ops_bench.py, tegula.ops forward and forward +
# backward beside their peers (SDPA, torch eager and torch.compile, fla,
# Triton), the host cost per op call, and the training runs' tokens/s.
#
#   here:       scripts/build-ops.sh   (python/tegula/_bundles, libtegula_rt.so)
#   on the GPU: bash scripts/gpu/ops-bench.sh [ops_bench.py arguments]
#               (kind nvidia-h100-x1; carry python/tegula/_bundles,
#               python/tegula/libtegula_rt.so and .whl)
#
# The fla wheel in .whl/ goes to /tmp/site (as bench/on-device.sh); the
# tegula package is this checkout's python/. Fits one device call: sections
# and shapes stop starting after BUDGET seconds (420), and the run is
# stopped at TIMEOUT (500; ops_bench.py saves what it has on SIGTERM, KILL
# 15 s later). Writes five files to $OUT: gpu.txt, ops-bench.log,
# ops-results.json, ops-results.md, ops-results.png. On a bare machine the
# torch.compile and fla autotuning of the first run take minutes; split the
# sections over two calls (bench/README.md), and a call again on the warm
# machine reuses Triton's, inductor's and fla's caches.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
out=${OUT:-/tmp/ops-bench}
site=/tmp/site
mkdir -p "$out"
export PYTHONUNBUFFERED=1
if ls .whl/*.whl >/dev/null 2>&1; then
  timeout 120 python3 -m pip install -q --no-index --no-deps --no-compile \
    --no-cache-dir --upgrade --target "$site" .whl/*.whl ||
    echo "WARNING: the fla wheel did not install; fla rows will be INFO"
fi
export PYTHONPATH="$root/python:$site${PYTHONPATH:+:$PYTHONPATH}"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem \
  --format=csv | tee "$out/gpu.txt"
timeout -k 15 "${TIMEOUT:-500}" python3 bench/ops_bench.py --out "$out" \
  --budget "${BUDGET:-420}" "$@" 2>&1 | tee "$out/ops-bench.log"
status=${PIPESTATUS[0]}
echo "ops_bench.py exit status $status" | tee -a "$out/ops-bench.log"
ls "$out"
exit "$status"
