#!/usr/bin/env bash
# The word sieve's hand-off (src/solve/handoff.rs) under the loom model
# checker: every interleaving of a scan and a helper, and every value the
# C11 memory model lets each load see. The feature `loom` swaps the
# hand-off's atomics for loom's in the library's tests only.
#
# Usage: scripts/loom-test.sh
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR=never
log=$(mktemp)
trap 'rm -f "$log"' EXIT
cargo test --locked --release --features loom --lib -- solve::handoff::model --test-threads 1 2>&1 | tee "$log"
# A filter that matches nothing passes with 0 tests: the model must have run.
passed=$(sed -n 's/^test result: ok\. \([0-9]*\) passed.*/\1/p' "$log" | awk '{n += $1} END {print n + 0}')
if [ "$passed" -eq 0 ]; then
  echo "FAILED: no loom model test ran (has solve::handoff::model moved?)" >&2
  exit 1
fi
echo "loom: $passed model tests passed"
