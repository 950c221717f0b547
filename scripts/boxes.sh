#!/usr/bin/env bash
# Rebuilds the box results: the tables of the largest square box and of the
# 11x20 and 10x42 rectangles (under $OUT, not in git: their manifests, with
# the SHA-256 of every table, are published), then results/boxes.csv, the
# rectangle openings, the openings map, and verifies each table directory.
# Resumes any box run under way. Wall time and peak memory of each run go to
# $OUT/boxes-times.txt.
#
# Usage: scripts/boxes.sh [SIDE]      (SIDE: largest square, default 21: the published files)
#   21: about 1 h 50 min and 17.7 GiB for the square with MAX_MEMORY=34G (four windows)
#   20: about an hour and 8.3 GiB for the square (chomp solve --dry-run first)
#   18: about 3 min and 0.6 GiB for the square, 5 min for 10x42 on 2 cores
# Environment: OUT (default out), CHOMP (default target/release/chomp), MAX_MEMORY
# (passed to the square's chomp solve --max-memory; default: what the system leaves).
set -euo pipefail
cd "$(dirname "$0")/.."
SIDE=${1:-21}
OUT=${OUT:-out}
B=${CHOMP:-target/release/chomp}
if [ -z "${CHOMP:-}" ]; then cargo build --release --locked --quiet; fi
mkdir -p "$OUT" results/plots
times="$OUT/boxes-times.txt"

# One box run, timed: wall seconds and peak resident memory (KiB) appended to $times.
solve_box() {
  local r=$1 c=$2 dir="$OUT/box-${1}x${2}"
  if [ -f "$dir/manifest.json" ] && grep -q '"complete": true' "$dir/manifest.json"; then
    echo "$dir: complete"
  else
    local limit=()
    if [ "$r" = "$SIDE" ] && [ "$c" = "$SIDE" ] && [ -n "${MAX_MEMORY:-}" ]; then limit=(--max-memory "$MAX_MEMORY"); fi
    /usr/bin/time -f "box ${r}x${c}: %e s wall, %M KiB peak" -a -o "$times" "$B" solve --rows "$r" --cols "$c" --out "$dir" --quiet "${limit[@]}"
    tail -1 "$times"
  fi
  cp "$dir/manifest.json" "results/box-${r}x${c}-manifest.json"
  "$B" verify --tables "$dir" --samples 2000 --seed 13
}

solve_box "$SIDE" "$SIDE"
solve_box 11 20
solve_box 10 42

# boxes.csv: every square to SIDE (from the largest square's tables), 10x20
# and 11x20 (from 11x20's), 10x42.
tmp=$(mktemp)
{
  "$B" boxes --tables "$OUT/box-${SIDE}x${SIDE}" | awk -F, 'NR > 1 && $1 == $2'
  "$B" boxes --tables "$OUT/box-11x20" | awk -F, '($1 == 10 || $1 == 11) && $2 == 20'
  "$B" boxes --tables "$OUT/box-10x42" | awk -F, '$1 == 10 && $2 == 42'
} | sort -t, -k1,1n -k2,2n > "$tmp"
# Thin boxes (at most 8 rows, not squares) come from the few-row engine
# (results/README.md names their runs): kept as published.
{ echo "rows,cols,positions,losses"; cat "$tmp"; awk -F, 'NR > 1 && $1 <= 8 && $1 != $2' results/boxes.csv 2>/dev/null; } > results/boxes.csv.tmp
mv results/boxes.csv.tmp results/boxes.csv
rm -f "$tmp"

# Openings: every rectangle inside the largest square and inside 10x42; the map.
"$B" openings --tables "$OUT/box-${SIDE}x${SIDE}" --out "results/rectangle-openings-${SIDE}x${SIDE}.csv"
"$B" openings --tables "$OUT/box-10x42" --out results/rectangle-openings-10x42.csv
"$B" plot --openings "results/rectangle-openings-${SIDE}x${SIDE}.csv" --out results/plots
(cd results && find . -type f ! -name CHECKSUMS ! -name '.*' | LC_ALL=C sort | xargs sha256sum > CHECKSUMS)
echo "boxes: results/boxes.csv, results/rectangle-openings-${SIDE}x${SIDE}.csv, results/rectangle-openings-10x42.csv, results/plots/openings.png"
