#!/usr/bin/env bash
# Create/refresh fixtures/js/node_modules: real LangGraph.js (pinned by
# fixtures/js/package-lock.json) for the JS fixture (fixtures/js/generate.mjs) and the
# LangGraph.js interop tests (tests/js_delta.rs). Runs `npm ci` only when node_modules is
# missing or the sha256 of the lock differs from the stamp fixtures/js/.package-lock.sha256.
# Needs node (20) and npm. Non-interactive; safe with CI=true.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="$ROOT/fixtures/js"
STAMP="$DIR/.package-lock.sha256"

log() { printf 'jsenv: %s\n' "$*" >&2; }

command -v node >/dev/null 2>&1 || { log "node is not installed (Node.js 20 is needed)"; exit 1; }
command -v npm >/dev/null 2>&1 || { log "npm is not installed"; exit 1; }

if command -v sha256sum >/dev/null 2>&1; then
  want="$(sha256sum "$DIR/package-lock.json" | awk '{print $1}')"
else
  want="$(shasum -a 256 "$DIR/package-lock.json" | awk '{print $1}')"
fi
if [[ -f "$DIR/node_modules/@langchain/langgraph/package.json" && -f "$STAMP" && "$(cat "$STAMP")" == "$want" ]]; then
  log "up to date ($DIR/node_modules)"
  exit 0
fi
log "npm ci in $DIR"
rm -f "$STAMP"
(cd "$DIR" && npm ci --no-audit --no-fund --loglevel=error </dev/null >&2)
printf '%s\n' "$want" >"$STAMP"
log "ready"
