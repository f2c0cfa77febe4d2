#!/usr/bin/env bash
# compute-sanitizer memcheck, racecheck and synccheck over every winner of
# the f16 attention sweeps' derived tables (bench/tuning/derive_dtype.py),
# each pinned by TEGULA_CONFIG and checked against float64 at ragged sizes
# (M = 333, N = 333 and 150; grouped dK/dV with 2 query heads a K/V head).
#   here:       cp -r python/tegula/_bundles/sm_90a/attn-*-f16 .device-vl/f16/
#               (not the preprocess); cp build/bin/tile-run .device-vl/f16/bin/
#   on the GPU: bash scripts/gpu/sanitize-f16-winners.sh  (carry .device-vl/f16)
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
dir=$root/.device-vl/f16 run=$root/.device-vl/f16/bin/tile-run
out=${OUT:-/tmp/sanitize-f16}
mkdir -p "$out"
jobs=()
for table in "$dir"/*/*.tuning.json; do
  bundle=${table%.tuning.json}.json name=$(basename "$(dirname "$table")")
  d=${name#*-d} d=${d%%-*}
  scale=$([ "$d" = 64 ] && echo 0.125 || echo 0.088)
  hkv=2
  [[ $name == *grouped* ]] && hkv=1
  for winner in $(python3 -c "import json, sys; print(' '.join(sorted({e['winner'] for e in json.load(open(sys.argv[1]))['entries']})))" "$table"); do
    for n in 333 150; do
      for tool in memcheck racecheck synccheck; do
        log=$out/$name-${winner//[=,]/_}-n$n-$tool.log
        ( TEGULA_CONFIG=$winner compute-sanitizer --tool $tool --error-exitcode 99 \
            "$run" "$bundle" --check --dims Z=1,H=2,HKV=$hkv,M=333,N=$n \
            --scalar scale=$scale --seed 7 >"$log" 2>&1 &&
          grep -Eq "ERROR SUMMARY: 0 errors|SUMMARY: 0 hazards displayed \(0 errors, 0 warnings\)" "$log" &&
          grep -q "PASS" "$log" &&
          echo "CLEAN $tool $name $winner N=$n" ||
          echo "DIRTY $tool $name $winner N=$n: $(grep -E 'ERROR SUMMARY|error|FAIL' "$log" | head -2 | tr '\n' ' ')" ) &
        jobs+=($!)
        while [ "$(jobs -rp | wc -l)" -ge "${JOBS:-12}" ]; do sleep 0.2; done
      done
    done
  done
done
wait
