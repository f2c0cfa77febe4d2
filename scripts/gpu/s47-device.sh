#!/usr/bin/env bash
# Stop 47's device calls: the GLA and linear-attention ops' eager path
# (no dispatcher, repeated launches, checks once per signature).
# Here: bash scripts/build-ops.sh; the parent commit's changed files into
# .device-ab/old (git show HEAD~N:python/tegula/ops/F > .device-ab/old/F).
# On the GPU (carry python/tegula/_bundles/sm_90a,
# python/tegula/libtegula_rt.so, .whl, .device-ab):
#   bash scripts/gpu/s47-device.sh checks  check-gla-ops.py, then GLA
#                                          training seed 4 (its losses
#                                          against stop 45's, bit for bit)
#   bash scripts/gpu/s47-device.sh host    ops_bench.py --only host with the
#                                          old and the new ops, alternating
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
out=${OUT:-/tmp/s47}
mkdir -p "$out"
export PYTHONUNBUFFERED=1
nvidia-smi -L
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \
  --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH="$root/python:/tmp/site"
case ${1:-} in
checks)
  timeout 300 python3 scripts/gpu/check-gla-ops.py \
    >"$out/check-gla-ops.log" 2>&1
  echo "check-gla-ops exit $?"
  grep -E "FAIL|repeat|check-gla-ops:" "$out/check-gla-ops.log"
  timeout 200 python3 bench/train_gla.py --impl tegula --seed 4 --batch 4 \
    --out "$out/tegula-s4.json" >"$out/tegula-s4.txt" 2>&1
  echo "train exit $?: $(tail -1 "$out/tegula-s4.txt")"
  python3 - "$out/tegula-s4.json" \
    bench/results/2026-11-28-h200-gla-tolerance-s45/tegula-s4.json <<'PY'
import json, sys
new, old = (json.load(open(p))["losses"] for p in sys.argv[1:])
same = sum(a == b for a, b in zip(new, old))
print(f"seed 4 losses equal to stop 45's: {same} of {len(old)}; "
      f"largest gap {max(abs(a - b) for a, b in zip(new, old)):.3g}")
PY
  ;;
host)
  # The old ops: this package with the parent commit's changed files.
  rm -rf /tmp/old && mkdir -p /tmp/old && cp -r python/tegula /tmp/old/
  cp .device-ab/old/*.py /tmp/old/tegula/ops/
  for round in 1 2; do
    for side in new old; do
      path=$root/python
      [ "$side" = old ] && path=/tmp/old
      PYTHONPATH="$path:/tmp/site" timeout 200 python3 bench/ops_bench.py \
        --only host --calls "${CALLS:-2000}" --no-plot \
        --out "$out/host-$side-$round" >"$out/host-$side-$round.log" 2>&1
      echo "== $side round $round exit $?"
      grep -E "us per call|FAIL" "$out/host-$side-$round.log"
    done
  done
  ;;
esac
