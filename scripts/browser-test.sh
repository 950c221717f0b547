#!/usr/bin/env bash
# Browser test of the game page: starts `chomp serve --tables results/box-8x15`
# on a free port, then headless Debian Chromium (driven by playwright-core from
# npm, installed under target/, no browser download) plays a full game at level
# very-hard by clicking tiles, checking after every computer reply that the
# position left is a loss. Needs /usr/bin/chromium (apt-get install chromium),
# node and npm.
#
# Usage: scripts/browser-test.sh [SCREENSHOT.png]   (e.g. docs/screenshot.png)
set -euo pipefail
cd "$(dirname "$0")/.."
screenshot="${1:-}"
work=target/browser-test
mkdir -p "$work"
export CHROMIUM="${CHROMIUM:-/usr/bin/chromium}"
[ -x "$CHROMIUM" ] || { echo "browser-test: $CHROMIUM not found (apt-get install -y chromium)" >&2; exit 1; }
if [ ! -d "$work/node_modules/playwright-core" ]; then
  (cd "$work" && npm install --no-audit --no-fund --loglevel=error playwright-core@1.65.1 >/dev/null)
fi
cargo build --release --locked --quiet
log="$work/serve.log"
target/release/chomp serve --tables results/box-8x15 --addr 127.0.0.1:0 >"$work/serve.out" 2>"$log" &
pid=$!
trap 'kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true' EXIT
url=""
for _ in $(seq 1 100); do
  url=$(sed -n 's/^chomp serve: listening on \(http:[^ ]*\)$/\1/p' "$work/serve.out")
  [ -n "$url" ] && break
  kill -0 "$pid" 2>/dev/null || { cat "$log" >&2; echo "browser-test: the server did not start" >&2; exit 1; }
  sleep 0.1
done
[ -n "$url" ] || { echo "browser-test: no listening line from the server" >&2; exit 1; }
NODE_PATH="$PWD/$work/node_modules" timeout 300 node scripts/browser-test.cjs "$url" ${screenshot:+"$PWD/$screenshot"}
