#!/usr/bin/env bash
# The live-app tests, N times in a row (default 5): the tests that run memctl beside a real
# LangGraph app writing at the same moment are the ones that could fail at random, and a test
# that fails at random in .ci/run turns good submissions away. Run this after changing one of
# them, or gc/prune/trim/rekey's behaviour beside an app. Same set-up as scripts/test.sh
# (venvs, node modules, a throwaway PostgreSQL cluster); stops at the first failure.
#
#   scripts/live_loop.sh [N]
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
runs="${1:-5}"

scripts/pyenv.sh
scripts/jsenv.sh
PGDIR="$(mktemp -d /tmp/memctl-pg.XXXXXX)"
cleanup_pg() { scripts/pg.sh stop "$PGDIR" || true; rm -rf "$PGDIR"; }
trap cleanup_pg EXIT
MEMCTL_TEST_PG="$(scripts/pg.sh start "$PGDIR")"
export MEMCTL_TEST_PG
export MEMCTL_PYTHON_NEW="$ROOT/.venv/new/bin/python"
export MEMCTL_PYTHON_OLD="$ROOT/.venv/old/bin/python"
export MEMCTL_PYTHON_PG="$ROOT/.venv/pg/bin/python"
export MEMCTL_PYTHON_DEEP="$ROOT/.venv/deep/bin/python"
export MEMCTL_NODE_MODULES="$ROOT/fixtures/js/node_modules"
# The Python harnesses need hash seed 0 and re-exec themselves without it, importing
# LangGraph twice (~1 s of CPU each run): every Python the tests start gets it from here.
export PYTHONHASHSEED=0


# Every test that runs beside a live app ("live" in its name), in the files that hold them.
live_tests=(
  "delta gc_beside_a_live_app"
  "interop live"
  "encrypted_interop live_app"
  "postgres_interop live"
  "read_only live"
  "store_live live_app"
)
cargo build --tests --locked --features env-tests >&2
for ((i = 1; i <= runs; i++)); do
  for entry in "${live_tests[@]}"; do
    read -r file filter <<<"$entry"
    echo "live_loop.sh: run $i/$runs: tests/$file.rs '$filter'" >&2
    cargo test --locked --features env-tests --test "$file" -- "$filter" >&2
  done
done
echo "live_loop.sh: $runs runs of every live-app test passed" >&2
