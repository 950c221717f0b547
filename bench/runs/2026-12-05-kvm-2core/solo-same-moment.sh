#!/bin/bash
# solo-ab.sh A B N TAG: one process of each build at the same time
A=$1; B=$2; N=$3; T=$4; cd "${WORK:-/tmp}"
rm -rf out-$T-a out-$T-b
RAYON_NUM_THREADS=1 /usr/bin/time -v $A solve --max-tiles $N --out out-$T-a --report-json $T-a.json --quiet > $T-a.log 2>&1 &
x=$!
RAYON_NUM_THREADS=1 /usr/bin/time -v $B solve --max-tiles $N --out out-$T-b --report-json $T-b.json --quiet > $T-b.log 2>&1 &
y=$!
wait $x $y
for s in a b; do python3 -c "
import json,sys
p=json.load(open('${WORK:-/tmp}/$T-$s.json'))['processes'][0]
print('$T $s compute_cpu %.2f peak %d MiB wall %.1f' % (p['compute_cpu_seconds'], p['peak_kib']//1024, json.load(open('${WORK:-/tmp}/$T-$s.json'))['wall_seconds']))
"; done
diff -rq out-$T-a out-$T-b | grep -v report; echo "$T diff done"
