#!/usr/bin/env bash
# Configures and builds everything into build/ (or $TEGULA_BUILD_DIR).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${TEGULA_BUILD_DIR:-$root/build}

cmake -G Ninja -S "$root" -B "$build" \
  -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 >/dev/null
ninja -C "$build"
