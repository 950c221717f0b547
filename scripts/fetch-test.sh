#!/usr/bin/env bash
# `chomp fetch` and `chomp verify --against` against a real static server:
# nginx (Debian's) serving a table directory on 127.0.0.1, as a mirror would.
#
#   1. a fetch gives a byte-identical directory (`verify --against` says so);
#   2. a fetch killed mid-transfer (the mirror slowed down with limit_rate)
#      leaves nothing unverified under a final name, and the rerun resumes
#      (HTTP Range requests) and ends identical;
#   3. a mirror serving one damaged file makes the fetch fail naming that
#      file, and leaves neither it nor a manifest in place;
#   4. `verify --against` tells an identical directory from one with a
#      missing, an extra or a changed file.
#
# Run by .ci/run; needs nginx (apt-get install nginx-light) and python3.
set -euo pipefail
cd "$(dirname "$0")/.."
CHOMP=${CHOMP:-target/release/chomp}
[ -x "$CHOMP" ] || cargo build --release --locked --quiet
command -v nginx >/dev/null || { echo "FAILED: nginx is not installed (apt-get install nginx-light)" >&2; exit 1; }

work=$(mktemp -d /tmp/chomp-fetch-test.XXXXXX)
nginx_pid=""
cleanup() {
  [ -n "$nginx_pid" ] && kill "$nginx_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAILED: $*" >&2; exit 1; }

# The published directory: losses to 72 tiles, Grundy values to 56, format 3.
"$CHOMP" solve --max-tiles 72 --grundy-max-tiles 56 --out "$work/pub" --quiet
manifest="$work/published-manifest.json"
cp "$work/pub/manifest.json" "$manifest"
# A mirror with one damaged table (one byte flipped in its middle).
cp -r "$work/pub" "$work/bad"
victim=losses/L0060.cht
python3 - "$work/bad/$victim" <<'EOF'
import sys
p = sys.argv[1]
b = bytearray(open(p, "rb").read())
b[len(b) // 2] ^= 1
open(p, "wb").write(bytes(b))
EOF

# Three mirrors on free ports: full speed, slowed down, damaged.
read -r fast slow bad < <(python3 -c '
import socket
ss = [socket.socket() for _ in range(3)]
for s in ss: s.bind(("127.0.0.1", 0))
print(*[s.getsockname()[1] for s in ss])')
user_line=""
[ "$(id -u)" = 0 ] && user_line="user root;"
cat > "$work/nginx.conf" <<EOF
$user_line
daemon off;
worker_processes 2;
pid $work/nginx.pid;
error_log $work/nginx-error.log warn;
events { worker_connections 64; }
http {
  access_log $work/nginx-access.log;
  client_body_temp_path $work/tmp-body;
  proxy_temp_path $work/tmp-proxy;
  fastcgi_temp_path $work/tmp-fastcgi;
  uwsgi_temp_path $work/tmp-uwsgi;
  scgi_temp_path $work/tmp-scgi;
  default_type application/octet-stream;
  server { listen 127.0.0.1:$fast; root $work/pub; }
  server { listen 127.0.0.1:$slow; root $work/pub; limit_rate 64k; }
  server { listen 127.0.0.1:$bad; root $work/bad; }
}
EOF
nginx -c "$work/nginx.conf" -p "$work" &
nginx_pid=$!
for _ in $(seq 100); do
  python3 -c "import socket; socket.create_connection(('127.0.0.1', $bad), 1)" 2>/dev/null && break
  sleep 0.1
done

# 1. A plain fetch.
"$CHOMP" fetch --manifest "$manifest" --from "http://127.0.0.1:$fast" --out "$work/got" --quiet
"$CHOMP" verify --tables "$work/got" --against "$manifest" || fail "the fetched directory differs from the mirror"
"$CHOMP" verify --tables "$work/got" --samples 200 >/dev/null || fail "the fetched directory does not verify"
echo "fetch: byte-identical"

# 2. Killed mid-transfer, then resumed.
"$CHOMP" fetch --manifest "$manifest" --from "http://127.0.0.1:$slow" --out "$work/resumed" --quiet --jobs 4 &
fetch_pid=$!
sleep 2
kill -9 "$fetch_pid" 2>/dev/null || fail "the slowed-down fetch finished before it was killed"
wait "$fetch_pid" 2>/dev/null || true
[ ! -e "$work/resumed/manifest.json" ] || fail "a killed fetch left a manifest"
parts=$(find "$work/resumed" -name '*.chomp-fetch.part' -size +0 | wc -l)
[ "$parts" -gt 0 ] || fail "the killed fetch left no partial file to resume"
# Every file under a final name is a verified one.
python3 - "$manifest" "$work/resumed" <<'EOF' || fail "a killed fetch left an unverified file under its final name"
import hashlib, json, os, sys
m = json.load(open(sys.argv[1]))
for rel, e in m["files"].items():
    p = os.path.join(sys.argv[2], rel)
    if os.path.exists(p):
        assert hashlib.sha256(open(p, "rb").read()).hexdigest() == e["sha256"], rel
EOF
"$CHOMP" fetch --manifest "$manifest" --from "http://127.0.0.1:$fast" --out "$work/resumed" > "$work/resume.out"
grep -q "already there" "$work/resume.out" || fail "the rerun did not report what it kept"
"$CHOMP" verify --tables "$work/resumed" --against "$manifest" || fail "the resumed fetch differs"
grep -q ' 206 ' "$work/nginx-access.log" || fail "no Range request was answered 206 (nothing was resumed)"
echo "fetch: killed with $parts partial files, resumed with Range requests, byte-identical"

# 3. A damaged mirror.
if "$CHOMP" fetch --manifest "$manifest" --from "http://127.0.0.1:$bad" --out "$work/damaged" --quiet 2> "$work/damaged.err"; then
  fail "a fetch from a damaged mirror succeeded"
fi
grep -q "$victim" "$work/damaged.err" || fail "the error does not name $victim: $(cat "$work/damaged.err")"
[ ! -e "$work/damaged/$victim" ] && [ ! -e "$work/damaged/$victim.chomp-fetch.part" ] || fail "the damaged file was left in place"
[ ! -e "$work/damaged/manifest.json" ] || fail "a failed fetch wrote the manifest"
echo "fetch: a damaged mirror is refused, naming $victim"

# 4. verify --against tells the differences.
against() { "$CHOMP" verify --tables "$work/got" --against "$manifest" > "$work/against.out" 2>&1; }
against || fail "identical directory reported different"
mv "$work/got/losses/L0030.cht" "$work/L0030.cht"
! against && grep -q "1 missing" "$work/against.out" || fail "a missing file went unnoticed"
mv "$work/L0030.cht" "$work/got/losses/L0030.cht"
echo extra > "$work/got/notes.txt"
! against && grep -q "1 extra" "$work/against.out" || fail "an extra file went unnoticed"
rm "$work/got/notes.txt"
cp "$work/bad/$victim" "$work/got/$victim"
! against && grep -q "1 changed" "$work/against.out" || fail "a changed file went unnoticed"
echo "verify --against: missing, extra and changed files told apart"
# A rerun replaces the changed file (it is removed before anything is fetched).
"$CHOMP" fetch --manifest "$manifest" --from "http://127.0.0.1:$fast" --out "$work/got" --quiet > /dev/null
against || fail "a rerun of fetch did not replace a changed file"
echo "fetch: a changed file is replaced by a rerun"
echo "fetch tests: ok"
