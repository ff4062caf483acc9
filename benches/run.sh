#!/usr/bin/env bash
# memctl benchmarks: memctl vs the Python ways of doing the same thing, on one database file.
#
#   benches/run.sh [--data realistic|legacy|both|small|realistic-small] [--scale F] [--runs N]
#                  [--slow-runs N] [--db PATH] [--rev REV] [--memctl BIN] [--gen-args "..."]
#   benches/run.sh --scaling "1 4 10" [--long-thread N] [--no-python] [--runs N] [--slow-runs N]
#
#   --data D       which generated data set (default both: realistic, then legacy, each its own
#                  section of BENCHMARKS.md). realistic: production-like (benches/realistic.py,
#                  ~1 GB at --scale 1); legacy: the first data set (~970 MiB, 32k checkpoints);
#                  small: legacy at ~47 MiB; realistic-small: 60 realistic threads
#   --small        same as --data small
#   --scale F      realistic: F times the threads (and bytes) of 1x
#   --runs N       runs per memctl command and per SQL floor (median reported; default 5)
#   --slow-runs N  runs per Python walk/loop and peer CLI (default 3; they take minutes on 1 GB)
#   --db PATH      benchmark this database instead (copied once to target/bench/, never modified)
#   --rev REV      build memctl from this committed revision (git archive into target/bench/)
#                  instead of the working tree
#   --memctl BIN   use this memctl binary (no build); its revision is taken from HEAD
#   --gen-args ".." extra arguments for benches/generate.py (e.g. "--threads 300"); part of the
#                  cache key
#   --scaling "S.." how cost grows: realistic data at each scale (e.g. "1 4 10"), plus one thread
#                  of --long-thread N messages (default 100000; 0: none); time and peak RSS per job
#                  and size (benches/scaling.py), one section of BENCHMARKS.md; --runs defaults to
#                  3 and --slow-runs to 1 there; --no-python measures memctl alone
#
# Generated files are cached in target/bench/ (db-<data>[-x<scale>]-seed1.sqlite); a realistic
# file is regenerated when benches/realistic.py's DATA_VERSION changed. Run it niced on a shared
# machine (`nice -n 19 benches/run.sh`): generation and the Python baselines inherit it.
# Writes the table to stdout and to BENCHMARKS.md (one section per database). See benches/README.md.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1

DATA="both" SCALE="1" RUNS="" SLOW_RUNS="" DB="" REV="" MEMCTL_BIN="" GEN_ARGS="" SCALING="" LONG_THREAD=100000
NO_PYTHON=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --data) DATA="$2"; shift ;;
    --small) DATA="small" ;;
    --scale) SCALE="$2"; shift ;;
    --runs) RUNS="$2"; shift ;;
    --slow-runs) SLOW_RUNS="$2"; shift ;;
    --db) DB="$2"; shift ;;
    --rev) REV="$2"; shift ;;
    --memctl) MEMCTL_BIN="$2"; shift ;;
    --gen-args) GEN_ARGS="$2"; shift ;;
    --scaling) SCALING="$2"; shift ;;
    --long-thread) LONG_THREAD="$2"; shift ;;
    --no-python) NO_PYTHON=(--no-python) ;;
    -h|--help) sed -n '2,30p' "$0"; exit 0 ;;
    *) echo "run.sh: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
case "$DATA" in realistic|legacy|both|small|realistic-small) ;; *) echo "run.sh: --data $DATA?" >&2; exit 2 ;; esac
if [[ -n "$SCALING" ]]; then RUNS="${RUNS:-3}" SLOW_RUNS="${SLOW_RUNS:-1}"; else RUNS="${RUNS:-5}" SLOW_RUNS="${SLOW_RUNS:-3}"; fi

log() { printf 'bench: %s\n' "$*" >&2; }
BENCH="$ROOT/target/bench"
mkdir -p "$BENCH"

# ---------------------------------------------------------------- memctl (release)
if [[ -n "$MEMCTL_BIN" ]]; then
  MEMCTL="$(cd "$(dirname "$MEMCTL_BIN")" && pwd)/$(basename "$MEMCTL_BIN")"
  [[ -x "$MEMCTL" ]] || { log "not executable: $MEMCTL_BIN"; exit 1; }
  # the last commit that touched the sources (a bench-only commit on top does not change the binary)
  MEMCTL_REV="$(git log -1 --format=%h -- src Cargo.toml Cargo.lock) (last commit touching src/ and Cargo.*; prebuilt $MEMCTL_BIN)"
  log "using $MEMCTL"
elif [[ -n "$REV" ]]; then
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
# generate DATA SCALE EXTRA_ARGS -> sets FILE, LABEL (cached; a realistic file is regenerated
# when its summary records another DATA_VERSION than benches/realistic.py's)
DATA_VERSION="$(sed -n 's/^DATA_VERSION = \([0-9]*\).*/\1/p' "$ROOT/benches/realistic.py")"
generate() {
  local data="$1" scale="$2" extra="$3" key
  key="$(printf '%s' "$extra" | tr -c 'A-Za-z0-9' '_')"
  LABEL="$data"
  [[ "$scale" != 1 ]] && LABEL="$LABEL-x$scale"
  LABEL="$LABEL-seed1${key:+-$key}"
  FILE="$BENCH/db-$LABEL.sqlite"
  # legacy/small: the first generator's data, unchanged; their cache is always kept
  if [[ -f "$FILE" && -f "$FILE.json" ]] && { [[ "$data" == legacy || "$data" == small ]] ||
       grep -q "\"data_version\": $DATA_VERSION\b" "$FILE.json"; }; then
    log "reusing cached $FILE"
    return 0
  fi
  log "generating $FILE (benches/generate.py --preset $data --scale $scale --seed 1 $extra)"
  local start; start=$(date +%s)
  # shellcheck disable=SC2086
  "$PY" "$ROOT/benches/generate.py" --preset "$data" --scale "$scale" --seed 1 $extra --out "$FILE"
  log "generated in $(( $(date +%s) - start )) s"
}

data_note() {
  case "$1" in
    realistic*) echo "realistic (benches/realistic.py): production-like threads of 5-40 turns, long-tailed message lengths (pastes and tool outputs up to 50 kB), markdown and code, CJK and emoji, a Zipf vocabulary of ~59k words, tool calls with JSON arguments; 1 thread in 150 is a long agent session of 1,000-4,000 messages" ;;
    legacy*|small*) echo "legacy (the first data set): 1-20 turns (1-10 for small), a ~150-word vocabulary, replies up to 8 kB" ;;
    *) echo "" ;;
  esac
}

if [[ -n "$SCALING" ]]; then
  SPECS=()
  for s in $SCALING; do
    generate realistic "$s" "$GEN_ARGS"
    SPECS+=(--db "${s}x=$FILE")
  done
  if [[ "$LONG_THREAD" != 0 ]]; then
    generate long-thread 1 "--messages $LONG_THREAD"
    SPECS+=(--db "1 thread of $LONG_THREAD messages=$FILE")
  fi
  exec "$PY" "$ROOT/benches/scaling.py" --memctl "$MEMCTL" --memctl-rev "$MEMCTL_REV" --runs "$RUNS" \
    --slow-runs "$SLOW_RUNS" "${NO_PYTHON[@]}" "${SPECS[@]}"
fi

run_bench() {  # FILE LABEL [generation summary]
  local gen=()
  [[ -n "${3:-}" ]] && gen=(--gen-summary "$3")
  "$PY" "$ROOT/benches/bench.py" --memctl "$MEMCTL" --memctl-rev "$MEMCTL_REV" --db "$1" \
    --label "$2" --runs "$RUNS" --slow-runs "$SLOW_RUNS" "${PEER_ARGS[@]}" "${gen[@]}" \
    --data-note "$(data_note "$2")"
}

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
  run_bench "$FILE" "$LABEL"
  exit 0
fi

case "$DATA" in
  both) SETS=(realistic legacy) ;;
  *) SETS=("$DATA") ;;
esac
for d in "${SETS[@]}"; do
  if [[ "$d" == realistic ]]; then generate realistic "$SCALE" "$GEN_ARGS"; else generate "$d" 1 "$GEN_ARGS"; fi
  run_bench "$FILE" "$LABEL" "$FILE.json"
done
