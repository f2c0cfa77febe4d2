cd "$(dirname "$0")"
out=${OUT:-/tmp}
timeout 400 ncu --clock-control none --profile-from-start off --section SourceCounters --section WarpStateStats --section SpeedOfLight -o $out/peers -f python3 ncu_peers.py 2>&1 | grep -v "^==PROF==" | tail -3
ncu -i $out/peers.ncu-rep --page source --print-source sass --csv > $out/peers-source.csv 2>&1
ls -la $out; head -c 1500 $out/peers-source.csv
