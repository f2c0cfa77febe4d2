#!/usr/bin/env bash
# Stop 36: the GLA model training comparison (bench/train_gla.py: 8 layers,
# hidden 2048, 16 heads, head K 64 / V 128, seq 2048, batch 4, bf16, AdamW,
# Zipf-Markov data, 50 warm-up steps, 200 steps, seed 0) with its GLA
# kernel through tegula.ops.chunk_gla (the package from a fresh venv, no
# tilec: ops-venv.sh) beside fla's chunk_gla (the wheel in .whl/, installed
# to /tmp/site as bench/on-device.sh does), then --compare (largest loss gap
# over steps 100-199, tolerance 0.05) and the plot. Fits one device call
# (about 9 minutes at most with every timeout reached).
#
#   here:       scripts/build-ops.sh
#   on the GPU: bash scripts/gpu/s36-gla-train.sh
#               (kind nvidia-h100-x1; carry python/tegula/_bundles,
#               python/tegula/libtegula_rt.so and .whl)
#
# Runs keep their results in /tmp/s36-gla on the machine and are skipped
# when their JSON is there: if fla's run is cut off by its timeout (its
# Triton JIT and autotuning on a bare machine), the same call again on the
# still-warm machine runs what is missing, with fla's autotuning results
# and compiled kernels cached on disk. Every call copies what there is to
# $OUT. FRESH=1 drops the kept results first (after a change to the code).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
out=${OUT:-/tmp/s36-out}
keep=/tmp/s36-gla
[ "${FRESH:-0}" = 1 ] && rm -rf "$keep"
mkdir -p "$out" "$keep"
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/gpu.txt"

# tegula: the package as a model author installs it (no tilec on PATH).
if [ ! -s "$keep/gla-tegula.json" ]; then
  py=$(timeout 90 bash scripts/gpu/ops-venv.sh /tmp/tegula-gla-venv)
  echo "venv rc=$? $py"
  env PATH=/usr/bin:/bin timeout 140 "$py" bench/train_gla.py --impl tegula \
    --out "$keep/gla-tegula.json" > "$keep/gla-tegula.txt" 2>&1
  echo "tegula rc=$?"
fi
tail -3 "$keep/gla-tegula.txt"

# fla: chunk_gla from the carried wheel.
if [ ! -s "$keep/gla-fla.json" ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \
    --upgrade --target /tmp/site .whl/*.whl
  PYTHONPATH=/tmp/site timeout 300 python3 bench/train_gla.py --impl fla \
    --out "$keep/gla-fla.json" > "$keep/gla-fla.txt" 2>&1
  echo "fla rc=$?"
fi
tail -3 "$keep/gla-fla.txt"

python3 -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__)' \
  | tee "$out/versions.txt"
if [ -s "$keep/gla-tegula.json" ] && [ -s "$keep/gla-fla.json" ]; then
  timeout 40 python3 bench/train_gla.py --compare "$keep/gla-fla.json" \
    "$keep/gla-tegula.json" --plot "$keep/gla-loss.png" 2>&1 | tee "$keep/compare.txt"
fi
cp "$keep"/gla-* "$keep"/compare.txt "$out"/ 2>/dev/null
ls "$out"
