#!/usr/bin/env bash
# memctl benchmarks: memctl vs the Python ways of doing the same thing, on one database file.
#
#   benches/run.sh [--small] [--runs N] [--slow-runs N] [--db PATH] [--rev REV] [--gen-args "..."]
#
#   --small        the ~47 MiB preset (default: ~970 MiB, 32k checkpoints: the real-world size)
#   --runs N       runs per memctl command and per SQL floor (median reported; default 5)
#   --slow-runs N  runs per Python walk/loop and peer CLI (default 3; they take minutes on 1 GB)
#   --db PATH      benchmark this database instead (copied once to target/bench/, never modified)
#   --rev REV      build memctl from this committed revision (git archive into target/bench/)
#                  instead of the working tree
#   --gen-args ".." extra arguments for benches/generate.py (e.g. "--threads 300 --turns 20");
#                  part of the cache key
#
# Writes the table to stdout and to BENCHMARKS.md (one section per database). See benches/README.md.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1

SMALL=0 RUNS=5 SLOW_RUNS=3 DB="" REV="" GEN_ARGS=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --small) SMALL=1 ;;
    --runs) RUNS="$2"; shift ;;
    --slow-runs) SLOW_RUNS="$2"; shift ;;
    --db) DB="$2"; shift ;;
    --rev) REV="$2"; shift ;;
    --gen-args) GEN_ARGS="$2"; shift ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    *) echo "run.sh: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done

log() { printf 'bench: %s\n' "$*" >&2; }
BENCH="$ROOT/target/bench"
mkdir -p "$BENCH"

# ---------------------------------------------------------------- memctl (release)
if [[ -n "$REV" ]]; then
  sha="$(git rev-parse --short "$REV^{commit}")"
  src="$BENCH/src-$sha"
  if [[ ! -f "$src/Cargo.toml" ]]; then
    rm -rf "$src"; mkdir -p "$src"
    git archive "$sha" | tar -x -C "$src"
  fi
  log "building memctl $sha (release, from git archive)"
  (cd "$src" && CARGO_TARGET_DIR="$BENCH/cargo-target" cargo build --release --quiet)
  MEMCTL="$BENCH/cargo-target/release/memctl"
  MEMCTL_REV="$sha (git archive of $REV)"
else
  log "building memctl (release, working tree)"
  cargo build --release --quiet
  MEMCTL="$ROOT/target/release/memctl"
  MEMCTL_REV="$(git rev-parse --short HEAD)"
  if ! git diff --quiet HEAD -- src Cargo.toml Cargo.lock 2>/dev/null; then
    MEMCTL_REV="$MEMCTL_REV+dirty (uncommitted changes in src/Cargo.*)"
  fi
fi

# ---------------------------------------------------------------- venvs
ensure_venv() {  # name requirements-file [extra file that feeds the stamp]
  local venv="$ROOT/.venv/$1" req="$2" want
  want="$(cat "$req" "${@:3}" | sha256sum | awk '{print $1}')"
  if [[ -x "$venv/bin/python" && -f "$venv/.requirements.sha256" && "$(cat "$venv/.requirements.sha256")" == "$want" ]]; then
    return 0
  fi
  log "creating .venv/$1 from ${req#"$ROOT"/}"
  rm -rf "$venv"
  python3 -m venv "$venv"
  (cd "$(dirname "$req")" && "$venv/bin/python" -m pip install --quiet -r "$(basename "$req")" </dev/null >&2) || {
    rm -rf "$venv"; return 1; }
  printf '%s\n' "$want" >"$venv/.requirements.sha256"
}
ensure_venv bench "$ROOT/benches/requirements.txt" "$ROOT/fixtures/requirements-new.txt"
PY="$ROOT/.venv/bench/bin/python"
PEER_ARGS=()
if ensure_venv bench-peer "$ROOT/benches/requirements-peer.txt" "$ROOT/fixtures/requirements-old.txt" \
    && [[ -x "$ROOT/.venv/bench-peer/bin/langgraph-checkpoint" ]]; then
  PEER_ARGS=(--peer "$ROOT/.venv/bench-peer/bin/langgraph-checkpoint" --peer-python "$ROOT/.venv/bench-peer/bin/python")
else
  PEER_ARGS=(--peer-note "langgraph-checkpoint-cli did not install (see pip output above)")
fi

# ---------------------------------------------------------------- database
GEN_SUMMARY=()
if [[ -n "$DB" ]]; then
  [[ -f "$DB" ]] || { log "no such file: $DB"; exit 1; }
  LABEL="user-$(basename "$DB" | tr -c 'A-Za-z0-9._-' '_')"
  FILE="$BENCH/$LABEL"
  # LangGraph's SqliteSaver runs setup() (WAL, CREATE TABLE IF NOT EXISTS) and trims write, so
  # everything runs on a copy; the read tasks all share that one copy.
  if [[ ! -f "$FILE" || "$DB" -nt "$FILE" ]]; then
    log "copying $DB to $FILE"
    rm -f "$FILE" "$FILE-wal" "$FILE-shm"
    "$PY" - "$DB" "$FILE" <<'EOF'
import sqlite3, sys
src = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
dst = sqlite3.connect(sys.argv[2])
src.backup(dst)  # consistent copy, WAL content included
dst.execute("PRAGMA journal_mode=WAL"); dst.execute("PRAGMA wal_checkpoint(TRUNCATE)")
EOF
  fi
else
  preset="default"; [[ $SMALL == 1 ]] && preset="small"
  extra="$(printf '%s' "$GEN_ARGS" | tr -c 'A-Za-z0-9' '_')"
  LABEL="$preset-seed1${extra:+-$extra}"
  FILE="$BENCH/db-$LABEL.sqlite"
  if [[ ! -f "$FILE" || ! -f "$FILE.json" ]]; then
    log "generating $FILE (benches/generate.py $([[ $SMALL == 1 ]] && echo --small) --seed 1 $GEN_ARGS)"
    start=$(date +%s)
    # shellcheck disable=SC2086
    "$PY" "$ROOT/benches/generate.py" $([[ $SMALL == 1 ]] && echo --small) --seed 1 $GEN_ARGS --out "$FILE"
    log "generated in $(( $(date +%s) - start )) s"
  else
    log "reusing cached $FILE"
  fi
  GEN_SUMMARY=(--gen-summary "$FILE.json")
fi

# ---------------------------------------------------------------- measure
exec "$PY" "$ROOT/benches/bench.py" --memctl "$MEMCTL" --memctl-rev "$MEMCTL_REV" --db "$FILE" \
  --label "$LABEL" --runs "$RUNS" --slow-runs "$SLOW_RUNS" "${PEER_ARGS[@]}" "${GEN_SUMMARY[@]}"
