#!/usr/bin/env bash
# On the GPU machine (Firecracker runtime: compute-sanitizer does not run
# under gVisor), after scripts/gpu/stage-kernels.sh here: every run of
# kernel-configs.sh (those matching $ONLY, when set) under
# compute-sanitizer's memcheck, racecheck and synccheck. A tool
# that reports any error, or a check that fails, fails the run. Logs go to
# $OUT. Runs go $JOBS at a time (default 4): the tools' time is host work.
set -u
source "$(dirname "$0")/kernel-configs.sh"
stage=${STAGE:-.device-bundle}
run=$stage/bin/tile-run
out=${OUT:-/tmp/sanitize-kernels}
mkdir -p "$out"
parallel=${JOBS:-4}
logs=()

# sanitize LOG TOOL BUNDLE ARGS...: one tool over one tile-run; prints
# CLEAN or DIRTY. memcheck and synccheck end with "ERROR SUMMARY: 0 errors",
# racecheck with "RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0
# warnings)".
sanitize() {
  local log=$1 tool=$2 name=$3
  shift 3
  if compute-sanitizer --tool "$tool" --error-exitcode 99 "$run" "$@" \
    >"$log" 2>&1 &&
    grep -Eq "ERROR SUMMARY: 0 errors|SUMMARY: 0 hazards displayed \(0 errors, 0 warnings\)" "$log"; then
    echo "CLEAN $tool $name"
  else
    echo "DIRTY $tool $name: $(grep -E 'ERROR SUMMARY|error|FAIL' "$log" | head -3 | tr '\n' ' ')"
  fi
}

# s NAME BUNDLE ARGS...: memcheck, racecheck, then synccheck, of one tile-run.
s() {
  local name=$1
  shift
  selected "$name" || return 0
  for tool in memcheck racecheck synccheck; do
    wait_for_slot "$parallel"
    local log=$out/$name-$tool.log
    logs+=("$log")
    sanitize "$log" "$tool" "$name" "$@" >"$log.status" &
  done
}

for_each_kernel_run s
wait
passed=0
failed=0
for log in "${logs[@]}"; do
  line=$(cat "$log.status" 2>/dev/null || echo "DIRTY $log: no status")
  echo "$line"
  if [[ $line == CLEAN* ]]; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
  fi
done
echo "clean $passed, dirty $failed"
[ "$failed" = 0 ]
