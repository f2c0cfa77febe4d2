#!/usr/bin/env bash
# On the GPU machine: `pip install ./python` into a fresh virtual
# environment, then scripts/gpu/check-ops.py against that installed package,
# with no tilec on PATH (what a model author gets).
#
#   here:       scripts/build-ops.sh
#   on the GPU: bash scripts/gpu/check-ops.sh
#               (carry python/tegula/_bundles and python/tegula/libtegula_rt.so)
#
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
py=$(bash "$root/scripts/gpu/ops-venv.sh" "${VENV:-/tmp/tegula-ops-venv}")
cd /tmp
env PATH=/usr/bin:/bin "$py" "$root/scripts/gpu/check-ops.py" --installed
