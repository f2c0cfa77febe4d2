#!/usr/bin/env bash
# The nightly-style run of the random program generator: COUNT programs
# (default 300) from seed START (default the day's number, so each night tries
# new ones), each compiled for both targets, assembled, interpreted at two
# block sizes and compared with float64. Failing programs are kept in
# progen-failures/ with their seed.
#   scripts/progen-nightly.sh [COUNT] [START]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
count=${1:-300}
start=${2:-$(( $(date +%s) / 86400 * 1000 ))}
export TILEC=${TILEC:-${TEGULA_BUILD_DIR:-$root/build}/bin/tilec}
exec /usr/bin/python3 "$root/test/Generated/progen.py" check \
  "$start..$((start + count))" --keep "$root/progen-failures"
