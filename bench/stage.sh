#!/usr/bin/env bash
# Stages everything the GPU machine needs for the side-by-side benchmark
# (it has no MLIR and no network): tile-run and the checked configurations
# (scripts/gpu/stage-kernels.sh), the bench's swept bundles (sm_90a,
# bench/tuning/sweeps.sh) with their tuning tables in .device-bundle/bench/,
# libtegula_rt.so for the tegula package, and flash-linear-attention's
# wheel in .whl/.
#   bash bench/stage.sh                         (here, after scripts/build.sh)
# Then, with the device tool (kind nvidia-h100-x1, carry [".device-bundle",
# ".whl"]):
#   bash bench/on-device.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${TEGULA_BUILD_DIR:-$root/build}
"$root/scripts/gpu/stage-kernels.sh"
bench=${TEGULA_STAGE_DIR:-$root/.device-bundle}/bench
compile_only=${TEGULA_COMPILE_ONLY:-0}
rm -rf "$bench"

# The bench's kernels: one swept bundle per entry of bench/tuning/sweeps.sh
# (docs/tuning.md) with its committed table (scripts/gpu/stage-sweeps.sh),
# after the varlen runs' inputs they name.
inputs=$bench/inputs
mkdir -p "$inputs"
# The varlen runs' sequence bounds (bench/attention_family.py's), as int32
# .npy files (written without numpy, which this machine may lack).
python3 - "$inputs" <<'PY'
import itertools, struct, sys
lens = [3000, 256, 1800, 700, 2048, 333, 1024, 2500, 512, 1111, 1500]
lens.append(16384 - sum(lens))
for name, b in (("cu-203", [0, 1, 66, 66, 140, 203]),
                ("cu-bench", [0] + list(itertools.accumulate(lens)))):
    head = "{'descr': '<i4', 'fortran_order': False, 'shape': (%d,), }" % len(b)
    head += " " * (63 - (10 + len(head)) % 64) + "\n"
    with open(f"{sys.argv[1]}/{name}.npy", "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(head)))
        f.write(head.encode() + struct.pack(f"<{len(b)}i", *b))
PY
TEGULA_STAGE_DIR=$(dirname "$bench") "$root/scripts/gpu/stage-sweeps.sh"
if command -v ptxas >/dev/null; then
  python3 "$root/bench/tuning/check_spills.py" "$bench"
else
  echo "warning: ptxas not on PATH: the sweeps' spills are not checked"
fi
# The Triton tutorial's LayerNorm (bench/layernorm.py): BLOCK = N (the
# tutorial's next_power_of_2(N)) at each width the bench times, the file's
# three kernels in one folder, untuned (one config). After the spill check:
# the backward at BLOCK = 8192 spills (bench/README.md, LayerNorm notes).
for n in 1024 2048 4096 8192; do
  mkdir -p "$bench/layernorm-n$n"
  "$build/bin/tilec" "$root/kernels/layer_norm.tile" --target sm_90a \
    -o "$bench/layernorm-n$n" -D BLOCK=$n
done
# The launch-overhead probe (bench/run.py's "launch" section).
mkdir -p "$bench/axpy"
"$build/bin/tilec" "$root/bench/launch/axpy.tile" --target sm_90a -o "$bench/axpy"
[ "$compile_only" = 1 ] && exit 0
# bench/run.py calls the kernels through the tegula package, which loads
# libtegula_rt.so from .device-bundle/lib.
"$root/scripts/gpu/check-python.sh" --stage

# flash-linear-attention (pure Python over Triton) is not on the GPU
# machine's image; its wheel travels with the call.
if [ ! -f "$root/.whl/fla_core-0.6.0-py3-none-any.whl" ]; then
  python3 -m pip download -q --no-deps --only-binary=:all: \
    --python-version 3.12 --implementation cp --platform any \
    -d "$root/.whl" fla-core==0.6.0 ||
    echo "warning: could not fetch fla-core; the run will skip it"
fi
echo "staged $(ls "$bench" | wc -l) bench configurations in $bench"
