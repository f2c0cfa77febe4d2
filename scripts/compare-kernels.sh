#!/usr/bin/env bash
# Compiles every configuration that scripts/gpu/stage-kernels.sh and
# bench/stage.sh build, once with each of two builds' tilec, and compares
# their PTX and bundle JSON byte for byte. A refactor must leave them
# identical; a change meant to move code names each configuration it moved.
#   scripts/compare-kernels.sh BEFORE AFTER [KEEP_DIR]
# BEFORE and AFTER are build folders (with bin/tilec) or the before/after
# folders a KEEP_DIR kept from an earlier comparison. Prints one line per differing file and a summary; exits 1 if any differ
# (or if a configuration compiles in one build only).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
if [ $# -lt 2 ]; then
  echo "usage: $0 BEFORE AFTER [KEEP_DIR]" >&2
  exit 2
fi
for b in "$1" "$2"; do
  [ -x "$b/bin/tilec" ] || [ -d "$b/kernels" ] ||
    { echo "error: $b is neither a build (bin/tilec) nor a staged folder" >&2; exit 2; }
done
out=${3:-$(mktemp -d)}
mkdir -p "$out"
[ $# -ge 3 ] || trap 'rm -rf "$out"' EXIT

# stage SIDE FROM: every configuration into $out/SIDE, compiled with the
# build FROM or copied from the staged folder FROM.
stage() {
  rm -rf "${out:?}/$1"
  if [ -d "$2/kernels" ]; then
    cp -r "$2" "$out/$1"
    return
  fi
  TEGULA_BUILD_DIR=$2 TEGULA_STAGE_DIR=$out/$1 TEGULA_COMPILE_ONLY=1 \
    bash "$root/bench/stage.sh" >/dev/null
}
stage before "$1"
stage after "$2"

list() { (cd "$out/$1" && find kernels bench \( -name '*.ptx' -o -name '*.json' \) | sort); }
differ=0 same=0
while read -r f; do
  if [ ! -f "$out/before/$f" ] || [ ! -f "$out/after/$f" ]; then
    echo "only in one build: $f"
    differ=$((differ + 1))
  elif cmp -s "$out/before/$f" "$out/after/$f"; then
    same=$((same + 1))
  else
    echo "differs: $f"
    differ=$((differ + 1))
  fi
done < <(sort -u <(list before) <(list after))
echo "compare-kernels: $same identical, $differ differ"
[ "$differ" = 0 ]
