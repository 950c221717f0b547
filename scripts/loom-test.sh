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
cargo test --locked --release --features loom --lib -- solve::handoff::model --test-threads 1
