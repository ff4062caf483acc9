#!/usr/bin/env bash
# The long fuzz run: tests/fuzz.rs (the same code as the bounded run in `cargo test`) for
# N minutes, both halves at once: codec and model entry points in process on mutants of
# tests/fuzz-corpus/, and the real binary on databases with mutated rows.
#
#   scripts/fuzz.sh [--minutes N] [--seed S]     (default: 10 minutes, a seed from the clock)
#
# Prints mutants / command runs, panics=, hangs=, over-memory= per half and exits non-zero on
# any failure. Failing inputs are saved under target/fuzz-failures/ (replay one with
# MEMCTL_FUZZ_REPLAY=FILE cargo test --test fuzz replay -- --ignored --nocapture; replay the run
# with --seed). A debug build, on purpose: integer overflow checks are on.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

minutes=10
seed=""
while [ $# -gt 0 ]; do
    case "$1" in
        --minutes) minutes="$2"; shift 2 ;;
        --seed) seed="$2"; shift 2 ;;
        -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
        *) echo "fuzz.sh: unknown argument '$1' (--minutes N, --seed S)" >&2; exit 2 ;;
    esac
done
seed="${seed:-$(date +%s)}"

cargo test --test fuzz --no-run >/dev/null 2>&1 || cargo test --test fuzz --no-run
log="$ROOT/target/fuzz-long.log"
echo "fuzz.sh: $minutes minute(s), seed $seed; log in $log" >&2
status=0
MEMCTL_FUZZ_SECONDS=$((minutes * 60)) MEMCTL_FUZZ_SEED="$seed" RUST_BACKTRACE=0 \
    cargo test --test fuzz -- --nocapture --test-threads 2 >"$log" 2>&1 || status=$?
grep -a 'seed 0x[0-9a-f]*: ' "$log" || true
if [ "$status" -ne 0 ]; then
    grep -a -A3 'failing\|panicked at\|memory allocation' "$log" | head -40 >&2 || true
    echo "fuzz.sh: FAILED (exit $status), see $log and target/fuzz-failures/" >&2
fi
exit "$status"
