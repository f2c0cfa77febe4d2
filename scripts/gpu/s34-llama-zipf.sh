#!/usr/bin/env bash
# Stop 34: the Llama comparison on Zipf-Markov data with 50 warm-up steps
# (a gradual loss fall), tegula beside SDPA cuDNN and flash.
set -u
# The package from a fresh venv (as check-ops.sh installs it), torch from
# the host interpreter through a .pth file.
venv=/tmp/tegula-zipf-venv
python3 -m venv $venv
echo "$(python3 -c 'import os, torch; print(os.path.dirname(os.path.dirname(torch.__file__)))')" \
  > "$($venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/host-torch.pth"
$venv/bin/python -m pip install -q --no-deps --no-build-isolation ./python
py=$venv/bin/python
for impl in tegula sdpa-cudnn sdpa-flash; do
  timeout 75 $py bench/train_llama.py --impl $impl --data zipf --lr-warmup 50 \
    --out "$OUT/zipf-$impl.json" > "$OUT/zipf-$impl.txt" 2>&1
  echo "$impl rc=$?"; tail -1 "$OUT/zipf-$impl.txt"
done
$py bench/train_llama.py --compare "$OUT/zipf-sdpa-cudnn.json" "$OUT/zipf-tegula.json" "$OUT/zipf-sdpa-flash.json" \
  --plot "$OUT/zipf-loss.png" 2>&1 | tail -6
