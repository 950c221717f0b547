#!/bin/bash
# ab.sh A B ROUNDS: alternating chomp bench --max-tiles 100 walls
for r in $(seq 1 $3); do
  for x in $1 $2; do
    /usr/bin/time -f "%e %U %M" $x bench --max-tiles 100 > /tmp/ab.out 2> /tmp/ab.err
    echo "$(basename $x) round $r: $(tail -1 /tmp/ab.err) $(grep -o '[0-9]* marks' /tmp/ab.out)"
  done
done
