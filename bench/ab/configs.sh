# The configurations bench/ab compares: fixed configs, so that an A/B
# measures code generation alone at the same blocks (tuning both sides
# would mix a change of blocks into it). Each is a sweep of
# bench/tuning/sweeps.sh at its tuned winner for the BENCH shape
# (bench/tuning/winner.py reads the committed table; config 0 where there
# is none): NAME SWEEP KERNEL RAGGED DIV16 BENCH, where RAGGED and DIV16
# are tile-run arguments of a small float64 check (sizes off and on
# multiples of 16, so both variants run) and BENCH those of the timed run.
for_each_config() {
  local fn=$1
  local s64="--scalar scale=0.125" s128="--scalar scale=0.088"
  local mm=("--dims M=333,N=517,K=271" "--dims M=256,N=512,K=384")
  tuned $fn matmul matmul matmul "${mm[@]}" "--dims M=4096,N=4096,K=4096"
  tuned $fn matmul-8k matmul matmul "${mm[@]}" "--dims M=8192,N=8192,K=8192"
  tuned $fn matmul-4000 matmul matmul "${mm[@]}" "--dims M=4000,N=4000,K=4000"
  tuned $fn gelu matmul-gelu matmul_bias_gelu "${mm[@]}" "--dims M=4096,N=4096,K=4096"
  tuned $fn gelu-exact matmul-gelu-exact matmul_bias_gelu "${mm[@]}" "--dims M=4096,N=4096,K=4096"
  tuned $fn gelu-exact-8k matmul-gelu-exact matmul_bias_gelu "${mm[@]}" "--dims M=8192,N=8192,K=8192"
  tuned $fn attn-d64 attn-d64 attention_fwd "--dims Z=1,H=2,N=333 $s64" "--dims Z=1,H=2,N=512 $s64" "--dims Z=4,H=32,N=4096 $s64"
  tuned $fn attn-d64-causal attn-d64-causal attention_fwd "--dims Z=1,H=2,N=333 $s64" "--dims Z=1,H=2,N=512 $s64" "--dims Z=4,H=32,N=4096 $s64"
  tuned $fn attn-d128 attn-d128 attention_fwd "--dims Z=1,H=2,N=333 $s128" "--dims Z=1,H=2,N=512 $s128" "--dims Z=4,H=16,N=4096 $s128"
  tuned $fn attn-d128-causal attn-d128-causal attention_fwd "--dims Z=1,H=2,N=333 $s128" "--dims Z=1,H=2,N=512 $s128" "--dims Z=4,H=16,N=4096 $s128"
  tuned $fn gqa attn-gqa attention_gqa "--dims Z=2,H=8,HKV=2,M=333,N=517 $s128" "--dims Z=1,H=4,HKV=1,M=256,N=512 $s128" "--dims Z=4,H=32,HKV=8,M=4096,N=4096 $s128"
  tuned $fn gqa-decode attn-gqa-decode attention_gqa_decode "--dims Z=4,H=32,HKV=8,M=1,N=1000 $s128" "--dims Z=4,H=32,HKV=8,M=1,N=1024 $s128" "--dims Z=16,H=32,HKV=8,M=1,N=8192 $s128"
  tuned $fn linattn linattn-bt64 linear_attention "--dims B=1,T=333,H=2 $s128" "--dims B=1,T=512,H=2 $s128" "--dims B=8,T=2048,H=16 $s128"
  tuned $fn rmsnorm rmsnorm rmsnorm "--dims R=7,C=3001 --scalar eps=1e-5" "--dims R=9,C=4096 --scalar eps=1e-5" "--dims R=16384,C=4096 --scalar eps=1e-5"
}

# The sweeps' file and defines by name (bench/tuning/sweeps.sh).
declare -A sweep_file sweep_defines
remember_sweep() {
  local name=$1
  sweep_file[$name]=$2
  shift 6
  sweep_defines[$name]="$*"
}
source "$root/bench/tuning/sweeps.sh"
inputs=/unused for_each_sweep remember_sweep

# tuned FN NAME SWEEP KERNEL RAGGED DIV16 BENCH: FN with the sweep's file
# and the winner's defines at BENCH's --dims.
tuned() {
  local fn=$1 name=$2 sweep=$3 kernel=$4 ragged=$5 div16=$6 bench=$7 dims
  dims=$(grep -oE -- '--dims [^ ]+' <<<"$bench" | cut -d' ' -f2)
  # shellcheck disable=SC2086
  $fn "$name" "${sweep_file[$sweep]}" "$kernel" "$ragged" "$div16" "$bench" -- \
    $(python3 "$root/bench/tuning/winner.py" "$sweep" "$kernel" "$dims" -- ${sweep_defines[$sweep]})
}

# compile_one NAME FILE KERNEL RAGGED DIV16 BENCH -- DEFINES (stage.sh sets
# $tilec, $kernels, $side and $out).
compile_one() {
  local name=$1 file=$2 kernel=$3
  shift 7
  mkdir -p "$out/$side/$name"
  "$tilec" "${kernels:-$root/kernels}/$file" -k "$kernel" --target sm_90a \
    -o "$out/$side/$name" "$@"
}
