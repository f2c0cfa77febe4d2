#!/usr/bin/env bash
# Configures and builds the sanitizer build (ASan + UBSan, Debug) into
# build-asan/ (or $TEGULA_ASAN_BUILD_DIR); scripts/test.sh runs lit on it.
# Arguments go to ninja (targets, --quiet). docs/testing.md says more.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${TEGULA_ASAN_BUILD_DIR:-$root/build-asan}

# The sanitizer runtimes come with libclang-rt-22-dev (clang-22 only
# recommends it); say so instead of failing at the first link.
if ! clang++-22 -print-file-name=libclang_rt.asan-x86_64.a | grep -q /; then
  echo "error: clang-22's sanitizer runtimes are missing; install libclang-rt-22-dev" >&2
  exit 1
fi

# Debug keeps assertions on; -O1 (ASan's recommended level) runs the lit
# suite about 1.5 times as fast as -O0 (14 to 9 minutes on two cores), and
# line tables are all a report's stack needs.
cmake -G Ninja -S "$root" -B "$build" \
  -DCMAKE_BUILD_TYPE=Debug -DTEGULA_SANITIZE=address,undefined \
  "-DCMAKE_C_FLAGS_DEBUG=-O1 -gline-tables-only" \
  "-DCMAKE_CXX_FLAGS_DEBUG=-O1 -gline-tables-only" \
  -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 >/dev/null
ninja -C "$build" "$@"
