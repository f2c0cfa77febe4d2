cd "$(dirname "$0")"
export LD_LIBRARY_PATH=$PWD/../lib:$LD_LIBRARY_PATH
TR=../bin/tile-run
for c in mm x_true_3 x_false_3 x_true_4; do
  $TR $c/matmul.json --check --dims M=333,N=517,K=271 --seed 3 2>&1 | grep -iE "check|error" | sed "s/^/$c ragged: /"
  $TR $c/matmul.json --check --dims M=400,N=512,K=4000 --seed 4 2>&1 | grep -iE "check|error" | sed "s/^/$c div16: /"
done
for r in 1 2 3; do
  for d in M=4096,N=4096,K=4096 M=4000,N=4000,K=4000 M=8192,N=8192,K=8192; do
    for c in mm x_true_3 x_false_3 x_true_4; do
      echo "r$r $c $d $($TR $c/matmul.json --dims $d --bench --warmup 50 --iters 100 2>&1 | grep bench: | sed 's/.*median//; s/, min.*TFLOP/ TFLOP/; s/(warmup.*//')"
    done
  done
done
