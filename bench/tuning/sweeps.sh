# The bench's tuning sweeps, in one place: bench/stage.sh compiles each
# entry into one bundle of configs (.device-bundle/bench/NAME/),
# bench/tuning/tune-on-device.sh tunes it at the bench's shapes, and
# bench/ab/configs.sh reads the winners. Each entry:
#
#   FN NAME FILE KERNEL "CHECK" "TUNE" -- DEFINES...
#
# CHECK: tile-run arguments of a small float64 check that every config
# must pass (ragged sizes, so masks run; "" for form (b) of linear
# attention, whose kernels have no reference of their own); TUNE: the bench's shapes
# (--dims each) and scalars, tuned with --against-first. DEFINES: tilec's
# -D, comma lists swept (docs/tuning.md); a sweep is a cartesian product,
# and a template parameter that changes the ABI (linear attention's
# BLOCK_T: its flops) cannot be swept. The lists are the blocks a Triton
# user would autotune over (bench/baselines.py's configs) minus those that
# exceed shared memory or spill on sm_90a in the code the bench's shapes
# run (the unit-stride variants of a kernel with strided tensors, else the
# div16 variant where there is one: every bench shape is a multiple of
# 16); bench/tuning/check_spills.py, run by bench/stage.sh, fails on a
# config that spills there. $inputs is the folder of the varlen bounds
# (bench/stage.sh writes them).
for_each_sweep() {
  local fn=$1 s64="--scalar scale=0.125" s128="--scalar scale=0.088"
  local mm="--dims M=2048,N=2048,K=2048 --dims M=4096,N=4096,K=4096 --dims M=8192,N=8192,K=8192 --dims M=4000,N=4000,K=4000"
  $fn matmul matmul.tile matmul "--dims M=333,N=517,K=271" "$mm" -- \
    -D BLOCK_M=128 -D BLOCK_N=128,256 -D BLOCK_K=32,64 -D STAGES=3,4
  $fn rmsnorm rmsnorm.tile rmsnorm "--dims R=7,C=3001 --scalar eps=1e-5" \
    "--dims R=16384,C=4096 --dims R=4096,C=16384 --dims R=16384,C=8192 --scalar eps=1e-6" -- \
    -D WARPS=4,8,16 -D COLS=8,16,32
  $fn rotary rotary.tile rotary "--dims B=2,T=37,H=3" "--dims B=8,T=4096,H=32" -- \
    -D D=128 -D BLOCK_T=8,16,32
  # Attention: 16k tokens in Z = 16384 / N sequences, H = 2048 / D heads.
  local d64="--dims Z=16,H=32,N=1024 --dims Z=4,H=32,N=4096 --dims Z=1,H=32,N=16384"
  local d128="--dims Z=16,H=16,N=1024 --dims Z=4,H=16,N=4096 --dims Z=1,H=16,N=16384"
  local c c2 causal
  for causal in false true; do
    c=$([ $causal = true ] && echo -causal || true)
    # D = 64: a block's dots are short, so K and V may come two blocks ahead.
    # The winner is the first config within 2% of the fastest: 128-row
    # blocks and three stages first (Triton's choice; three stages won every
    # 128-row shape by 1-4%), so that 64-row blocks (one warpgroup, 4 warps)
    # win where they are clearly faster: short sequences, 4-10%.
    $fn attn-d64$c attention_fwd.tile attention_fwd "--dims Z=1,H=2,N=333 $s64" "$d64 $s64" -- \
      -D D=64 -D BLOCK_M=128,64 -D BLOCK_N=32,64,128 -D CAUSAL=$causal -D STAGES=3,2
    $fn attn-d128$c attention_fwd.tile attention_fwd "--dims Z=1,H=2,N=333 $s128" "$d128 $s128" -- \
      -D D=128 -D BLOCK_M=64,128 -D BLOCK_N=32,64,128 -D CAUSAL=$causal
    # The backward's forward (lse) and its dK/dV and dQ kernels at the
    # backward bench's shapes (N = 1024 and 4096, multi-head: HKV = H); the
    # preprocess is the checked default build
    # (scripts/gpu/stage-kernels.sh). Each config is checked with as many
    # K/V heads as query heads, with grouped ones (GQA), and with fewer
    # and more queries (M) than keys (N; causal aligned bottom-right).
    for d in 64 128; do
      local h=$((2048 / d)) s
      s=$([ $d = 64 ] && echo "$s64" || echo "$s128")
      local bwd="--dims Z=16,H=$h,HKV=$h,M=1024,N=1024 --dims Z=4,H=$h,HKV=$h,M=4096,N=4096 $s"
      local chk="--dims Z=1,H=2,HKV=2,M=333,N=333 --dims Z=1,H=4,HKV=2,M=333,N=333"
      chk="$chk --dims Z=1,H=2,HKV=2,M=150,N=333 --dims Z=1,H=4,HKV=2,M=333,N=150 $s"
      $fn attn-fwd-lse-d$d$c attention_fwd.tile attention_fwd_lse "$chk" "$bwd" -- \
        -D D=$d -D BLOCK_M=64,128 -D BLOCK_N=32,64,128 -D CAUSAL=$causal --reference attention_fwd
      # dK/dV with 128 keys x 64 queries spills at D = 128.
      local dkdv_m=$([ $d = 64 ] && echo 16,32,64 || echo 16,32)
      $fn attn-bwd-dkdv-d$d$c attention_bwd.tile attention_bwd_dkdv \
        "--dims Z=1,H=2,HKV=2,M=333,N=333 --dims Z=1,H=2,HKV=2,M=333,N=150 $s" "$bwd" -- \
        -D D=$d -D BLOCK_N=64,128 -D BLOCK_M=$dkdv_m -D CAUSAL=$causal --reference attention_bwd
      # dK/dV's GROUPED build (K/V heads shared by H / HKV query heads),
      # tuned at a Llama-like grouping (4 query heads a K/V head) for
      # tegula.ops; not in the bench's tables of multi-head attention.
      local gqa="--dims Z=4,H=$h,HKV=$((h / 4)),M=2048,N=2048 $s"
      $fn attn-bwd-dkdv-grouped-d$d$c attention_bwd.tile attention_bwd_dkdv \
        "--dims Z=1,H=4,HKV=2,M=333,N=333 --dims Z=1,H=3,HKV=1,M=200,N=200 --dims Z=1,H=4,HKV=2,M=150,N=333 $s" "$gqa" -- \
        -D D=$d -D BLOCK_N=64,128 -D BLOCK_M=$dkdv_m -D CAUSAL=$causal -D GROUPED=true --reference attention_bwd
      $fn attn-bwd-dq-d$d$c attention_bwd.tile attention_bwd_dq "$chk" "$bwd" -- \
        -D D=$d -D BLOCK_M=64,128 -D BLOCK_N=16,32,64 -D CAUSAL=$causal --reference attention_bwd
    done
    # GQA prefill and varlen at D = 128.
    $fn attn-gqa$c attention_gqa.tile attention_gqa "--dims Z=2,H=8,HKV=2,M=333,N=517 $s128" \
      "--dims Z=4,H=32,HKV=8,M=4096,N=4096 $s128" -- \
      -D D=128 -D BLOCK_M=64,128 -D BLOCK_N=32,64,128 -D CAUSAL=$causal
    $fn attn-varlen$c attention_varlen.tile attention_varlen \
      "--dims T=203,H=8,HKV=2,S=6 --in cu_seqlens=$inputs/cu-203.npy --scalar max_seqlen=74 $s128" \
      "--dims T=16384,H=32,HKV=8,S=13 --in cu_seqlens=$inputs/cu-bench.npy --scalar max_seqlen=3000 $s128" -- \
      -D D=128 -D BLOCK_M=64,128 -D BLOCK_N=32,64,128 -D CAUSAL=$causal
  done
  # GQA decode: one query against 8k keys (BLOCK_N = 128 spills in 4 warps).
  $fn attn-gqa-decode attention_gqa.tile attention_gqa_decode "--dims Z=4,H=32,HKV=8,M=1,N=1000 $s128" \
    "--dims Z=16,H=32,HKV=8,M=1,N=8192 $s128" -- \
    -D D=128 -D BLOCK_N=32,64 -D WARPS=4,8 --reference attention_gqa
  # Linear attention at D = 128: form (a) in 64- and 32-row chunks (two
  # bundles: BLOCK_T is in its flops; 64 x 64 and 4 warps spill), its loop
  # pipelined 2 or 3 chunks deep (64 x 128 only 2: 3 spills and stays
  # mma.sync; BLOCK_V = 128 is one program per head, a wave at B * H = 128;
  # 64 first: config 0, what an untuned launch runs),
  # the two kernels of form (b) (NC = cdiv(T, 64) chunks; BLOCK_V = 64
  # spills in 4 warps) and form (c) (BLOCK_V = 64 spills).
  local la="--dims B=8,T=2048,H=16 --dims B=4,T=8192,H=16"
  $fn linattn-bt64 linear_attention.tile linear_attention "--dims B=1,T=333,H=2 $s128" "$la $s128" -- \
    -D D=128 -D BLOCK_T=64 -D BLOCK_V=64,128,32 -D WARPS=8 -D STAGES=2
  $fn linattn-bt32 linear_attention.tile linear_attention "--dims B=1,T=333,H=2 $s128" "$la $s128" -- \
    -D D=128 -D BLOCK_T=32 -D BLOCK_V=64,128,32 -D WARPS=8 -D STAGES=2,3
  $fn linattn-states linear_attention_states.tile linear_attention_states "" \
    "--dims B=8,T=2048,H=16,NC=32 --dims B=4,T=8192,H=16,NC=128" -- \
    -D D=128 -D BLOCK_V=32,64 -D WARPS=8 -D STAGES=2,3
  $fn linattn-chunks linear_attention_states.tile linear_attention_chunks "" \
    "--dims B=8,T=2048,H=16,NC=32 --dims B=4,T=8192,H=16,NC=128 $s128" -- \
    -D D=128 -D BLOCK_V=32,64 -D WARPS=4,8
  $fn linattn-recurrent linear_attention_recurrent.tile linear_attention_recurrent "--dims B=1,T=333,H=2 $s128" "$la $s128" -- \
    -D D=128 -D BLOCK_V=16,32 --reference linear_attention
  # GEMM + bias + GELU: erf(precision = fast), and the correctly rounded
  # f64 erf (FAST_ERF = false), whose epilogue spills at 128 x 128.
  local gelu="--dims M=4096,N=4096,K=4096 --dims M=8192,N=8192,K=8192"
  $fn matmul-gelu matmul_gelu.tile matmul_bias_gelu "--dims M=333,N=517,K=271" "$gelu" -- \
    -D BLOCK_M=128 -D BLOCK_N=128,256 -D BLOCK_K=32,64 -D STAGES=3,4
  $fn matmul-gelu-exact matmul_gelu.tile matmul_bias_gelu "--dims M=333,N=517,K=271" "$gelu" -- \
    -D BLOCK_M=64,128 -D BLOCK_N=64 -D BLOCK_K=64 -D STAGES=3,4 -D FAST_ERF=false
  $fn cross-entropy cross_entropy.tile cross_entropy "--dims R=37,V=32003" \
    "--dims R=4096,V=32000 --dims R=4096,V=128256" -- \
    -D BLOCK=1024,2048,4096 -D WARPS=4,8
}
