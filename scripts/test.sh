#!/usr/bin/env bash
# The whole test suite, set-up included. What a newcomer runs, and what CI runs.
#   1. the pinned Python virtualenvs with real LangGraph (.venv/new, .venv/old, .venv/pg
#      with langgraph-checkpoint-postgres, and .venv/deep with deepagents) for the interop tests (created when missing;
#      scripts/pyenv.sh), LangGraph.js in fixtures/js/node_modules (scripts/jsenv.sh: npm ci
#      when missing or when the lock changed), and a throwaway PostgreSQL cluster for the Postgres tests
#      (scripts/pg.sh: Debian's postgresql, installed with apt-get when missing; a temp dir,
#      a free port on 127.0.0.1, stopped and removed at exit); tmux for the terminal tests
#      (tests/confirm.rs; installed with apt-get when missing);
#   2. formatting, lints and docs (cargo fmt --check, clippy -D warnings, cargo doc -D warnings);
#   3. every Rust test: unit, CLI, fixtures, and interop tests that hand memctl's rewrites to
#      real LangGraph, with `--features env-tests`, the switch that turns the
#      environment-bound tests on (a plain `cargo test` leaves them out). They fail (never
#      skip) when LangGraph, LangGraph.js or the server is missing (tests/environment.rs
#      says which);
#   4. the package a user installs (scripts/wheel.sh): the crate's file list, the Python wheel
#      built by maturin (a release build), installed into a fresh venv and run from there.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

echo "test.sh: python environments" >&2
scripts/pyenv.sh

echo "test.sh: LangGraph.js (node_modules)" >&2
scripts/jsenv.sh

echo "test.sh: tmux (tests/confirm.rs runs memctl in a real terminal)" >&2
if ! command -v tmux >/dev/null; then
  if [[ "$(id -u)" == 0 ]] && command -v apt-get >/dev/null; then
    echo "test.sh: installing tmux with apt-get" >&2
    apt-get install -y -q tmux >&2 || { apt-get update -q >&2 && apt-get install -y -q tmux >&2; }
  else
    echo "test.sh: tmux not found: install Debian's 'tmux' package (apt-get install tmux)" >&2
    exit 1
  fi
fi

echo "test.sh: PostgreSQL server" >&2
PGDIR="$(mktemp -d /tmp/memctl-pg.XXXXXX)"
cleanup_pg() { scripts/pg.sh stop "$PGDIR" || true; rm -rf "$PGDIR"; }
trap cleanup_pg EXIT
MEMCTL_TEST_PG="$(scripts/pg.sh start "$PGDIR")"
export MEMCTL_TEST_PG
echo "test.sh: PostgreSQL at $MEMCTL_TEST_PG" >&2

echo "test.sh: cargo fmt --check" >&2
cargo fmt --all -- --check

echo "test.sh: cargo clippy" >&2
cargo clippy --locked --all-targets --features env-tests -- -D warnings

echo "test.sh: cargo doc" >&2
RUSTDOCFLAGS="-D warnings" cargo doc --locked --no-deps

echo "test.sh: cargo test" >&2
export MEMCTL_PYTHON_NEW="$ROOT/.venv/new/bin/python"
export MEMCTL_PYTHON_OLD="$ROOT/.venv/old/bin/python"
export MEMCTL_PYTHON_PG="$ROOT/.venv/pg/bin/python"
export MEMCTL_PYTHON_DEEP="$ROOT/.venv/deep/bin/python"
export MEMCTL_PYTHON_VEC="$ROOT/.venv/vec/bin/python"
export MEMCTL_NODE_MODULES="$ROOT/fixtures/js/node_modules"
# The Python harnesses need hash seed 0 and re-exec themselves without it, importing
# LangGraph twice (~1 s of CPU each run): every Python the tests start gets it from here.
export PYTHONHASHSEED=0
# A snapshot that does not match fails the run and leaves no .snap.new behind.
export INSTA_UPDATE=no
cargo test --locked --no-fail-fast --features env-tests

echo "test.sh: wheel (scripts/wheel.sh)" >&2
scripts/wheel.sh
