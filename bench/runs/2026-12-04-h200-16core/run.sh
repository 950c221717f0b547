#!/bin/bash
# Device measurement: 1, 2, 4 MPI processes (one thread each) on losses to 110.
cd "$(dirname "$0")" && tar xzf b.tgz && cd ..
B=$PWD/.devmpi/mpibundle
export PATH=$B:$PATH LD_LIBRARY_PATH=$B UCX_MODULE_DIR=$B/ucx HYDRA_LAUNCHER=fork
nproc; grep -m1 "model name" /proc/cpuinfo; free -g | head -2
GOOD=none
for v in "X=1" "UCX_TLS=sm,self" "UCX_TLS=tcp,self" "MPIR_CVAR_CH4_NETMOD=ofi"; do
  rm -rf /tmp/s
  if env $v RAYON_NUM_THREADS=1 timeout 60 $B/mpiexec.hydra -n 2 $B/chomp-new solve --max-tiles 30 --out /tmp/s --quiet > /tmp/smoke.log 2>&1; then GOOD="$v"; break; fi
  echo "smoke with $v failed:"; tail -5 /tmp/smoke.log
done
echo "MPI env: $GOOD"; [ "$GOOD" = none ] && exit 1
run() { # name bin K
  local s=$(date +%s.%N)
  env $GOOD RAYON_NUM_THREADS=1 timeout 200 $B/mpiexec.hydra -n $3 $B/$2 solve --max-tiles 110 --out /tmp/o-$1 --report-json $OUT/r-$1.json --quiet > $OUT/log-$1.txt 2>&1
  echo "$1 rc=$? $(echo "$(date +%s.%N) - $s" | bc 2>/dev/null)"
}
run new4 chomp-new 4
run new1 chomp-new 1
run base4 chomp-base 4
run new2 chomp-new 2
for n in new4 base4 new2; do cmp -s /tmp/o-new1/manifest.json /tmp/o-$n/manifest.json && echo "$n manifest identical to new1" || echo "$n MANIFEST DIFFERS"; done
python3 - $OUT <<'PY'
import json, sys, os
for n in ["new1", "new2", "new4", "base4"]:
    f = os.path.join(sys.argv[1], f"r-{n}.json")
    if not os.path.exists(f): print(n, "missing"); continue
    r = json.load(open(f))
    print(n, "wall %.1f" % r["wall_seconds"])
    for p in r["processes"]:
        print("  %d: compute %.1f (cpu %.1f) wait %.1f cpu %.1f enum %d M marks %d M peak %d MiB" % (p["process"], p["compute_seconds"], p.get("compute_cpu_seconds", -1), p["wait_seconds"], p["cpu_seconds"], p["enumeration_steps"] / 1e6, p["marks"] / 1e6, p["peak_kib"] / 1024))
PY
run base1 chomp-base 1
cmp -s /tmp/o-new1/manifest.json /tmp/o-base1/manifest.json && echo "base1 identical"
python3 -c "import json;r=json.load(open('$OUT/r-base1.json'));p=r['processes'][0];print('base1 wall %.1f compute %.1f'%(r['wall_seconds'],p['compute_seconds']))"
