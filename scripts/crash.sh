#!/usr/bin/env bash
# The long crash-consistency run: tests/crash.rs (the same code as the bounded run in
# `cargo test`) with N trials: trim --all, rm --purge, gc, prune and summarize (against a
# local chat completions server) on WAL copies of fixtures/new.sqlite, each killed with
# SIGKILL after a random 0-1.1x its run time; then integrity_check, every thread exactly as
# before or as after, and real LangGraph (.venv/new) loads threads of the killed files.
#
#   scripts/crash.sh [--kills N] [--seed S]     (default: 1000 trials, a seed from the clock)
#
# Prints trials, kills, inconsistent= (per command too); exits non-zero on any inconsistent
# file (kept under target/crash-failures/) or a thread LangGraph cannot load.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

kills=1000
seed=""
while [ $# -gt 0 ]; do
    case "$1" in
        --kills) kills="$2"; shift 2 ;;
        --seed) seed="$2"; shift 2 ;;
        -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
        *) echo "crash.sh: unknown argument '$1' (--kills N, --seed S)" >&2; exit 2 ;;
    esac
done
seed="${seed:-$(date +%s)}"
export MEMCTL_PYTHON_NEW="${MEMCTL_PYTHON_NEW:-$ROOT/.venv/new/bin/python}"

cargo test --test crash --no-run >/dev/null 2>&1 || cargo test --test crash --no-run
log="$ROOT/target/crash-long.log"
echo "crash.sh: $kills trials, seed $seed; log in $log" >&2
status=0
MEMCTL_CRASH_KILLS="$kills" MEMCTL_CRASH_SEED="$seed" RUST_BACKTRACE=0 \
    cargo test --test crash -- --nocapture >"$log" 2>&1 || status=$?
grep -a -A6 '^crash: seed' "$log" || true
if [ "$status" -ne 0 ]; then
    grep -a -A10 'panicked at' "$log" | head -40 >&2 || true
    echo "crash.sh: FAILED (exit $status), see $log and target/crash-failures/" >&2
fi
exit "$status"
