#!/usr/bin/env bash
# The GLA training comparison's noise across seeds (issue 25): for each
# seed, bench/train_gla.py's model (the s36-gla-train.sh configuration)
# through fla's chunk_gla, tegula.ops.chunk_gla and fla's fused recurrent
# form, and fla's chunk_gla a second time (is fla's own run repeatable?).
# bench/train_seeds.py then sets each pair's loss gaps side by side: how
# far tegula is from fla against how far fla's two forms, and fla's two
# runs, are from each other on the same seed.
#
#   here:       scripts/build-ops.sh
#   on the GPU: SEEDS="1 2 3" bash scripts/gpu/gla-seeds.sh
#               (kind nvidia-h100-x1; carry python/tegula/_bundles/sm_90a,
#               python/tegula/libtegula_rt.so and .whl)
#   the tolerance's run (docs/ops.md): SEEDS="4 5 6 7 8 9"
#               IMPLS="fla fla-recurrent tegula" with GPUS or WORKERS,
#               then bench/train_seeds.py on the runs
#
# BATCH (default 4, the s36 configuration) sets the sequences a step, and
# IMPLS (default "fla tegula fla-again fla-recurrent") the runs a seed.
# Runs are kept in /tmp/gla-seeds on the machine and skipped when their
# JSON is there, and no run starts after BUDGET seconds (default 470): the
# same call again on the still-warm machine runs what is missing. Every
# call copies what there is to $OUT.
#
# On a machine of several GPUs, GPUS=N runs the same list of runs (seed by
# seed, IMPLS in order) on GPUs 0..N-1 at once: each GPU takes the next
# run when its last one ends. There fla-again runs in another process,
# most likely on another GPU. WORKERS=M (default GPUS) runs M at once,
# worker i on GPU i mod N: with M > N runs share a GPU, which overlaps
# Triton's compilation on the CPU with other runs' steps. The losses do
# not change (each run is bit for bit the same alone); tokens per second
# of runs that shared a GPU are not the kernels' speed.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
out=${OUT:-/tmp/gla-seeds-out}
batch=${BATCH:-4}
keep=/tmp/gla-seeds-b$batch
budget=${BUDGET:-470}
mkdir -p "$out" "$keep"
export PYTHONUNBUFFERED=1 PYTHONPATH="$root/python:/tmp/site"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/gpu.txt"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \
  --upgrade --target /tmp/site .whl/*.whl

# run SEED IMPL NAME [GPU]: one training run, unless kept or out of time.
run() {
  local seed=$1 impl=$2 name=$3 gpu=${4:-}
  local json="$keep/$name-s$seed.json"
  [ -s "$json" ] && return
  if [ "$SECONDS" -ge "$budget" ]; then
    echo "skipped $name seed $seed: out of time ($SECONDS s)"
    return
  fi
  # On GPU $gpu when given; else on the devices the caller sees.
  ${gpu:+env CUDA_VISIBLE_DEVICES=$gpu} \
    timeout 400 python3 bench/train_gla.py --impl "$impl" --seed "$seed" \
    --batch "$batch" --out "$json" > "$keep/$name-s$seed.txt" 2>&1
  echo "$name seed $seed rc=$? ($SECONDS s)${gpu:+ on GPU $gpu}:" \
    "$(tail -1 "$keep/$name-s$seed.txt")"
}

queue=$keep/queue
for seed in ${SEEDS:-1 2 3}; do
  for name in ${IMPLS:-fla tegula fla-again fla-recurrent}; do
    echo "$seed $name"
  done
done > "$queue"

# worker GPU: takes the queue's first run, one at a time, until it is empty.
worker() {
  local job
  while :; do
    job=$(flock "$queue.lock" sh -c \
      'head -1 "$1"; sed -i 1d "$1"' sh "$queue")
    [ -n "$job" ] || return 0
    set -- $job
    run "$1" "${2%-again}" "$2" "$gpu"
  done
}

gpus=${GPUS:-1}
workers=${WORKERS:-$gpus}
if [ "$workers" -gt 1 ]; then
  for i in $(seq 0 $((workers - 1))); do gpu=$((i % gpus)) worker & done
  wait
else
  gpu= worker
fi
# One archive: the device tool brings back a few files a call.
tar -C "$keep" --exclude="queue*" -czf "$out/gla-seeds-b$batch.tgz" .
ls "$keep"
