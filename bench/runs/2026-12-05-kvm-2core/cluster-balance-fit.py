#!/usr/bin/env python3
"""Fits the work model of the sieve's shares to 4 processes' compute.

Usage: cluster-balance-fit.py RUN.json:WEIGHT:TILT ...   (reports of
`mpiexec -n 4 chomp solve --max-tiles 110 --report-json RUN.json`, each with
the split's WORK_WEIGHT and WORK_TILT it ran with)

Each unit (prefix of one or two top rows) of level 110 is counted (all
positions, canonical positions), the shares each run used are rebuilt, and
the model  cost(share) = sum over its units of canonical * (c / sqrt(n))^-g
+ b * all  is fitted (least squares on each run's shares of its total) over
g in 0..2 and b in 0..0.4. Level 110 stands for the run: it holds about a
ninth of the marks, and every level splits alike.
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
def h(u, g): return (u[0] / math.sqrt(n)) ** (-g)
def shares(wc, g):
    th = sum(S[i][1] * h(us[i], g) for i in range(len(us)))
    ws = [int(((1 - wc) * a / ta + wc * c * h(u, g) / th) * 2**41) for u, (a, c) in zip(us, S)]
    return split(ws, 4)
data = []
for arg in sys.argv[1:]:
    path, wc, g0 = arg.split(':')
    ps = json.load(open(path))['processes']
    own = shares(float(wc), float(g0))
    for p in range(4):
        data.append((path, p, ps[p]['compute_cpu_seconds'], [i for i, o in enumerate(own) if o == p]))
def model(idx, g, b): return sum(S[i][1] / tc * h(us[i], g) for i in idx) + b * sum(S[i][0] / ta for i in idx)
best = None
for g in [x / 20 for x in range(41)]:
    for b in [x / 100 for x in range(0, 42, 2)]:
        err = 0
        for k in range(0, len(data), 4):
            P = [model(d[3], g, b) for d in data[k:k + 4]]; A = [d[2] for d in data[k:k + 4]]
            err += sum((P[i] / sum(P) - A[i] / sum(A)) ** 2 for i in range(4))
        if best is None or err < best[0]: best = (err, g, b)
err, g, b = best
print(f'fit: g = {g}, b = {b} (squared error of the shares {err:.6f})')
for k in range(0, len(data), 4):
    P = [model(d[3], g, b) for d in data[k:k + 4]]; A = [d[2] for d in data[k:k + 4]]
    print(data[k][0], 'measured', ' '.join('%.3f' % (a / sum(A)) for a in A), 'model', ' '.join('%.3f' % (p / sum(P)) for p in P))
for wc in [1.0, 0.95, 0.9, 0.85, 0.8]:
    own = shares(wc, g)
    cs = [model([i for i, o in enumerate(own) if o == p], g, b) for p in range(4)]
    a0 = sum(S[i][0] for i, o in enumerate(own) if o == 0) / ta
    print(f'weight {wc}: predicted largest / mean {max(cs) / (sum(cs) / 4):.3f}, first share {a0:.3f} of the positions')
