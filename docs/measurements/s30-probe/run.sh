#!/usr/bin/env bash
# Probe run: GEMM ragged/pitch split and ncu; attention causal order.
cd "$(dirname "$0")"
export LD_LIBRARY_PATH=$PWD/../lib:$LD_LIBRARY_PATH
TR=../bin/tile-run
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader
b() { echo "== $*"; $TR "$@" --bench --warmup 20 --iters 100 2>&1 | grep -iv "^$" | tail -3; }
for cfg in mm mm4 mm128; do
  for d in M=4096,N=4096,K=4096 M=4000,N=4000,K=4000 M=4000,N=4000,K=4096 M=4096,N=4096,K=4000 M=4000,N=4096,K=4096 M=4096,N=4000,K=4096 M=8192,N=8192,K=8192; do
    b $cfg/matmul.json --dims $d
  done
done
for c in 64_128_64 128_128_32 128_128_64 128_128_128; do
  d=${c%%_*}; if [ $d = 64 ]; then H=32; s=0.125; else H=16; s=0.088; fi
  for N in 1024 4096; do Z=$((16384 / N))
    b a${c}/attention_fwd.json --dims Z=$Z,H=$H,N=$N --scalar scale=$s
    b a${c}c/attention_fwd.json --dims Z=$Z,H=$H,N=$N --scalar scale=$s
    b r${c}c/attention_fwd.json --dims Z=$Z,H=$H,N=$N --scalar scale=$s
  done
done
NCU="ncu --clock-control none --launch-skip 3 --launch-count 1 --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section Occupancy --section SchedulerStats"
for d in M=4096,N=4096,K=4096 M=4000,N=4000,K=4000; do
  echo "== ncu mm $d"; timeout 120 $NCU $TR mm/matmul.json --dims $d --bench --warmup 2 --iters 2 2>&1 | grep -v "^==PROF==" | grep -E "^\s+[A-Z]" | head -80
done
