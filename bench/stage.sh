#!/usr/bin/env bash
# Stages everything the GPU machine needs for the side-by-side benchmark
# (it has no MLIR and no network): tile-run and the checked configurations
# (scripts/gpu/stage-kernels.sh), the bench bundles (sm_90a) in
# .device-bundle/bench/, libtegula_rt.so for the tegula package, and
# flash-linear-attention's wheel in .whl/.
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

# NAME FILE ARGS...: one bench configuration, compiled for the H100.
compile() {
  local name=$1 file=$2
  shift 2
  mkdir -p "$bench/$name"
  "$build/bin/tilec" "$root/kernels/$file" --target sm_90a -o "$bench/$name" "$@"
}
# BLOCK_K = 64 lets wgmma read A in place too and defer its waits; 128 x 256
# blocks: 536/549 TFLOP/s at 4096^3/8192^3 in two stages (plus the deferred
# dot's one), 546/508 for 128 x 128 in four (H100 sweep, 2026-11-25,
# docs/measurements/README.md). Three stages (plus one) fit since the
# epilogue's conversion reuses the rings' memory.
compile matmul matmul.tile -D BLOCK_K=64 -D BLOCK_N=256 -D STAGES=3
compile rmsnorm rmsnorm.tile
# Attention blocks from the same sweep (N = 4096): 128 x 64 for D = 64
# (340 TFLOP/s; causal keeps 128 x 32: 242 against 209) and for D = 128
# (297 and 263 causal).
compile attn-d64 attention_fwd.tile -k attention_fwd -D D=64 -D BLOCK_N=64
compile attn-d64-causal attention_fwd.tile -k attention_fwd -D D=64 -D CAUSAL=true
compile attn-d128 attention_fwd.tile -k attention_fwd -D D=128 -D BLOCK_M=128 -D BLOCK_N=64
compile attn-d128-causal attention_fwd.tile -k attention_fwd -D D=128 -D BLOCK_M=128 -D BLOCK_N=64 -D CAUSAL=true
# Attention backward (bench/attention_bwd.py): the forward with lse, which
# feeds it, at the forward's bench blocks above; the backward's kernels are
# the checked sm_90a builds of scripts/gpu/stage-kernels.sh (the defaults
# and the larger blocks only sm_90a takes).
compile attn-fwd-lse-d64 attention_fwd.tile -k attention_fwd_lse -D D=64 -D BLOCK_N=64
compile attn-fwd-lse-d64-causal attention_fwd.tile -k attention_fwd_lse -D D=64 -D CAUSAL=true
compile attn-fwd-lse-d128 attention_fwd.tile -k attention_fwd_lse -D D=128 -D BLOCK_M=128 -D BLOCK_N=64
compile attn-fwd-lse-d128-causal attention_fwd.tile -k attention_fwd_lse -D D=128 -D BLOCK_M=128 -D BLOCK_N=64 -D CAUSAL=true
# GQA prefill and varlen attention (bench/attention_family.py) at the D = 128
# blocks above; their defaults (64 x 32) must also suit sm_80.
for c in "" -causal; do
  causal=$([ -n "$c" ] && echo true || echo false)
  compile attn-gqa$c attention_gqa.tile -k attention_gqa -D D=128 -D BLOCK_M=128 -D BLOCK_N=64 -D CAUSAL=$causal
  compile attn-varlen$c attention_varlen.tile -D D=128 -D BLOCK_M=128 -D BLOCK_N=64 -D CAUSAL=$causal
done
compile rotary rotary.tile -k rotary -D D=128
# Linear attention at D = 128: the spill-free block shapes (BLOCK_V = 64
# with 64-row chunks spills on sm_90a).
compile linattn-bv32 linear_attention.tile -D D=128 -D BLOCK_V=32
compile linattn-bt32 linear_attention.tile -D D=128 -D BLOCK_T=32
compile linattn-states linear_attention_states.tile -D D=128 -D WARPS=8 -D BLOCK_V=32
compile linattn-recurrent linear_attention_recurrent.tile -D D=128
# GEMM + bias + exact GELU with erf(precision = fast) at matmul's blocks
# (128 x 256 x 64, three stages: 254 registers, no spills in the div16 code
# the bench's sizes run); with the correctly rounded f64 erf (FAST_ERF =
# false) 128 x 128 x 64 in four stages runs fastest (307/390 TFLOP/s at
# 4096^3/8192^3 against 206 for 128 x 64, H100, 2026-11-25), although its
# epilogue spills 156 bytes. And the fused cross-entropy.
compile matmul-gelu matmul_gelu.tile -D BLOCK_M=128 -D BLOCK_N=256 -D BLOCK_K=64 -D STAGES=3
compile matmul-gelu-exact matmul_gelu.tile -D BLOCK_M=128 -D BLOCK_N=128 -D BLOCK_K=64 -D STAGES=4 -D FAST_ERF=false
compile cross-entropy cross_entropy.tile
# The Triton tutorial's LayerNorm (bench/layernorm.py): BLOCK = N (the
# tutorial's next_power_of_2(N)) at each width the bench times.
for n in 1024 2048 4096 8192; do
  compile layernorm-n$n layer_norm.tile -D BLOCK=$n
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
