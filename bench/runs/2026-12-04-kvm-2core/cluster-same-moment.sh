#!/bin/bash
# cluster-same-moment.sh BIN TAG: losses to 110 on 4 processes and on one process of the same build, started together (the same machine state); prints the compute CPU ratios and checks the tables agree
BIN=$1; TAG=$2; W=${WORK:-/tmp/chomp-cc}; mkdir -p "$W"; cd "$W"
rm -rf out-$TAG-k4 out-$TAG-k1
RAYON_NUM_THREADS=1 mpiexec -n 4 $BIN solve --max-tiles 110 --out out-$TAG-k4 --report-json $TAG-k4.json --quiet > $TAG-k4.log 2>&1 &
a=$!
RAYON_NUM_THREADS=1 $BIN solve --max-tiles 110 --out out-$TAG-k1 --report-json $TAG-k1.json --quiet > $TAG-k1.log 2>&1 &
b=$!
wait $a $b
python3 - $TAG <<'PY'
import json,sys
t=sys.argv[1]
four=json.load(open(f'{t}-k4.json'))['processes']; one=json.load(open(f'{t}-k1.json'))['processes'][0]
c=[p['compute_cpu_seconds'] for p in four]; e=[p['enumeration_steps'] for p in four]; m=[p['peak_kib'] for p in four]
print(t, 'one %.2f s; four %s; largest %.3f; sum %.2f; enum %.3f; peak %.3f (%s vs %d MiB)' % (one['compute_cpu_seconds'], ' / '.join('%.2f'%x for x in c), max(c)/one['compute_cpu_seconds'], sum(c)/one['compute_cpu_seconds'], max(e)/one['enumeration_steps'], max(m)/one['peak_kib'], '/'.join(str(x//1024) for x in m), one['peak_kib']//1024))
PY
diff -rq out-$TAG-k4 out-$TAG-k1 && echo "$TAG tables identical"
