#!/usr/bin/env bash
# tilec with its output folder cached by content, for the scripts that
# compile hundreds of bundles (scripts/build-ops.sh, the GPU staging):
#   scripts/tilec-cached.sh TILEC-ARGUMENTS...    (-o DIR among them)
# runs $TEGULA_BUILD_DIR/bin/tilec (build/ by default) the same way, and
# keeps what it wrote to DIR, its standard output and its standard error
# in $TEGULA_TILEC_CACHE (build/tilec-cache/ by default) under a key that
# hashes everything the result depends on:
#   - tilec itself and the shared libraries it loads (path, size, mtime);
#   - ptxas (path and version), which assembles the cubins;
#   - every argument but DIR, and the content of each argument that is a
#     file (the kernel source: tile programs include no other file);
#   - the tuning tables already in DIR (*.tuning.json: a bundle names its
#     table when there is one), the only files there tilec reads.
# The same command again copies the kept files into DIR and replays both
# streams, warnings included (scripts/check-spills.sh reads them). A
# failed compile is never kept. Without -o DIR, or with a DIR that is not
# a folder, it is plain tilec. TEGULA_TILEC_CACHE=off turns the cache off.
#   scripts/tilec-cached.sh --tool-key
# prints the key's first two ingredients (tilec, its libraries, ptxas);
#   scripts/tilec-cached.sh --prepare
# drops the cache's entries unused for three days, then prints the tool key
# (nothing with the cache off): scripts/tilec-queue.sh runs it once a queue
# and passes the key on in TEGULA_TILEC_TOOL_KEY, saving each compile about
# 50 ms.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${TEGULA_BUILD_DIR:-$root/build}
tilec=$build/bin/tilec
cache=${TEGULA_TILEC_CACHE:-$build/tilec-cache}

# tool_key: the hash of tilec, the libraries it loads and ptxas.
tool_key() {
  {
    sha256sum "$tilec"
    ldd "$tilec" | awk '$3 ~ /^\// {print $3}' | xargs -r stat -L -c '%n %s %Y'
    if ptxas=$(command -v ptxas); then
      echo "$ptxas"
      ptxas --version
    fi
  } | sha256sum | cut -c1-32
}
if [ "$*" = --tool-key ]; then
  tool_key
  exit 0
fi
if [ "$*" = --prepare ]; then
  [ "$cache" = off ] && exit 0
  # The cache holds one copy of every build since (tegula.ops' bundles are
  # about 80 MB).
  [ ! -d "$cache" ] ||
    find "$cache" -mindepth 1 -maxdepth 1 -mtime +3 -exec rm -rf {} +
  tool_key
  exit 0
fi

args=("$@") out="" key_args=()
for ((i = 0; i < ${#args[@]}; i++)); do
  if [ "${args[$i]}" = -o ] && ((i + 1 < ${#args[@]})); then
    out=${args[$((i + 1))]}
    key_args+=(-o)
    i=$((i + 1))
  else
    key_args+=("${args[$i]}")
  fi
done
if [ "$cache" = off ] || [ -z "$out" ] || [ ! -d "$out" ]; then
  exec "$tilec" "$@"
fi

# The key: one line per ingredient, hashed.
key=$(
  {
    echo "${TEGULA_TILEC_TOOL_KEY:-$(tool_key)}"
    printf '%q\n' "${key_args[@]}"
    for arg in "${key_args[@]}"; do
      [ -f "$arg" ] && sha256sum "$arg"
    done
    (cd "$out" && find . -maxdepth 1 -type f -name '*.tuning.json' -print0 |
      sort -z | xargs -0 -r sha256sum)
  } | sha256sum | cut -c1-32
)
entry=$cache/$key

# replay ENTRY: its files into DIR, then its two streams.
replay() {
  cp -pR "$1/files/." "$out/"
  cat "$1/stdout"
  cat "$1/stderr" >&2
}
if [ -d "$entry" ]; then
  touch "$entry"
  replay "$entry"
  exit 0
fi

# A miss: compile into a private folder holding DIR's tuning tables (other
# compiles may be writing into DIR meanwhile), keep what tilec wrote, then
# publish the entry with one rename (parallel runs of the same command may
# race; the first rename wins, the others' are dropped).
mkdir -p "$cache"
work=$(mktemp -d "$cache/.new.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir "$work/files" "$work/before"
find "$out" -maxdepth 1 -type f -name '*.tuning.json' \
  -exec cp -p {} "$work/files/" \; -exec cp -p {} "$work/before/" \;
status=0
for ((i = 0; i < ${#args[@]}; i++)); do
  [ "${args[$i]}" = -o ] && args[$((i + 1))]=$work/files && break
done
"$tilec" "${args[@]}" >"$work/stdout" 2>"$work/stderr" || status=$?
if [ "$status" != 0 ]; then
  cp -pR "$work/files/." "$out/"
  cat "$work/stdout"
  cat "$work/stderr" >&2
  exit "$status"
fi
for f in "$work/before"/*; do
  [ -f "$f" ] || continue
  cmp -s "$f" "$work/files/${f##*/}" && rm -f "$work/files/${f##*/}"
done
rm -rf "$work/before"
mv -T "$work" "$entry" 2>/dev/null || entry=$work
replay "$entry"
