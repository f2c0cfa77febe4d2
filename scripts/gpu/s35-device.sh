#!/usr/bin/env bash
# Stop 35's device calls, by step (bash scripts/gpu/s35-device.sh STEP):
#   bench   re-tune the bench bundles whose PTX loop versioning changed
#           (their tables are stale), then the whole bench side by side
#           with the peers at this commit.
#   attn    re-tune attention d64 (call 1 ran out of time), the attention
#           section again; tegula.ops' GLA checks and speed beside fla.
#   san     compute-sanitizer on the kernels loop versioning splits, both
#           targets, and on the GLA kernels' ops.
set -u
case ${1:-} in
bench)
  OUT=$OUT/tune timeout 200 bash bench/tuning/tune-on-device.sh \
    attn-d64 attn-d64-causal matmul matmul-gelu matmul-gelu-exact \
    cross-entropy > "$OUT/tune.txt" 2>&1
  tail -1 "$OUT/tune.txt"
  OUT=$OUT/bench timeout 300 bash bench/on-device.sh > "$OUT/bench.txt" 2>&1
  echo "bench rc=$?"; tail -4 "$OUT/bench.txt"
  ;;
attn)
  OUT=$OUT/tune timeout 280 bash bench/tuning/tune-on-device.sh \
    attn-d64 attn-d64-causal > "$OUT/tune.txt" 2>&1
  tail -1 "$OUT/tune.txt"
  OUT=$OUT/bench timeout 170 bash bench/on-device.sh --only attention \
    > "$OUT/bench.txt" 2>&1
  echo "bench rc=$?"; tail -2 "$OUT/bench.txt"
  PYTHONPATH=/tmp/site timeout 120 python3 scripts/gpu/check-gla-ops.py \
    --speed > "$OUT/gla.txt" 2>&1
  echo "check-gla-ops rc=$? PASS $(grep -c '^PASS' "$OUT/gla.txt") FAIL $(grep -c '^FAIL' "$OUT/gla.txt")"
  grep -E '^FAIL|^INFO speed|Error' "$OUT/gla.txt" | cut -c1-400 | head -30
  ;;
san)
  PYTHONPATH=/tmp/site timeout 150 python3 scripts/gpu/check-gla-ops.py \
    --speed > "$OUT/gla.txt" 2>&1
  echo "check-gla-ops rc=$? PASS $(grep -c '^PASS' "$OUT/gla.txt") FAIL $(grep -c '^FAIL' "$OUT/gla.txt")"
  grep -E '^FAIL|^INFO speed|Error' "$OUT/gla.txt" | cut -c1-400 | head -30
  ONLY='^(matmul|gelu|mm-|attn-d64|cross)' OUT=$OUT/san \
    timeout 150 bash scripts/gpu/sanitize-kernels.sh > "$OUT/san.txt" 2>&1
  echo "sanitizer logs: $(ls "$OUT/san" | wc -l), clean: $(grep -lE 'ERROR SUMMARY: 0 errors|RACECHECK SUMMARY: 0 hazards' "$OUT"/san/*.log | wc -l)"
  echo "not clean:"; grep -LE 'ERROR SUMMARY: 0 errors|RACECHECK SUMMARY: 0 hazards' "$OUT"/san/*.log | head
  OUT=$OUT/kernels timeout 150 bash .device-bundle/check-kernels.sh \
    > "$OUT/kernels.txt" 2>&1
  tail -1 "$OUT/kernels.txt"; grep -E '^FAIL' "$OUT/kernels.txt" | head
  OUT=$OUT/agree timeout 60 bash scripts/gpu/check-agreement.sh \
    > "$OUT/agree.txt" 2>&1
  tail -1 "$OUT/agree.txt"; grep -E '^FAIL|DISAGREE' "$OUT/agree.txt" | head
  ;;
last)
  OUT=$OUT/kernels timeout 190 bash .device-bundle/check-kernels.sh \
    > "$OUT/kernels.txt" 2>&1 &
  ONLY='^matmul.*sm_90a' OUT=$OUT/san timeout 60 \
    bash scripts/gpu/sanitize-kernels.sh > "$OUT/san.txt" 2>&1
  tail -3 "$OUT/san.txt"
  wait
  echo "kernel logs $(ls "$OUT"/kernels/*.log | wc -l); with FAIL or error:"
  grep -lE 'FAIL|error' "$OUT"/kernels/*.log | head; tail -2 "$OUT/kernels.txt"
  PYTHONPATH=/tmp/site timeout 140 python3 scripts/gpu/check-gla-ops.py \
    --speed-only > "$OUT/gla.txt" 2>&1
  echo "check-gla-ops rc=$? PASS $(grep -c '^PASS' "$OUT/gla.txt") FAIL $(grep -c '^FAIL' "$OUT/gla.txt")"
  grep -E '^FAIL|^INFO speed|Error' "$OUT/gla.txt" | cut -c1-400 | head -30
  ;;
*) echo "usage: s35-device.sh bench|attn|san|last" >&2; exit 2 ;;
esac
