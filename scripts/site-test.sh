#!/usr/bin/env bash
# The static site (`chomp site`) in a real browser on a real static server:
# nginx (Debian's) serves a site on 127.0.0.1 holding the 8x15 box and the
# losses to 110 tiles (format 3, built here), and headless Chromium (driven by
# playwright-core from npm) plays a full very-hard game on 8x15 (every reply
# equal to `chomp play`'s with the same seed, and a loss), checks learning
# mode's marks, and asks positions of the 110-tile tables, each answer equal
# to `chomp query --json`. It measures, from the page's own timing, cold
# queries of 110-tile positions (bytes transferred, milliseconds) and the
# 8x15 game's first move, and writes them to target/site-test/figures.json.
# Then a packed site of the 8x15 box on python3 -m http.server, which ignores
# Range: 100 positions, each equal to `chomp query --json`.
#
# Usage: scripts/site-test.sh [TABLES-110-DIR]   (reuses a directory of losses
# to 110 tiles instead of building one, about 2 min on 2 cores)
# Needs nginx, /usr/bin/chromium, node and npm; run by .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."
CHOMP=${CHOMP:-target/release/chomp}
[ -x "$CHOMP" ] || cargo build --release --locked --quiet
command -v nginx >/dev/null || { echo "FAILED: nginx is not installed (apt-get install nginx-light)" >&2; exit 1; }
export CHROMIUM="${CHROMIUM:-/usr/bin/chromium}"
[ -x "$CHROMIUM" ] || { echo "FAILED: $CHROMIUM not found (apt-get install chromium)" >&2; exit 1; }
out=target/site-test
mkdir -p "$out"
if [ ! -d "$out/node_modules/playwright-core" ]; then
  (cd "$out" && npm install --no-audit --no-fund --loglevel=error playwright-core@1.65.1 >/dev/null)
fi

work=$(mktemp -d /tmp/chomp-site-test.XXXXXX)
nginx_pid=""
plain_pid=""
cleanup() {
  [ -n "$nginx_pid" ] && kill "$nginx_pid" 2>/dev/null || true
  [ -n "$plain_pid" ] && kill "$plain_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAILED: $*" >&2; exit 1; }

l110="${1:-}"
if [ -z "$l110" ]; then
  l110="$work/losses-110"
  echo "site-test: building the losses to 110 tiles (format 3)"
  "$CHOMP" solve --max-tiles 110 --out "$l110" --quiet
fi
# Packed (--pack): a question's reads go out in a few multi-range requests, which nginx answers.
"$CHOMP" site --tables results/box-8x15 --tables "$l110" --pack --out "$work/site" --quiet >/dev/null
name=$(basename "$(cd "$l110" && pwd)")

# A site writes nothing when a table is damaged.
cp -r results/box-8x15 "$work/box-8x15"
python3 -c 'import sys; p = sys.argv[1]; b = bytearray(open(p, "rb").read()); b[-5] ^= 1; open(p, "wb").write(b)' "$work/box-8x15/losses/L0040.cht"
if "$CHOMP" site --tables "$work/box-8x15" --out "$work/bad-site" --quiet 2>"$work/bad.err"; then
  fail "chomp site copied a damaged table"
fi
grep -q "L0040.cht" "$work/bad.err" || fail "chomp site's error does not name the damaged table: $(cat "$work/bad.err")"
[ ! -e "$work/bad-site" ] || fail "chomp site left a site after an error"

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
user_line=""
[ "$(id -u)" = 0 ] && user_line="user root;"
cat > "$work/nginx.conf" <<EOF
$user_line
daemon off;
worker_processes 2;
pid $work/nginx.pid;
error_log $work/nginx-error.log warn;
events { worker_connections 256; }
http {
  access_log $work/nginx-access.log;
  client_body_temp_path $work/tmp-body;
  proxy_temp_path $work/tmp-proxy;
  fastcgi_temp_path $work/tmp-fastcgi;
  uwsgi_temp_path $work/tmp-uwsgi;
  scgi_temp_path $work/tmp-scgi;
  include /etc/nginx/mime.types;
  default_type application/octet-stream;
  # As docs/site.md advises: manifests and scripts compressed on the wire.
  gzip on;
  gzip_types application/json application/javascript text/javascript text/css;
  server { listen 127.0.0.1:$port; root $work/site; }
}
EOF
nginx -c "$work/nginx.conf" -p "$work" &
nginx_pid=$!
for _ in $(seq 100); do
  python3 -c "import socket; socket.create_connection(('127.0.0.1', $port), 1)" 2>/dev/null && break
  sleep 0.1
done

NODE_PATH="$PWD/$out/node_modules" CHOMP="$CHOMP" BOX=results/box-8x15 L110="$l110" L110_NAME="$name" \
  timeout 600 node scripts/site-test.cjs "http://127.0.0.1:$port/" "$out/figures.json"
grep -q '" 206 ' "$work/nginx-access.log" || fail "nginx answered no range request with 206"
echo "site-test: nginx: $(grep -c '" 206 ' "$work/nginx-access.log") range requests answered"

# A host that ignores Range (python3 -m http.server answers every request
# with the whole file): a packed site of the 8x15 box still answers right.
"$CHOMP" site --tables results/box-8x15 --pack --out "$work/plain-site" --quiet >/dev/null
plain_port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 -m http.server --bind 127.0.0.1 --directory "$work/plain-site" "$plain_port" >"$work/http-server.log" 2>&1 &
plain_pid=$!
for _ in $(seq 100); do
  python3 -c "import socket; socket.create_connection(('127.0.0.1', $plain_port), 1)" 2>/dev/null && break
  sleep 0.1
done
NODE_PATH="$PWD/$out/node_modules" CHOMP="$CHOMP" BOX=results/box-8x15 \
  timeout 300 node scripts/site-test.cjs --plain "http://127.0.0.1:$plain_port/"
grep -q 'tables.pack HTTP/1.1" 200' "$work/http-server.log" || fail "python3 -m http.server served no tables.pack"
echo "site-test: ok"
