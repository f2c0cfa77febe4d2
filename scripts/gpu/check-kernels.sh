#!/usr/bin/env bash
# On the GPU machine: checks every staged kernel configuration against its
# float64 reference with tile-run --check on fresh random inputs (ragged
# sizes included where the kernel allows), then times it. Logs to $OUT.
set -u
stage=${STAGE:-.device-bundle}
run=$stage/bin/tile-run
out=${OUT:-/tmp/check-kernels}
mkdir -p "$out"
passed=0
failed=0
summary=""

# c NAME BUNDLE ARGS...: tile-run --check must pass.
c() {
  local name=$1 bundle=$2
  shift 2
  if "$run" "$bundle" --check "$@" >"$out/$name.log" 2>&1; then
    passed=$((passed + 1))
    summary+="PASS $name"$'\n'
  else
    failed=$((failed + 1))
    summary+="FAIL $name: $(grep -E 'error|FAIL' "$out/$name.log" | head -2 | tr '\n' ' ')"$'\n'
  fi
}

for target in sm_80 sm_90a; do
  k=$stage/kernels
  c attn-d64-$target-small $k/attn-d64-$target/attention_fwd.json --dims Z=1,H=2,N=128 --scalar scale=0.125 --seed 1
  c attn-d64-$target $k/attn-d64-$target/attention_fwd.json --dims Z=2,H=3,N=384 --scalar scale=0.125 --seed 2
  c attn-d64-$target-negscale $k/attn-d64-$target/attention_fwd.json --dims Z=1,H=2,N=256 --scalar scale=-0.2 --seed 3
  c attn-d64-$target-ragged $k/attn-d64-$target/attention_fwd.json --dims Z=1,H=3,N=333 --scalar scale=0.125 --seed 11
  c attn-d64-lse-$target-ragged $k/attn-d64-$target/attention_fwd_lse.json --dims Z=2,H=2,N=201 --scalar scale=-0.2 --seed 12
  c attn-d128-$target-ragged $k/attn-d128-$target/attention_fwd.json --dims Z=1,H=2,N=1000 --scalar scale=0.088 --seed 13
  c attn-d64-causal-$target-ragged $k/attn-d64-causal-$target/attention_fwd.json --dims Z=2,H=2,N=299 --scalar scale=0.125 --seed 14
  c attn-d64-causal-lse-$target $k/attn-d64-causal-$target/attention_fwd_lse.json --dims Z=1,H=2,N=256 --scalar scale=0.125 --seed 15
  c attn-d128-causal-f16-$target $k/attn-d128-causal-f16-$target/attention_fwd.json --dims Z=2,H=2,N=320 --scalar scale=0.088 --seed 4
  c attn-decode-$target $k/attn-decode-$target/attention_fwd.json --dims Z=2,H=4,N=192 --scalar scale=0.125 --seed 5
  c attn-decode-$target-ragged $k/attn-decode-$target/attention_fwd.json --dims Z=1,H=4,N=77 --scalar scale=0.125 --seed 16
  c rotary-$target $k/rotary-$target/rotary.json --dims B=2,T=37,H=3 --seed 6
  c rotary-inplace-$target $k/rotary-$target/rotary_inplace.json --dims B=2,T=37,H=3 --seed 7
  c rotary-partial-pairs-$target $k/rotary-partial-pairs-$target/rotary.json --dims B=2,T=45,H=2 --seed 8
  c linattn-$target $k/linattn-$target/linear_attention.json --dims B=2,T=150,H=3 --scalar scale=-0.3 --seed 9
  c linattn-recurrent-$target $k/linattn-recurrent-$target/linear_attention_recurrent.json --dims B=2,T=77,H=2 --scalar scale=0.7 --seed 10
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
printf '%s' "$summary" | tee "$out/summary.txt"
echo "passed $passed, failed $failed"
[ "$failed" = 0 ]
