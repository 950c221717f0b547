#!/usr/bin/env bash
# MPI against threads on this machine: 2 processes x 1 thread vs 1 process x 2
# threads, same job (losses to 93 tiles, Grundy values to 75 by default).
# Usage: scripts/bench-mpi.sh [MAX_TILES] [GRUNDY_MAX_TILES]
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-93}
G=${2:-75}
cargo build --release --locked --quiet
cargo build --release --locked --quiet --features mpi --target-dir target/mpi
T=$(mktemp -d -p "$PWD/out" 2>/dev/null || mktemp -d)
trap 'rm -rf "$T"' EXIT
t0=$(date +%s%N)
RAYON_NUM_THREADS=2 target/release/chomp solve --max-tiles "$N" --grundy-max-tiles "$G" --out "$T/threads" --quiet
t1=$(date +%s%N)
RAYON_NUM_THREADS=1 timeout 3600 mpiexec -n 2 target/mpi/release/chomp solve --max-tiles "$N" --grundy-max-tiles "$G" --out "$T/mpi" 2>"$T/mpi.log"
t2=$(date +%s%N)
grep -E "^process|balance" "$T/mpi.log"
threads_ms=$(((t1 - t0) / 1000000))
mpi_ms=$(((t2 - t1) / 1000000))
same=$(cmp -s "$T/threads/manifest.json" "$T/mpi/manifest.json" && echo identical || echo DIFFERENT)
echo "losses to $N, Grundy to $G: 1 process x 2 threads ${threads_ms} ms; 2 processes x 1 thread ${mpi_ms} ms; ratio $(python3 -c "print(f'{$mpi_ms/$threads_ms:.3f}')"); manifests $same"
