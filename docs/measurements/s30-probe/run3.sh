cd "$(dirname "$0")"
export LD_LIBRARY_PATH=$PWD/../lib:$LD_LIBRARY_PATH
TR=../bin/tile-run
for c in mm_nf x_nf; do
  $TR $c/matmul.json --check --dims M=333,N=517,K=271 --seed 3 2>&1 | grep -iE "check|error" | sed "s/^/$c ragged: /"
  $TR $c/matmul.json --check --dims M=400,N=512,K=4000 --seed 4 2>&1 | grep -iE "check|error" | sed "s/^/$c div16: /"
done
for a in anf128_128_false anf128_128_true anf64_64_false; do
  $TR $a/attention_fwd.json --check --dims Z=1,H=2,N=1000 --scalar scale=0.088 --seed 5 2>&1 | grep -iE "check c|check o|error" | sed "s/^/$a: /"
done
b() { $TR "$@" --bench --warmup 50 --iters 100 2>&1 | grep bench: | sed 's/.*median//; s/, min.*//'; }
for r in 1 2 3; do
  for d in M=4096,N=4096,K=4096 M=8192,N=8192,K=8192; do
    for c in mm mm_nf x_false_3 x_nf; do echo "r$r $c $d $(b $c/matmul.json --dims $d)"; done
  done
  for p in 128_128_false 128_128_true 64_64_false; do
    case $p in 64*) dims="Z=16,H=32,N=1024"; s=0.125;; *) dims="Z=4,H=16,N=4096"; s=0.088;; esac
    for v in af anf; do echo "r$r $v$p $dims $(b $v$p/attention_fwd.json --dims $dims --scalar scale=$s)"; done
  done
done
