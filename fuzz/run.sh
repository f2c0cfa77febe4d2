#!/bin/sh
# Builds the libFuzzer target in build-fuzz/ and runs it over fuzz/corpus.
#   fuzz/run.sh [SECONDS]      (default 600)
# New inputs that raise coverage go to build-fuzz/corpus-new; crashers to
# build-fuzz/artifacts/. Turn every crasher into a test in test/Frontend.
set -e
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build-fuzz
seconds=${1:-600}
cmake -G Ninja -S "$root" -B "$build" -DCMAKE_C_COMPILER=clang-22 \
  -DCMAKE_CXX_COMPILER=clang++-22 -DTEGULA_ENABLE_FUZZER=ON >/dev/null
ninja -C "$build" tile-fuzzer
mkdir -p "$build/corpus-new" "$build/artifacts"
exec "$build/bin/tile-fuzzer" "$build/corpus-new" "$root/fuzz/corpus" \
  -max_total_time="$seconds" -max_len=4096 -timeout=10 -rss_limit_mb=4096 \
  -artifact_prefix="$build/artifacts/" -dict="$root/fuzz/tile.dict"
