#!/usr/bin/env bash
# On the GPU machine, from the repository root, after bench/stage.sh here:
# the side-by-side benchmark, then the table and the plot, all in $OUT.
set -uo pipefail
out=${OUT:-/tmp/bench}
mkdir -p "$out"
if ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \
    --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site
fi
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem \
  --format=csv | tee "$out/gpu.txt"
export PYTHONUNBUFFERED=1
python3 bench/run.py --stage .device-bundle --out "$out" "$@" 2>&1 |
  tee "$out/bench.log"
status=${PIPESTATUS[0]}
python3 bench/report.py "$out/results.json" --md "$out/results.md" \
  --plot "$out/attention-tflops.png"
exit "$status"
