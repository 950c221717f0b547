#!/usr/bin/env bash
# `chomp serve` under hostile clients, on 127.0.0.1 only, bounded in time:
#
#   - 530 clients that send pipelined queries and never read the answers
#     (more than the 512 connections served at once by default),
#   - 100 slowloris clients sending a request head a byte a second,
#   - 200 clients reconnecting as fast as they can, half of them closing
#     without a request,
#
# held for SECS seconds (default 60) while a probe asks GET /health every
# 0.25 s. Passes if at least 90 % of the probes are answered (200) within
# 2 s and the server closed the non-reading clients' connections (each of
# them sees the end of its stream or a reset while the attack runs).
#
# Usage: scripts/serve-soak.sh [SECS]   (needs python3; run by .ci/run)
set -euo pipefail
cd "$(dirname "$0")/.."
SECS=${1:-60}
CHOMP=${CHOMP:-target/release/chomp}
[ -x "$CHOMP" ] || cargo build --release --locked --quiet
# The clients hold about 850 sockets, the server as many.
ulimit -n 4096 2>/dev/null || ulimit -n "$(ulimit -Hn)"

work=$(mktemp -d /tmp/chomp-soak.XXXXXX)
server_pid=""
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

"$CHOMP" serve --tables results/box-8x15 --tables results/losses-100 --addr 127.0.0.1:0 >"$work/out" 2>"$work/log" &
server_pid=$!
for _ in $(seq 300); do
  grep -q "listening on" "$work/out" 2>/dev/null && break
  sleep 0.1
done
addr=$(sed -n 's|.*listening on http://||p' "$work/out")
[ -n "$addr" ] || { cat "$work/log" >&2; echo "FAILED: the server did not start" >&2; exit 1; }

timeout $((SECS + 120)) python3 - "$addr" "$SECS" <<'EOF'
import asyncio, socket, sys, time

host, port = sys.argv[1].rsplit(":", 1)
port, secs = int(port), float(sys.argv[2])
QUERY = b"GET /v1/query?position=15,15,15,15,14,12,9,4 HTTP/1.1\r\nHost: soak\r\n\r\n"
closed = {"stalled": 0}
stop = time.monotonic() + secs


async def never_reads(i):
    """Pipelined queries, never read while the attack lasts. Then reads: a
    connection the server closed gives its end (or a reset) at once."""
    loop = asyncio.get_running_loop()
    s = socket.socket()
    s.setblocking(False)
    try:
        await loop.sock_connect(s, (host, port))
        s.send(QUERY * 2000)
    except OSError:
        pass
    await asyncio.sleep(max(0, stop - time.monotonic()))
    deadline = time.monotonic() + 3
    try:
        while True:
            data = await asyncio.wait_for(loop.sock_recv(s, 1 << 16), max(0.01, deadline - time.monotonic()))
            if not data:
                closed["stalled"] += 1
                break
    except ConnectionResetError:
        closed["stalled"] += 1
    except (asyncio.TimeoutError, OSError):
        pass
    s.close()


async def slowloris(i):
    while time.monotonic() < stop:
        try:
            r, w = await asyncio.open_connection(host, port)
            for b in b"GET /health HTTP/1.1\r\nHost: soak\r\nX-Slow: " + b"a" * 200:
                if time.monotonic() >= stop:
                    break
                w.write(bytes([b]))
                await w.drain()
                await asyncio.sleep(1)
            w.close()
        except OSError:
            await asyncio.sleep(0.2)


async def reconnects(i):
    while time.monotonic() < stop:
        try:
            r, w = await asyncio.open_connection(host, port)
            if i % 2:
                w.write(b"GET /health HTTP/1.1\r\nHost: soak\r\nConnection: close\r\n\r\n")
                await w.drain()
                await asyncio.wait_for(r.read(), 5)
            w.close()
        except (OSError, asyncio.TimeoutError):
            await asyncio.sleep(0.05)


async def probe(latencies):
    await asyncio.sleep(2)
    while time.monotonic() < stop:
        t0 = time.monotonic()
        ok = False
        try:
            r, w = await asyncio.wait_for(asyncio.open_connection(host, port), 2)
            w.write(b"GET /health HTTP/1.1\r\nHost: probe\r\nConnection: close\r\n\r\n")
            await w.drain()
            data = await asyncio.wait_for(r.read(), 2 - min(2, time.monotonic() - t0))
            ok = data.startswith(b"HTTP/1.1 200")
            w.close()
        except (OSError, asyncio.TimeoutError):
            pass
        latencies.append(time.monotonic() - t0 if ok else float("inf"))
        await asyncio.sleep(0.25)


async def main():
    latencies = []
    tasks = [never_reads(i) for i in range(530)]
    tasks += [slowloris(i) for i in range(100)]
    tasks += [reconnects(i) for i in range(200)]
    tasks.append(probe(latencies))
    await asyncio.gather(*tasks)
    fast = sum(1 for t in latencies if t <= 2)
    share = fast / max(1, len(latencies))
    finite = sorted(t for t in latencies if t != float("inf"))
    p50 = finite[len(finite) // 2] if finite else float("nan")
    print(f"probes: {len(latencies)}, answered within 2 s: {fast} ({share:.1%}), median {p50 * 1000:.0f} ms; "
          f"non-reading connections closed by the server: {closed['stalled']} of 530")
    if len(latencies) < 20 or share < 0.9:
        print("FAILED: fewer than 90 % of the probes answered within 2 s", file=sys.stderr)
        sys.exit(1)
    if closed["stalled"] < 500:
        print("FAILED: the server left non-reading connections open", file=sys.stderr)
        sys.exit(1)


asyncio.run(main())
EOF
kill -0 "$server_pid" 2>/dev/null || { cat "$work/log" >&2; echo "FAILED: the server died" >&2; exit 1; }
echo "ok: serve soak (${SECS} s)"
