#!/usr/bin/env python3
"""import-circles.py [SRC] [--most N]: the import circles among the crate's
modules: the library's (SRC, default src/, less SRC/bin/) and each binary's
in SRC/bin/NAME/ (its own module tree, main.rs its root). A module: a file,
or a folder's mod.rs. An edge A -> B is a path `crate::…`, `super::…` or
`self::…` in A's code (tests left out) that names B or an item B defines;
a path through a module's re-export counts as the module re-exported from.
A circle is a strongly connected group of two or more modules of one tree.
Prints each with its edges; exits 1 when there are more than N (default 2)
in all. Documented in docs/architecture.md ("Import circles").
"""
import collections
import os
import re
import sys

args = [a for a in sys.argv[1:]]
most = 2
if "--most" in args:
    i = args.index("--most")
    most = int(args[i + 1])
    del args[i:i + 2]
root = args[0] if args else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")
def circles(root, skip):
    """The circles among the modules under `root` (less the folders `skip`), each with its edges."""
    files={}
    for d,_,fs in os.walk(root):
        if any(os.path.relpath(d,root).split(os.sep)[0]==x for x in skip):continue
        for f in fs:
            if f.endswith('.rs') and not (d==root and f in ('lib.rs','main.rs')):
                p=os.path.join(d,f); rel=os.path.relpath(p,root)[:-3].split(os.sep)
                if rel[-1]=='mod': rel=rel[:-1]
                files[tuple(rel)]=p
    def strip(s):
        s=re.sub(r'//.*','',s)
        m=re.search(r'#\[cfg\(test\)\]\s*mod tests',s)
        return s[:m.start()] if m else s
    texts={k:strip(open(p).read()) for k,p in files.items()}
    reexp={}
    for k,t in texts.items():
        d={}
        for sub,names in re.findall(r'pub(?:\([a-z]+\))? use (?:self::)?([a-z_]+)::\{?([^;]*)\}?;',t):
            for n in re.findall(r'\b([A-Za-z_][A-Za-z0-9_]*)\b',names): d[n]=sub
        reexp[k]=d
    def resolve(path):
        # path: list of segments starting from a module tuple base
        base=path[0]; rest=path[1]
        cur=base
        for seg in rest:
            if cur+(seg,) in files: cur=cur+(seg,); continue
            if seg in reexp.get(cur,{}) and cur+(reexp[cur][seg],) in files: return cur+(reexp[cur][seg],)
            return cur
        return cur
    edges=collections.defaultdict(set)
    for k,t in texts.items():
        # expand use groups crude: crate::a::{b, c::d}
        for m in re.finditer(r'\b(crate|super|self)((?:::[A-Za-z_][A-Za-z0-9_]*)+)(::\{([^;]*?)\})?',t):
            head=m.group(1); segs=m.group(2).split('::')[1:]
            if head=='crate': base=()
            elif head=='super':
                base=k[:-1]
                while segs and segs[0]=='super': base=base[:-1]; segs=segs[1:]
            else: base=k
            groups=[[]]
            if m.group(4):
                groups=[g.strip().split('::') for g in re.split(r',',m.group(4)) if g.strip() and g.strip()!='self']
                groups=[[x for x in g if re.match(r'^[A-Za-z_]\w*$',x)] for g in groups] or [[]]
            for g in groups:
                tgt=resolve((base,segs+g))
                if tgt!=k and tgt in files and tgt!=():
                    # ignore parent declaring child (k is prefix of tgt) only via mod; count uses
                    edges[k].add(tgt)
    idx={};low={};st=[];on=set();sccs=[];c=[0]
    def sc(v):
        idx[v]=low[v]=c[0];c[0]+=1;st.append(v);on.add(v)
        for w in edges[v]:
            if w not in idx: sc(w);low[v]=min(low[v],low[w])
            elif w in on: low[v]=min(low[v],idx[w])
        if low[v]==idx[v]:
            comp=[]
            while True:
                w=st.pop();on.discard(w);comp.append(w)
                if w==v:break
            sccs.append(comp)
    for v in sorted(files):
        if v not in idx: sc(v)
    return [(sorted(comp),{a:sorted(edges[a]&set(comp)) for a in comp}) for comp in sccs if len(comp)>1]
sys.setrecursionlimit(10000)
trees=[('',root,['bin'])]
bins=os.path.join(root,'bin')
if os.path.isdir(bins):
    for name in sorted(os.listdir(bins)):
        if os.path.isfile(os.path.join(bins,name,'main.rs')):
            trees.append((f' in the binary {name}',os.path.join(bins,name),[]))
n=0
for label,tree,skip in trees:
    for comp,inner in circles(tree,skip):
        n+=1
        print(f'circle{label}:',' '.join('::'.join(x) for x in comp))
        for a in comp:
            for b in inner[a]: print('   ','::'.join(a),'->','::'.join(b))
print(f"{n} import circles (at most {most})")
sys.exit(1 if n > most else 0)
