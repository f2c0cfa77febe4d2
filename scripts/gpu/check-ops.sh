#!/usr/bin/env bash
# On the GPU machine: `pip install ./python` into a fresh virtual
# environment, then scripts/gpu/check-ops.py against that installed package,
# with no tilec on PATH (what a model author gets).
#
#   here:       scripts/build-ops.sh
#   on the GPU: bash scripts/gpu/check-ops.sh
#               (carry python/tegula/_bundles and python/tegula/libtegula_rt.so)
#
# The machine has no network: torch comes from the interpreter that has it,
# through a .pth file in the new environment's site-packages.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
py=$(python3 -c 'import sys; print(sys.executable)')
venv=${VENV:-/tmp/tegula-ops-venv}
rm -rf "$venv"
"$py" -m venv "$venv"
torch_site=$("$py" -c 'import os, torch; print(os.path.dirname(os.path.dirname(torch.__file__)))')
site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
echo "$torch_site" >"$site/host-torch.pth"
"$venv/bin/python" -m pip install -q --no-deps --no-build-isolation "$root/python"
cd /tmp
env PATH=/usr/bin:/bin "$venv/bin/python" "$root/scripts/gpu/check-ops.py" --installed
