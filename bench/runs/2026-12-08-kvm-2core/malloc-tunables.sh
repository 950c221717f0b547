#!/bin/bash
for r in 1 2 3; do
  /usr/bin/time -f "plain %e s %U u %S sys %R minflt %M KB" ${1:-chomp} bench --max-tiles 100 2>&1 >/dev/null | tail -1
  GLIBC_TUNABLES=glibc.malloc.mmap_threshold=1073741824:glibc.malloc.trim_threshold=4294967295 /usr/bin/time -f "tuned %e s %U u %S sys %R minflt %M KB" ${1:-chomp} bench --max-tiles 100 2>&1 >/dev/null | tail -1
done
