#!/bin/sh
# Replays every input of a corpus through tilec: each must compile (exit 0)
# or be rejected with diagnostics (exit 1); anything else is a crash. Each
# input goes through the frontend and the whole lowering to PTX, with no -D
# (template defaults only) and with -D D=64 (the shipped kernels'
# parameter; an error for programs without it), for both targets.
#   fuzz/replay.sh TILEC CORPUS_DIR
tilec=$1
status=0
for f in "$2"/*; do
  [ -f "$f" ] || continue
  for args in "--emit tile" "--emit tile -D D=64" "--emit ptx" \
    "--emit ptx -D D=64 --target sm_80"; do
    # shellcheck disable=SC2086
    "$tilec" "$f" $args -o /dev/null >/dev/null 2>"${TMPDIR:-/tmp}/replay.err"
    rc=$?
    if [ $rc -ne 0 ] && [ $rc -ne 1 ] ||
      grep -q "internal compiler error\|please report" "${TMPDIR:-/tmp}/replay.err"; then
      echo "CRASH ($rc, $args): $f"
      status=1
    fi
  done
done
exit $status
