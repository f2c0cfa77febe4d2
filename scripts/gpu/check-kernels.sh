#!/usr/bin/env bash
# On the GPU machine: every run of kernel-configs.sh (those matching $ONLY,
# when set), with tile-run --check against the float64 reference on fresh
# random inputs (ragged sizes included), then timings of the default
# configurations. Logs to $OUT.
set -u
source "$(dirname "$0")/kernel-configs.sh"
stage=${STAGE:-.device-bundle}
run=$stage/bin/tile-run
out=${OUT:-/tmp/check-kernels}
mkdir -p "$out"
passed=0
failed=0
summary=""

# c NAME BUNDLE ARGS...: the run (its --check included) must pass. Runs go
# $JOBS at a time (default 8): a check's time is mostly its float64
# reference on the host (a full pass one at a time took over 250 s on an
# H100 machine's 16 cores, stop 38), and no run here is timed.
parallel=${JOBS:-8}
names=()
c() {
  local name=$1 bundle=$2
  shift 2
  selected "$name" || return 0
  wait_for_slot "$parallel"
  names+=("$name")
  (
    if "$run" "$bundle" "$@" >"$out/$name.log" 2>&1; then
      echo "PASS $name"
    else
      echo "FAIL $name: $(grep -E 'error|FAIL' "$out/$name.log" | head -2 | tr '\n' ' ')"
    fi >"$out/$name.status"
  ) &
}

for_each_kernel_run c
wait
for name in "${names[@]}"; do
  line=$(cat "$out/$name.status" 2>/dev/null || echo "FAIL $name: no status")
  if [[ $line == PASS* ]]; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
  fi
  summary+="$line"$'\n'
done
# device_assert (-g) on inputs that break it: the launch must fail with
# CUDA_ERROR_ASSERT and the driver must print the message.
for target in sm_80 sm_90a; do
  log=$out/assert-fires-$target.log
  if "$run" $stage/kernels/assert-$target/positive.json \
    --in x=$stage/kernels/assert-inputs/bad.npy >"$log" 2>&1; then
    failed=$((failed + 1))
    summary+="FAIL assert-fires-$target: the launch succeeded"$'\n'
  elif grep -q CUDA_ERROR_ASSERT "$log" &&
    grep -q "inputs must not be negative" "$log"; then
    passed=$((passed + 1))
    summary+="PASS assert-fires-$target"$'\n'
  else
    failed=$((failed + 1))
    summary+="FAIL assert-fires-$target: $(head -c 300 "$log")"$'\n'
  fi
done
# Timing of the default configuration on sm_90a, batch x N = 16k tokens.
for n in 1024 4096; do
  z=$((16384 / n))
  "$run" $stage/kernels/attn-d64-sm_90a/attention_fwd.json --dims Z=$z,H=32,N=$n \
    --scalar scale=0.125 --bench --json "$out/bench-attn-d64-$n.json" \
    >"$out/bench-attn-d64-$n.log" 2>&1
  summary+="BENCH attn d64 N=$n: $(grep -E '^bench' "$out/bench-attn-d64-$n.log")"$'\n'
done
# The issue's shapes for rotary and linear attention.
b() {
  local name=$1
  shift
  "$run" "$@" --bench --json "$out/bench-$name.json" >"$out/bench-$name.log" 2>&1
  summary+="BENCH $name: $(grep -E '^bench' "$out/bench-$name.log")"$'\n'
}
b rotary-8x4096x32x128 $stage/kernels/rotary-sm_90a/rotary.json --dims B=8,T=4096,H=32
b linattn-8x2048x16x128 $stage/kernels/linattn-sm_90a/linear_attention.json --dims B=8,T=2048,H=16 --scalar scale=0.088
b linattn-4x8192x16x128 $stage/kernels/linattn-sm_90a/linear_attention.json --dims B=4,T=8192,H=16 --scalar scale=0.088
# The training kernels at model sizes (bf16): RMSNorm's backward with a
# row in one block (4096) and of 8192 in one block of 16 warps or two of
# 8, G = 256 partial rows (a multiple of 16: the div16 variant), then their
# sum; cross-entropy's backward with every row counted.
b rmsnorm-bwd-dx-16384x4096 $stage/kernels/rmsnorm-sm_90a/rmsnorm_bwd_dx.json --dims R=16384,C=4096,G=256
b rmsnorm-bwd-dx-16384x8192-w16 $stage/kernels/rmsnorm-w16-sm_90a/rmsnorm_bwd_dx.json --dims R=16384,C=8192,G=128
b rmsnorm-bwd-dx-16384x8192-2blocks $stage/kernels/rmsnorm-sm_90a/rmsnorm_bwd_dx.json --dims R=16384,C=8192,G=128
b rmsnorm-bwd-dw-256x4096 $stage/kernels/rmsnorm-sm_90a/rmsnorm_bwd_dw.json --dims G=256,C=4096
b cross-entropy-bwd-4096x32000 $stage/kernels/cross-entropy-sm_90a/cross_entropy_bwd.json --dims R=4096,V=32000 --in target=$stage/kernels/ce-inputs/targets-4096-32000.npy
b cross-entropy-bwd-1024x128256 $stage/kernels/cross-entropy-sm_90a/cross_entropy_bwd.json --dims R=1024,V=128256 --in target=$stage/kernels/ce-inputs/targets-1024-128256.npy
printf '%s' "$summary" | tee "$out/summary.txt"
echo "passed $passed, failed $failed"
[ "$failed" = 0 ]
