#!/usr/bin/env bash
# Create/refresh the pinned Python virtualenvs used to generate LangGraph fixtures.
#   .venv/new  <- fixtures/requirements-new.txt
#   .venv/old  <- fixtures/requirements-old.txt
#   .venv/pg   <- fixtures/requirements-pg.txt (the new stack plus langgraph-checkpoint-postgres)
#   .venv/deep <- fixtures/requirements-deep.txt (the new stack plus deepagents: fixtures/deep.sqlite)
#   .venv/vec  <- fixtures/requirements-vec.txt (the new stack plus sqlite-vec: fixtures/store-vec.sqlite),
#                 made from $PYTHON_VEC (default /usr/bin/python3): the store loads sqlite-vec as a
#                 SQLite extension, which needs a Python whose sqlite3 can load extensions.
# A venv is (re)built only when it is missing or when the sha256 of its requirements
# file differs from the stamp stored inside it (.venv/<gen>/.requirements.sha256).
# Usage: scripts/pyenv.sh [new|old|pg|deep|vec ...]   (default: all five). Non-interactive; safe with CI=true.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYTHON="${PYTHON:-python3}"
export PIP_DISABLE_PIP_VERSION_CHECK=1
export PIP_NO_INPUT=1

log() { printf 'pyenv: %s\n' "$*" >&2; }

sha256_of() {
  if command -v sha256sum >/dev/null 2>&1; then
    sha256sum "$1" | awk '{print $1}'
  else
    shasum -a 256 "$1" | awk '{print $1}'
  fi
}

ensure_venv() {
  local gen="$1"
  local python="$PYTHON"
  if [[ "$gen" == vec ]]; then
    python="${PYTHON_VEC:-/usr/bin/python3}"
    "$python" -c 'import sqlite3; sqlite3.connect(":memory:").enable_load_extension(True)' 2>/dev/null \
      || { log "vec: $python cannot load SQLite extensions (set PYTHON_VEC to one that can)"; exit 1; }
    # Debian's python3 makes venvs only with its python3-venv package.
    if ! "$python" -c 'import ensurepip' 2>/dev/null; then
      if [[ "$(id -u)" == 0 ]] && command -v apt-get >/dev/null; then
        log "vec: installing Debian's python3-venv"
        apt-get install -y -q python3-venv >&2 || { apt-get update -q >&2 && apt-get install -y -q python3-venv >&2; }
      else
        log "vec: $python has no venv support: install Debian's python3-venv"; exit 1
      fi
    fi
  fi
  local req="$ROOT/fixtures/requirements-$gen.txt"
  local venv="$ROOT/.venv/$gen"
  local stamp="$venv/.requirements.sha256"
  [[ -f "$req" ]] || { log "missing $req"; exit 1; }
  local want
  want="$(sha256_of "$req")"
  if [[ -x "$venv/bin/python" && -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
    log "$gen: up to date ($venv)"
    return 0
  fi
  if [[ -d "$venv" ]]; then
    log "$gen: requirements changed or venv incomplete; rebuilding $venv"
    rm -rf "$venv"
  else
    log "$gen: creating $venv"
  fi
  mkdir -p "$ROOT/.venv"
  "$python" -m venv "$venv"
  log "$gen: installing $(basename "$req")"
  "$venv/bin/python" -m pip install --quiet --upgrade pip </dev/null >&2 || log "$gen: pip upgrade failed (continuing)"
  "$venv/bin/python" -m pip install --quiet -r "$req" </dev/null >&2
  printf '%s\n' "$want" >"$stamp"
  log "$gen: ready"
}

gens=("$@")
[[ ${#gens[@]} -gt 0 ]] || gens=(new old pg deep vec)
for g in "${gens[@]}"; do
  case "$g" in
    new|old|pg|deep|vec|redis) ensure_venv "$g" ;;
    *) log "unknown generation '$g' (expected new, old, pg, deep, vec or redis)"; exit 2 ;;
  esac
done
