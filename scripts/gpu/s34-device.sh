#!/usr/bin/env bash
# Stop 34's one remaining device call: the sanitizer on the kernels whose
# loops loop versioning splits, tegula.ops from a fresh venv
# (check-ops.sh), and the Llama training comparison (GQA, all ops).
set -u
ONLY='^(matmul|attn-d64|attn-d128|attn-gqa|attn-bwd|linattn|rmsnorm)' OUT=$OUT/san \
  timeout 190 bash scripts/gpu/sanitize-kernels.sh > "$OUT/san.txt" 2>&1
echo "sanitizer logs: $(ls "$OUT/san" | wc -l), clean: $(grep -lE 'ERROR SUMMARY: 0 errors|RACECHECK SUMMARY: 0 hazards' "$OUT"/san/*.log | wc -l)"
echo "not clean:"; grep -LE 'ERROR SUMMARY: 0 errors|RACECHECK SUMMARY: 0 hazards' "$OUT"/san/*.log | head
timeout 140 bash scripts/gpu/check-ops.sh > "$OUT/ops.txt" 2>&1
echo "check-ops rc=$? PASS $(grep -c '^PASS' "$OUT/ops.txt") FAIL $(grep -c '^FAIL' "$OUT/ops.txt")"
grep -E '^FAIL|Error' "$OUT/ops.txt" | head -20
py=/tmp/tegula-ops-venv/bin/python
timeout 130 $py bench/train_llama.py --impl tegula --out "$OUT/llama-tegula.json" > "$OUT/llama-tegula.txt" 2>&1
echo "llama tegula rc=$?"; tail -3 "$OUT/llama-tegula.txt"
timeout 100 $py bench/train_llama.py --impl sdpa-cudnn --out "$OUT/llama-cudnn.json" > "$OUT/llama-cudnn.txt" 2>&1
echo "llama cudnn rc=$?"; tail -3 "$OUT/llama-cudnn.txt"
$py bench/train_llama.py --compare "$OUT/llama-tegula.json" "$OUT/llama-cudnn.json" --plot "$OUT/llama-loss.png" 2>&1 | tail -8
