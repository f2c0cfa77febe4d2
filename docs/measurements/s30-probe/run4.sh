cd "$(dirname "$0")"
export LD_LIBRARY_PATH=$PWD/../lib:$LD_LIBRARY_PATH
TR=../bin/tile-run
for n in 64_64_true 128_128_true 128_32_false; do
  $TR new$n/attention_fwd.json --check --dims Z=2,H=2,N=333 --scalar scale=0.1 --seed 5 2>&1 | grep -iE "check o|error" | sed "s/^/new$n: /"
done
b() { $TR "$@" --bench --warmup 30 --iters 100 2>&1 | grep bench: | sed 's/.*median//; s/, min.*//'; }
for r in 1 2 3; do
  for n in 64_64_false 64_64_true 128_32_false 128_32_true 128_128_false 128_128_true; do
    case $n in 64*) H=32; s=0.125;; *) H=16; s=0.088;; esac
    for N in 1024 4096; do Z=$((16384 / N))
      if [ $((r % 2)) = 1 ]; then o="old new"; else o="new old"; fi
      for v in $o; do echo "r$r $v$n N=$N $(b $v$n/attention_fwd.json --dims Z=$Z,H=$H,N=$N --scalar scale=$s)"; done
    done
  done
done
