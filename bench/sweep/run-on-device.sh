#!/usr/bin/env bash
# On the GPU machine, after bench/sweep/stage.sh here: times every staged
# block shape with tile-run --bench (CUDA events, 10 warm-up, median of 100).
r=.device-bundle/bin/tile-run
for d in .device-bundle/sweep/attn-*; do
  n=$(basename $d); D=${n#attn-d}; D=${D%%-*}; H=$((2048 / D))
  echo "$n: $($r $d/attention_fwd.json --dims Z=4,H=$H,N=4096 --scalar scale=0.1 --bench 2>&1 | grep -E '^bench|error' )"
done
for d in .device-bundle/sweep/la-*; do
  echo "$(basename $d): $($r $d/linear_attention.json --dims B=8,T=2048,H=16 --scalar scale=0.088 --bench 2>&1 | grep -E '^bench|error')"
done
