#!/usr/bin/env bash
# MPI tests: the same job on 1, 2, 3 and 4 processes (oversubscribed) gives
# byte-identical tables, summary and manifest; a killed process ends the job
# within seconds and a rerun resumes to the same bytes; a panic or an error
# on one process (CHOMP_TEST_PANIC, CHOMP_TEST_ERROR) ends all of them within
# 30 s with one line naming it; SIGUSR1 to one process stops all of them
# after the same level with a checkpoint, and a rerun resumes to the same
# bytes; processes started
# with different jobs, options or tunables are refused within 90 s with one
# line naming the difference; every gather in pieces of 64 KiB with the
# collectives' order checked gives the same bytes; verify --full's proof on
# 3 processes proves what one proves. Every mpiexec runs under
# `timeout`.
#
# Usage: scripts/mpi-tests.sh   (needs mpich, libmpich-dev, libclang; see .ci/run)
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR=never
cargo build --release --locked --features mpi --target-dir target/mpi
cargo build --release --locked
MPI_BIN=$PWD/target/mpi/release/chomp
SOLO_BIN=$PWD/target/release/chomp
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0
fail=0
ok() { echo "ok: $*"; pass=$((pass + 1)); }
bad() { echo "FAILED: $*"; fail=$((fail + 1)); }
digest() { (cd "$1" && find . -type f | LC_ALL=C sort | xargs sha256sum | sha256sum | cut -c1-16); }
MPIEXEC=(timeout --kill-after=10 300 mpiexec)

# 1. Byte-identical tables for 1..4 processes (and the build without MPI).
for job in "--max-tiles 60 --grundy-max-tiles 40" "--rows 8 --cols 15 --grundy"; do
  name=$(echo "$job" | tr -dc 'a-z0-9')
  "$SOLO_BIN" solve $job --out "$T/$name-solo" --quiet
  want=$(digest "$T/$name-solo")
  for k in 1 2 3 4; do
    RAYON_NUM_THREADS=1 "${MPIEXEC[@]}" -n $k "$MPI_BIN" solve $job --out "$T/$name-$k" 2>"$T/$name-$k.log"
    got=$(digest "$T/$name-$k")
    if [ "$got" = "$want" ]; then ok "$job on $k processes: identical to the single process ($got)"; else bad "$job on $k processes: $got != $want"; fi
  done
  grep -h "balance" "$T/$name-4.log" || true
  # The 4 processes run on this one node: each reports node 0 (the node's
  # first process), whose one copy of the Grundy values they all map.
  nodes=$(grep -c "^process [0-9]* (node 0)" "$T/$name-4.log" || true)
  if [ "$nodes" = 4 ]; then ok "$job on 4 processes: one node sharing its Grundy files"; else bad "$job on 4 processes: $nodes of 4 processes report node 0"; fi
  grep -h "memory at the end" "$T/$name-4.log" || true
done

# 1b. The build without MPI, started by mpiexec, refuses at once (exit 2,
# one line) instead of running K lone copies into one directory.
if "${MPIEXEC[@]}" -n 2 "$SOLO_BIN" solve --max-tiles 20 --out "$T/lone" >"$T/lone.out" 2>"$T/lone.log"; then
  bad "the build without MPI under mpiexec -n 2 ran"
elif grep -q "built without MPI, but mpiexec started 2 processes" "$T/lone.log" && [ ! -e "$T/lone" ]; then
  ok "the build without MPI under mpiexec -n 2: refused, nothing written"
else
  bad "the build without MPI under mpiexec -n 2: $(head -2 "$T/lone.log")"
fi

# 1a. The enumeration is divided: each of 4 processes enumerates fewer than
# half the parents one process does (it skips the parents whose ranks lie
# outside its share), and --report-json lists every process's work.
"$SOLO_BIN" solve --max-tiles 70 --out "$T/enum-1" --quiet --report-json "$T/enum-1.json"
RAYON_NUM_THREADS=1 "${MPIEXEC[@]}" -n 4 "$MPI_BIN" solve --max-tiles 70 --out "$T/enum-4" --quiet --report-json "$T/enum-4.json"
if python3 - "$T/enum-1.json" "$T/enum-4.json" <<'PY'
import json, sys
one, four = (json.load(open(f)) for f in sys.argv[1:])
solo = one["processes"][0]["enumeration_steps"]
procs = four["processes"]
keys = ["process", "node", "marks", "enumeration_steps", "scanned", "evaluated", "lookups",
        "compute_seconds", "compute_cpu_seconds", "wait_seconds", "cpu_seconds", "peak_kib"]
assert len(procs) == 4 and all(all(k in p for k in keys) for p in procs), procs
steps = [p["enumeration_steps"] for p in procs]
marks = sum(p["marks"] for p in procs)
print(f"enumeration steps: 1 process {solo:,}; 4 processes {steps} (most {max(steps) / solo:.2f} of one); marks {marks:,} vs {one['processes'][0]['marks']:,}")
assert max(steps) < solo / 2, "the enumeration is not divided"
assert marks == one["processes"][0]["marks"], "the processes' marks differ from one process's"
assert len(four["levels"]) == 70
PY
then ok "4 processes divide the enumeration; --report-json lists each process's work"; else bad "enumeration not divided, or --report-json incomplete"; fi

# 1b. Mark bits held in windows (--max-memory) on 2 processes: the same bytes.
"$SOLO_BIN" solve --max-tiles 70 --out "$T/win-solo" --quiet
RAYON_NUM_THREADS=1 "${MPIEXEC[@]}" -n 2 "$MPI_BIN" solve --max-tiles 70 --max-memory 3M --out "$T/win-2" 2>"$T/win-2.log"
windows=$(grep -c "^window: the marks of levels" "$T/win-2.log" || true)
if [ "$windows" -ge 2 ] && [ "$(digest "$T/win-2")" = "$(digest "$T/win-solo")" ]; then
  ok "2 processes in $windows windows: identical to the single process"
else
  bad "2 processes in windows ($windows windows): $(digest "$T/win-2") != $(digest "$T/win-solo")"
fi

# 1c. Two threads in each of 2 processes: each process's threads mark their
# own copies of its share of the farthest levels; the same bytes.
RAYON_NUM_THREADS=2 "${MPIEXEC[@]}" -n 2 "$MPI_BIN" solve --max-tiles 70 --out "$T/threads-2" 2>"$T/threads-2.log"
if [ "$(digest "$T/threads-2")" = "$(digest "$T/win-solo")" ]; then
  ok "2 processes of 2 threads (thread copies): identical to the single process"
else
  bad "2 processes of 2 threads: $(digest "$T/threads-2") != $(digest "$T/win-solo")"
fi

# 1d. Winning moves counted on 3 processes of 2 threads (the second pushes
# counted in each share, summed, checked against the Grundy values to 50):
# the same bytes, counts included, as one process.
job="--max-tiles 64 --grundy-max-tiles 50 --count-moves"
"$SOLO_BIN" solve $job --out "$T/moves-solo" --quiet
RAYON_NUM_THREADS=2 "${MPIEXEC[@]}" -n 3 "$MPI_BIN" solve $job --out "$T/moves-3" 2>"$T/moves-3.log"
if [ "$(digest "$T/moves-3")" = "$(digest "$T/moves-solo")" ] && grep -q wins_several_moves "$T/moves-3/summary.csv"; then
  ok "winning moves counted on 3 processes: identical to the single process"
else
  bad "winning moves counted on 3 processes: $(digest "$T/moves-3") != $(digest "$T/moves-solo")"
fi

# 2. A process killed mid-run ends the whole job quickly, non-zero; a rerun resumes to the same bytes.
# Kill once the manifest shows some finished levels (polled, not a fixed sleep:
# the engine's speed must not decide whether the kill lands mid-run).
job="--max-tiles 88 --grundy-max-tiles 66"
"$SOLO_BIN" solve $job --out "$T/kill-clean" --quiet
want=$(digest "$T/kill-clean")
"${MPIEXEC[@]}" -n 2 "$MPI_BIN" solve $job --out "$T/kill" --quiet 2>"$T/kill.log" &
launcher=$!
levels() { python3 -c "import json;print(json.load(open('$T/kill/manifest.json'))['levels_complete'])" 2>/dev/null || echo 0; }
victim=""
for _ in $(seq 1 600); do
  if ! kill -0 "$launcher" 2>/dev/null; then break; fi
  if [ "$(levels)" -ge 40 ]; then
    victim=$(pgrep -f "$MPI_BIN solve $job --out $T/kill" | tail -n 1 || true)
    break
  fi
  sleep 0.05
done
if [ -z "$victim" ]; then
  bad "no MPI process found to kill: the job ended before level 40 or never started ($(levels) levels)"
  wait "$launcher" || true
else
  killed_at=$(date +%s%N)
  kill -9 "$victim"
  set +e
  wait "$launcher"
  rc=$?
  set -e
  took_ms=$((($(date +%s%N) - killed_at) / 1000000))
  took="$((took_ms / 1000)).$(printf %03d $((took_ms % 1000)))"
  if [ "$rc" -ne 0 ] && [ "$took_ms" -lt 10000 ]; then ok "killed process: job exited with $rc after ${took}s"; else bad "killed process: exit $rc after ${took}s"; fi
  done_levels=$(levels)
  "${MPIEXEC[@]}" -n 2 "$MPI_BIN" solve $job --out "$T/kill" 2>"$T/resume.log"
  got=$(digest "$T/kill")
  if grep -q "resuming after level" "$T/resume.log" && [ "$got" = "$want" ]; then
    ok "rerun resumed after level $done_levels and matches a clean run ($got)"
  else
    bad "rerun after kill: $got != $want (or did not resume)"
  fi
fi

# 2a. A panic on one process, then an error on another, ends the whole job
# within 30 s, non-zero, with one line naming the process.
failing() { # failing NAME KNOB PATTERN
  local name=$1 knob=$2 pattern=$3 rc t0 took_ms
  t0=$(date +%s%N)
  set +e
  env "$knob" RAYON_NUM_THREADS=1 timeout --kill-after=5 60 mpiexec -n 3 "$MPI_BIN" solve --max-tiles 80 --out "$T/$name" --quiet 2>"$T/$name.log"
  rc=$?
  set -e
  took_ms=$((($(date +%s%N) - t0) / 1000000))
  if [ $rc -ne 0 ] && [ $rc -ne 124 ] && [ $rc -ne 137 ] && [ $took_ms -lt 30000 ] && grep -q -- "$pattern" "$T/$name.log"; then
    ok "$knob: the job exited with $rc after $((took_ms / 1000)).$(printf %03d $((took_ms % 1000)))s: $(grep -- "$pattern" "$T/$name.log" | head -1 | cut -c1-150)"
  else
    bad "$knob: exit $rc after ${took_ms} ms"; cat "$T/$name.log"
  fi
}
failing panic CHOMP_TEST_PANIC=1:40 "^error: process 1 panicked at .*process 1 panics at the start of level 40"
failing error CHOMP_TEST_ERROR=2:40 "^error: process 2: CHOMP_TEST_ERROR: process 2 stops at the start of level 40"

# 2b. SIGUSR1 to one of 3 processes (as Slurm sends before a time limit):
# all stop after the same level with status 75 and a checkpoint of it; the
# lock is released, and a rerun resumes there to the bytes of a clean run.
job="--max-tiles 88 --grundy-max-tiles 66"
set +e
RAYON_NUM_THREADS=1 "${MPIEXEC[@]}" -n 3 "$MPI_BIN" solve $job --out "$T/stop" 2>"$T/stop.log" &
launcher=$!
set -e
stop_levels() { python3 -c "import json;print(json.load(open('$T/stop/manifest.json'))['levels_complete'])" 2>/dev/null || echo 0; }
asked=""
for _ in $(seq 1 600); do
  if ! kill -0 "$launcher" 2>/dev/null; then break; fi
  if [ "$(stop_levels)" -ge 40 ]; then
    asked=$(pgrep -f "$MPI_BIN solve $job --out $T/stop" | tail -n 1 || true)
    break
  fi
  sleep 0.05
done
if [ -z "$asked" ]; then
  bad "no MPI process found to signal: the job ended before level 40 or never started ($(stop_levels) levels)"
  wait "$launcher" || true
else
  kill -USR1 "$asked"
  set +e
  wait "$launcher"
  rc=$?
  set -e
  line=$(grep "^stopped on request after level" "$T/stop.log" || true)
  at=$(echo "$line" | sed -n 's/^stopped on request after level \([0-9]*\);.*/\1/p')
  if [ "$rc" -eq 75 ] && [ -n "$at" ] && [ "$(stop_levels)" = "$at" ] && [ ! -e "$T/stop/.lock" ]; then
    ok "SIGUSR1 to one process: every process stopped after level $at with status 75"
  else
    bad "SIGUSR1: exit $rc, '$line', manifest at level $(stop_levels)"; tail -5 "$T/stop.log"
  fi
  RAYON_NUM_THREADS=1 "${MPIEXEC[@]}" -n 3 "$MPI_BIN" solve $job --out "$T/stop" 2>"$T/stop-resume.log"
  if grep -q "resuming after level $at" "$T/stop-resume.log" && [ "$(digest "$T/stop")" = "$want" ]; then
    ok "the stopped job resumed after level $at and matches a clean run"
  else
    bad "the stopped job's rerun: $(digest "$T/stop") != $want (or did not resume after level $at)"
  fi
fi

# 3. Processes started differently are refused at once, with one line
# naming what differs: another job, another option, another tunable.
refused() { # refused NAME PATTERN -- MPMD arguments...
  local name=$1 pattern=$2
  shift 3
  local t0 rc took
  t0=$(date +%s)
  set +e
  timeout --kill-after=10 90 mpiexec "$@" 2>"$T/$name.log"
  rc=$?
  set -e
  took=$(($(date +%s) - t0))
  if [ $rc -ne 0 ] && [ $rc -ne 124 ] && [ $took -lt 90 ] && grep -q -- "$pattern" "$T/$name.log" && [ "$(grep -c '^error' "$T/$name.log")" = 1 ]; then
    ok "$name refused in ${took}s (exit $rc): $(grep '^error' "$T/$name.log" | cut -c1-150)"
  else
    bad "$name: exit $rc after ${took}s"; cat "$T/$name.log"
  fi
}
refused "mismatched jobs" "another job (universe" -- -n 1 "$MPI_BIN" solve --max-tiles 30 --out "$T/mismatch" : -n 1 "$MPI_BIN" solve --max-tiles 31 --out "$T/mismatch"
refused "another --max-memory" "another --max-memory than process 0" -- -n 1 "$MPI_BIN" solve --max-tiles 60 --max-memory 1G --out "$T/mem" : -n 1 "$MPI_BIN" solve --max-tiles 60 --out "$T/mem"
# Another engine tunable (the epoch size changes the levels' windows, hence
# the collectives).
refused "another CHOMP_EPOCH_BYTES" "another CHOMP_EPOCH_BYTES" -- -n 1 "$MPI_BIN" solve --max-tiles 30 --out "$T/tunable" : -n 1 env CHOMP_EPOCH_BYTES=100000 "$MPI_BIN" solve --max-tiles 30 --out "$T/tunable"

# 4. Every message in pieces of at most 64 KiB (the many-piece path of every
# gather and OR), every collective's order checked: 4 processes on losses to
# 95 with Grundy values to 60 write one process's bytes.
job="--max-tiles 95 --grundy-max-tiles 60"
"$SOLO_BIN" solve $job --out "$T/pieces-solo" --quiet
CHOMP_COLLECTIVE_BYTES=65536 CHOMP_CHECK_COLLECTIVES=1 RAYON_NUM_THREADS=1 "${MPIEXEC[@]}" -n 4 "$MPI_BIN" solve $job --out "$T/pieces-4" --quiet --report-json "$T/pieces-4.json" 2>"$T/pieces-4.log"
largest=$(python3 -c "import json,sys; print(max(l['largest_gather_bytes'] for l in json.load(open(sys.argv[1]))['levels']))" "$T/pieces-4.json" 2>/dev/null || echo 0)
rounds=$(python3 -c "import json,sys; print(max(l['gather_rounds'] for l in json.load(open(sys.argv[1]))['levels']))" "$T/pieces-4.json" 2>/dev/null || echo 0)
if [ "$(digest "$T/pieces-4")" = "$(digest "$T/pieces-solo")" ] && [ "$largest" -gt $((4 * 65536)) ] && [ "$rounds" -ge $(( (largest + 4 * 65536 - 1) / (4 * 65536) )) ]; then
  ok "4 processes, pieces of 64 KiB (largest gather $largest bytes in $rounds rounds), order checked: identical to the single process"
else
  bad "4 processes in pieces of 64 KiB: $(digest "$T/pieces-4") != $(digest "$T/pieces-solo") (largest gather $largest)"; tail -5 "$T/pieces-4.log"
fi

# 5. verify --full's proof split among 3 processes (order checked): every
# level proven, one progress line each (process 0 reports). Damaged copies
# on several processes: cluster::the_proof_on_several_processes_finds_what_one_finds.
"$SOLO_BIN" solve --max-tiles 60 --grundy-max-tiles 40 --out "$T/proof" --quiet
if CHOMP_CHECK_COLLECTIVES=1 RAYON_NUM_THREADS=1 "${MPIEXEC[@]}" -n 3 "$MPI_BIN" verify --tables "$T/proof" --full --samples 0 >"$T/proof.out" 2>"$T/proof.log" \
  && grep -q "levels 1 to 60 proven from the smaller ones" "$T/proof.out" && [ "$(grep -c '^proof: level' "$T/proof.log")" = 60 ]; then
  ok "verify --full on 3 processes: levels 1 to 60 proven"
else
  bad "verify --full on 3 processes"; cat "$T/proof.out"; tail -5 "$T/proof.log"
fi

# 6. Nodes simulated on this machine (CHOMP_TEST_NODE_PROCESSES=2: 4
# processes as 2 nodes of 2, each node with its own scratch and Grundy
# file, its first process among the leaders): one process's bytes, and
# every process reports its node's first process.
job="--max-tiles 56 --grundy-max-tiles 40"
"$SOLO_BIN" solve $job --out "$T/nodes-solo" --quiet
CHOMP_TEST_NODE_PROCESSES=2 CHOMP_CHECK_COLLECTIVES=1 RAYON_NUM_THREADS=1 "${MPIEXEC[@]}" -n 4 "$MPI_BIN" solve $job --out "$T/nodes-4" --quiet --report-json "$T/nodes-4.json" 2>"$T/nodes-4.log"
nodes=$(python3 -c "import json,sys; print(','.join(str(p['node']) for p in json.load(open(sys.argv[1]))['processes']))" "$T/nodes-4.json" 2>/dev/null || echo none)
if [ "$(digest "$T/nodes-4")" = "$(digest "$T/nodes-solo")" ] && [ "$nodes" = "0,0,2,2" ]; then
  ok "4 processes as 2 simulated nodes of 2 (nodes $nodes): identical to the single process"
else
  bad "4 processes as 2 simulated nodes: nodes $nodes, $(digest "$T/nodes-4") != $(digest "$T/nodes-solo")"; tail -5 "$T/nodes-4.log"
fi

# 7. The cluster plans of docs/cluster.md under mpiexec: 160 tiles on 5
# processes and 170 on 8, --max-memory 60G each, are accepted (exit 0), the
# plan is printed once (by process 0), and every process's estimated peak
# is at most 60 GiB. (--ignore-estimate: the plan's 37 GiB of tables are
# for the cluster's file system, not this machine's /tmp, which the check
# of a job far beyond this machine would price them against.)
for plan in "160 5" "170 8"; do
  read -r tiles k <<<"$plan"
  if RAYON_NUM_THREADS=32 "${MPIEXEC[@]}" -n "$k" "$MPI_BIN" solve --max-tiles "$tiles" --out "$T/plan-$tiles" --dry-run --max-memory 60G --ignore-estimate \
      --report-json "$T/plan-$tiles.json" >"$T/plan-$tiles.out" 2>"$T/plan-$tiles.log" \
    && [ "$(grep -c '^estimate for levels' "$T/plan-$tiles.log")" = 1 ] \
    && python3 - "$T/plan-$tiles.json" "$k" <<'PY'
import json, sys
plan, k = json.load(open(sys.argv[1])), int(sys.argv[2])
peaks = [p["estimated_peak_kib"] for p in plan["processes"]]
assert len(peaks) == k, peaks
assert max(peaks) <= 60 << 20, peaks
print(f"  peaks {min(peaks) / 2**20:.1f}-{max(peaks) / 2**20:.1f} GiB, windows {plan['windows']}")
PY
  then
    ok "dry run of losses to $tiles on $k processes with --max-memory 60G: one plan, every process within 60 GiB"
  else
    bad "dry run of losses to $tiles on $k processes"; tail -5 "$T/plan-$tiles.log"
  fi
done

echo "mpi tests: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
