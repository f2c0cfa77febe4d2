#!/usr/bin/env bash
# The README's first command: install, build, then run the main job.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

"$root/scripts/install-deps.sh"
"$root/scripts/build.sh"
"$root/scripts/build-ops.sh"
"$root/scripts/main-job.sh"
