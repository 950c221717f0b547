#!/bin/bash
# rehearsal-nodes.sh MPI_BIN [N] [K] [NODE] [PIECE]: the simulated-node rehearsal. Losses to N (125)
# tiles and Grundy values to 72 on K (8) MPI processes of one rayon thread each, grouped as nodes of
# NODE (2) consecutive processes (CHOMP_TEST_NODE_PROCESSES: each group its own node-local scratch
# under $W/scratch, its first process a leader), every gather in pieces of PIECE (1 MiB) bytes a
# process, collective order checked. First the dry run (--dry-run --report-json), then the run
# (--report-json, /usr/bin/time -v); a run started again resumes from its checkpoints.
# Works in $WORK (default /work/runs/rehearsal-nodes, outside the work tree).
set -u
MPI=$1; N=${2:-125}; K=${3:-8}; NODE=${4:-2}; PIECE=${5:-1048576}
W=${WORK:-/work/runs/rehearsal-nodes}; mkdir -p "$W/scratch"; cd "$W"
job=(solve --max-tiles "$N" --grundy-max-tiles 72 --out tables --work-dir "$W/scratch")
export CHOMP_TEST_NODE_PROCESSES=$NODE CHOMP_COLLECTIVE_BYTES=$PIECE CHOMP_CHECK_COLLECTIVES=1 RAYON_NUM_THREADS=1
mpiexec -n "$K" "$MPI" "${job[@]}" --dry-run --report-json dry.json > dry.out 2> dry.log
echo "dry run: exit $?"
/usr/bin/time -v mpiexec -n "$K" "$MPI" "${job[@]}" --report-json run.json > run.out 2> run.log
echo "run: exit $?"
