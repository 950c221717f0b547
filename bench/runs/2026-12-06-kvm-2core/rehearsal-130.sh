#!/bin/bash
# rehearsal-130.sh SOLO_BIN MPI_BIN [N] [K]: the frontier rehearsal. Losses to N (130) tiles on one
# process, then on K (4) MPI processes (one rayon thread each, oversubscribed on this 2-core machine,
# gathers in pieces of 64 MiB, collective order checked), each with --report-json; each run resumes
# from its checkpoints when started again. Prints the per-level largest gather and each process's
# compute, and checks the K processes' tables are byte-identical to the one process's.
# Works in $WORK (default /work/runs/rehearsal, outside the work tree).
set -u
SOLO=$1; MPI=$2; N=${3:-130}; K=${4:-4}; W=${WORK:-/work/runs/rehearsal}; mkdir -p "$W"; cd "$W"
/usr/bin/time -v "$SOLO" solve --max-tiles $N --out out-k1 --report-json k1.json --quiet > k1.log 2>&1
echo "one process: exit $?"
CHOMP_COLLECTIVE_BYTES=67108864 CHOMP_CHECK_COLLECTIVES=1 RAYON_NUM_THREADS=1 /usr/bin/time -v \
  mpiexec -n $K "$MPI" solve --max-tiles $N --out out-k$K --report-json k$K.json > k$K.log 2>&1
echo "$K processes: exit $?"
python3 - k1.json k$K.json <<'PY'
import json, sys
one, many = (json.load(open(f)) for f in sys.argv[1:])
o = one["processes"][0]; ps = many["processes"]
c = [p["compute_cpu_seconds"] for p in ps]
print(f"one process: compute {o['compute_cpu_seconds']:.1f} s, peak {o['peak_kib']/2**20:.2f} GiB, wall {one['wall_seconds']:.0f} s")
print(f"{len(ps)} processes: compute " + " / ".join(f"{x:.1f}" for x in c) + f" s; largest {max(c)/o['compute_cpu_seconds']:.3f} of one; in all {sum(c)/o['compute_cpu_seconds']:.2f}; peaks " + " / ".join(f"{p['peak_kib']/2**20:.2f}" for p in ps) + f" GiB; wall {many['wall_seconds']:.0f} s")
print("level largest_gather_bytes losses")
for l in many["levels"]:
    if l["tiles"] % 5 == 0 or l["tiles"] > len(many["levels"]) - 5:
        print(l["tiles"], l["largest_gather_bytes"], l["losses"])
PY
digest() { (cd "$1" && find . -type f | LC_ALL=C sort | xargs sha256sum | sha256sum | cut -c1-16); }
a=$(digest out-k1); b=$(digest out-k$K)
[ "$a" = "$b" ] && echo "tables identical: $a" || echo "TABLES DIFFER: $a != $b"
