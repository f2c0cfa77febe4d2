#!/usr/bin/env bash
# The GPU tests of tile-run, run on the GPU machine from the repository root
# after scripts/gpu/run-gpu-tests.sh staged .device-bundle/ here. Needs the
# NVIDIA driver; python3 with numpy is used for cross-checks when present.
# Logs go to $OUT (the device tool brings them back); the summary prints last.
set -u
stage=${STAGE:-.device-bundle}
bin=$stage/bin/tile-run
in=$stage/Inputs
out=${OUT:-/tmp/tile-run-gpu}
mkdir -p "$out"
log=$out/gpu-tests.log
tmp=$(mktemp -d)
: >"$log"
passed=0
failed=0
summary=""

# t NAME WANT PATTERN CMD...: runs CMD; WANT is 0 (must succeed) or 1 (must
# fail); PATTERN (grep -E) must appear in its output.
t() {
  local name=$1 want=$2 pattern=$3
  shift 3
  local rc=0
  "$@" >"$tmp/$name.log" 2>&1 || rc=$?
  local ok=1
  if [ "$want" = 0 ] && [ "$rc" != 0 ]; then ok=0; fi
  if [ "$want" = 1 ] && [ "$rc" = 0 ]; then ok=0; fi
  if [ -n "$pattern" ] && ! grep -Eq -- "$pattern" "$tmp/$name.log"; then
    ok=0
  fi
  { echo "=== $name (rc $rc): $*"; cat "$tmp/$name.log"; } >>"$log"
  if [ $ok = 1 ]; then
    passed=$((passed + 1))
    summary+="PASS $name"$'\n'
  else
    failed=$((failed + 1))
    summary+="FAIL $name (rc $rc, wanted /$pattern/)"$'\n'
  fi
}

{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } >>"$log" 2>&1
t unittests 0 " 0 failures" "$stage/bin/tile-run-unittests"
t probe 0 "^device: " "$bin" --probe

# copy: bit-exact, checked against its own input, and timed.
t copy-inputs 0 "checks passed" "$bin" "$in/copy/copy.json" --dims N=100003 \
  --dry-run --out "x=$tmp/x.npy"
t copy-check 0 "check y: rel_l2 0.000e\+00.*PASS" "$bin" "$in/copy/copy.json" \
  --in "x=$tmp/x.npy" --ref "y=$tmp/x.npy" --check --out "y=$tmp/y.npy"
t copy-same-bytes 0 "" cmp "$tmp/x.npy" "$tmp/y.npy"
t copy-bench 0 "bench: median .* GB/s" "$bin" "$in/copy/copy.json" \
  --dims N=67108864 --bench --warmup 10 --rep 50 --json "$out/bench-copy.json"
t unwritten 1 "3 of 1003 elements were not written \(first at \[1000\]\)" \
  "$bin" "$in/copy_short/copy_short.json" --dims N=1000

# Empty launches: an empty grid launches nothing and succeeds, checked and
# timed too. An output given with --in keeps what the kernel leaves
# unwritten (partial writes only y[0:16]), compared with --ref.
t empty-copy 0 "" "$bin" "$in/copy/copy.json" --dims N=0
t empty-attention-check 0 "" "$bin" "$in/attention/attention.json" \
  --dims Z=2,H=3,N=0 --scalar scale=0.125 --check
t empty-bench 0 "" "$bin" "$in/copy/copy.json" --dims N=0 --bench
t partial-poisoned 1 "32 of 48 elements were not written \(first at \[16\]\)" \
  "$bin" "$in/partial/partial.json" --dims N=48
t partial-inputs 0 "" "$bin" "$in/partial/partial.json" --dims N=48 --dry-run \
  --out "x=$tmp/px.npy"
if python3 -c "import numpy" 2>/dev/null; then
  t partial-ref 0 "" python3 -c "
import numpy as np
x = np.load('$tmp/px.npy'); y = 100 + np.arange(48, dtype=np.int32)
np.save('$tmp/py0.npy', y)
y[:16] = x[:16]
np.save('$tmp/pref.npy', y)"
  t partial-kept 0 "check y: rel_l2 0.000e\+00.*PASS" "$bin" \
    "$in/partial/partial.json" --dims N=48 --in "x=$tmp/px.npy" \
    --in "y=$tmp/py0.npy" --ref "y=$tmp/pref.npy" --check
fi

# Scalars and a readwrite tensor; numpy computes 0.5 * x + y + 3.
t scale-inputs 0 "checks passed" "$bin" "$in/scale_add/scale_add.json" \
  --dims N=4096 --scalar a=1 --scalar b=0 --dry-run \
  --out "x=$tmp/sx.npy" --out "y=$tmp/sy.npy"
t scale-identity 0 "check y: rel_l2 0.000e\+00.*PASS" "$bin" \
  "$in/scale_add/scale_add.json" --dims N=4096 --scalar a=0 --scalar b=0 \
  --ref "y=$tmp/sy.npy" --check
t scale-wrong-ref 1 "check y: .*FAIL" "$bin" "$in/scale_add/scale_add.json" \
  --dims N=4096 --scalar a=0 --scalar b=1 --ref "y=$tmp/sy.npy" --check
if python3 -c "import numpy" 2>/dev/null; then
  t scale-numpy-ref 0 "" python3 -c "
import numpy as np
x = np.load('$tmp/sx.npy'); y = np.load('$tmp/sy.npy')
assert x.dtype == np.float32 and x.shape == (4096,) and np.all(x != 0)
np.save('$tmp/sref.npy', (0.5 * x.astype(np.float64) + y + 3))"
  t scale-numpy-check 0 "check y: .*PASS" "$bin" "$in/scale_add/scale_add.json" \
    --in "x=$tmp/sx.npy" --in "y=$tmp/sy.npy" --scalar a=0.5 --scalar b=3 \
    --ref "y=$tmp/sref.npy" --check
fi

# Dynamic shared memory above 48 KB, and above the device's limit.
t smem-optin 0 "check y: .*PASS" "$bin" "$in/copy_smem/copy_smem.json" \
  --in "x=$tmp/x.npy" --ref "y=$tmp/x.npy" --check
t smem-too-big 1 "needs 300000 bytes of dynamic shared memory but .* allows at most" \
  "$bin" "$in/copy_huge_smem/copy_huge_smem.json" --dims N=1000
t bad-ptx 1 "cuModuleLoadDataEx failed: CUDA_ERROR_INVALID_PTX" \
  "$bin" "$in/bad_ptx/bad_ptx.json" --dims N=1000
t launch-check-on-gpu 1 "requires 'R <= D' does not hold: R = 80, D = 64" \
  "$bin" "$in/rotary/rotary.json" --dims B=1,T=16,H=2,D=64,R=80

# The float64 references against independent CUDA kernels.
t rotary-check 0 "check out: .*PASS" "$bin" "$in/rotary/rotary.json" \
  --dims B=2,T=128,H=4,D=64,R=32 --check --out "out=$tmp/rot.npy"
if python3 -c "import numpy" 2>/dev/null; then
  # A bf16 output is saved as <f4 holding exact bf16 values.
  t rotary-bf16-npy 0 "" python3 -c "
import numpy as np
a = np.load('$tmp/rot.npy'); assert a.dtype == np.float32 and a.shape == (2, 128, 4, 64)
assert np.all((a.view(np.uint32) & 0xffff) == 0)"
fi
t rotary-bench 0 "TFLOP/s, .* GB/s" "$bin" "$in/rotary/rotary.json" \
  --dims B=8,T=4096,H=16,D=128,R=64 --bench --json "$out/bench-rotary.json"
t attention-check 0 "check lse: .*PASS" "$bin" "$in/attention/attention.json" \
  --dims Z=2,H=3,N=200 --scalar scale=0.125 --check --json "$out/attention.json"
t attention-check-o 0 "check o: .*PASS" cat "$tmp/attention-check.log"
t linear-attention-check 0 "check o: .*PASS" "$bin" \
  "$in/linear_attention/linear_attention.json" --dims B=2,T=100,H=2,D=32 \
  --scalar scale=0.25 --check
if command -v compute-sanitizer >/dev/null; then
  t sanitizer-copy 0 "ERROR SUMMARY: 0 errors" compute-sanitizer --tool memcheck \
    "$bin" "$in/copy/copy.json" --in "x=$tmp/x.npy" --ref "y=$tmp/x.npy" --check
fi

printf '%s' "$summary" >"$out/summary.txt"
echo "passed $passed, failed $failed" | tee -a "$out/summary.txt"
printf '%s' "$summary"
echo "passed $passed, failed $failed (logs in $out)"
[ "$failed" = 0 ]
