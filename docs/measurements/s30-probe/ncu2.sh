cd "$(dirname "$0")"
export LD_LIBRARY_PATH=$PWD/../lib:$LD_LIBRARY_PATH
out=${OUT:-/tmp}
for c in mm x_false_3; do
  timeout 200 ncu --clock-control none --launch-skip 3 --launch-count 1 --section SourceCounters --section WarpStateStats --section SpeedOfLight -o $out/$c -f ../bin/tile-run $c/matmul.json --dims M=4096,N=4096,K=4096 --bench --warmup 3 --iters 2 > /dev/null 2>&1
  ncu -i $out/$c.ncu-rep --page source --print-source sass --csv > $out/$c-source.csv 2>&1
  ncu -i $out/$c.ncu-rep 2>&1 | grep -E "Elapsed Cycles|Duration|SM Frequency"
done
ls -la $out
