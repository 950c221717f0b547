#!/usr/bin/env python3
"""Fits the work model of the sieve's shares to 4 processes' compute.

Usage: cluster-balance-fit.py RUN ...   each RUN one of
  RUN.json:WEIGHT:TILT                 (a report of `mpiexec -n 4 chomp solve
                                        --max-tiles 110 --report-json RUN.json`)
  C0/C1/C2/C3:WEIGHT:TILT:TILT_LONG:KNEE  (processes 0-3's compute_cpu_seconds)
with the split's WORK_WEIGHT and WORK_TILT (and WORK_TILT_LONG,
WORK_TILT_KNEE: two tilts) the run used.

Each unit (prefix of one or two top rows) of level 110 is counted (all
positions, canonical positions), the shares each run used are rebuilt, and
the model  cost(share) = sum over its units of canonical * h(c / sqrt(n))
+ b * all  is fitted (least squares on each run's shares of its total),
h(x) = x^-g1 up to the knee k and k^-g1 (x / k)^-g2 past it, over g1, g2,
k and b (--one-tilt: g2 = g1, over g1 and b). Level 110 stands for the
run: it holds about a ninth of the marks, and every level splits alike.
Prints the fit, each run's measured and modelled shares, and the
predicted balance and process 0's share of the positions for other work
weights.
"""
import json, math, sys
from functools import lru_cache
sys.setrecursionlimit(100000)
@lru_cache(None)
def q(s, k, m):
    # partitions of s into at most k parts each <= m
    if s == 0: return 1
    if k == 0 or m == 0: return 0
    m = min(m, s)
    # largest part j in 1..m
    return sum(q(s-j, k-1, j) for j in range(1, m+1))
def units(n):
    us=[]
    for c in range(1,n+1):
        if c==n: us.append((c,)); continue
        for s in range(1, min(c,n-c)+1): us.append((c,s))
    return us
def sizes(n,u):
    used=sum(u); rest=n-used
    allp = q(rest, 10**6, u[-1]) if rest else 1
    rows=min(n,u[0])
    if len(u)>rows: can=0
    else: can = q(rest, rows-len(u), u[-1]) if rest else 1
    return allp, can
def split(ws, parts):
    tot=sum(ws); acc=0; own=[]
    for w in ws:
        mid=2*acc+w; o=min(parts-1, (mid*parts)//(2*tot)); own.append(o); acc+=w
    return own
n = 110
us = units(n); S = [sizes(n, u) for u in us]
ta = sum(a for a, c in S); tc = sum(c for a, c in S)
def h(c, g):
    g1, g2, k = g
    x = c / math.sqrt(n)
    return x ** (-g1) if x <= k else k ** (-g1) * (x / k) ** (-g2)
def shares(wc, g):
    th = sum(S[i][1] * h(us[i][0], g) for i in range(len(us)))
    ws = [int(((1 - wc) * a / ta + wc * c * h(u[0], g) / th) * 2**41) for u, (a, c) in zip(us, S)]
    return split(ws, 4)
one_tilt = '--one-tilt' in sys.argv
data = []
for arg in [a for a in sys.argv[1:] if not a.startswith('--')]:
    f = arg.split(':')
    if len(f) == 3:
        g = (float(f[2]), float(f[2]), math.inf)
        times = [p['compute_cpu_seconds'] for p in json.load(open(f[0]))['processes']]
    else:
        g = (float(f[2]), float(f[3]), float(f[4]))
        times = [float(x) for x in f[0].split('/')]
    own = shares(float(f[1]), g)
    # Each share as its canonical positions by top row, and all its positions.
    for p in range(4):
        can = {}
        for i, o in enumerate(own):
            if o == p:
                can[us[i][0]] = can.get(us[i][0], 0) + S[i][1] / tc
        allp = sum(S[i][0] for i, o in enumerate(own) if o == p) / ta
        data.append((f[0], times[p], can, allp))
def model(d, g, b): return sum(v * h(c, g) for c, v in d[2].items()) + b * d[3]
if one_tilt:
    grid = [((x / 20, x / 20, math.inf), b / 100) for x in range(41) for b in range(0, 42, 2)]
else:
    grid = [((x / 20, y / 20, k), b / 20) for x in range(0, 16) for y in range(4, 36, 2) for k in (2.0, 2.5, 3.0, 3.5, 4.0) for b in range(3)]
best = None
for g, b in grid:
    err = 0
    for k in range(0, len(data), 4):
        P = [model(d, g, b) for d in data[k:k + 4]]; A = [d[1] for d in data[k:k + 4]]
        err += sum((P[i] / sum(P) - A[i] / sum(A)) ** 2 for i in range(4))
    if best is None or err < best[0]: best = (err, g, b)
err, g, b = best
print(f'fit: g1 = {g[0]}, g2 = {g[1]}, knee = {g[2]}, b = {b} (squared error of the shares {err:.6f})')
for k in range(0, len(data), 4):
    P = [model(d, g, b) for d in data[k:k + 4]]; A = [d[1] for d in data[k:k + 4]]
    print(data[k][0], 'measured', ' '.join('%.3f' % (a / sum(A)) for a in A), 'model', ' '.join('%.3f' % (p / sum(P)) for p in P))
for wc in [1.0, 0.95, 0.9, 0.85, 0.8]:
    own = shares(wc, g)
    cs = []
    for p in range(4):
        idx = [i for i, o in enumerate(own) if o == p]
        cs.append(sum(S[i][1] / tc * h(us[i][0], g) for i in idx) + b * sum(S[i][0] / ta for i in idx))
    a0 = sum(S[i][0] for i, o in enumerate(own) if o == 0) / ta
    print(f'weight {wc}: predicted largest / mean {max(cs) / (sum(cs) / 4):.3f}, first share {a0:.3f} of the positions')
