#!/usr/bin/env bash
# The README's second command: builds what is stale and runs every lit test
# on build/; then builds the sanitizer build build-asan/ (ASan + UBSan,
# scripts/build-sanitize.sh) and runs every lit test again on it. One
# summary line per run; exits non-zero if any test fails in either.
# TEGULA_SKIP_SANITIZER=1 skips the second run (docs/testing.md).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${TEGULA_BUILD_DIR:-$root/build}
asan_build=${TEGULA_ASAN_BUILD_DIR:-$root/build-asan}

[ -f "$build/build.ninja" ] || "$root/scripts/build.sh"
ninja -C "$build" >/dev/null

# CI assembles generated PTX: the toolkit's ptxas must be there.
if [ "${CI:-}" = true ] && ! command -v ptxas >/dev/null; then
  echo "error: ptxas (CUDA toolkit) is not on PATH; CI assembles PTX with it" >&2
  exit 1
fi

results=$(mktemp -d)
trap 'rm -rf "$results"' EXIT
summaries=()

# lit_run LABEL BUILD_DIR: runs the whole suite on BUILD_DIR's tools and
# adds one closing line any CI reader understands.
lit_run() {
  local code=0
  /usr/lib/llvm-22/bin/lit -sv -o "$results/$1.json" "$2/test" || code=$?
  summaries+=("$(python3 - "$1" "$results/$1.json" <<'PY'
import json, sys
label, path = sys.argv[1], sys.argv[2]
tests = json.load(open(path))["tests"]
count = lambda codes: sum(t["code"] in codes for t in tests)
passed = count({"PASS", "XFAIL"})
failed = count({"FAIL", "XPASS", "UNRESOLVED", "TIMEOUT"})
skipped = count({"UNSUPPORTED", "SKIPPED", "EXCLUDED"})
print(f"{label}: {passed} passed, {failed} failed, {skipped} skipped")
PY
)")
  return $code
}

status=0
lit_run "lit (release)" "$build" || status=1

if [ "${TEGULA_SKIP_SANITIZER:-0}" != 1 ]; then
  echo "== sanitizer build (ASan + UBSan) in $asan_build"
  if [ -f "$asan_build/build.ninja" ]; then
    ninja -C "$asan_build" --quiet
  else
    TEGULA_ASAN_BUILD_DIR=$asan_build "$root/scripts/build-sanitize.sh" --quiet
  fi
  lit_run "lit (asan+ubsan)" "$asan_build" || status=1
fi

printf '%s\n' "${summaries[@]}"
exit $status
