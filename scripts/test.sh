#!/usr/bin/env bash
# The README's second command: builds what is stale, then runs every lit
# test. Exits non-zero if any test fails.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${TEGULA_BUILD_DIR:-$root/build}

[ -f "$build/build.ninja" ] || "$root/scripts/build.sh"
ninja -C "$build" >/dev/null

# CI assembles generated PTX: the toolkit's ptxas must be there.
if [ "${CI:-}" = true ] && ! command -v ptxas >/dev/null; then
  echo "error: ptxas (CUDA toolkit) is not on PATH; CI assembles PTX with it" >&2
  exit 1
fi

results=$(mktemp)
trap 'rm -f "$results"' EXIT
status=0
/usr/lib/llvm-22/bin/lit -sv -o "$results" "$build/test" || status=$?

# One closing line any CI reader understands.
python3 - "$results" <<'PY'
import json, sys
tests = json.load(open(sys.argv[1]))["tests"]
count = lambda codes: sum(t["code"] in codes for t in tests)
passed = count({"PASS", "XFAIL"})
failed = count({"FAIL", "XPASS", "UNRESOLVED", "TIMEOUT"})
skipped = count({"UNSUPPORTED", "SKIPPED", "EXCLUDED"})
print(f"{passed} passed, {failed} failed, {skipped} skipped")
PY
exit $status
