#!/usr/bin/env bash
# Rebuilds results/nd-boxes.csv (n-dimensional Chomp: cubes and near-cubes
# in 1 to 6 dimensions) and results/divisors.csv (the divisor game on 72 and
# highly composite numbers) with the chomp binary, and prints the time of
# every solve.
# Usage: scripts/nd-results.sh           (about 10 minutes on 2 cores)
#        scripts/nd-results.sh --quick   (skips the boxes of more than 10^8 positions)
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --locked --quiet
B=target/release/chomp
quick=${1:-}
mkdir -p results

boxes=(
  1 2 5
  2,2 3,3 4,4 5,5 6,6 7,7 8,8 9,9 10,10 2,3 3,4 4,5 5,6 6,7 7,8 8,9 9,10
  2,2,2 3,3,3 4,4,4 5,5,5 2,2,3 2,3,3 3,3,4 3,4,4 4,4,5 4,5,5 2,3,4 3,4,5 4,5,6 5,5,6
  2,2,2,2 2,2,2,3 2,2,3,3 2,3,3,3 3,3,3,3 3,3,3,4
  2,2,2,2,2 2,2,2,2,3 2,2,2,3,3
  2,2,2,2,2,2
)
big=(4,5,6 5,5,6 3,3,3,4)
numbers=(12 24 36 48 60 72 120 180 240 360 720 840 1260 1680 2520 5040 7560 10080 15120 20160 25200 27720 45360 50400)
big_numbers=(27720 50400)

skip() { # skip NAME LIST...: whether --quick leaves NAME out
  local x=$1; shift
  [[ $quick == --quick ]] || return 1
  for y in "$@"; do [[ $x == "$y" ]] && return 0; done
  return 1
}

csv() { # turns the JSON lines of chomp on stdin into CSV rows
  python3 -c '
import json, sys
for line in sys.stdin:
    v = json.loads(line)
    if "dims" in v and "n" not in v:
        moves = " ".join(":".join(str(c) for c in m) for m in v["winning_moves"])
        print("x".join(str(d) for d in v["dims"]), v["positions"], v["losses"], moves, sep=",")
    else:
        print(v["n"], "x".join(str(d) for d in v["dims"]), v["positions"], v["losses"], " ".join(str(m) for m in v["winning_moves"]), sep=",")
'
}

printf '%-14s %14s %12s %9s\n' box positions losses seconds
{
  echo "dims,positions,losses,winning_moves"
  for d in "${boxes[@]}"; do
    skip "$d" "${big[@]}" && continue
    json=$($B nd --dims "$d" --json)
    python3 -c 'import json,sys; v=json.loads(sys.argv[1]); print("%-14s %14d %12d %9.3f" % ("x".join(map(str,v["dims"])), v["positions"], v["losses"], v["seconds"]))' "$json" >&2
    echo "$json" | csv
  done
} > results/nd-boxes.csv.tmp
mv results/nd-boxes.csv.tmp results/nd-boxes.csv

printf '%-14s %14s %12s %9s\n' N positions losses seconds
{
  echo "n,dims,positions,losses,winning_moves"
  for n in "${numbers[@]}"; do
    skip "$n" "${big_numbers[@]}" && continue
    json=$($B divisors "$n" --json)
    python3 -c 'import json,sys; v=json.loads(sys.argv[1]); print("%-14d %14d %12d %9.3f" % (v["n"], v["positions"], v["losses"], v["seconds"]))' "$json" >&2
    echo "$json" | csv
  done
} > results/divisors.csv.tmp
mv results/divisors.csv.tmp results/divisors.csv
echo "wrote results/nd-boxes.csv and results/divisors.csv"
