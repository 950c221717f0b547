#!/bin/bash
# Side by side, losses to 100 tiles, 2 threads each: BEFORE and AFTER (two builds of
# `chomp`) and the C push sieve on 2 threads; ROUNDS rounds, alternating.
# Usage: scan-pieces.sh BEFORE AFTER [ROUNDS]
BEFORE=$1; AFTER=$2; ROUNDS=${3:-3}; C=/tmp/refsieve
cc -O2 -march=native -fopenmp -o $C "$(dirname "$0")/../../../scripts/reference-sieve.c"
for r in $(seq 1 $ROUNDS); do
  for who in before after c; do
    case $who in
      before) cmd=($BEFORE bench --max-tiles 100);;
      after) cmd=($AFTER bench --max-tiles 100);;
      c) cmd=($C 100 2);;
    esac
    /usr/bin/time -f "$who round $r: wall %e s, user %U s, sys %S s, peak %M KiB" "${cmd[@]}" > /tmp/sbs-$who-$r.out 2>/tmp/sbs-$who-$r.err
    tail -1 /tmp/sbs-$who-$r.err
    grep -E "marks" /tmp/sbs-$who-$r.out /tmp/sbs-$who-$r.err | head -1
  done
done
