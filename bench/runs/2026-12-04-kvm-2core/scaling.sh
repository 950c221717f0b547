#!/bin/bash
# 1, 2 and 4 MPI processes (one thread each) on losses to 110 and on the 10x24 box.
cd /work/main
B=target/mpi/release/chomp
for job in "t110:--max-tiles 110" "box1024:--rows 10 --cols 24"; do
  name=${job%%:*}; args=${job#*:}
  for K in 1 2 4; do
    rm -rf /work/runs/sc/$name-$K
    mkdir -p /work/runs/sc
    s=$(date +%s.%N)
    RAYON_NUM_THREADS=1 /usr/bin/time -f "%e s wall, %M KiB max" mpiexec -n $K $B solve $args --out /work/runs/sc/$name-$K --report-json /work/runs/sc/$name-$K.json --quiet 2> /work/runs/sc/$name-$K.log
    echo "$name K=$K: $(tail -1 /work/runs/sc/$name-$K.log)"
    cmp -s /work/runs/sc/$name-1/manifest.json /work/runs/sc/$name-$K/manifest.json && echo "  manifest identical to 1 process" || echo "  MANIFEST DIFFERS"
  done
done
