#!/usr/bin/env bash
# A/B of two compilers on the same kernels: compiles each configuration
# below with BASE_TILEC (a build of an earlier commit) into
# .device-bundle/ab/base/ and with this build's tilec into
# .device-bundle/ab/new/ (sm_90a), printing ptxas registers and spills of
# both. Then on the GPU (after bench/stage.sh, carry .device-bundle):
#   bash bench/ab/run-on-device.sh
# which checks every bundle against float64 and times both in one run.
#   bash bench/ab/stage.sh /path/to/base/bin/tilec
# TEGULA_AB_BASE_KERNELS=DIR compiles the base side from DIR's .tile files
# instead of kernels/ (an A/B of a kernel's source as well as the
# compiler: `git archive BASE kernels | tar -x -C /tmp/base`, DIR
# /tmp/base/kernels).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
base_tilec=${1:?usage: bench/ab/stage.sh BASE_TILEC}
new_tilec=${TEGULA_BUILD_DIR:-$root/build}/bin/tilec
out=$root/.device-bundle/ab
rm -rf "$out"
source "$root/bench/ab/configs.sh"
for side in base new; do
  tilec=$new_tilec kernels=$root/kernels
  [ "$side" = base ] && tilec=$base_tilec kernels=${TEGULA_AB_BASE_KERNELS:-$root/kernels}
  for_each_config compile_one
done
for d in "$out"/new/*; do
  name=$(basename "$d")
  for side in base new; do
    for ptx in "$out/$side/$name"/*.ptx; do
      printf '%-28s %-4s %-34s %s\n' "$name" "$side" "$(basename "$ptx")" \
        "$(ptxas -arch=sm_90a -v "$ptx" -o /dev/null 2>&1 |
          grep -oE 'Used [0-9]+ registers|[0-9]+ bytes spill stores' |
          tr '\n' ' ')"
    done
  done
done
