#!/bin/bash
# cluster-same-moment-rss.sh BIN TAG [N]: losses to N (110) on 4 processes and on one process of the same build, started together (one machine state), with each process's RssAnon/RssFile/RssShmem (MiB) sampled every second into TAG-rss.log; prints the compute ratios and checks the tables agree. Works in $WORK (default /tmp/bal).
BIN=$1; TAG=$2; N=${3:-110}; W=${WORK:-/tmp/bal}; mkdir -p "$W"; cd "$W"
rm -rf out-$TAG-k4 out-$TAG-k1
RAYON_NUM_THREADS=1 mpiexec -n 4 $BIN solve --max-tiles $N --out out-$TAG-k4 --report-json $TAG-k4.json --quiet > $TAG-k4.log 2>&1 &
a=$!
RAYON_NUM_THREADS=1 $BIN solve --max-tiles $N --out out-$TAG-k1 --report-json $TAG-k1.json --quiet > $TAG-k1.log 2>&1 &
b=$!
( sleep 2; t0=$(date +%s.%N); while kill -0 $b 2>/dev/null || kill -0 $a 2>/dev/null; do
  for p in $(pgrep -f "out-$TAG-k" | sort -n); do
    [ -r /proc/$p/status ] && awk -v p=$p -v t=$(date +%s.%N) -v t0=$t0 -v c="$(tr '\0' ' ' < /proc/$p/cmdline | grep -o 'out-[^ ]*')" '/RssAnon|RssFile|RssShmem/{a[$1]=$2} END{if(a["RssAnon:"]>0) printf "%.1f %s %s %d %d %d\n", t-t0, p, c, a["RssAnon:"]/1024, a["RssFile:"]/1024, a["RssShmem:"]/1024}' /proc/$p/status
  done; sleep 1; done ) > $TAG-rss.log 2>/dev/null &
wait $a $b
python3 - $TAG <<'PY'
import json,sys
t=sys.argv[1]
four=json.load(open(f'{t}-k4.json'))['processes']; one=json.load(open(f'{t}-k1.json'))['processes'][0]
c=[p['compute_cpu_seconds'] for p in four]; e=[p['enumeration_steps'] for p in four]; m=[p['peak_kib'] for p in four]
print(t, 'one %.2f s; four %s; largest %.3f; sum %.2f; bal %.3f; enum %.3f; peak %.3f (%s vs %d MiB)' % (one['compute_cpu_seconds'], ' / '.join('%.2f'%x for x in c), max(c)/one['compute_cpu_seconds'], sum(c)/one['compute_cpu_seconds'], max(c)/(sum(c)/4), max(e)/one['enumeration_steps'], max(m)/one['peak_kib'], '/'.join(str(x//1024) for x in m), one['peak_kib']//1024))
PY
[ -d out-$TAG-k4 ] && [ -d out-$TAG-k1 ] || { echo "$TAG: a run left no tables (see $TAG-k4.log, $TAG-k1.log)"; exit 1; }
diff -rq out-$TAG-k4 out-$TAG-k1 | grep -v report && echo "$TAG TABLES DIFFER" || echo "$TAG tables identical"
