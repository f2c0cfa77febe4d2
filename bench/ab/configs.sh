# The configurations bench/ab compares, at the bench's blocks
# (bench/stage.sh): NAME FILE KERNEL RAGGED DIV16 BENCH -- DEFINES, where
# RAGGED and DIV16 are tile-run arguments of a small float64 check (sizes
# off and on multiples of 16, so both variants run) and BENCH those of the
# timed run at the bench's shapes.
for_each_config() {
  local fn=$1
  local mm="-D BLOCK_K=64 -D BLOCK_N=256 -D STAGES=3"
  local gelu="-D BLOCK_M=128 -D BLOCK_N=128 -D BLOCK_K=64 -D STAGES=4"
  $fn matmul matmul.tile matmul "--dims M=333,N=517,K=271" "--dims M=256,N=512,K=384" "--dims M=4096,N=4096,K=4096" -- $mm
  $fn matmul-8k matmul.tile matmul "--dims M=333,N=517,K=271" "--dims M=256,N=512,K=384" "--dims M=8192,N=8192,K=8192" -- $mm
  $fn gelu-128x64 matmul_gelu.tile matmul_bias_gelu "--dims M=333,N=517,K=271" "--dims M=256,N=512,K=384" "--dims M=4096,N=4096,K=4096" -- -D BLOCK_M=128 -D BLOCK_N=64
  $fn gelu-128x128 matmul_gelu.tile matmul_bias_gelu "--dims M=333,N=517,K=271" "--dims M=256,N=512,K=384" "--dims M=4096,N=4096,K=4096" -- $gelu
  $fn gelu-128x128-8k matmul_gelu.tile matmul_bias_gelu "--dims M=333,N=517,K=271" "--dims M=256,N=512,K=384" "--dims M=8192,N=8192,K=8192" -- $gelu
  local s64="--scalar scale=0.125" s128="--scalar scale=0.088"
  $fn attn-d64 attention_fwd.tile attention_fwd "--dims Z=1,H=2,N=333 $s64" "--dims Z=1,H=2,N=512 $s64" "--dims Z=4,H=32,N=4096 $s64" -- -D D=64 -D BLOCK_N=64
  $fn attn-d64-causal attention_fwd.tile attention_fwd "--dims Z=1,H=2,N=333 $s64" "--dims Z=1,H=2,N=512 $s64" "--dims Z=4,H=32,N=4096 $s64" -- -D D=64 -D CAUSAL=true
  $fn attn-d128 attention_fwd.tile attention_fwd "--dims Z=1,H=2,N=333 $s128" "--dims Z=1,H=2,N=512 $s128" "--dims Z=4,H=16,N=4096 $s128" -- -D D=128 -D BLOCK_M=128 -D BLOCK_N=64
  $fn attn-d128-causal attention_fwd.tile attention_fwd "--dims Z=1,H=2,N=333 $s128" "--dims Z=1,H=2,N=512 $s128" "--dims Z=4,H=16,N=4096 $s128" -- -D D=128 -D BLOCK_M=128 -D BLOCK_N=64 -D CAUSAL=true
  $fn gqa attention_gqa.tile attention_gqa "--dims Z=2,H=8,HKV=2,M=333,N=517 $s128" "--dims Z=1,H=4,HKV=1,M=256,N=512 $s128" "--dims Z=4,H=32,HKV=8,M=4096,N=4096 $s128" -- -D D=128
  $fn gqa-decode attention_gqa.tile attention_gqa_decode "--dims Z=4,H=32,HKV=8,M=1,N=1000 $s128" "--dims Z=4,H=32,HKV=8,M=1,N=1024 $s128" "--dims Z=16,H=32,HKV=8,M=1,N=8192 $s128" -- -D D=128 --reference attention_gqa
  $fn linattn-bv32 linear_attention.tile linear_attention "--dims B=1,T=333,H=2 $s128" "--dims B=1,T=512,H=2 $s128" "--dims B=8,T=2048,H=16 $s128" -- -D D=128 -D BLOCK_V=32
  $fn rmsnorm rmsnorm.tile rmsnorm "--dims R=7,C=3001 --scalar eps=1e-5" "--dims R=9,C=4096 --scalar eps=1e-5" "--dims R=16384,C=4096 --scalar eps=1e-5" --
}

# compile_one NAME FILE KERNEL RAGGED DIV16 BENCH -- DEFINES (stage.sh sets
# $tilec, $side and $out).
compile_one() {
  local name=$1 file=$2 kernel=$3
  shift 7
  mkdir -p "$out/$side/$name"
  "$tilec" "$root/kernels/$file" -k "$kernel" --target sm_90a \
    -o "$out/$side/$name" "$@"
}
