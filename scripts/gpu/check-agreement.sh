#!/usr/bin/env bash
# On the GPU machine, after scripts/gpu/stage-agreement.py here: each staged
# run (.device-bundle/agree/runs.txt: NAME BUNDLE TILE-RUN-ARGS...) must give
# the interpreter's outputs (--ref ... --check). With SANITIZE=1 each run goes
# under compute-sanitizer's memcheck, racecheck and synccheck too; RUNS=FILE
# takes another staged list. Logs to $OUT.
set -u
stage=${STAGE:-.device-bundle}
run=$stage/bin/tile-run
out=${OUT:-/tmp/check-agreement}
mkdir -p "$out"
passed=0
failed=0
summary=""
while read -r name bundle args; do
  [ -n "$name" ] || continue
  # shellcheck disable=SC2086
  if "$run" "$bundle" $args >"$out/agree-$name.log" 2>&1; then
    passed=$((passed + 1))
    summary+="AGREE $name"$'\n'
  else
    failed=$((failed + 1))
    summary+="DIFFER $name: $(grep -E 'error|FAIL' "$out/agree-$name.log" | head -2 | tr '\n' ' ')"$'\n'
  fi
  if [ "${SANITIZE:-0}" = 1 ]; then
    for tool in memcheck racecheck synccheck; do
      log=$out/agree-$name-$tool.log
      # shellcheck disable=SC2086
      if compute-sanitizer --tool "$tool" --error-exitcode 99 "$run" "$bundle" $args >"$log" 2>&1 &&
        grep -Eq "ERROR SUMMARY: 0 errors|SUMMARY: 0 hazards displayed \(0 errors, 0 warnings\)" "$log"; then
        passed=$((passed + 1))
        summary+="CLEAN $tool $name"$'\n'
      else
        failed=$((failed + 1))
        summary+="DIRTY $tool $name: $(grep -E 'SUMMARY|error' "$log" | head -2 | tr '\n' ' ')"$'\n'
      fi
    done
  fi
done <"${RUNS:-$stage/agree/runs.txt}"
printf '%s' "$summary" | tee "$out/agreement-summary.txt"
echo "agreement: passed $passed, failed $failed"
[ "$failed" = 0 ]
