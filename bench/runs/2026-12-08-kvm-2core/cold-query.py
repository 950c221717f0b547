# cold-query.py A B DIR ROUNDS [POSITION]: alternates two builds' `chomp query POSITION --tables DIR
# --json`, each after dropping every file of DIR from the page cache (COLD=table: only fewrow.table).
import os, sys, time, subprocess
bins = sys.argv[1:3]; d = sys.argv[3]; rounds = int(sys.argv[4])
pos = sys.argv[5] if len(sys.argv) > 5 else "3000 3000 3000 3000"
res = {b: [] for b in bins}
for r in range(rounds):
    for b in bins:
        for f in (["fewrow.table"] if os.environ.get("COLD") == "table" else os.listdir(d)):
            fd = os.open(os.path.join(d, f), os.O_RDONLY); os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED); os.close(fd)
        t = time.perf_counter()
        p = subprocess.Popen([b, "query", pos, "--tables", d, "--json"], stdout=subprocess.DEVNULL)
        _, status, ru = os.wait4(p.pid, 0)
        assert status == 0
        res[b].append(((time.perf_counter() - t) * 1000, ru.ru_maxrss / 1024))
for b in bins:
    ms = sorted(x for x, _ in res[b])
    print(f"{os.path.basename(b)} {pos}: cold ms {' '.join(f'{x:.1f}' for x, _ in res[b])}; median {ms[len(ms)//2]:.1f}, max {ms[-1]:.1f}; peak RSS {max(m for _, m in res[b]):.1f} MiB")
