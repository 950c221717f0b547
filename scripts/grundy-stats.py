#!/usr/bin/env python3
"""What the Grundy histogram says, level by level: a Markdown table of the
share of value 0 (the losses) and of values above n/2, the mean, median,
mode and 99th percentile of the values at n tiles.

Usage: scripts/grundy-stats.py [results/grundy_histogram.csv] [STEP]
(every STEP-th level, and the last one; default 10)."""
import collections
import csv
import sys

path = sys.argv[1] if len(sys.argv) > 1 else "results/grundy_histogram.csv"
step = int(sys.argv[2]) if len(sys.argv) > 2 else 10
levels = collections.defaultdict(dict)
with open(path, newline="") as f:
    for row in csv.DictReader(f):
        levels[int(row["tiles"])][int(row["grundy"])] = int(row["positions"])

top = max(levels)
shown = [n for n in sorted(levels) if n >= 20 and (n % step == 0 or n == top)]
print("| tiles | positions | value 0 | values > n/2 | mean | mean / n | median | mode | 99th percentile | largest |")
print("|---|---|---|---|---|---|---|---|---|---|")
for n in shown:
    h = levels[n]
    total = sum(h.values())
    mean = sum(g * c for g, c in h.items()) / total
    seen, median, p99 = 0, None, None
    for g in sorted(h):
        seen += h[g]
        if median is None and seen * 2 >= total:
            median = g
        if p99 is None and seen * 100 >= total * 99:
            p99 = g
    mode = max(h, key=lambda g: (h[g], -g))
    high = sum(c for g, c in h.items() if 2 * g > n) / total
    print(
        f"| {n} | {total:,} | {h.get(0, 0) / total:.2%} | {high:.2%} | {mean:.2f} | {mean / n:.4f} "
        f"| {median} | {mode} | {p99} | {max(h)} |"
    )
