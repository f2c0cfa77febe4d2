#!/usr/bin/env bash
# On the GPU machine (Firecracker runtime: compute-sanitizer does not run
# under gVisor), after scripts/gpu/stage-kernels.sh here: every run of
# kernel-configs.sh (those matching $ONLY, when set) under
# compute-sanitizer's memcheck, racecheck and synccheck. A tool
# that reports any error, or a check that fails, fails the run. Logs go to
# $OUT.
set -u
source "$(dirname "$0")/kernel-configs.sh"
stage=${STAGE:-.device-bundle}
run=$stage/bin/tile-run
out=${OUT:-/tmp/sanitize-kernels}
mkdir -p "$out"
passed=0
failed=0

# s NAME BUNDLE ARGS...: memcheck, racecheck, then synccheck, of one tile-run.
s() {
  local name=$1 bundle=$2
  shift 2
  # ONLY=REGEX (bash =~) limits the runs, e.g. to kernels just added.
  if [ -n "${ONLY:-}" ] && ! [[ $name =~ $ONLY ]]; then
    return
  fi
  for tool in memcheck racecheck synccheck; do
    local log=$out/$name-$tool.log
    # memcheck and synccheck end with "ERROR SUMMARY: 0 errors", racecheck with
    # "RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)".
    if compute-sanitizer --tool "$tool" --error-exitcode 99 \
      "$run" "$bundle" "$@" >"$log" 2>&1 &&
      grep -Eq "ERROR SUMMARY: 0 errors|SUMMARY: 0 hazards displayed \(0 errors, 0 warnings\)" "$log"; then
      passed=$((passed + 1))
      echo "CLEAN $tool $name"
    else
      failed=$((failed + 1))
      echo "DIRTY $tool $name: $(grep -E 'ERROR SUMMARY|error|FAIL' "$log" | head -3 | tr '\n' ' ')"
    fi
  done
}

for_each_kernel_run s
echo "clean $passed, dirty $failed"
[ "$failed" = 0 ]
