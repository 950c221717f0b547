#!/bin/bash
# cluster-ab.sh A B N K TAG: the K processes of build A and the K processes
# of build B, losses to N tiles, started together (one machine state); prints
# each process's compute_cpu_seconds and enumeration steps, and checks that
# the two builds' tables agree. Works in $WORK (default /tmp/bal).
A=$1; B=$2; N=$3; K=$4; T=$5; W=${WORK:-/tmp/bal}; mkdir -p "$W"; cd "$W"
rm -rf out-$T-a out-$T-b
RAYON_NUM_THREADS=1 mpiexec -n $K $A solve --max-tiles $N --out out-$T-a --report-json $T-a.json --quiet > $T-a.log 2>&1 &
x=$!
RAYON_NUM_THREADS=1 mpiexec -n $K $B solve --max-tiles $N --out out-$T-b --report-json $T-b.json --quiet > $T-b.log 2>&1 &
y=$!
wait $x $y
for s in a b; do python3 - "$W/$T-$s.json" "$T $s" <<'PY'
import json, sys
ps = json.load(open(sys.argv[1]))['processes']
c = [p['compute_cpu_seconds'] for p in ps]
print(sys.argv[2], ' / '.join('%.2f' % x for x in c), 'max %.2f sum %.2f' % (max(c), sum(c)),
      'enum', ' '.join(str(p['enumeration_steps']) for p in ps))
PY
done
[ -d out-$T-a ] && [ -d out-$T-b ] || { echo "$T: a run left no tables (see $T-a.log, $T-b.log)"; exit 1; }
diff -rq out-$T-a out-$T-b | grep -v report && echo "$T TABLES DIFFER" || echo "$T tables identical"
