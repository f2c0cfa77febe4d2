#!/usr/bin/env bash
# Builds tile-run here without the compiler (-DTEGULA_ENABLE_COMPILER=OFF, so
# no MLIR/LLVM) and stages it with the GPU test bundles in .device-bundle/
# (git-ignored), ready for the device tool. Then, from the session:
#
#   device run  command: "bash scripts/gpu/on-device.sh"
#               carry:   [".device-bundle"]
#               kind:    nvidia-h100-x1 (any CUDA GPU of sm_80 or newer works)
#               timeout_s: 600
#
# on-device.sh runs every GPU test and leaves its logs in $OUT.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD_DIR:-$root/build-gpu-runner}
cmake -G Ninja -S "$root" -B "$build" -DTEGULA_ENABLE_COMPILER=OFF \
  -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_C_COMPILER="${CC:-clang-22}" -DCMAKE_CXX_COMPILER="${CXX:-clang++-22}"
ninja -C "$build" tile-run tile-run-unittests
"$build/bin/tile-run-unittests"

stage=$root/.device-bundle
rm -rf "$stage"
mkdir -p "$stage/bin"
cp "$build/bin/tile-run" "$build/bin/tile-run-unittests" "$stage/bin/"
cp -r "$root/test/Runtime/Inputs" "$stage/Inputs"
cp "$root/scripts/gpu/on-device.sh" "$stage/"
du -sh "$stage"
echo "staged in $stage; on the GPU: bash scripts/gpu/on-device.sh (carry .device-bundle)"
