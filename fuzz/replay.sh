#!/bin/sh
# Replays every input of a corpus through tilec: each must compile (exit 0)
# or be rejected with diagnostics (exit 1); anything else is a crash.
#   fuzz/replay.sh TILEC CORPUS_DIR
tilec=$1
status=0
for f in "$2"/*; do
  [ -f "$f" ] || continue
  "$tilec" "$f" --emit tile -D D=64 -o /dev/null >/dev/null 2>&1
  rc=$?
  if [ $rc -ne 0 ] && [ $rc -ne 1 ]; then
    echo "CRASH ($rc): $f"
    status=1
  fi
done
exit $status
