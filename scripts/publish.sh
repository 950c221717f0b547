#!/usr/bin/env bash
# Rebuilds everything in results/ from the jobs in jobs/ (resuming any job
# already under way), then verifies, plots and checksums it.
# Usage: scripts/publish.sh      (about 15 minutes on 2 cores, ~5 GiB)
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
if [ -f out/frontier-140/manifest.json ]; then
  runs+=(--tables out/frontier-140)
  cp out/frontier-140/manifest.json results/frontier-140-manifest.json
  $B verify --tables out/frontier-140 --samples 200 --min-tiles 120 --allow-incomplete
fi
# 1c. Grundy values to 100 tiles (a few minutes).
$B run jobs/grundy-100.toml
runs+=(--tables out/grundy-100)
cp out/grundy-100/manifest.json results/grundy-100-manifest.json
$B verify --tables out/grundy-100 --samples 300 --min-tiles 95
# Grundy values to 110 (about 25 minutes on 2 idle cores): merged when built
# (`chomp run jobs/grundy-110.toml`).
if [ -f out/grundy-110/manifest.json ]; then
  runs+=(--tables out/grundy-110)
  cp out/grundy-110/manifest.json results/grundy-110-manifest.json
  $B verify --tables out/grundy-110 --samples 200 --min-tiles 105 --allow-incomplete
fi
# Grundy values to 120 (about 1.6 hours and 18 GiB here; its completed
# levels are published when it is cut short): merged when built
# (`chomp run jobs/grundy-120.toml`, resumable).
if [ -f out/grundy-120/manifest.json ]; then
  runs+=(--tables out/grundy-120)
  cp out/grundy-120/manifest.json results/grundy-120-manifest.json
  $B verify --tables out/grundy-120 --samples 200 --min-tiles 110 --allow-incomplete
fi
$B summary "${runs[@]}" --out results
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
