cd "$(dirname "$0")"
export LD_LIBRARY_PATH=$PWD/../lib:$LD_LIBRARY_PATH
TR=../bin/tile-run
for n in $(ls -d new_* | sed 's/new_//'); do
  k=${n%%_*}; d=$(echo $n | cut -d_ -f2)
  $TR new_$n/attention_bwd_$k.json --check --dims Z=1,H=2,N=333 --scalar scale=0.1 --seed 5 2>&1 | grep -iE "check|error" | sed "s/^/new_$n: /"
done
b() { $TR "$@" --bench --warmup 20 --iters 50 2>&1 | grep bench: | sed 's/.*median//; s/, min.*//'; }
for r in 1 2; do
  for n in $(ls -d new_* | sed 's/new_//'); do
    k=${n%%_*}; d=$(echo $n | cut -d_ -f2); H=$((2048 / d))
    if [ $r = 1 ]; then o="old new"; else o="new old"; fi
    for v in $o; do echo "r$r $v $n N=4096 $(b ${v}_$n/attention_bwd_$k.json --dims Z=4,H=$H,N=4096 --scalar scale=0.088)"; done
  done
done
