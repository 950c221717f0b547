#!/usr/bin/env bash
# Memory of K MPI processes on one node: samples every process's resident
# memory (RSS) and proportional share (PSS: a page shared by several
# processes divided among them, so the shares add up to what the node
# holds) from /proc/PID/smaps_rollup while the job runs, and prints each
# process's largest RSS and PSS and the largest node total. The Grundy values
# of smaller levels are mapped once per node, so the total stays near one
# process's copy instead of K copies.
#
# Usage: scripts/mpi-memory.sh [K] [MAX_TILES] [GRUNDY_MAX_TILES] [BINARY]
#   (default 4 processes, losses 82 and Grundy values 82; BINARY defaults to
#   this checkout's MPI build, e.g. pass an older build to compare)
set -euo pipefail
cd "$(dirname "$0")/.."
K=${1:-4}
N=${2:-82}
G=${3:-82}
BIN=${4:-}
if [ -z "$BIN" ]; then
  cargo build --release --locked --quiet --features mpi --target-dir target/mpi
  BIN=$PWD/target/mpi/release/chomp
fi
T=$(mktemp -d -p "$PWD/out" 2>/dev/null || mktemp -d)
trap 'rm -rf "$T"' EXIT
RAYON_NUM_THREADS=1 timeout 3600 mpiexec -n "$K" "$BIN" solve --max-tiles "$N" --grundy-max-tiles "$G" --out "$T/run" 2>"$T/run.log" &
launcher=$!
# Sample until the job ends: one line per sample, "pid rss_kib pss_kib" per process.
while kill -0 "$launcher" 2>/dev/null; do
  line=""
  for pid in $(pgrep -f "$BIN solve --max-tiles $N --grundy-max-tiles $G --out $T/run" || true); do
    [ "$(readlink "/proc/$pid/exe" 2>/dev/null)" = "$BIN" ] || continue
    f=/proc/$pid/smaps_rollup
    [ -r "$f" ] || continue
    read -r rss pss < <(awk '/^Rss:/{r=$2} /^Pss:/{p=$2} END{print r+0, p+0}' "$f" 2>/dev/null || echo "0 0")
    line="$line $pid:$rss:$pss"
  done
  [ -n "$line" ] && echo "$line" >>"$T/samples"
  sleep 0.2
done
wait "$launcher"
grep -E "^process|^memory at the end|^done" "$T/run.log" || true
python3 - "$T/samples" "$K" <<'EOF'
import sys
best = {}
total_pss = 0
for line in open(sys.argv[1]):
    procs = [p.split(":") for p in line.split()]
    procs = [(p, int(r), int(s)) for p, r, s in procs]
    if len(procs) < int(sys.argv[2]):
        continue  # start-up or shutdown: not every process is there
    total_pss = max(total_pss, sum(s for _, _, s in procs))
    for p, r, s in procs:
        b = best.setdefault(p, [0, 0])
        b[0], b[1] = max(b[0], r), max(b[1], s)
for i, (p, (r, s)) in enumerate(sorted(best.items(), key=lambda kv: int(kv[0]))):
    print(f"pid {p}: largest RSS {r / 1024:.0f} MiB, largest PSS {s / 1024:.0f} MiB")
print(f"sum of largest RSS {sum(r for r, _ in best.values()) / 1024:.0f} MiB; largest node total (sum of PSS at one moment) {total_pss / 1024:.0f} MiB")
EOF
