#!/usr/bin/env bash
# The main job: compile every shipped kernel in kernels/ for sm_80 and
# sm_90a into bundles under build/bundles/, assemble each with ptxas and
# report registers and spills; check each kernel in the interpreter at a
# small ragged size; on a machine with a GPU, also run and check the
# bundles with tile-run.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${TEGULA_BUILD_DIR:-$root/build}
bundles=$build/bundles
tilec=$build/bin/tilec
rm -rf "$bundles"

echo "== round trip of examples/sample.mlir"
"$build/bin/tile-opt" "$root/examples/sample.mlir" | "$build/bin/tile-opt" >/dev/null

status=0
for source in "$root"/kernels/*.tile; do
  name=$(basename "$source" .tile)
  for target in sm_80 sm_90a; do
    out=$bundles/$target/$name
    echo "== $name for $target"
    "$tilec" "$source" --target "$target" -o "$out" || { status=1; continue; }
    for ptx in "$out"/*.ptx; do
      if command -v ptxas >/dev/null; then
        report=$(ptxas -arch="$target" -v "$ptx" -o "${ptx%.ptx}.cubin" 2>&1) || {
          echo "$report"; status=1; continue; }
        echo "$report" | grep -E "registers|spill" | sed 's/^ptxas info *: */   /'
        # Default configurations must not spill registers.
        if echo "$report" | grep -qE " [1-9][0-9]* bytes spill stores"; then
          echo "error: $(basename "$ptx") spills registers in its default configuration"
          status=1
        fi
      fi
    done
  done
done

# Numerics without a GPU: the interpreter against the float64 references.
echo "== interpreter check: attention_fwd (D=64, N=190, causal)"
"$tilec" "$root/kernels/attention_fwd.tile" -k attention_fwd -D D=64 -D BLOCK_M=64 -D CAUSAL=true \
  --run --dims Z=1,H=2,N=190 --scalar scale=0.125 --check || status=1
echo "== interpreter check: attention_bwd dK/dV and dQ (D=64, N=100, causal, 4 query heads over 2 K/V heads)"
# dK/dV's GROUPED build is the one for grouped K/V heads.
for k in "attention_bwd_dkdv -D GROUPED=true" attention_bwd_dq; do
  # shellcheck disable=SC2086
  "$tilec" "$root/kernels/attention_bwd.tile" -k $k --reference attention_bwd -D D=64 -D CAUSAL=true \
    --run --dims Z=1,H=4,HKV=2,M=100,N=100 --scalar scale=0.125 --check || status=1
done

if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then
  echo "== GPU check with tile-run"
  "$build/bin/tile-run" "$bundles/sm_90a/attention_fwd/attention_fwd.json" \
    --dims Z=2,H=4,N=512 --scalar scale=0.125 --check || status=1
fi
[ "$status" = 0 ] && echo "main job: OK" || echo "main job: FAILED"
exit $status
