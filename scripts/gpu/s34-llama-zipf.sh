#!/usr/bin/env bash
# Stop 34: the Llama comparison on Zipf-Markov data with 50 warm-up steps
# (a gradual loss fall), tegula beside SDPA cuDNN and flash. (Call 6 ran
# it with the venv lines of check-ops.sh inline, before ops-venv.sh.)
set -u
py=$(bash scripts/gpu/ops-venv.sh /tmp/tegula-zipf-venv)
for impl in tegula sdpa-cudnn sdpa-flash; do
  timeout 75 $py bench/train_llama.py --impl $impl --data zipf --lr-warmup 50 \
    --out "$OUT/zipf-$impl.json" > "$OUT/zipf-$impl.txt" 2>&1
  echo "$impl rc=$?"; tail -1 "$OUT/zipf-$impl.txt"
done
$py bench/train_llama.py --compare "$OUT/zipf-sdpa-cudnn.json" "$OUT/zipf-tegula.json" "$OUT/zipf-sdpa-flash.json" \
  --plot "$OUT/zipf-loss.png" 2>&1 | tail -6
