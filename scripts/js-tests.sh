#!/usr/bin/env bash
# Tests of the JavaScript reader in js/ (node's test runner): builds small
# table directories with the CLI (formats 1, 2 and 3, sharded and not, with
# Grundy values, two boxes), records what `chomp query --json` answers for
# 1,000 seeded positions and for inputs that do not parse, then runs
# js/test/*.test.mjs against them: agreement with the CLI (from disk and over
# HTTP with Range requests), damaged directories, the cache bound, the vendored
# fzstd. Takes about a minute; needs node >= 20 and npm.
#
# Usage: scripts/js-tests.sh        (CHOMP=path/to/chomp to use another build;
#                                    CHROMIUM=... for the browser check, skipped
#                                    when no chromium is installed)
set -euo pipefail
cd "$(dirname "$0")/.."
CHOMP="${CHOMP:-target/release/chomp}"
if [ ! -x "$CHOMP" ]; then
  cargo build --release --locked --quiet
fi
CHOMP="$(cd "$(dirname "$CHOMP")" && pwd)/$(basename "$CHOMP")"
if [ ! -d js/node_modules/fzstd ]; then
  (cd js && npm ci --no-audit --no-fund --loglevel=error)
fi
work="$(mktemp -d "${TMPDIR:-/tmp}/chomp-js-tests.XXXXXX")"
trap 'rm -rf "$work"' EXIT
solve() {
  local name=$1
  shift
  "$CHOMP" solve --quiet --check-samples 100 --out "$work/$name" "$@"
}
t0=$SECONDS
solve f1 --max-tiles 30 --grundy-max-tiles 22 --table-format 1
solve f2 --max-tiles 30 --grundy-max-tiles 22 --table-format 2 --shard-positions 400
solve f3 --max-tiles 60 --grundy-max-tiles 45
solve f3s --max-tiles 40 --grundy-max-tiles 30 --shard-positions 5000 --count-moves
solve box3 --rows 5 --cols 8 --grundy
solve box2 --rows 6 --cols 7 --grundy --table-format 2 --shard-positions 300
solve dmg1 --max-tiles 20 --grundy-max-tiles 15 --table-format 1
solve dmg2 --max-tiles 20 --grundy-max-tiles 15 --table-format 2 --shard-positions 50
solve dmg3 --max-tiles 20 --grundy-max-tiles 15
node js/test/make-expected.mjs "$CHOMP" "$work"
echo "js-tests: tables and expected answers in $((SECONDS - t0)) s"
export CHOMP CHOMP_JS_TABLES="$work"
cd js
node --test --test-reporter=spec --test-reporter-destination=stdout \
  --test-reporter=tap --test-reporter-destination="$work/tap.txt" test/*.test.mjs
# In CI (CI set) nothing may skip: nginx and Chromium are installed there.
skipped=$(sed -n 's/^# skip //p' "$work/tap.txt" | tail -1)
if [ -n "${CI:-}" ] && [ "${skipped:-0}" != 0 ]; then
  grep -n "# SKIP" "$work/tap.txt" >&2 || true
  echo "FAILED: $skipped JavaScript tests skipped in CI" >&2
  exit 1
fi

# The package as a front end installs it: from a project outside the
# repository, by folder (npm links it, installing none of its dev
# dependencies) and by a packed tarball, then imported by its name.
cd ..
root=$PWD
front="$work/front-end"
for how in folder tarball; do
  rm -rf "$front" && mkdir -p "$front"
  (cd "$front" && npm init -y >/dev/null)
  if [ "$how" = folder ]; then
    (cd "$front" && npm install --no-audit --no-fund --loglevel=error "$root/js")
  else
    tgz=$(cd js && npm pack --silent --pack-destination "$work")
    (cd "$front" && npm install --no-audit --no-fund --loglevel=error --offline "$work/$tgz")
  fi
  # --preserve-symlinks: the linked folder resolves its imports from the front
  # end's node_modules, as on a machine where js/ has no node_modules of its own.
  (cd "$front" && node --preserve-symlinks --input-type=module -e "
    import { openTables } from 'chomp-tables';
    const t = await openTables(process.argv[1]);
    const a = await t.query('5 3 1');
    if (a.outcome !== 'win') throw new Error('5 3 1: ' + JSON.stringify(a));
    console.log('js-tests: chomp-tables installed from a ' + process.argv[2] + ' outside the repository: 5 3 1 is a ' + a.outcome);
  " "$work/f3" "$how")
done
