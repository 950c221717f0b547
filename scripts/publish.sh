#!/usr/bin/env bash
# Rebuilds everything in results/ from the jobs in jobs/ (resuming any job
# already under way), then verifies, plots and checksums it.
# Usage: scripts/publish.sh      (about 25 minutes on 2 cores, ~5 GiB)
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --locked --quiet
B=target/release/chomp
mkdir -p results
# 1. The frontier run (losses to 110, Grundy values to 88): too large to
#    publish whole; its summary, histogram and manifest (the SHA-256 of
#    every table it wrote) are published.
$B run jobs/frontier.toml
cp out/frontier/manifest.json results/frontier-manifest.json
# 1b. The loss frontier past 127 tiles (format 2), when its run exists: about
#     45 minutes and 10 GiB here, so run it yourself (`chomp run jobs/frontier-140.toml`,
#     resumable); its completed levels are merged with the frontier run's.
runs=(--tables out/frontier)
# A long run, when its directory exists (run it yourself; an unfinished one
# gives its completed levels): merged, its manifest published, its top
# levels from MIN_TILES verified. Usage: merge_run NAME MIN_TILES
merge_run() {
  if [ -f "out/$1/manifest.json" ]; then
    runs+=(--tables "out/$1")
    cp "out/$1/manifest.json" "results/$1-manifest.json"
    $B verify --tables "out/$1" --samples 200 --min-tiles "$2" --allow-incomplete
  fi
}
merge_run frontier-140 120
merge_run frontier-150 140
# 1c. Grundy values to 100 tiles (a few minutes).
$B run jobs/grundy-100.toml
runs+=(--tables out/grundy-100)
cp out/grundy-100/manifest.json results/grundy-100-manifest.json
$B verify --tables out/grundy-100 --samples 300 --min-tiles 95
# Grundy values to 110 (about 25 minutes on 2 idle cores,
# `chomp run jobs/grundy-110.toml`) and to 120 (about 2 hours and 21 GiB
# here, `chomp run jobs/grundy-120.toml`; resumable).
merge_run grundy-110 105
merge_run grundy-120 110
$B summary "${runs[@]}" --out results
# 1d. Winning moves counted to 130 tiles (about 50 minutes, `chomp run
#     jobs/moves-130.toml`, resumable), and the OEIS b-files of the
#     published summary and its counts.
if [ -f out/moves-130/manifest.json ]; then
  cp out/moves-130/manifest.json results/moves-130-manifest.json
  $B verify --tables out/moves-130 --samples 400 --min-tiles 110 --allow-incomplete
  $B oeis --summary results/summary.csv --summary out/moves-130/summary.csv --out results/oeis
fi
# 1e. Grundy values and winning moves to 100 tiles (about 10 minutes): the
#     histogram of winning moves per level, checked in the run against the
#     sieve's counts.
$B run jobs/moves-grundy-100.toml
cp out/moves-grundy-100/winning_moves.csv results/winning_moves.csv
cp out/moves-grundy-100/manifest.json results/moves-grundy-100-manifest.json
$B verify --tables out/moves-grundy-100 --samples 400 --seed 13
# 2. Tables small enough to publish whole.
$B run jobs/losses-100.toml
$B run jobs/box-8x15.toml --out results/box-8x15
$B openings --tables results/box-8x15 --out results/rectangle-openings-8x15.csv
# 3. Checks: every published table directory, and the top levels of the frontier.
$B verify --tables results/box-8x15 --samples 5000
$B verify --tables results/losses-100 --samples 2000
$B verify --tables out/frontier --samples 300 --min-tiles 100
$B verify --tables out/frontier --samples 300 --min-tiles 80 --max-tiles 88
# 4. Plots and checksums.
$B plot "${runs[@]}" --out results/plots
(cd results && find . -type f ! -name CHECKSUMS ! -name '.*' | LC_ALL=C sort | xargs sha256sum > CHECKSUMS)
echo "published: $(du -sh results | cut -f1) in results/"
