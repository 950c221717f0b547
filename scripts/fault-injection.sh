#!/usr/bin/env bash
# Fault injection: runs killed with SIGKILL at random moments (up to three
# times each), then resumed to completion; every trial must end with exactly
# the bytes of a clean run and pass `chomp verify`.
#
# Usage: scripts/fault-injection.sh [TRIALS] [MAX_TILES] [GRUNDY_MAX_TILES] [EXTRA_FLAGS]
#   CI runs short forms: scripts/fault-injection.sh 6 60 45
#                        scripts/fault-injection.sh 4 60 45 "--shard-positions 20000"  (format 2)
set -euo pipefail
cd "$(dirname "$0")/.."
trials=${1:-30}
job="--max-tiles ${2:-75} --grundy-max-tiles ${3:-60} ${4:-}"
cargo build --release --locked --quiet
BIN=$PWD/target/release/chomp
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
digest() { (cd "$1" && find . -type f | LC_ALL=C sort | xargs sha256sum | sha256sum | cut -c1-16); }

start=$(date +%s%N)
"$BIN" solve $job --out "$T/clean" --quiet
clean_ms=$((($(date +%s%N) - start) / 1000000))
want=$(digest "$T/clean")
echo "clean run: $job, ${clean_ms} ms, digest $want"

failures=0
kills=0
for trial in $(seq 1 "$trials"); do
  out="$T/trial"
  rm -rf "$out"
  n_kills=$((1 + RANDOM % 3))
  for _ in $(seq 1 $n_kills); do
    "$BIN" solve $job --out "$out" --quiet 2>/dev/null &
    pid=$!
    # A random moment within the clean run's duration (plus a little).
    delay_ms=$((RANDOM % (clean_ms + 200)))
    sleep "$((delay_ms / 1000)).$(printf %03d $((delay_ms % 1000)))"
    if kill -9 "$pid" 2>/dev/null; then kills=$((kills + 1)); fi
    wait "$pid" 2>/dev/null || true
  done
  "$BIN" solve $job --out "$out" --quiet
  got=$(digest "$out")
  if [ "$got" != "$want" ] || ! "$BIN" verify --tables "$out" --samples 200 >/dev/null; then
    echo "trial $trial: FAILED (digest $got)"
    failures=$((failures + 1))
  fi
done
echo "fault injection: $trials trials, $kills kills, $failures failures"
[ "$failures" -eq 0 ]
