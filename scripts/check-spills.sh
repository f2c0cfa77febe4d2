#!/usr/bin/env bash
# "No spills in shipped defaults" (issue 24): compiles every kernel file in
# kernels/ at its defaults for both targets, and every configuration that
# scripts/gpu/stage-kernels.sh and bench/stage.sh build, with ptxas, and
# lists each spill warning tilec prints (docs/tuning.md, "Spills"). Exits
# 1 if any configuration spills, 2 if one does not compile or ptxas
# serializes its wgmma instructions.
# test/Kernels/no-spills.test runs it against the builds known to spill
# today (test/Kernels/Inputs/known-spills.txt).
#   scripts/check-spills.sh [BUILD_DIR]          (default: build/)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-${TEGULA_BUILD_DIR:-$root/build}}
command -v ptxas >/dev/null ||
  { echo "error: ptxas (CUDA toolkit) is not on PATH; spills come from ptxas -v" >&2; exit 2; }
[ -x "$build/bin/tilec" ] || { echo "error: no $build/bin/tilec" >&2; exit 2; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# Each kernel file at its defaults, one per core at a time; a warning
# names kernel, target and variant, and "defaults": the file is said
# before it.
mkdir -p "$out/defaults"
for file in "$root"/kernels/*.tile; do
  name=$(basename "$file" .tile)
  for target in sm_80 sm_90a; do
    while [ "$(jobs -rp | wc -l)" -ge "$(nproc)" ]; do wait -n || true; done
    log=$out/defaults/$name-$target.log
    { "$build/bin/tilec" "$file" --target "$target" -o "$out/defaults/$name-$target" \
        2> "$log" || echo "error: tilec failed ($target)" >> "$log"
      sed -i "s|^|kernels/$name.tile: |" "$log"; } &
  done
done
wait
cat "$out/defaults/"*.log >> "$out/warnings"
# The staged configurations: a warning names the -D values of its build.
TEGULA_BUILD_DIR=$build TEGULA_STAGE_DIR=$out/stage TEGULA_COMPILE_ONLY=1 \
  bash "$root/bench/stage.sh" > /dev/null 2>> "$out/warnings" ||
  echo "error: bench/stage.sh failed" >> "$out/warnings"

spills=$(grep -F ') spills ' "$out/warnings" | sort -u || true)
other=$(grep -vF ') spills ' "$out/warnings" | sort -u || true)
[ -z "$other" ] || printf 'other messages:\n%s\n' "$other"
if grep -q 'error' <<<"$other"; then
  echo "check-spills: a configuration does not compile"
  exit 2
fi
# Serialized wgmma instructions (ptxas's C7515) are a lowering bug, never a
# configuration's choice: no build may have them.
if grep -qF 'ptxas serializes' <<<"$other"; then
  echo "check-spills: error: ptxas serializes the wgmma instructions of a configuration"
  exit 2
fi
if [ -z "$spills" ]; then
  echo "check-spills: no configuration spills"
  exit 0
fi
printf '%s\n' "$spills"
echo "check-spills: $(printf '%s\n' "$spills" | wc -l) spilling builds"
exit 1
