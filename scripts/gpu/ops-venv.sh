#!/usr/bin/env bash
# On the GPU machine: `pip install ./python` into a fresh virtual
# environment at $1 (what a model author gets: no tilec), with torch from
# the interpreter that has it through a .pth file (the machine has no
# network). Prints the environment's python.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
venv=${1:?usage: scripts/gpu/ops-venv.sh DIR}
py=$(python3 -c 'import sys; print(sys.executable)')
rm -rf "$venv"
"$py" -m venv "$venv"
torch_site=$("$py" -c 'import os, torch; print(os.path.dirname(os.path.dirname(torch.__file__)))')
site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
echo "$torch_site" >"$site/host-torch.pth"
"$venv/bin/python" -m pip install -q --no-deps --no-build-isolation "$root/python" >&2
echo "$venv/bin/python"
