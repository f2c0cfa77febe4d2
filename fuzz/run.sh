#!/bin/sh
# Builds the libFuzzer targets and runs one over fuzz/corpus.
#   fuzz/run.sh [SECONDS] [TARGET] [MAX_LEN] [LIBFUZZER OPTIONS...]
# TARGET is tile-fuzzer (frontend, with and without -D; the default) or
# tile-fuzzer-lower (the whole lowering to PTX); MAX_LEN defaults to 16384
# bytes. The build dir is $FUZZ_BUILD (default build-fuzz/; configured with
# clang-22 and -DTEGULA_ENABLE_FUZZER=ON on first use); its build holds
# /tmp/tegula-build.lock so it never runs beside another build. New inputs
# that raise coverage go to $FUZZ_BUILD/corpus-new-TARGET; crashers to
# $FUZZ_BUILD/artifacts/. Turn every crasher into a test.
set -e
root=$(cd "$(dirname "$0")/.." && pwd)
build=${FUZZ_BUILD:-$root/build-fuzz}
seconds=${1:-600}
target=${2:-tile-fuzzer}
maxlen=${3:-16384}
[ $# -gt 3 ] && shift 3 || shift $#
flock /tmp/tegula-build.lock sh -c "
  cmake -G Ninja -S '$root' -B '$build' -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DTEGULA_ENABLE_FUZZER=ON >/dev/null &&
  ninja -C '$build' '$target'"
mkdir -p "$build/corpus-new-$target" "$build/artifacts"
exec "$build/bin/$target" "$build/corpus-new-$target" "$root/fuzz/corpus" \
  -max_total_time="$seconds" -max_len="$maxlen" -timeout=60 \
  -rss_limit_mb=4096 -artifact_prefix="$build/artifacts/" \
  -dict="$root/fuzz/tile.dict" -print_final_stats=1 "$@"
