# The staged kernel runs that scripts/gpu/check-kernels.sh and
# scripts/gpu/sanitize-kernels.sh share (sourced by both):
#   for_each_kernel_run FN   calls  FN NAME BUNDLE TILE-RUN-ARGS...
# for every run on both targets. Runs with --check compare with the float64
# reference at ragged sizes; linear attention form (b) has no
# single-kernel reference, so its two kernels only run there (bench/run.py
# compares its outputs with form (a)).
# selected NAME: whether the run NAME is in this pass: $ONLY, when set, is
# a bash =~ regex it must match (e.g. kernels just added).
selected() {
  [ -z "${ONLY:-}" ] || [[ $1 =~ $ONLY ]]
}

# wait_for_slot N: waits while N or more background jobs run.
wait_for_slot() {
  while [ "$(jobs -rp | wc -l)" -ge "$1" ]; do wait -n; done
}

for_each_kernel_run() {
  local fn=$1 k=${STAGE:-.device-bundle}/kernels target
  for target in sm_80 sm_90a; do
    $fn attn-d64-$target-small $k/attn-d64-$target/attention_fwd.json --check --dims Z=1,H=2,N=128 --scalar scale=0.125 --seed 1
    $fn attn-d64-$target $k/attn-d64-$target/attention_fwd.json --check --dims Z=2,H=3,N=384 --scalar scale=0.125 --seed 2
    $fn attn-d64-$target-negscale $k/attn-d64-$target/attention_fwd.json --check --dims Z=1,H=2,N=256 --scalar scale=-0.2 --seed 3
    $fn attn-d64-$target-ragged $k/attn-d64-$target/attention_fwd.json --check --dims Z=1,H=3,N=333 --scalar scale=0.125 --seed 11
    $fn attn-d64-lse-$target-ragged $k/attn-d64-$target/attention_fwd_lse.json --check --dims Z=2,H=2,HKV=2,M=201,N=201 --scalar scale=-0.2 --seed 12
    $fn attn-d128-$target-ragged $k/attn-d128-$target/attention_fwd.json --check --dims Z=1,H=2,N=1000 --scalar scale=0.088 --seed 13
    $fn attn-d64-causal-$target-ragged $k/attn-d64-causal-$target/attention_fwd.json --check --dims Z=2,H=2,N=299 --scalar scale=0.125 --seed 14
    $fn attn-d64-causal-lse-$target $k/attn-d64-causal-$target/attention_fwd_lse.json --check --dims Z=1,H=2,HKV=2,M=256,N=256 --scalar scale=0.125 --seed 15
    # attention_fwd_lse with grouped K/V heads (GQA; MQA when HKV = 1).
    $fn attn-d64-lse-gqa-$target-ragged $k/attn-d64-$target/attention_fwd_lse.json --check --dims Z=2,H=4,HKV=2,M=201,N=201 --scalar scale=0.125 --seed 52
    $fn attn-d64-causal-lse-mqa-$target-ragged $k/attn-d64-causal-$target/attention_fwd_lse.json --check --dims Z=1,H=3,HKV=1,M=299,N=299 --scalar scale=0.125 --seed 53
    $fn attn-d128-lse-gqa-$target-ragged $k/attn-d128-$target/attention_fwd_lse.json --check --dims Z=1,H=6,HKV=2,M=517,N=517 --scalar scale=0.088 --seed 54
    # attention_fwd_lse with M queries != N keys, causal aligned
    # bottom-right: M < N, and M > N (queries i < M - N see no key: o = 0,
    # lse = -inf).
    $fn attn-d64-lse-mn-$target-ragged $k/attn-d64-$target/attention_fwd_lse.json --check --dims Z=2,H=2,HKV=2,M=150,N=333 --scalar scale=0.125 --seed 60
    $fn attn-d64-causal-lse-m-lt-n-$target $k/attn-d64-causal-$target/attention_fwd_lse.json --check --dims Z=1,H=4,HKV=2,M=77,N=299 --scalar scale=0.125 --seed 61
    $fn attn-d64-causal-lse-m-gt-n-$target $k/attn-d64-causal-$target/attention_fwd_lse.json --check --dims Z=1,H=3,HKV=1,M=333,N=100 --scalar scale=-0.2 --seed 62
    $fn attn-d128-causal-f16-lse-m-gt-n-$target $k/attn-d128-causal-f16-$target/attention_fwd_lse.json --check --dims Z=1,H=4,HKV=2,M=517,N=200 --scalar scale=0.088 --seed 63
    $fn attn-d128-lse-mn-$target-ragged $k/attn-d128-$target/attention_fwd_lse.json --check --dims Z=1,H=2,HKV=1,M=200,N=517 --scalar scale=0.088 --seed 64
    # K and V three stages deep, pushed past the end: ragged, shorter than
    # the two blocks the prologue pushes, and causal.
    $fn attn-d64-s3-$target-ragged $k/attn-d64-s3-$target/attention_fwd.json --check --dims Z=2,H=2,N=333 --scalar scale=0.125 --seed 42
    $fn attn-d64-s3-$target-short $k/attn-d64-s3-$target/attention_fwd.json --check --dims Z=1,H=2,N=50 --scalar scale=0.125 --seed 43
    $fn attn-d64-s3-causal-$target-ragged $k/attn-d64-s3-causal-$target/attention_fwd.json --check --dims Z=2,H=2,N=299 --scalar scale=0.125 --seed 44
    $fn attn-d64-w4-$target-ragged $k/attn-d64-w4-$target/attention_fwd.json --check --dims Z=2,H=3,N=333 --scalar scale=0.125 --seed 45
    $fn attn-d64-w4-causal-$target-ragged $k/attn-d64-w4-causal-$target/attention_fwd.json --check --dims Z=2,H=2,N=299 --scalar scale=-0.2 --seed 46
    $fn attn-d128-causal-f16-$target $k/attn-d128-causal-f16-$target/attention_fwd.json --check --dims Z=2,H=2,N=320 --scalar scale=0.088 --seed 4
    $fn attn-decode-$target $k/attn-decode-$target/attention_fwd.json --check --dims Z=2,H=4,N=192 --scalar scale=0.125 --seed 5
    $fn attn-decode-$target-ragged $k/attn-decode-$target/attention_fwd.json --check --dims Z=1,H=4,N=77 --scalar scale=0.125 --seed 16
    # GQA with M != N, ragged and multiples of 16; causal aligned
    # bottom-right, M > N leaving rows with no key; the group-packed decode
    # kernel with M = 1 and causal M = 7.
    $fn attn-gqa-$target-ragged $k/attn-gqa-$target/attention_gqa.json --check --dims Z=2,H=8,HKV=2,M=333,N=517 --scalar scale=0.088 --seed 24
    $fn attn-gqa-$target-div16 $k/attn-gqa-$target/attention_gqa.json --check --dims Z=1,H=4,HKV=1,M=256,N=512 --scalar scale=0.088 --seed 25
    $fn attn-gqa-causal-$target-ragged $k/attn-gqa-causal-$target/attention_gqa.json --check --dims Z=1,H=6,HKV=2,M=200,N=333 --scalar scale=0.088 --seed 26
    $fn attn-gqa-causal-$target-m-gt-n $k/attn-gqa-causal-$target/attention_gqa.json --check --dims Z=1,H=2,HKV=2,M=300,N=100 --scalar scale=0.088 --seed 27
    $fn attn-gqa-decode-$target $k/attn-gqa-decode-$target/attention_gqa_decode.json --check --dims Z=4,H=32,HKV=8,M=1,N=1000 --scalar scale=0.088 --seed 28
    $fn attn-gqa-decode-causal-$target $k/attn-gqa-decode-causal-$target/attention_gqa_decode.json --check --dims Z=2,H=8,HKV=2,M=7,N=777 --scalar scale=0.088 --seed 29
    # Split-KV decode: the partials of each chunk, and their merge.
    $fn attn-gqa-split-$target $k/attn-gqa-split-$target/attention_gqa_decode_split.json --check --dims Z=4,H=32,HKV=8,M=1,N=1000,SPLITS=5 --scalar scale=0.088 --seed 39
    $fn attn-gqa-split-causal-$target $k/attn-gqa-split-causal-$target/attention_gqa_decode_split.json --check --dims Z=2,H=8,HKV=2,M=7,N=777,SPLITS=3 --scalar scale=0.088 --seed 40
    $fn attn-combine-$target $k/attn-combine-$target/attention_combine.json --check --dims Z=2,H=8,M=3,SPLITS=7 --seed 41
    # Varlen over packed sequences (an empty one, lengths 1 to 1000), GQA.
    $fn attn-varlen-$target $k/attn-varlen-$target/attention_varlen.json --check --dims T=203,H=8,HKV=2,S=6 --in cu_seqlens=$k/attn-inputs/cu-203.npy --scalar max_seqlen=74 --scalar scale=0.088 --seed 30
    $fn attn-varlen-$target-long $k/attn-varlen-$target/attention_varlen.json --check --dims T=3000,H=4,HKV=4,S=8 --in cu_seqlens=$k/attn-inputs/cu-3000.npy --scalar max_seqlen=1000 --scalar scale=0.088 --seed 31
    $fn attn-varlen-causal-$target $k/attn-varlen-causal-$target/attention_varlen.json --check --dims T=3000,H=4,HKV=1,S=8 --in cu_seqlens=$k/attn-inputs/cu-3000.npy --scalar max_seqlen=1000 --scalar scale=0.088 --seed 32
    $fn attn-varlen-causal-$target-small $k/attn-varlen-causal-$target/attention_varlen.json --check --dims T=203,H=6,HKV=3,S=6 --in cu_seqlens=$k/attn-inputs/cu-203.npy --scalar max_seqlen=80 --scalar scale=0.088 --seed 33
    # Paged-KV decode, pages of 16, 64 and 256 rows: scrambled block tables,
    # lengths 0 to 2000 ending mid-page, GQA 4:1, MQA and HKV = H.
    $fn attn-paged-p16-$target $k/attn-paged-p16-$target/attention_paged.json --check --dims B=6,H=32,HKV=8,NUM_PAGES=180,MAX_PAGES=64 --in block_table=$k/attn-inputs/table-p16-gpu.npy --in seq_lens=$k/attn-inputs/lens-p16-gpu.npy --scalar scale=0.088 --seed 34
    $fn attn-paged-p64-$target $k/attn-paged-p64-$target/attention_paged.json --check --dims B=3,H=4,HKV=4,NUM_PAGES=7,MAX_PAGES=4 --in block_table=$k/attn-inputs/table-p64.npy --in seq_lens=$k/attn-inputs/lens-p64.npy --scalar scale=0.088 --seed 35
    $fn attn-paged-p256-$target $k/attn-paged-p256-$target/attention_paged.json --check --dims B=4,H=8,HKV=1,NUM_PAGES=21,MAX_PAGES=8 --in block_table=$k/attn-inputs/table-p256.npy --in seq_lens=$k/attn-inputs/lens-p256.npy --scalar scale=0.088 --seed 36
    # attention_paged_flat: the same caches seen flat, blocks gathered;
    # attention_paged_split: its split-KV partials (attention_combine merges).
    $fn attn-paged-flat-p16-$target $k/attn-paged-flat-p16-$target/attention_paged_flat.json --check --dims B=6,H=32,HKV=8,SLOTS=2880,MAX_PAGES=64 --in block_table=$k/attn-inputs/table-p16-gpu.npy --in seq_lens=$k/attn-inputs/lens-p16-gpu.npy --scalar scale=0.088 --seed 37
    $fn attn-paged-flat-p256-$target $k/attn-paged-flat-p256-$target/attention_paged_flat.json --check --dims B=4,H=8,HKV=1,SLOTS=5376,MAX_PAGES=8 --in block_table=$k/attn-inputs/table-p256.npy --in seq_lens=$k/attn-inputs/lens-p256.npy --scalar scale=0.088 --seed 38
    $fn attn-paged-split-p16-$target $k/attn-paged-split-p16-$target/attention_paged_split.json --check --dims B=6,H=32,HKV=8,SLOTS=2880,MAX_PAGES=64,SPLITS=4 --in block_table=$k/attn-inputs/table-p16-gpu.npy --in seq_lens=$k/attn-inputs/lens-p16-gpu.npy --scalar scale=0.088 --seed 42
    $fn attn-paged-split-p256-$target $k/attn-paged-split-p256-$target/attention_paged_split.json --check --dims B=4,H=8,HKV=1,SLOTS=5376,MAX_PAGES=8,SPLITS=7 --in block_table=$k/attn-inputs/table-p256.npy --in seq_lens=$k/attn-inputs/lens-p256.npy --scalar scale=0.088 --seed 43
    # Varlen training: attention_varlen_fwd and its backward over queries
    # cu-3000 and keys cu-k-3171 (Inputs/attention_inputs.py: sequences
    # with more keys than queries, fewer, none), multi-head, and grouped on
    # cu-203 / cu-k-137 (an empty query sequence too); with --check
    # tile-run derives the forward's lse and delta for the backward.
    local cfg b name scale
    local v="--in cu_seqlens_q=$k/attn-inputs/cu-3000.npy --in cu_seqlens_k=$k/attn-inputs/cu-k-3171.npy"
    local vs="--in cu_seqlens_q=$k/attn-inputs/cu-203.npy --in cu_seqlens_k=$k/attn-inputs/cu-k-137.npy"
    for cfg in d64:0.125 d64-causal:-0.125 d128:0.088 d128-causal:0.088 \
               d64-causal-f16:0.125; do
      IFS=: read -r name scale <<<"$cfg"
      b=$k/attn-varlen-train-$name-$target
      $fn attn-varlen-fwd-$name-$target $b/attention_varlen_fwd.json --check --dims TQ=3000,TK=3171,H=4,HKV=4,S=8 $v --scalar max_seqlen_q=1000 --scalar scale=$scale --seed 60
      $fn attn-varlen-fwd-gqa-$name-$target $b/attention_varlen_fwd.json --check --dims TQ=203,TK=137,H=8,HKV=2,S=6 $vs --scalar max_seqlen_q=74 --scalar scale=$scale --seed 61
      $fn attn-varlen-delta-$name-$target $b/attention_varlen_bwd_preprocess.json --check --dims TQ=3000,H=4 --seed 62
      $fn attn-varlen-dkdv-$name-$target $b/attention_varlen_bwd_dkdv.json --check --dims TQ=3000,TK=3171,H=4,HKV=4,S=8 $v --scalar max_seqlen_k=1000 --scalar scale=$scale --seed 63
      $fn attn-varlen-dq-$name-$target $b/attention_varlen_bwd_dq.json --check --dims TQ=3000,TK=3171,H=4,HKV=4,S=8 $v --scalar max_seqlen_q=1000 --scalar scale=$scale --seed 64
      $fn attn-varlen-dq-gqa-$name-$target $b/attention_varlen_bwd_dq.json --check --dims TQ=203,TK=137,H=8,HKV=2,S=6 $vs --scalar max_seqlen_q=74 --scalar scale=$scale --seed 65
      [ -d $k/attn-varlen-train-grouped-$name-$target ] || continue
      $fn attn-varlen-dkdv-gqa-$name-$target $k/attn-varlen-train-grouped-$name-$target/attention_varlen_bwd_dkdv.json --check --dims TQ=203,TK=137,H=8,HKV=2,S=6 $vs --scalar max_seqlen_k=74 --scalar scale=$scale --seed 66
      $fn attn-varlen-dkdv-mqa-$name-$target $k/attn-varlen-train-grouped-$name-$target/attention_varlen_bwd_dkdv.json --check --dims TQ=3000,TK=3171,H=4,HKV=1,S=8 $v --scalar max_seqlen_k=1000 --scalar scale=$scale --seed 67
    done
    # Attention backward: the preprocess, dK/dV and dQ, each against the
    # float64 gradients; with --check tile-run derives the forward's o, lse
    # and delta from the random q, k, v, do. Ragged N, and a multiple of 16
    # (the div16 variant) for f16. dK/dV and dQ run as multi-head attention
    # (HKV = H) and with grouped K/V heads (GQA and MQA, dims of the last
    # field; dK/dV's GROUPED build then loops over the query heads of each
    # K/V head). M (queries) = N (keys) in the first fields; the last field
    # has M != N (GQA, both sides of M = N; causal bottom-right, M > N
    # leaving queries with no key).
    local cfg b name dims scale gqa mn h m
    for cfg in d64:Z=2,H=3,N=333:0.125:Z=2,H=4,HKV=2,M=333,N=333:Z=2,H=4,HKV=2,M=150,N=333 \
               d64-causal:Z=2,H=2,N=299:0.125:Z=1,H=4,HKV=1,M=299,N=299:Z=1,H=4,HKV=2,M=299,N=100 \
               d128:Z=1,H=2,N=1000:0.088:Z=1,H=4,HKV=2,M=1000,N=1000:Z=1,H=4,HKV=2,M=517,N=200 \
               d128-causal:Z=1,H=3,N=517:-0.088:Z=1,H=6,HKV=2,M=517,N=517:Z=1,H=6,HKV=2,M=200,N=517 \
               d64-causal-f16:Z=2,H=2,N=320:0.125:Z=2,H=4,HKV=2,M=320,N=320:Z=2,H=4,HKV=1,M=320,N=128; do
      IFS=: read -r name dims scale gqa mn <<<"$cfg"
      h=${dims#*H=} && h=${h%%,*}
      m=${dims##*N=}
      b=$k/attn-bwd-$name-$target
      $fn attn-bwd-delta-$name-$target $b/attention_bwd_preprocess.json --check --dims ${dims%N=*}M=$m --seed 45
      $fn attn-bwd-dkdv-$name-$target $b/attention_bwd_dkdv.json --check --dims $dims,M=$m,HKV=$h --scalar scale=$scale --seed 46
      $fn attn-bwd-dq-$name-$target $b/attention_bwd_dq.json --check --dims $dims,M=$m,HKV=$h --scalar scale=$scale --seed 47
      $fn attn-bwd-dkdv-gqa-$name-$target $k/attn-bwd-grouped-$name-$target/attention_bwd_dkdv.json --check --dims $gqa --scalar scale=$scale --seed 55
      $fn attn-bwd-dq-gqa-$name-$target $b/attention_bwd_dq.json --check --dims $gqa --scalar scale=$scale --seed 56
      $fn attn-bwd-dkdv-mn-$name-$target $k/attn-bwd-grouped-$name-$target/attention_bwd_dkdv.json --check --dims $mn --scalar scale=$scale --seed 65
      $fn attn-bwd-dq-mn-$name-$target $b/attention_bwd_dq.json --check --dims $mn --scalar scale=$scale --seed 66
    done
    # The multi-head dK/dV build (one head a K/V head) with M != N.
    $fn attn-bwd-dkdv-mn-d64-causal-$target $k/attn-bwd-d64-causal-$target/attention_bwd_dkdv.json --check --dims Z=1,H=2,HKV=2,M=333,N=120 --scalar scale=0.125 --seed 67
    $fn attn-bwd-dkdv-mn-d128-$target $k/attn-bwd-d128-$target/attention_bwd_dkdv.json --check --dims Z=1,H=2,HKV=2,M=120,N=517 --scalar scale=0.088 --seed 68
    # Every score -100 (Inputs/attention_inputs.py): keys past N would
    # weigh exp(96) = inf in f32 unless dQ masks them.
    $fn attn-bwd-dq-masked-$target $k/attn-bwd-d64-$target/attention_bwd_dq.json --check --dims Z=1,H=1,HKV=1,M=70,N=70 --in q=$k/attn-inputs/bwd-q-e0-d64.npy --in k=$k/attn-inputs/bwd-k-d64.npy --scalar scale=-100 --seed 50
    $fn attn-bwd-dq-masked-causal-$target $k/attn-bwd-d64-causal-$target/attention_bwd_dq.json --check --dims Z=1,H=1,HKV=1,M=70,N=70 --in q=$k/attn-inputs/bwd-q-e0-d64.npy --in k=$k/attn-inputs/bwd-k-d64.npy --scalar scale=-100 --seed 51
    # sm_90a's larger blocks (stage-kernels.sh).
    if [ $target = sm_90a ]; then
      for cfg in d64:Z=2,H=3,HKV=3,M=333,N=333:0.125:Z=2,H=4,HKV=2,M=333,N=333:Z=1,H=4,HKV=2,M=100,N=333 \
                 d64-causal:Z=2,H=2,HKV=2,M=299,N=299:0.125:Z=1,H=4,HKV=1,M=299,N=299:Z=1,H=4,HKV=1,M=299,N=77 \
                 d128:Z=1,H=2,HKV=2,M=1000,N=1000:0.088:Z=1,H=4,HKV=2,M=1000,N=1000:Z=1,H=4,HKV=2,M=333,N=150 \
                 d128-causal:Z=1,H=3,HKV=3,M=517,N=517:-0.088:Z=1,H=6,HKV=2,M=517,N=517:Z=1,H=6,HKV=2,M=150,N=517; do
        IFS=: read -r name dims scale gqa mn <<<"$cfg"
        b=$k/attn-bwd-large-$name-$target
        $fn attn-bwd-large-dkdv-$name-$target $b/attention_bwd_dkdv.json --check --dims $dims --scalar scale=$scale --seed 48
        $fn attn-bwd-large-dq-$name-$target $b/attention_bwd_dq.json --check --dims $dims --scalar scale=$scale --seed 49
        $fn attn-bwd-large-dkdv-gqa-$name-$target $k/attn-bwd-large-grouped-$name-$target/attention_bwd_dkdv.json --check --dims $gqa --scalar scale=$scale --seed 57
        $fn attn-bwd-large-dq-gqa-$name-$target $b/attention_bwd_dq.json --check --dims $gqa --scalar scale=$scale --seed 58
        $fn attn-bwd-large-dkdv-mn-$name-$target $k/attn-bwd-large-grouped-$name-$target/attention_bwd_dkdv.json --check --dims $mn --scalar scale=$scale --seed 69
        $fn attn-bwd-large-dq-mn-$name-$target $b/attention_bwd_dq.json --check --dims $mn --scalar scale=$scale --seed 70
      done
    fi
    $fn rotary-$target $k/rotary-$target/rotary.json --check --dims B=2,T=37,H=3 --seed 6
    $fn rotary-inplace-$target $k/rotary-$target/rotary_inplace.json --check --dims B=2,T=37,H=3 --seed 7
    $fn rotary-partial-pairs-$target $k/rotary-partial-pairs-$target/rotary.json --check --dims B=2,T=45,H=2 --seed 8
    $fn linattn-$target $k/linattn-$target/linear_attention.json --check --dims B=2,T=150,H=3 --scalar scale=-0.3 --seed 9
    $fn linattn-states-$target $k/linattn-states-$target/linear_attention_states.json --dims B=1,T=150,H=2,NC=3 --seed 17
    $fn linattn-chunks-$target $k/linattn-states-$target/linear_attention_chunks.json --dims B=1,T=150,H=2,NC=3 --scalar scale=0.5 --seed 18
    $fn linattn-recurrent-$target $k/linattn-recurrent-$target/linear_attention_recurrent.json --check --dims B=2,T=77,H=2 --scalar scale=0.7 --seed 10
    # GLA against the float64 recurrence (References/Gla.cpp): T ragged
    # against CHUNK and BLOCK_T; --check makes g forget gates, and the
    # kernels that read hs or dhs take random ones (their references
    # restart each chunk from them).
    local gla=$k/gla-k64-v128-$target bwd=$k/gla-bwd-k64-v128-$target
    $fn gla-fwd-k64-$target $gla/chunk_gla_fwd.json --check --dims B=2,T=130,H=2,N0=2,NT=3 --scalar scale=0.125 --seed 70
    $fn gla-states-k64-$target $gla/chunk_gla_states.json --check --dims B=1,T=100,H=3,N0=1,NT=2 --seed 71
    # The chunked forward's gate sums, scores (References: from q, k and
    # the derived gc) and outputs (from the a and hs given).
    $fn gla-cumsum-k64-$target $gla/chunk_gla_cumsum.json --check --dims B=2,T=130,H=2 --seed 83
    $fn gla-intra-k64-$target $gla/chunk_gla_intra.json --check --dims B=2,T=130,H=2 --seed 84
    $fn gla-output-k64-$target $gla/chunk_gla_output.json --check --dims B=2,T=130,H=2,NT=3 --scalar scale=0.125 --seed 85
    $fn gla-intra-k256-$target $k/gla-k256-$target/chunk_gla_intra.json --check --dims B=1,T=100,H=2 --seed 86
    $fn gla-output-k256-$target $k/gla-k256-$target/chunk_gla_output.json --check --dims B=1,T=100,H=2,NT=2 --scalar scale=-0.0625 --seed 87
    $fn gla-intra-f16-$target $k/gla-f16-$target/chunk_gla_intra.json --check --dims B=1,T=100,H=2 --seed 89
    $fn gla-states-gc-$target $k/gla-gc-$target/chunk_gla_states.json --check --dims B=2,T=150,H=3,N0=2,NT=3 --seed 99
    $fn gla-bwd-dh-gc-$target $k/gla-gc-$target/chunk_gla_bwd_dh.json --check --dims B=2,T=150,H=3,N0=0,ND=2,NT=3 --scalar scale=0.3 --seed 100
    $fn gla-output-k128-v128-$target $k/gla-ops-$target/chunk_gla_output.json --check --dims B=1,T=150,H=2,NT=3 --scalar scale=0.2 --seed 101
    $fn gla-states-k256-bf16-$target $k/gla-k256-$target/chunk_gla_states.json --check --dims B=1,T=100,H=2,N0=1,NT=2 --seed 96
    $fn gla-states-f16-$target $k/gla-f16-$target/chunk_gla_states.json --check --dims B=1,T=100,H=2,N0=0,NT=4 --seed 97
    $fn gla-output-f16-$target $k/gla-f16-$target/chunk_gla_output.json --check --dims B=1,T=100,H=2,NT=4 --scalar scale=0.25 --seed 98
    $fn gla-recurrent-k64-$target $gla/recurrent_gla_fwd.json --check --dims B=2,T=37,H=2,N0=2 --scalar scale=0.125 --seed 73
    $fn gla-fwd-k8-$target $k/gla-k8-v16-$target/chunk_gla_fwd.json --check --dims B=2,T=37,H=3,N0=0,NT=0 --scalar scale=0.35 --seed 74
    $fn gla-fwd-k256-$target $k/gla-k256-$target/chunk_gla_fwd.json --check --dims B=1,T=130,H=2,N0=1,NT=0 --scalar scale=0.0625 --seed 75
    $fn gla-fwd-f16-$target $k/gla-f16-$target/chunk_gla_fwd.json --check --dims B=2,T=100,H=2,N0=0,NT=4 --scalar scale=-0.09 --seed 76
    $fn gla-bwd-dh-k64-$target $bwd/chunk_gla_bwd_dh.json --check --dims B=2,T=130,H=2,N0=2,ND=2,NT=3 --scalar scale=0.125 --seed 77
    $fn gla-bwd-da-k64-$target $bwd/chunk_gla_bwd_da.json --check --dims B=2,T=130,H=2 --scalar scale=0.125 --seed 90
    $fn gla-bwd-dqk-intra-k64-$target $bwd/chunk_gla_bwd_dqk_intra.json --check --dims B=2,T=130,H=2 --seed 91
    $fn gla-bwd-dqkg-k64-$target $bwd/chunk_gla_bwd_dqkg.json --check --dims B=2,T=100,H=2,NT=2 --scalar scale=0.125 --seed 78
    $fn gla-bwd-dv-k64-$target $bwd/chunk_gla_bwd_dv.json --check --dims B=1,T=130,H=3,NT=3 --scalar scale=-0.125 --seed 79
    $fn gla-bwd-dqk-intra-k256-$target $k/gla-bwd-k256-$target/chunk_gla_bwd_dqk_intra.json --check --dims B=1,T=100,H=2 --seed 92
    $fn gla-bwd-dqkg-k256-$target $k/gla-bwd-k256-$target/chunk_gla_bwd_dqkg.json --check --dims B=1,T=100,H=2,NT=2 --scalar scale=-0.0625 --seed 93
    $fn gla-bwd-dv-k256-$target $k/gla-bwd-k256-$target/chunk_gla_bwd_dv.json --check --dims B=1,T=100,H=2,NT=2 --scalar scale=0.0625 --seed 94
    $fn gla-bwd-dh-k8-c32-$target $k/gla-bwd-k8-c32-$target/chunk_gla_bwd_dh.json --check --dims B=2,T=37,H=3,N0=0,ND=0,NT=2 --scalar scale=0.35 --seed 80
    $fn gla-bwd-dqkg-k8-c32-$target $k/gla-bwd-k8-c32-$target/chunk_gla_bwd_dqkg.json --check --dims B=1,T=100,H=2,NT=4 --scalar scale=-0.35 --seed 81
    $fn gla-bwd-dqk-intra-f16-$target $k/gla-bwd-f16-$target/chunk_gla_bwd_dqk_intra.json --check --dims B=2,T=100,H=1 --seed 95
    $fn gla-bwd-dv-f16-$target $k/gla-bwd-f16-$target/chunk_gla_bwd_dv.json --check --dims B=2,T=100,H=1,NT=2 --scalar scale=0.088 --seed 82
    # Gate-free chunked linear attention: every kernel at K = 64, V = 128
    # (h0, dht), K = 8, K = 256 and f16, ragged T.
    local la=$k/linear-k64-v128-$target
    $fn linear-states-k64-$target $la/chunk_linear_states.json --check --dims B=2,T=150,H=3,N0=2,NT=3 --seed 110
    $fn linear-output-k64-$target $la/chunk_linear_output.json --check --dims B=2,T=150,H=3,NT=3 --scalar scale=-0.125 --seed 111
    $fn linear-bwd-dh-k64-$target $la/chunk_linear_bwd_dh.json --check --dims B=2,T=150,H=3,N0=2,ND=2,NT=3 --scalar scale=0.125 --seed 112
    $fn linear-bwd-dqk-k64-$target $la/chunk_linear_bwd_dqk.json --check --dims B=2,T=150,H=3,NT=3 --scalar scale=0.125 --seed 113
    $fn linear-bwd-dv-k64-$target $la/chunk_linear_bwd_dv.json --check --dims B=2,T=150,H=3,NT=3 --scalar scale=-0.125 --seed 114
    $fn linear-states-k8-$target $k/linear-k8-v16-$target/chunk_linear_states.json --check --dims B=2,T=37,H=3,N0=2,NT=1 --seed 115
    $fn linear-bwd-dqk-k8-$target $k/linear-k8-v16-$target/chunk_linear_bwd_dqk.json --check --dims B=2,T=100,H=3,NT=2 --scalar scale=0.35 --seed 116
    $fn linear-output-k256-$target $k/linear-k256-$target/chunk_linear_output.json --check --dims B=1,T=100,H=2,NT=2 --scalar scale=0.0625 --seed 117
    $fn linear-bwd-dqk-k256-$target $k/linear-k256-$target/chunk_linear_bwd_dqk.json --check --dims B=1,T=100,H=2,NT=2 --scalar scale=-0.0625 --seed 118
    $fn linear-bwd-dv-k256-$target $k/linear-k256-$target/chunk_linear_bwd_dv.json --check --dims B=1,T=100,H=2,NT=2 --scalar scale=0.0625 --seed 119
    $fn linear-output-f16-$target $k/linear-f16-$target/chunk_linear_output.json --check --dims B=1,T=100,H=2,NT=2 --scalar scale=0.088 --seed 120
    $fn linear-bwd-dh-f16-$target $k/linear-f16-$target/chunk_linear_bwd_dh.json --check --dims B=1,T=100,H=2,N0=0,ND=1,NT=2 --scalar scale=0.088 --seed 121
    $fn linear-recurrent-k64-$target $la/recurrent_linear_fwd.json --check --dims B=2,T=37,H=3,N0=2 --scalar scale=-0.125 --seed 122
    # Ragged sizes run the general code, multiples of 16 the div16 variant.
    $fn argmax-$target $k/argmax-$target/extremes.json --check --dims R=1000 --in x=$k/argmax-inputs/x.npy --ref imax=$k/argmax-inputs/imax.npy --ref imin=$k/argmax-inputs/imin.npy --ref cmax=$k/argmax-inputs/cmax.npy --ref cmin=$k/argmax-inputs/cmin.npy
    # Atomics: 1563 programs adding into 8 bins and one element.
    $fn atomics-hist-$target $k/atomics-$target/hist.json --check --in x=$k/atomics-inputs/hist-x.npy --in h=$k/atomics-inputs/hist-h.npy --ref h=$k/atomics-inputs/hist-ref.npy
    $fn atomics-total-$target $k/atomics-$target/total.json --check --in v=$k/atomics-inputs/total-v.npy --in t=$k/atomics-inputs/total-t.npy --ref t=$k/atomics-inputs/total-ref.npy
    $fn atomics-fmax-$target $k/atomics-$target/fmax.json --check --in y=$k/atomics-inputs/fmax-y.npy --in m=$k/atomics-inputs/fmax-m.npy --ref m=$k/atomics-inputs/fmax-ref.npy
    $fn atomics-imax-$target $k/atomics-$target/imax.json --check --in g=$k/atomics-inputs/imax-g.npy --ref g=$k/atomics-inputs/imax-ref.npy
    $fn atomics-hadd-$target $k/atomics-$target/hadd.json --check --in a=$k/atomics-inputs/hadd-a.npy --ref a=$k/atomics-inputs/hadd-ref.npy
    # Strided views: A a column slice of a wider matrix, B transposed (and
    # the reverse); y column-major with gaps that must stay untouched; a
    # broadcast row (stride 0).
    $fn strided-gemm-$target $k/strided-$target/gemm.json --check --dims M=200,K=150,N=90 --stride a=160,1 --stride b=1,150 --seed 50
    $fn strided-gemm-t-$target $k/strided-$target/gemm.json --check --dims M=333,K=256,N=130 --stride a=1,333 --stride b=136,1 --seed 51
    $fn strided-scale-$target $k/strided-$target/scale2.json --check --in x=$k/strided-inputs/x.npy --stride x=80,1 --stride y=1,7 --ref y=$k/strided-inputs/y.npy
    $fn strided-bcast-$target $k/strided-$target/scale2.json --check --in x=$k/strided-inputs/bx.npy --stride x=0,1 --ref y=$k/strided-inputs/by.npy
    # Sizes of 16 and unit-stride views run div16_unit (16-byte cp.async:
    # A a row slice at a 16-byte row pitch); a transposed B runs div16.
    $fn strided-gemm-unit-$target $k/strided-$target/gemm.json --check --dims M=192,K=160,N=96 --stride a=168,1 --seed 52
    $fn strided-gemm-div16-$target $k/strided-$target/gemm.json --check --dims M=192,K=160,N=96 --stride a=168,1 --stride b=1,160 --seed 53
    # 2-D gathers, against numpy.
    $fn gather2-$target $k/gather-$target/gather2.json --check --in x=$k/gather-inputs/x.npy --in idx=$k/gather-inputs/idx.npy --ref y=$k/gather-inputs/y.npy
    $fn gather-emb-$target $k/gather-$target/emb.json --check --in w=$k/gather-inputs/w.npy --in idx=$k/gather-inputs/ids.npy --ref y=$k/gather-inputs/e.npy
    # device_assert (-g) on inputs that hold.
    $fn assert-holds-$target $k/assert-$target/positive.json --in x=$k/assert-inputs/good.npy
    local i=$k/tile-ops-inputs dt
    for dt in f32 i32; do
      $fn scans-$dt-$target $k/scans-$dt-$target/scans.json --check --dims R=1000,L=1024 --in x=$i/scan-$dt/x.npy --in v=$i/scan-$dt/v.npy --ref rows=$i/scan-$dt/rows.npy --ref cols=$i/scan-$dt/cols.npy --ref flat=$i/scan-$dt/flat.npy
    done
    $fn shapes-$target $k/shapes-$target/shapes.json --check --tol 0 --in x=$i/shapes/x.npy --in y=$i/shapes/y.npy --ref flat=$i/shapes/flat.npy --ref square=$i/shapes/square.npy --ref tr=$i/shapes/tr.npy --ref p3=$i/shapes/p3.npy --ref r3=$i/shapes/r3.npy --ref back=$i/shapes/back.npy
    $fn mm-tf32-ragged-$target $k/mm-tf32-$target/mm.json --check --dims M=333,N=190,K=271 --in a=$i/dot-ragged/a.npy --in b=$i/dot-ragged/b.npy --ref c=$i/dot-ragged/c.npy
    # An ieee dot is the same FMA chain as numpy's emulation: bit for bit.
    $fn mm-ieee-ragged-$target $k/mm-ieee-$target/mm.json --check --tol 0 --dims M=333,N=190,K=271 --in a=$i/dot-ragged/a.npy --in b=$i/dot-ragged/b.npy --ref c=$i/dot-ragged/ieee.npy
    $fn mm-tf32-eye-$target $k/mm-tf32-$target/mm.json --check --tol 0 --dims M=333,N=64,K=64 --in a=$i/dot-eye/a.npy --in b=$i/dot-eye/eye.npy --ref c=$i/dot-eye/rounded.npy
    $fn matmul-f32-$target $k/matmul-f32-$target/matmul.json --check --dims M=256,N=192,K=320 --in a=$i/matmul/a.npy --in b=$i/matmul/b.npy --ref c=$i/matmul/c.npy
    $fn matmul-ragged-$target $k/matmul-$target/matmul.json --check --dims M=333,N=190,K=271 --seed 19
    $fn matmul-div16-$target $k/matmul-$target/matmul.json --check --dims M=256,N=384,K=512 --seed 20
    $fn matmul-f16-$target $k/matmul-f16-small-$target/matmul.json --check --dims M=200,N=96,K=80 --seed 21
    $fn rmsnorm-ragged-$target $k/rmsnorm-$target/rmsnorm.json --check --dims R=7,C=3001 --scalar eps=1e-5 --seed 22
    $fn rmsnorm-div16-$target $k/rmsnorm-$target/rmsnorm.json --check --dims R=9,C=4096 --scalar eps=1e-6 --seed 23
    # RMSNorm training: the forward with rstd; the backward's dx and dw
    # partials (--check derives rstd from x) with a row in one block of
    # 4096 (ragged and a multiple of 16), over four blocks (C = 16384, and
    # 16383), over three blocks of 1024 with G > R, in one block of 8192
    # at 16 warps; the dw sum of the partial rows.
    $fn rmsnorm-fwd-ragged-$target $k/rmsnorm-$target/rmsnorm_fwd.json --check --dims R=7,C=3001 --scalar eps=1e-5 --seed 60
    $fn rmsnorm-fwd-div16-$target $k/rmsnorm-$target/rmsnorm_fwd.json --check --dims R=9,C=4096 --scalar eps=1e-6 --seed 61
    $fn rmsnorm-bwd-ragged-$target $k/rmsnorm-$target/rmsnorm_bwd_dx.json --check --dims R=333,C=3001,G=7 --seed 62
    $fn rmsnorm-bwd-div16-$target $k/rmsnorm-$target/rmsnorm_bwd_dx.json --check --dims R=256,C=4096,G=16 --seed 63
    $fn rmsnorm-bwd-wide-$target $k/rmsnorm-$target/rmsnorm_bwd_dx.json --check --dims R=7,C=16384,G=3 --seed 64
    $fn rmsnorm-bwd-wide-ragged-$target $k/rmsnorm-$target/rmsnorm_bwd_dx.json --check --dims R=37,C=16383,G=5 --seed 65
    $fn rmsnorm-bwd-b1024-$target $k/rmsnorm-b1024-$target/rmsnorm_bwd_dx.json --check --dims R=7,C=3001,G=10 --seed 66
    $fn rmsnorm-bwd-w16-$target $k/rmsnorm-w16-$target/rmsnorm_bwd_dx.json --check --dims R=100,C=8192,G=9 --seed 67
    $fn rmsnorm-dw-ragged-$target $k/rmsnorm-$target/rmsnorm_bwd_dw.json --check --dims G=37,C=3001 --seed 68
    $fn rmsnorm-dw-div16-$target $k/rmsnorm-$target/rmsnorm_bwd_dw.json --check --dims G=256,C=4096 --seed 69
    $fn matmul-gelu-ragged-$target $k/matmul-gelu-$target/matmul_bias_gelu.json --check --dims M=333,N=190,K=271 --seed 40
    $fn matmul-gelu-div16-$target $k/matmul-gelu-$target/matmul_bias_gelu.json --check --dims M=256,N=384,K=512 --seed 41
    $fn matmul-gelu-exact-ragged-$target $k/matmul-gelu-exact-$target/matmul_bias_gelu.json --check --dims M=333,N=190,K=271 --seed 40
    $fn matmul-gelu-exact-div16-$target $k/matmul-gelu-exact-$target/matmul_bias_gelu.json --check --dims M=256,N=384,K=512 --seed 41
    $fn cross-entropy-32k-$target $k/cross-entropy-$target/cross_entropy.json --check --dims R=67,V=32003 --in target=$k/ce-inputs/targets-67-32003.npy --seed 42
    $fn cross-entropy-128k-$target $k/cross-entropy-$target/cross_entropy.json --check --dims R=8,V=128256 --in target=$k/ce-inputs/targets-8-128256.npy --seed 43
    $fn cross-entropy-random-$target $k/cross-entropy-$target/cross_entropy.json --check --dims R=5,V=300 --seed 44
    # Its backward (--check derives lse from the logits): the same targets,
    # random ones in [-8, 8) (negative: zero rows), and V a multiple of 16.
    $fn cross-entropy-bwd-32k-$target $k/cross-entropy-$target/cross_entropy_bwd.json --check --dims R=67,V=32003 --in target=$k/ce-inputs/targets-67-32003.npy --seed 45
    $fn cross-entropy-bwd-128k-$target $k/cross-entropy-$target/cross_entropy_bwd.json --check --dims R=8,V=128256 --in target=$k/ce-inputs/targets-8-128256.npy --seed 46
    $fn cross-entropy-bwd-random-$target $k/cross-entropy-$target/cross_entropy_bwd.json --check --dims R=5,V=300 --seed 47
    # int64 targets (tegula.ops' build): the same spread targets, forward and backward.
    $fn cross-entropy-i64-32k-$target $k/cross-entropy-i64-$target/cross_entropy.json --check --dims R=67,V=32003 --in target=$k/ce-inputs/targets64-67-32003.npy --seed 42
    $fn cross-entropy-i64-bwd-128k-$target $k/cross-entropy-i64-$target/cross_entropy_bwd.json --check --dims R=8,V=128256 --in target=$k/ce-inputs/targets64-8-128256.npy --seed 46
    $fn cross-entropy-bwd-div16-$target $k/cross-entropy-$target/cross_entropy_bwd.json --check --dims R=16,V=32000 --seed 48
    # LayerNorm: N not a multiple of the block, M not a multiple of G, G > M;
    # --check derives the backward's mean and rstd from x.
    $fn layer-norm-fwd-ragged-$target $k/layer-norm-$target/layer_norm_fwd.json --check --dims M=333,N=1000 --scalar eps=1e-5 --seed 50
    $fn layer-norm-fwd-loop-$target $k/layer-norm-b128-bf16-$target/layer_norm_fwd.json --check --dims M=37,N=300 --scalar eps=1e-5 --seed 51
    $fn layer-norm-bwd-ragged-$target $k/layer-norm-$target/layer_norm_bwd_dx.json --check --dims M=333,N=1000,G=7 --seed 52
    $fn layer-norm-bwd-g-gt-m-$target $k/layer-norm-b128-bf16-$target/layer_norm_bwd_dx.json --check --dims M=3,N=100,G=8 --seed 53
    $fn layer-norm-dwdb-ragged-$target $k/layer-norm-$target/layer_norm_bwd_dwdb.json --check --dims G=37,N=1000 --seed 54
  done
}
