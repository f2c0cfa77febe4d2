#!/usr/bin/env bash
# The main job: round-trip the sample tile IR through tile-opt.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${TEGULA_BUILD_DIR:-$root/build}

echo "== round trip of examples/sample.mlir"
"$build/bin/tile-opt" "$root/examples/sample.mlir" \
  | "$build/bin/tile-opt" >/dev/null
"$build/bin/tile-opt" "$root/examples/sample.mlir" -canonicalize
echo "main job: OK"
