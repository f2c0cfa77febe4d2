#!/usr/bin/env bash
# Block-shape sweep of attention (D = 64, 128; N = 4096) and chunked linear
# attention ((8, 2048, 16, 128)), compiled here into .device-bundle/sweep/
# (after bench/stage.sh). On the GPU: bash bench/sweep/run-on-device.sh
# (carry .device-bundle). Prints ptxas registers and spills of each.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
tilec=${TEGULA_BUILD_DIR:-$root/build}/bin/tilec
out=$root/.device-bundle/sweep
rm -rf "$out"
for cfg in "64 128 32" "64 128 64" "64 64 64" "64 64 32" "128 64 32" "128 64 64" "128 128 32"; do
  set -- $cfg
  o=$out/attn-d$1-m$2-n$3
  mkdir -p "$o"
  "$tilec" "$root/kernels/attention_fwd.tile" -k attention_fwd -D D=$1 -D BLOCK_M=$2 -D BLOCK_N=$3 --target sm_90a -o "$o" 2>/dev/null
  echo "$(basename "$o"): $(ptxas -arch=sm_90a -v "$o/attention_fwd.ptx" -o /dev/null 2>&1 | grep -oE 'Used [0-9]+ registers|[0-9]+ bytes spill stores' | tr '\n' ' ')"
done
for cfg in "32 32 8" "32 64 8" "32 128 8" "64 32 8" "64 64 8" "32 64 4" "64 128 8"; do
  set -- $cfg
  o=$out/la-t$1-v$2-w$3
  mkdir -p "$o"
  "$tilec" "$root/kernels/linear_attention.tile" -D D=128 -D BLOCK_T=$1 -D BLOCK_V=$2 -D WARPS=$3 --target sm_90a -o "$o" 2>/dev/null
  echo "$(basename "$o"): $(ptxas -arch=sm_90a -v "$o/linear_attention.ptx" -o /dev/null 2>&1 | grep -oE 'Used [0-9]+ registers|[0-9]+ bytes spill stores' | tr '\n' ' ')"
done
cp "$root/bench/sweep/run-on-device.sh" "$out/run.sh"
