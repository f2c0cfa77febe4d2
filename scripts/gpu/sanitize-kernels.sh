#!/usr/bin/env bash
# On the GPU machine (Firecracker runtime: compute-sanitizer does not run
# under gVisor), after scripts/gpu/stage-kernels.sh here: every staged
# kernel once under compute-sanitizer's memcheck and racecheck, with
# tile-run --check at small ragged sizes. A tool that reports any error, or
# a check that fails, fails the run. Logs go to $OUT.
set -u
stage=${STAGE:-.device-bundle}
run=$stage/bin/tile-run
out=${OUT:-/tmp/sanitize-kernels}
mkdir -p "$out"
passed=0
failed=0
summary=""

# s NAME BUNDLE ARGS...: memcheck, then racecheck, of one tile-run.
s() {
  local name=$1 bundle=$2
  shift 2
  for tool in memcheck racecheck; do
    local log=$out/$name-$tool.log
    # memcheck ends with "ERROR SUMMARY: 0 errors", racecheck with
    # "RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)".
    if compute-sanitizer --tool "$tool" --error-exitcode 99 \
      "$run" "$bundle" "$@" >"$log" 2>&1 &&
      grep -Eq "ERROR SUMMARY: 0 errors|SUMMARY: 0 hazards displayed \(0 errors, 0 warnings\)" "$log"; then
      passed=$((passed + 1))
      summary+="CLEAN $tool $name"$'\n'
    else
      failed=$((failed + 1))
      summary+="DIRTY $tool $name: $(grep -E 'ERROR SUMMARY|error|FAIL' "$log" | head -3 | tr '\n' ' ')"$'\n'
    fi
  done
}

k=$stage/kernels
for target in sm_90a sm_80; do
  s attn-d64-$target $k/attn-d64-$target/attention_fwd.json --dims Z=1,H=2,N=333 --scalar scale=0.125 --seed 1 --check
  s attn-d64-lse-$target $k/attn-d64-$target/attention_fwd_lse.json --dims Z=1,H=2,N=201 --scalar scale=0.125 --seed 2 --check
  s attn-d128-$target $k/attn-d128-$target/attention_fwd.json --dims Z=1,H=1,N=200 --scalar scale=0.088 --seed 3 --check
  s attn-d64-causal-$target $k/attn-d64-causal-$target/attention_fwd.json --dims Z=1,H=2,N=299 --scalar scale=0.125 --seed 4 --check
  s attn-d128-causal-f16-$target $k/attn-d128-causal-f16-$target/attention_fwd.json --dims Z=1,H=1,N=190 --scalar scale=0.088 --seed 5 --check
  s attn-decode-$target $k/attn-decode-$target/attention_fwd.json --dims Z=1,H=2,N=77 --scalar scale=0.125 --seed 6 --check
  s rotary-$target $k/rotary-$target/rotary.json --dims B=2,T=37,H=3 --seed 7 --check
  s rotary-inplace-$target $k/rotary-$target/rotary_inplace.json --dims B=2,T=37,H=3 --seed 8 --check
  s rotary-partial-pairs-$target $k/rotary-partial-pairs-$target/rotary.json --dims B=1,T=45,H=2 --seed 9 --check
  s linattn-$target $k/linattn-$target/linear_attention.json --dims B=1,T=150,H=2 --scalar scale=-0.3 --seed 10 --check
  # Form (b) has no single-kernel reference: both kernels run unchecked
  # here (bench/run.py compares its outputs with form (a)).
  s linattn-states-$target $k/linattn-states-$target/linear_attention_states.json --dims B=1,T=150,H=2,NC=3 --seed 12
  s linattn-chunks-$target $k/linattn-states-$target/linear_attention_chunks.json --dims B=1,T=150,H=2,NC=3 --scalar scale=0.5 --seed 13
  s linattn-recurrent-$target $k/linattn-recurrent-$target/linear_attention_recurrent.json --dims B=1,T=77,H=2 --scalar scale=0.7 --seed 11 --check
done
printf '%s' "$summary" | tee "$out/summary.txt"
echo "clean $passed, dirty $failed"
[ "$failed" = 0 ]
