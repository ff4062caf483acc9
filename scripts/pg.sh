#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the Postgres tests (Debian's postgresql package).
#
#   scripts/pg.sh start DIR   initdb (trust auth, C locale) in DIR/data if needed, start it on a
#                             free port of 127.0.0.1 with its unix socket in DIR; prints the URL
#                             postgresql://postgres@127.0.0.1:PORT/postgres on stdout. TLS is on
#                             with a certificate for 'localhost' issued by a test CA (DIR/data/root.crt),
#                             and role 'tls_only' (if a test creates it) may connect over TLS only
#   scripts/pg.sh stop DIR    stops it (fast shutdown); DIR is left for the caller to remove
#
# PostgreSQL refuses to run as root: as root the cluster runs as the 'postgres' system user
# (runuser), which the package creates, and DIR is handed to it. apt-get installs the package
# when no /usr/lib/postgresql/*/bin/initdb exists (root only). Fails loudly, never skips.
set -euo pipefail

log() { printf 'pg.sh: %s\n' "$*" >&2; }

cmd="${1:-}"
dir="${2:-}"
[[ -n "$cmd" && -n "$dir" ]] || { log "usage: scripts/pg.sh start|stop DIR"; exit 2; }

pgbin() {
  local bin
  bin="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)"
  if [[ -z "$bin" || ! -x "$bin/initdb" ]]; then
    if [[ "$(id -u)" == 0 ]] && command -v apt-get >/dev/null; then
      log "installing postgresql with apt-get"
      apt-get install -y -q postgresql >&2 || { apt-get update -q >&2 && apt-get install -y -q postgresql >&2; }
      bin="$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)"
    else
      log "PostgreSQL server binaries not found (/usr/lib/postgresql/*/bin): install Debian's 'postgresql' package"
      exit 1
    fi
  fi
  printf '%s\n' "$bin"
}

as_owner() {
  if [[ "$(id -u)" == 0 ]]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

case "$cmd" in
  start)
    bin="$(pgbin)"
    mkdir -p "$dir"
    dir="$(cd "$dir" && pwd)"
    if [[ "$(id -u)" == 0 ]]; then
      id postgres >/dev/null 2>&1 || { log "no 'postgres' user to run the server as"; exit 1; }
      chown postgres: "$dir"
      chmod 0755 "$dir"
    fi
    if [[ ! -f "$dir/data/PG_VERSION" ]]; then
      as_owner "$bin/initdb" -D "$dir/data" -U postgres --auth=trust -E UTF8 --no-locale >"$dir/initdb.log" 2>&1 \
        || { log "initdb failed:"; cat "$dir/initdb.log" >&2; exit 1; }
      # TLS for the sslmode tests: a test CA (DIR/data/root.crt) and a server certificate it
      # issued that names localhost only.
      d="$dir/data"
      printf 'subjectAltName=DNS:localhost\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' >"$dir/ext.cnf"
      chmod 0644 "$dir/ext.cnf"
      as_owner sh -c "openssl req -x509 -newkey rsa:2048 -nodes -days 30 -subj /CN=memctl-test-ca -keyout '$d/ca.key' -out '$d/root.crt' \
          && openssl req -newkey rsa:2048 -nodes -subj /CN=localhost -keyout '$d/server.key' -out '$d/server.csr' \
          && openssl x509 -req -in '$d/server.csr' -CA '$d/root.crt' -CAkey '$d/ca.key' -CAcreateserial -days 30 \
             -extfile '$dir/ext.cnf' -out '$d/server.crt'" >/dev/null 2>&1 \
        || { log "openssl could not make the test certificates"; exit 1; }
      as_owner chmod 0600 "$dir/data/server.key"
      as_owner sh -c "{ printf 'hostnossl all tls_only 127.0.0.1/32 reject\nhostssl all tls_only 127.0.0.1/32 trust\n'; cat '$dir/data/pg_hba.conf'; } > '$dir/data/hba.new' && mv '$dir/data/hba.new' '$dir/data/pg_hba.conf'"
    fi
    port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
    as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/pg.log" -w -t 60 start \
      -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=100 -c ssl=on" \
      >/dev/null || { log "the server did not start:"; cat "$dir/pg.log" >&2; exit 1; }
    printf '%s\n' "$port" >"$dir/port"
    printf 'postgresql://postgres@127.0.0.1:%s/postgres\n' "$port"
    ;;
  stop)
    bin="$(pgbin)"
    if [[ -f "$dir/data/postmaster.pid" ]]; then
      as_owner "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null || log "stop failed (already stopped?)"
    fi
    ;;
  *)
    log "unknown command '$cmd' (start or stop)"
    exit 2
    ;;
esac
