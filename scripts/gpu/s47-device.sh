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
# Tuned configs on another GPU of the tables' architecture (here: the
# parent commit's libtegula_rt.so in .device-vl/old-rt, scripts/build-ops.sh
# for the new one; carry .device-vl/opsall, .device-vl/old-rt and
# python/tegula/libtegula_rt.so):
#   bash scripts/gpu/s47-device.sh tuned   scripts/gpu/tuned-arch.py with
#                                          each library, check-ops.py
#   bash scripts/gpu/s47-device.sh f16     tuned-arch.py in f16 without and
#                                          with the derived tables, then
#                                          check-ops.py (carry .device-vl/opsall,
#                                          python/tegula/libtegula_rt.so)
# Varlen blocks (here: bash scripts/gpu/varlen-sweep.sh stage, and the
# shipped attention-varlen-* bundles copied into .device-vl/ops/sm_90a;
# carry .device-vl, python/tegula/libtegula_rt.so, .whl):
#   bash scripts/gpu/s47-device.sh varlen-sweep   the sweep, then
#                                                 ops_bench.py --only varlen
# The picks (here: scripts/build-ops.sh, then varlen-sweep.sh stage-picks,
# and the sm_90a bundles but gla-* and linear-* copied into
# .device-vl/opsall/sm_90a; carry .device-vl/opsall,
# python/tegula/libtegula_rt.so, .device-vl/stage):
#   bash scripts/gpu/s47-device.sh varlen-checks  their float64 checks and
#                                                 sanitizers, check-ops.py
# (the new attention-varlen-* bundles copied into .device-vl/ops-new/sm_90a;
# carry .device-vl/ops, .device-vl/ops-new, python/tegula/libtegula_rt.so):
#   bash scripts/gpu/s47-device.sh varlen-ab      ops_bench.py --only varlen,
#                                                 old and new bundles
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
tuned)
  # The same-architecture tuning rule (docs/tuning.md, rule 3): the old
  # library (.device-vl/old-rt) and the new, then check-ops.py on the new.
  export TEGULA_OPS_BUNDLES=${TEGULA_OPS_BUNDLES:-$root/.device-vl/opsall}
  for lib in .device-vl/old-rt/libtegula_rt.so python/tegula/libtegula_rt.so \
      .device-vl/old-rt/libtegula_rt.so python/tegula/libtegula_rt.so; do
    TEGULA_RT_LIBRARY=$root/$lib timeout 100 python3 scripts/gpu/tuned-arch.py
  done
  timeout 240 python3 scripts/gpu/check-ops.py >"$out/check-ops.log" 2>&1
  echo "check-ops exit $?"
  grep -E "FAIL|speed|check-ops:" "$out/check-ops.log" | head -40
  ;;
f16)
  # The f16 sweeps' derived tables (bench/tuning/derive_dtype.py): without
  # them (a copy with the tables taken out: the old bundles) and with.
  new=$root/.device-vl/opsall old=/tmp/f16-untuned
  rm -rf $old && cp -r "$new" $old
  for dir in $old/sm_90a/*-f16; do
    for table in "$dir"/*.tuning.json; do
      [ -e "$table" ] || continue
      rm "$table"
      python3 -c "import json, sys; p = sys.argv[1]; b = json.load(open(p)); b.pop('tuning'); json.dump(b, open(p, 'w'))" "${table%.tuning.json}.json"
    done
  done
  for bundles in $old $new $old $new; do
    DTYPE=f16 TEGULA_OPS_BUNDLES=$bundles timeout 100 python3 scripts/gpu/tuned-arch.py
  done
  TEGULA_OPS_BUNDLES=$new timeout 240 python3 scripts/gpu/check-ops.py >"$out/check-ops.log" 2>&1
  echo "check-ops exit $?"
  grep -E "FAIL|float16|check-ops:" "$out/check-ops.log" | head -60
  ;;
varlen-checks)
  only='^attn-varlen-(fwd|delta|dkdv|dq)-'
  STAGE=.device-vl/stage ONLY=$only JOBS=8 OUT=$out/ck timeout 120 \
    bash scripts/gpu/check-kernels.sh >"$out/check-kernels.log" 2>&1
  tail -3 "$out/check-kernels.log"
  STAGE=.device-vl/stage ONLY=$only JOBS=8 OUT=$out/san timeout 200 \
    bash scripts/gpu/sanitize-kernels.sh >"$out/sanitize.log" 2>&1
  tail -3 "$out/sanitize.log"
  TEGULA_OPS_BUNDLES=${TEGULA_OPS_BUNDLES:-$root/.device-vl/opsall} timeout 240 \
    python3 scripts/gpu/check-ops.py >"$out/check-ops.log" 2>&1
  echo "check-ops exit $?"
  grep -E "FAIL|varlen|check-ops:" "$out/check-ops.log" | head -60
  ;;
varlen-ab)
  for run in old-1 new-1 old-2 new-2; do
    bundles=$root/.device-vl/ops-new
    [ "${run%-*}" = old ] && bundles=$root/.device-vl/ops
    TEGULA_OPS_BUNDLES=$bundles timeout 140 python3 bench/ops_bench.py \
      --only varlen --no-plot --budget 100 --out "$out/varlen-$run" \
      >"$out/varlen-$run.log" 2>&1
    echo "== $run exit $?"
    grep -E "^attention_varlen|tegula:|torch varlen" "$out/varlen-$run.log"
  done
  ;;
varlen-sweep)
  timeout 330 bash scripts/gpu/varlen-sweep.sh run >"$out/sweep.log" 2>&1
  echo "sweep exit $?"
  grep -E "^== |winner|FAIL|error" "$out/sweep.log"
  TEGULA_OPS_BUNDLES=$root/.device-vl/ops timeout 200 python3 \
    bench/ops_bench.py --only varlen --no-plot --budget 150 \
    --out "$out/varlen" >"$out/varlen.log" 2>&1
  echo "ops_bench exit $?"
  grep -E "attention_varlen|PASS|FAIL" "$out/varlen.log" | head -40
  ;;
esac
