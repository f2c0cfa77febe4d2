#!/usr/bin/env bash
# The next stop's device calls, by step (bash scripts/gpu/s36-device.sh
# STEP; kind nvidia-h100-x1 unless said). The device tool returns only a
# handful of files from $OUT, so each step leaves its results there in few
# files and keeps logs under /tmp.
#
#   tune1, tune2   (carry .device-bundle after bench/stage.sh) re-tune the
#                  bench bundles loop versioning changed, in two calls:
#                  matmul, matmul-gelu, matmul-gelu-exact, cross-entropy;
#                  then attn-d64, attn-d64-causal (about 200 s each). Each
#                  leaves $OUT/tables.tar for bench/tuning/import.py.
#   gla            (carry python/tegula/_bundles, libtegula_rt.so, .whl)
#                  check-gla-ops.py with --speed (fla's Triton JIT and
#                  autotuning take minutes on a bare machine: 222 s at
#                  K = 256 alone on an H200).
#   ops            check-ops.py from a fresh venv (two-device check skipped
#                  on one GPU).
#   graph          train_llama.py --graph-check (one training step in a
#                  CUDA graph, bit-identical to eager) at 2 layers.
#   ddp            (kind nvidia-h100-x2) check-ops.py's two-device check,
#                  then the Llama run under DDP on 2 GPUs, 200 steps, Zipf
#                  data, beside the one-GPU run of the same global batch.
set -u
out=${OUT:-/tmp/s36}
logs=/tmp/s36-logs
mkdir -p "$out" "$logs"
export PYTHONUNBUFFERED=1
# The tegula package of this checkout (bench/train_llama.py imports it).
export PYTHONPATH=$PWD/python
tune() {
  OUT=$logs/tune timeout 540 bash bench/tuning/tune-on-device.sh "$@" \
    > "$logs/tune.txt" 2>&1
  tail -1 "$logs/tune.txt"; grep -E '^FAIL' "$logs/tune.txt" | head
  cp "$logs/tune/tables.tar" "$out/" 2>/dev/null ||
    (cd .device-bundle/bench && tar -cf "$out/tables.tar" */*.tuning.json)
}
case ${1:-} in
tune1) tune matmul matmul-gelu matmul-gelu-exact cross-entropy ;;
tune2) tune attn-d64 attn-d64-causal ;;
gla)
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \
    --upgrade --target /tmp/site .whl/*.whl
  PYTHONPATH=/tmp/site:$PYTHONPATH timeout 560 python3 scripts/gpu/check-gla-ops.py \
    --speed > "$out/gla.txt" 2>&1
  echo "check-gla-ops rc=$? PASS $(grep -c '^PASS' "$out/gla.txt") FAIL $(grep -c '^FAIL' "$out/gla.txt")"
  grep -E '^FAIL|^INFO (speed|kernels)|Error' "$out/gla.txt" | cut -c1-700
  ;;
ops)
  timeout 150 bash scripts/gpu/check-ops.sh > "$out/ops.txt" 2>&1
  echo "check-ops rc=$? PASS $(grep -c '^PASS' "$out/ops.txt") FAIL $(grep -c '^FAIL' "$out/ops.txt")"
  grep -E '^FAIL|^INFO speed|Error' "$out/ops.txt" | cut -c1-400
  ;;
graph)
  timeout 300 python3 bench/train_llama.py --impl tegula --graph-check \
    --layers 2 2>&1 | tail -5 | tee "$out/graph.txt"
  ;;
ddp)
  timeout 120 python3 scripts/gpu/check-ops.py 2>&1 | grep -E 'cuda:|FAIL' |
    tee "$out/two-devices.txt"
  common=(--impl tegula --data zipf --lr-warmup 50)
  timeout 200 torchrun --nproc-per-node 2 bench/train_llama.py --ddp \
    "${common[@]}" --out "$out/llama-ddp.json" > "$logs/ddp.txt" 2>&1
  echo "ddp rc=$?"; tail -2 "$logs/ddp.txt"
  CUDA_VISIBLE_DEVICES=0 timeout 150 python3 bench/train_llama.py \
    "${common[@]}" --out "$out/llama-1gpu.json" > "$logs/one.txt" 2>&1
  echo "one GPU rc=$?"; tail -1 "$logs/one.txt"
  python3 bench/train_llama.py --compare "$out/llama-ddp.json" \
    "$out/llama-1gpu.json" --plot "$out/llama-ddp.png" 2>&1 | tail -6
  ;;
*) echo "usage: s36-device.sh tune1|tune2|gla|ops|graph|ddp" >&2; exit 2 ;;
esac
