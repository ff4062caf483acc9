#!/usr/bin/env python3
"""Postgres floors (issue #30): memctl's whole process against the minimal SQL that does the
same job, run by `psql`, on the realistic data at each --scale, in one run. Runs under
.venv/pg (langgraph-checkpoint-postgres, for the loaded database's sample check).

    .venv/pg/bin/python benches/floors.py --url ADMIN_URL --memctl target/release/memctl \
        --scale 1 10 [--work DIR] [--runs 3] [--big-runs 1] [--timeout 300] [--perf] \
        [--markdown OUT.md] [--load-only]

ADMIN_URL: a superuser URL of a scratch server with pg_stat_statements loaded
(`shared_preload_libraries = 'pg_stat_statements'`; the script creates the extension in the
admin database). Per scale N:

1. data: WORK/realistic-xN-seed1.sqlite from `benches/generate.py --preset realistic --scale N
   --seed 1` unless cached; loaded into database floors_xN_src by `memctl migrate` (COPY) after
   `PostgresSaver.setup()`, checked against real PostgresSaver (`get_tuple` and `list` of a
   sample of threads equal to SqliteSaver's on the source file), then every checkpoint's
   metadata gets the `user_id` an app passing `configurable={"user_id": ...}` would have
   written (`user-00`..`user-19`, from the thread id's md5) for `forget --meta`, and
   `VACUUM ANALYZE`. Cached: a later run reuses floors_xN_src (WORK/floors_xN_src.json).
2. for each job, memctl (release, `--format json`, `--yes` where it has one; trim also with
   `--settle 0s`) and then its floor through `psql -f` (a script written to WORK), each
   `--runs` times (`--big-runs` for scales above 2; forget once: see `forget_note`), every
   rewriting run on its own copy (CREATE DATABASE ... TEMPLATE ... STRATEGY FILE_COPY, then
   sync). Around each measured process pg_stat_statements is reset and read (that database's
   statements: total_exec_time, calls; the top ones kept in WORK/xN-JOB-*.statements). A memctl
   run past --timeout is killed and reported as longer. Floors (the same rows as memctl's run:
   the SQL constants and the *_script functions below) are checked: the keys of every table
   after the floor equal to memctl's copy's, or the same threads found.
3. prints the tables; with --perf, one more run of each job above 1.25x, memctl and its floor,
   under `perf record -a` splits the CPU between the client, its server backends and the rest.
   A first line gives the fixed cost of a process (empty database) and of a round trip.
4. with --threads N (default 1,000,000; 0 skips it): benches/scale.py's Postgres measures on N
   short threads in database memctl_scale (made by benches/many.py --pg when missing, about
   4 minutes and 6.7 GiB at a million): `threads list --limit 50 --sort updated` without and
   with the index `memctl stats` recommends, the first line and peak RSS of the whole-database
   lists, and `prune --idle 30d` beside an app (its longest put).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import sqlite3
import statistics
import subprocess
import sys
import threading
import time
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
TIME = "/usr/bin/time" if Path("/usr/bin/time").exists() else None
GOAL = 1.25
USERS = 20
FORGET_USER = "user-07"
NEEDLE = "Kubernetes"


def db_url(admin: str, db: str) -> str:
    base, _, query = admin.partition("?")
    return base.rsplit("/", 1)[0] + f"/{db}" + (f"?{query}" if query else "")


def load_avg() -> str:
    return f"{os.getloadavg()[0]:.1f}"


def log(msg: str) -> None:
    print(f"[{datetime.now(timezone.utc):%H:%M:%S} load {load_avg()}] {msg}", file=sys.stderr, flush=True)


# ---- processes ---------------------------------------------------------------------------


class Killed(Exception):
    """The process ran past --timeout and was killed (its process group, which this script made)."""

    def __init__(self, wall: float, cpu: float):
        super().__init__(f"killed after {wall:.0f} s")
        self.wall, self.cpu = wall, cpu


def run_once(cmd: list[str], out: Path, ok=(0,), timeout: float | None = None) -> tuple[float, float, int]:
    """Wall seconds, CPU seconds (user+sys, wait4) and peak RSS (KiB, /usr/bin/time's %M: a
    forked child's ru_maxrss would start at this script's size) of one process. Past
    `timeout` seconds its process group (its own session) is killed: Killed."""
    rss_file = out.with_suffix(".rss")
    full = [TIME, "-f", "%M", "-o", str(rss_file), *cmd] if TIME else cmd
    err_file = out.with_suffix(".err")
    killed = False
    with open(out, "wb") as f, open(err_file, "wb") as e:
        t0 = time.perf_counter()
        p = subprocess.Popen(full, stdout=f, stderr=e, start_new_session=True)
        while True:
            pid, status, ru = os.wait4(p.pid, os.WNOHANG)
            if pid:
                break
            if timeout is not None and time.perf_counter() - t0 > timeout and not killed:
                os.killpg(p.pid, 9)
                killed = True
            time.sleep(0.002)
        wall = time.perf_counter() - t0
    if killed:
        raise Killed(wall, ru.ru_utime + ru.ru_stime)
    code = os.waitstatus_to_exitcode(status)
    if code not in ok:
        err = err_file.read_text(errors="replace")
        sys.exit(f"floors: {' '.join(cmd[:4])}… failed ({code}): {err[-2000:]}")
    rss = ru.ru_maxrss
    if TIME and rss_file.exists():
        rss = int(rss_file.read_text().split()[-1])
    return wall, ru.ru_utime + ru.ru_stime, rss


def psql_cmd(url: str, script: Path) -> list[str]:
    return ["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", url, "-f", str(script)]


# ---- data --------------------------------------------------------------------------------


def sqlite_for(work: Path, scale: float) -> Path:
    return work / f"realistic-x{scale:g}-seed1.sqlite"


def ensure_sqlite(work: Path, scale: float, jobs: int) -> Path:
    path = sqlite_for(work, scale)
    summary = path.with_suffix(".sqlite.json")
    if path.exists() and summary.exists():
        return path
    log(f"generating {path} (generate.py --preset realistic --scale {scale:g} --seed 1 --jobs {jobs})")
    subprocess.run([sys.executable, str(HERE / "generate.py"), "--preset", "realistic", "--scale",
                    f"{scale:g}", "--seed", "1", "--jobs", str(jobs), "--out", str(path)], check=True)
    return path


def user_of(thread_id: str) -> str:
    import hashlib

    return f"user-{int(hashlib.md5(thread_id.encode()).hexdigest()[:8], 16) % USERS:02d}"


def sample_check(sqlite_path: Path, url: str, n: int = 12) -> str:
    """Real PostgresSaver reads a sample of threads as SqliteSaver reads the source file:
    the latest checkpoint (values, versions, metadata, pending writes) and the history's ids."""
    from langgraph.checkpoint.postgres import PostgresSaver
    from langgraph.checkpoint.sqlite import SqliteSaver

    con = sqlite3.connect(f"file:{sqlite_path.resolve()}?mode=ro", uri=True, check_same_thread=False)
    lite = SqliteSaver(con)
    threads = [r[0] for r in con.execute("SELECT DISTINCT thread_id FROM checkpoints ORDER BY 1")]
    step = max(1, len(threads) // n)
    sample = threads[::step][:n]
    with PostgresSaver.from_conn_string(url) as pg:
        for t in sample:
            cfg = {"configurable": {"thread_id": t, "checkpoint_ns": ""}}
            a, b = lite.get_tuple(cfg), pg.get_tuple(cfg)
            if a is None or b is None:
                raise SystemExit(f"floors: thread {t}: missing after the load")
            for key in ("channel_values", "channel_versions", "id"):
                if a.checkpoint[key] != b.checkpoint[key]:
                    raise SystemExit(f"floors: thread {t}: {key} differs after the load")
            if a.metadata != b.metadata or list(a.pending_writes or []) != list(b.pending_writes or []):
                raise SystemExit(f"floors: thread {t}: metadata or pending writes differ after the load")
            ids_a = [x.config["configurable"]["checkpoint_id"] for x in lite.list(cfg)]
            ids_b = [x.config["configurable"]["checkpoint_id"] for x in pg.list(cfg)]
            if ids_a != ids_b:
                raise SystemExit(f"floors: thread {t}: history differs after the load")
    return f"{len(sample)} sampled threads read back equal by PostgresSaver (get_tuple, list)"


def ensure_loaded(admin, a, scale: float, src: str) -> dict:
    """The loaded database (cached: the SQLite file is not needed again once loaded)."""
    stamp = a.work / f"{src}.json"
    exists = admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", (src,)).fetchone()
    if exists and stamp.exists():
        info = json.loads(stamp.read_text())
        if info.get("sqlite") == str(sqlite_for(a.work, scale)) and info.get("prepared"):
            return info
    sqlite_path = ensure_sqlite(a.work, scale, a.jobs)
    url = db_url(a.url, src)
    admin.execute(f"DROP DATABASE IF EXISTS {src} WITH (FORCE)")
    admin.execute(f"CREATE DATABASE {src}")
    from langgraph.checkpoint.postgres import PostgresSaver

    with PostgresSaver.from_conn_string(url) as s:
        s.setup()
    log(f"memctl migrate {sqlite_path.name} -> {src}")
    out = a.work / f"migrate-{src}.json"
    wall, cpu, rss = run_once([a.memctl, "migrate", "--db", str(sqlite_path), "--to", url,
                               "--format", "json"], out)
    log(f"migrated in {wall:.1f} s (CPU {cpu:.1f} s, {rss / 1024:.0f} MiB)")
    checked = sample_check(sqlite_path, url)
    log(checked)
    import psycopg

    with psycopg.connect(url, autocommit=True) as c:
        # What LangGraph writes for an app that passes configurable={"user_id": ...}: the key
        # in every checkpoint's metadata.
        users = {t: user_of(t) for (t,) in c.execute("SELECT DISTINCT thread_id FROM checkpoints")}
        c.execute("CREATE TEMP TABLE u (thread_id text PRIMARY KEY, user_id text)")
        with c.cursor().copy("COPY u FROM STDIN") as cp:
            for t, u in users.items():
                cp.write_row((t, u))
        c.execute("UPDATE checkpoints c SET metadata = c.metadata || jsonb_build_object('user_id', u.user_id) "
                  "FROM u WHERE u.thread_id = c.thread_id")
        c.execute("VACUUM (FULL, ANALYZE) checkpoints")
        c.execute("VACUUM ANALYZE")
        counts = c.execute("SELECT (SELECT count(DISTINCT thread_id) FROM checkpoints), "
                           "(SELECT count(*) FROM checkpoints), (SELECT count(*) FROM checkpoint_blobs), "
                           "(SELECT count(*) FROM checkpoint_writes)").fetchone()
    size = admin.execute("SELECT pg_database_size(%s)", (src,)).fetchone()[0]
    info = {"sqlite": str(sqlite_path), "prepared": True, "migrate_seconds": round(wall, 1),
            "migrate_cpu": round(cpu, 1), "migrate_rss_mib": round(rss / 1024, 1), "load": load_avg(),
            "sample_check": checked, "threads": counts[0], "checkpoints": counts[1],
            "blobs": counts[2], "writes": counts[3], "bytes": size,
            "sqlite_bytes": sqlite_path.stat().st_size}
    stamp.write_text(json.dumps(info, indent=1))
    return info


# ---- row sets: what a rewriting run changed ------------------------------------------------

KEYS = {
    "checkpoints": ("thread_id", "checkpoint_ns", "checkpoint_id"),
    "checkpoint_blobs": ("thread_id", "checkpoint_ns", "channel", "version"),
    "checkpoint_writes": ("thread_id", "checkpoint_ns", "checkpoint_id", "task_id", "idx"),
}


def keyset(url: str) -> dict[str, dict[tuple, object]]:
    """Every row's key per table (checkpoints: with its parent link, which gc may rewrite)."""
    import psycopg

    out = {}
    with psycopg.connect(url) as c:
        for table, cols in KEYS.items():
            extra = ", parent_checkpoint_id" if table == "checkpoints" else ""
            rows = c.execute(f"SELECT {', '.join(cols)}{extra} FROM {table}").fetchall()
            if extra:
                out[table] = {tuple(r[:-1]): r[-1] for r in rows}
            else:
                out[table] = {tuple(r): None for r in rows}
    return out


def fingerprint(keys: dict) -> dict:
    """Row counts and an order-free digest of the keys (and parent links) per table."""
    import hashlib

    fp = {}
    for table, rows in keys.items():
        h = hashlib.sha256()
        for k in sorted(rows, key=lambda r: tuple(str(x) for x in r)):
            h.update(repr((k, rows[k])).encode())
        fp[table] = (len(rows), h.hexdigest()[:16])
    return fp


class Diff:
    """What a run did to the source's rows: deleted, inserted, checkpoints whose parent moved."""

    def __init__(self, before: dict, after: dict):
        self.deleted = {t: [k for k in before[t] if k not in after[t]] for t in KEYS}
        self.inserted = {t: [k for k in after[t] if k not in before[t]] for t in KEYS}
        self.reparented = [(k, after["checkpoints"][k]) for k in after["checkpoints"]
                           if k in before["checkpoints"] and before["checkpoints"][k] != after["checkpoints"][k]]

    def summary(self) -> str:
        d = ", ".join(f"{len(v)} {t}" for t, v in self.deleted.items() if v) or "none"
        i = ", ".join(f"{len(v)} {t}" for t, v in self.inserted.items() if v) or "none"
        return f"deleted {d}; inserted {i}; parent links changed {len(self.reparented)}"


# ---- floors: SQL scripts -------------------------------------------------------------------

# The latest root checkpoint of every thread (a primary-key scan), joined back to its row.
LATEST = """latest AS (
    SELECT thread_id, max(checkpoint_id) AS id FROM checkpoints WHERE checkpoint_ns = ''
    GROUP BY thread_id),
  lc AS (
    SELECT c.thread_id, c.checkpoint_id, c.checkpoint, c.metadata FROM latest l
    JOIN checkpoints c ON c.thread_id = l.thread_id AND c.checkpoint_ns = '' AND c.checkpoint_id = l.id)"""

# The latest checkpoint's blob of one channel, or of all of them (channel IS NULL).
LATEST_BLOBS = """SELECT lc.thread_id, lc.checkpoint, b.channel, b.blob FROM lc
  LEFT JOIN LATERAL (
    SELECT b.channel, b.blob FROM jsonb_each_text(lc.checkpoint -> 'channel_versions') v
    JOIN checkpoint_blobs b ON b.thread_id = lc.thread_id AND b.checkpoint_ns = ''
     AND b.channel = v.key AND b.version = v.value {only}) b ON true"""

THREADS_LIST = f"""COPY (
WITH {LATEST},
  s AS (SELECT thread_id, count(*) AS n, count(DISTINCT checkpoint_ns) AS namespaces,
               max(checkpoint_id) AS latest,
               sum(pg_column_size(checkpoint) + pg_column_size(metadata))::bigint AS bytes
        FROM checkpoints GROUP BY thread_id),
  w AS (SELECT thread_id, sum(octet_length(blob))::bigint AS bytes FROM checkpoint_writes GROUP BY thread_id),
  bb AS (SELECT thread_id, sum(octet_length(blob))::bigint AS bytes FROM checkpoint_blobs GROUP BY thread_id),
  x AS ({LATEST_BLOBS.format(only="")})
SELECT s.*, w.bytes, bb.bytes, x.checkpoint, x.channel, x.blob FROM s
  LEFT JOIN w USING (thread_id) LEFT JOIN bb USING (thread_id) LEFT JOIN x USING (thread_id)
) TO STDOUT (FORMAT binary);
"""

TOKENS = f"""COPY (
WITH {LATEST}
{LATEST_BLOBS.format(only="AND b.channel = 'messages'")}
) TO STDOUT (FORMAT binary);
"""

# find: the threads whose latest state (the checkpoint row, its blobs, its pending writes)
# holds the needle's bytes.
FIND = f"""COPY (
WITH {LATEST},
  -- The search is computed in the select lists and filtered outside (OFFSET 0 keeps the
  -- planner from pushing it into a scan of every blob of the table).
  hits AS (
    SELECT lc.thread_id, strpos(lc.checkpoint::text, :'needle') AS at FROM lc
    UNION ALL
    SELECT lc.thread_id, position(convert_to(:'needle', 'UTF8') IN b.blob) FROM lc
      JOIN LATERAL jsonb_each_text(lc.checkpoint -> 'channel_versions') v ON true
      JOIN checkpoint_blobs b ON b.thread_id = lc.thread_id AND b.checkpoint_ns = ''
       AND b.channel = v.key AND b.version = v.value
    UNION ALL
    SELECT lc.thread_id, position(convert_to(:'needle', 'UTF8') IN w.blob) FROM lc
      JOIN checkpoint_writes w ON w.thread_id = lc.thread_id
       AND w.checkpoint_ns = '' AND w.checkpoint_id = lc.checkpoint_id
    OFFSET 0)
SELECT DISTINCT thread_id FROM hits WHERE at > 0 ORDER BY 1
) TO STDOUT;
"""

# One scan of every row for a value (forget's verification: is it anywhere still).
SCAN = """COPY (
SELECT 'checkpoints', count(*) FROM checkpoints
  WHERE strpos(checkpoint::text, :'value') > 0 OR strpos(metadata::text, :'value') > 0
UNION ALL
SELECT 'checkpoint_blobs', count(*) FROM checkpoint_blobs WHERE position(convert_to(:'value', 'UTF8') IN blob) > 0
UNION ALL
SELECT 'checkpoint_writes', count(*) FROM checkpoint_writes WHERE position(convert_to(:'value', 'UTF8') IN blob) > 0
) TO STDOUT;
"""


def key_cols(table: str) -> str:
    return ", ".join(f"{c} {'int' if c == 'idx' else 'text'}" for c in KEYS[table])


def key_join(table: str, alias: str) -> str:
    return " AND ".join(f"t.{c} = {alias}.{c}" for c in KEYS[table])


def replay_script(work: Path, tag: str, diff: Diff, after_url: str, read: str = "") -> Path:
    """A psql script that does on a fresh copy what memctl's run did: `read` first (what the
    job must read: the minimal query), then in one transaction the deletions by key (keys
    loaded with \\copy), the parent links moved, and memctl's new rows sent with \\copy in
    binary (taken from memctl's copy here, before the floor runs)."""
    import psycopg

    lines = [f"\\set needle '{NEEDLE}'", "\\o /dev/null", read, "\\o", "BEGIN;"]
    with psycopg.connect(after_url) as c:
        for table in ("checkpoint_writes", "checkpoints", "checkpoint_blobs"):
            keys = diff.deleted[table]
            if keys:
                f = work / f"{tag}-del-{table}.csv"
                with open(f, "w", newline="") as fh:
                    # Quoted: an unquoted empty field (the root namespace '') reads as NULL.
                    csv.writer(fh, quoting=csv.QUOTE_ALL).writerows(keys)
                lines += [f"CREATE TEMP TABLE d_{table} ({key_cols(table)});",
                          f"\\copy d_{table} FROM '{f}' (FORMAT csv)",
                          # A temporary table has no statistics until analyzed: without them the
                          # planner guessed a plan that took 32 s instead of ~1 s at scale 10.
                          f"ANALYZE d_{table};",
                          f"DELETE FROM {table} t USING d_{table} d WHERE {key_join(table, 'd')};"]
        if diff.reparented:
            f = work / f"{tag}-parents.csv"
            with open(f, "w", newline="") as fh:
                for k, p in diff.reparented:  # quoted fields; a NULL parent as a bare \N
                    fields = [f'"{x}"' for x in k] + [f'"{p}"' if p is not None else r"\N"]
                    fh.write(",".join(fields) + "\n")
            lines += [f"CREATE TEMP TABLE p ({key_cols('checkpoints')}, parent text);",
                      f"\\copy p FROM '{f}' (FORMAT csv, NULL '\\N')",
                      "ANALYZE p;",
                      f"UPDATE checkpoints t SET parent_checkpoint_id = p.parent FROM p WHERE {key_join('checkpoints', 'p')};"]
        for table in ("checkpoint_blobs", "checkpoint_writes", "checkpoints"):
            keys = diff.inserted[table]
            if not keys:
                continue
            c.execute(f"CREATE TEMP TABLE k_{table} ({key_cols(table)})")
            with c.cursor().copy(f"COPY k_{table} FROM STDIN") as cp:
                for k in keys:
                    cp.write_row(k)
            f = work / f"{tag}-new-{table}.bin"
            with open(f, "wb") as fh, c.cursor().copy(
                    f"COPY (SELECT t.* FROM {table} t JOIN k_{table} k ON {key_join(table, 'k')}) "
                    "TO STDOUT (FORMAT binary)") as cp:
                for chunk in cp:
                    fh.write(chunk)
            lines.append(f"\\copy {table} FROM '{f}' (FORMAT binary)")
    lines.append("COMMIT;")
    script = work / f"{tag}.sql"
    script.write_text("\n".join(lines) + "\n")
    return script


def threads_script(work: Path, tag: str, select: str, vacuum: bool = False, scan: str | None = None) -> Path:
    """Whole threads deleted: the ones `select` (a query giving thread_id) names, then (forget)
    a VACUUM and one scan of every row for `scan`."""
    lines = ["BEGIN;", f"CREATE TEMP TABLE doomed AS {select};"]
    for table in ("checkpoint_writes", "checkpoint_blobs", "checkpoints"):
        lines.append(f"DELETE FROM {table} WHERE thread_id IN (SELECT thread_id FROM doomed);")
    lines.append("COMMIT;")
    if vacuum:
        lines.append("VACUUM (ANALYZE) checkpoints, checkpoint_blobs, checkpoint_writes;")
    if scan is not None:
        lines += [f"\\set value '{scan}'", SCAN]
    script = work / f"{tag}.sql"
    script.write_text("\n".join(lines) + "\n")
    return script


def read_script(work: Path, tag: str, sql: str) -> Path:
    script = work / f"{tag}.sql"
    sink = "" if "needle" in sql else "\\o /dev/null\n"  # the bytes reach psql, go nowhere
    script.write_text(f"\\set needle '{NEEDLE}'\n{sink}{sql}")
    return script


# ---- uuid6 time (prune --idle) -----------------------------------------------------------

GREGORIAN = datetime(1582, 10, 15, tzinfo=timezone.utc)


def uuid6_seconds(cid: str) -> float:
    h = cid.replace("-", "")
    t = (int(h[:12], 16) << 12) | int(h[13:16], 16)
    return (GREGORIAN + timedelta(microseconds=t // 10)).timestamp()


def uuid6_prefix(seconds: int) -> str:
    """The smallest uuid6 string of that whole second (the ids sort by time)."""
    dt = datetime.fromtimestamp(seconds, timezone.utc)
    t = int((dt - GREGORIAN).total_seconds()) * 10_000_000
    return f"{t >> 28:08x}-{(t >> 12) & 0xffff:04x}-6{t & 0xfff:03x}"


def idle_cutoff(url: str) -> tuple[int, int]:
    """A whole second near the median thread's latest checkpoint with no thread's latest
    checkpoint within 0.2 s of it (so memctl's and the floor's selection cannot differ by
    rounding): threads last written before it are the idle ones. Returns (second, idle count)."""
    import psycopg

    with psycopg.connect(url) as c:
        latest = sorted(uuid6_seconds(r[0]) for r in c.execute(
            "SELECT max(checkpoint_id) FROM checkpoints GROUP BY thread_id"))
    mid = latest[len(latest) // 2]
    for d in range(0, 3600):
        for s in (int(mid) + d, int(mid) - d):
            if all(abs(x - s) > 0.2 for x in latest):
                return s, sum(1 for x in latest if x < s)
    raise SystemExit("floors: no idle cutoff found")


# ---- measuring ---------------------------------------------------------------------------


class Runs:
    def __init__(self):
        self.walls: list[float] = []
        self.cpus: list[float] = []
        self.rss: list[int] = []
        self.server: list[tuple[float, int]] = []
        self.killed = False

    def add(self, wall, cpu, rss, server, killed=False):
        self.killed |= killed
        self.walls.append(wall)
        self.cpus.append(cpu)
        self.rss.append(rss)
        self.server.append(server)

    @property
    def wall(self) -> float:
        return statistics.median(self.walls)

    @property
    def cpu(self) -> float:
        return statistics.median(self.cpus)

    def server_cell(self) -> str:
        ms = statistics.median(m for m, _ in self.server)
        n = statistics.median(c for _, c in self.server)
        return f"{ms / 1000:.3f} s ({n:,.0f})"

    @property
    def server_s(self) -> float:
        return statistics.median(m for m, _ in self.server) / 1000


class Bench:
    def __init__(self, a, admin, scale: float, src: str, info: dict):
        self.a, self.admin, self.scale, self.src, self.info = a, admin, scale, src, info
        self.tag = f"x{scale:g}"
        self.copies = 0
        self.rows: list[dict] = []
        self.checks: list[tuple[str, bool, str]] = []
        self.runs = a.runs if scale <= 2 else a.big_runs
        self._src_keys = None
        self.notes: list[str] = []

    # databases
    def fresh(self) -> str:
        self.copies += 1
        name = f"floors_{self.tag.replace('.', '_')}_{self.copies}"
        self.admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        self.admin.execute(f"CREATE DATABASE {name} TEMPLATE {self.src} STRATEGY FILE_COPY")
        # The copy's 0.5-5 GB sit dirty in the page cache: flushed now, or their writeback
        # competes with the measured run (a 5 GB copy's floor for gc took 7 s or 28 s).
        os.sync()
        return name

    def drop(self, name: str) -> None:
        self.admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")

    def src_keys(self) -> dict:
        if self._src_keys is None:
            self._src_keys = keyset(db_url(self.a.url, self.src))
        return self._src_keys

    def server_time(self, db: str) -> tuple[float, int]:
        r = self.admin.execute(
            "SELECT COALESCE(sum(total_exec_time), 0), COALESCE(sum(calls), 0) FROM pg_stat_statements "
            "WHERE dbid = (SELECT oid FROM pg_database WHERE datname = %s)", (db,)).fetchone()
        return float(r[0]), int(r[1])

    def statements(self, db: str, path: Path) -> None:
        rows = self.admin.execute(
            "SELECT calls, round(total_exec_time::numeric, 1), rows, "
            "left(regexp_replace(query, '\\s+', ' ', 'g'), 240) FROM pg_stat_statements "
            "WHERE dbid = (SELECT oid FROM pg_database WHERE datname = %s) "
            "ORDER BY total_exec_time DESC LIMIT 15", (db,)).fetchall()
        path.write_text("\n".join(f"{c:>6} calls {ms:>10} ms {n:>8} rows  {q}" for c, ms, n, q in rows) + "\n")

    def measured(self, db: str, cmd: list[str], out: Path, ok=(0,)):
        self.admin.execute("SELECT pg_stat_statements_reset()")
        killed = False
        try:
            wall, cpu, rss = run_once(cmd, out, ok, self.a.timeout)
        except Killed as k:
            wall, cpu, rss, killed = k.wall, k.cpu, 0, True
            # The backend would finish its statement before noticing its client is gone.
            self.admin.execute("SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE datname = %s", (db,))
            time.sleep(0.5)
        server = self.server_time(db)
        self.statements(db, out.with_suffix(".statements"))
        return wall, cpu, rss, server, killed

    def memctl(self, db: str, args: list[str]) -> list[str]:
        return [self.a.memctl, *args, "--db", db_url(self.a.url, db), "--format", "json"]

    # one job
    def job(self, name: str, args: list[str], floor, rewrite: bool, settle: bool = False, ok=(0,),
            runs: int | None = None):
        """memctl (`args`; with `settle`, also `--settle 0s`) then the floor, `self.runs`
        times each. floor(db_before, memctl_db, memctl_out) -> (script, check) where check(
        floor_db, floor_out) -> (ok, text); on a rewrite memctl_db is memctl's copy, still there."""
        key = name.split()[0]
        m, m0, f = Runs(), Runs(), Runs()
        self.current = m
        variants = [(m, args)] + ([(m0, [*args, "--settle", "0s"])] if settle else [])
        last_check = None
        for i in range(runs or self.runs):
            for runs_, argv in variants:
                db = self.fresh() if rewrite else self.src
                out = self.a.work / f"{self.tag}-{key}-memctl{'' if runs_ is m else '0'}.out"
                runs_.add(*self.measured(db, self.memctl(db, argv), out, ok))
                log(f"x{self.scale:g} {name}{'' if runs_ is m else ' --settle 0s'} run {i + 1}: "
                    f"{runs_.walls[-1]:.3f} s{' (KILLED at --timeout)' if runs_.killed else ''}, "
                    f"CPU {runs_.cpus[-1]:.3f} s, server {runs_.server[-1][0] / 1000:.3f} s "
                    f"({runs_.server[-1][1]} statements)")
                if runs_ is m:
                    memctl_db, memctl_out = db, out
                elif rewrite:
                    self.drop(db)
            script, check = floor(memctl_db, memctl_out)
            floor_script = script
            if rewrite:
                self.drop(memctl_db)
            db = self.fresh() if rewrite else self.src
            out = self.a.work / f"{self.tag}-{key}-floor.out"
            f.add(*self.measured(db, psql_cmd(db_url(self.a.url, db), script), out))
            log(f"x{self.scale:g} {name} floor run {i + 1}: {f.walls[-1]:.3f} s, server {f.server[-1][0] / 1000:.3f} s")
            last_check = check(db, out)
            if rewrite:
                self.drop(db)
        ok_, text = last_check
        self.checks.append((name, ok_, text))
        log(f"check {name}: {'ok' if ok_ else 'FAILED'}: {text}")
        self.rows.append({"name": name, "key": key, "argv": variants[-1][1], "rewrite": rewrite,
                          "floor_script": floor_script, "m": m, "m0": m0 if settle else None, "f": f,
                          "rss": max(m.rss) / 1024, "floor_rss": max(f.rss) / 1024})

    # the jobs
    def run_all(self):
        a = self.a
        src_url = db_url(a.url, self.src)

        # threads list
        def tl_floor(_db, out):
            listed = json.loads(out.read_text())
            self.listed = listed
            script = read_script(a.work, f"{self.tag}-threads-floor", THREADS_LIST)

            def check(db, fout):
                import psycopg
                with psycopg.connect(db_url(a.url, db)) as c:
                    n, total = c.execute("SELECT count(DISTINCT thread_id), count(*) FROM checkpoints").fetchone()
                ok = n == len(listed) and total == sum(r["checkpoints"] for r in listed)
                return ok, (f"floor summary {n} threads / {total} checkpoints; memctl {len(listed)} / "
                            f"{sum(r['checkpoints'] for r in listed)}")
            return script, check
        self.job("threads list", ["threads", "list"], tl_floor, rewrite=False)

        # tokens --all
        def tok_floor(_db, out):
            listed = json.loads(out.read_text())
            script = read_script(a.work, f"{self.tag}-tokens-floor", TOKENS)

            def check(db, fout):
                import psycopg
                with psycopg.connect(db_url(a.url, db)) as c:
                    n = c.execute(f"WITH {LATEST} SELECT count(*) FROM lc").fetchone()[0]
                return n == len(listed), f"{n} latest messages blobs read; memctl counted {len(listed)} threads"
            return script, check
        self.job("tokens --all", ["tokens", "--all"], tok_floor, rewrite=False)

        # trim / gc: replay memctl's row changes
        def replay_floor(tag, read=""):
            def floor(mdb, _out):
                after = keyset(db_url(a.url, mdb))
                diff = Diff(self.src_keys(), after)
                script = replay_script(a.work, f"{self.tag}-{tag}-floor", diff, db_url(a.url, mdb), read)
                want = fingerprint(after)

                def check(db, fout):
                    got = fingerprint(keyset(db_url(a.url, db)))
                    return got == want, f"memctl's run: {diff.summary()}; floor's copy has the same keys: {got == want}"
                return script, check
            return floor

        self.job("trim --all --keep 4", ["trim", "--all", "--keep", "4"],
                 replay_floor("trim", TOKENS), rewrite=True, settle=True)
        self.job("gc --all --keep-checkpoints 2", ["gc", "--all", "--keep-checkpoints", "2", "--yes"],
                 replay_floor("gc"), rewrite=True)

        # prune --idle 30d, "now" pinned so that about half the threads are idle
        second, n_idle = idle_cutoff(src_url)
        # memctl reads a checkpoint's time in whole seconds (age = now - floor(t)): with "now" one
        # second before cutoff + 30 d, the threads last written before the cutoff are idle.
        now = datetime.fromtimestamp(second - 1, timezone.utc) + timedelta(days=30)
        log(f"prune: cutoff {datetime.fromtimestamp(second, timezone.utc):%H:%M:%S}, {n_idle} threads idle")

        def prune_floor(mdb, out):
            select = (f"SELECT thread_id FROM checkpoints GROUP BY thread_id "
                      f"HAVING max(checkpoint_id) < '{uuid6_prefix(second)}'")
            script = threads_script(a.work, f"{self.tag}-prune-floor", select)
            want = fingerprint(keyset(db_url(a.url, mdb)))
            deleted = json.loads(out.read_text())

            def check(db, fout):
                got = fingerprint(keyset(db_url(a.url, db)))
                return got == want, (f"{n_idle} idle threads expected; memctl's report: "
                                     f"{summarize(deleted)}; floor left the same keys: {got == want}")
            return script, check
        self.job("prune --idle 30d", ["prune", "--idle", "30d", "--yes", "--now", now.strftime("%Y-%m-%dT%H:%M:%SZ")],
                 prune_floor, rewrite=True)

        # find NEEDLE (the latest state of every thread)
        def find_floor(_db, out):
            found = sorted({r["thread_id"] for r in json.loads(out.read_text())})
            script = read_script(a.work, f"{self.tag}-find-floor", FIND)

            def check(db, fout):
                got = sorted(set(fout.read_text().split()))
                return got == found, f"floor: {len(got)} threads hold the bytes; memctl found {len(found)}"
            return script, check
        self.job(f"find {NEEDLE}", ["find", NEEDLE], find_floor, rewrite=False)

        # forget --meta user_id=U
        def forget_floor(mdb, out):
            select = f"SELECT DISTINCT thread_id FROM checkpoints WHERE metadata ->> 'user_id' = '{FORGET_USER}'"
            vacuumed = "VACUUM" in (out.with_suffix(".statements").read_text())
            script = threads_script(a.work, f"{self.tag}-forget-floor", select, vacuum=vacuumed, scan=FORGET_USER)
            after = keyset(db_url(a.url, mdb))
            want = fingerprint(after)
            gone = {k[0] for k in self.src_keys()["checkpoints"]} - {k[0] for k in after["checkpoints"]}
            try:
                deleted = f"{len(json.loads(out.read_text())['deleted_threads_sha256'])} threads (its receipt)"
            except (ValueError, KeyError):
                deleted = f"{len(gone)} threads (gone from its copy; killed before its receipt)"
            self.forget_note(mdb, self.current, gone)

            def check(db, fout):
                got = fingerprint(keyset(db_url(a.url, db)))
                return got == want, (f"memctl deleted {deleted}, VACUUM {'in both' if vacuumed else 'in neither'}; "
                                     f"floor's scan (rows holding '{FORGET_USER}' per table): "
                                     f"{' '.join(fout.read_text().split())}; the same keys left: {got == want}")
            return script, check
        # One run, default settle only: memctl's verification runs one scan of every row per
        # erased string (see forget_note), so the 1 s settle is noise beside it.
        self.job(f"forget --meta user_id={FORGET_USER}", ["forget", "--meta", f"user_id={FORGET_USER}", "--yes"],
                 forget_floor, rewrite=True, runs=1)

    def forget_note(self, mdb: str, m: "Runs", gone: set[str]) -> None:
        """forget's verification on Postgres: `rows_holding` (a scan of every row) once per
        string it erased. How many ran and their mean (pg_stat_statements of memctl's run,
        still there: the floor has not run yet), and the messages of the deleted threads
        (each message's text is at least one such string): an estimate of the scans needed."""
        calls, mean = self.admin.execute(
            "SELECT COALESCE(sum(calls), 0), sum(total_exec_time) / NULLIF(sum(calls), 0) / 1000 "
            "FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = %s) "
            "AND query LIKE '%%strpos(checkpoint::text%%'", (mdb,)).fetchone()
        msgs = sum(r.get("messages", 0) for r in getattr(self, "listed", []) if r["thread_id"] in gone)
        note = (f"`forget --meta`: {len(gone)} threads deleted ({msgs:,} messages in their latest states); "
                f"its verification ran the scan of every row (`rows_holding`) {int(calls):,} times")
        if mean:
            note += f", {float(mean):.2f} s each on the server"
            if m.killed:
                note += (f"; killed at --timeout {self.a.timeout:g} s. Estimate (not measured): one scan per "
                         f"erased string, at least one per message: ≥ {msgs:,} × {float(mean):.2f} s ≈ "
                         f"{msgs * float(mean) / 3600:,.1f} h")
        self.notes.append(note)


def summarize(report) -> str:
    if isinstance(report, dict):
        return ", ".join(f"{k}: {v}" for k, v in report.items() if isinstance(v, (int, str)))[:200]
    return f"{len(report)} entries"


# ---- the table ---------------------------------------------------------------------------


def table(bench: Bench) -> list[str]:
    info = bench.info
    lines = [
        f"**{bench.tag}**: `{Path(info['sqlite']).name}` ({info['sqlite_bytes'] / 2**20:,.0f} MiB SQLite, "
        f"{info['threads']:,} threads, {info['checkpoints']:,} checkpoints, {info['blobs']:,} blobs, "
        f"{info['writes']:,} writes) loaded by `memctl migrate` in {info['migrate_seconds']} s "
        f"(load {info['load']}): a {info['bytes'] / 2**20:,.0f} MiB database. "
        f"Runs per figure: {bench.runs} (median). Load at the end: {load_avg()}.",
        "",
        "| command | memctl wall (settle 1 s / 0 s) | memctl CPU | peak RSS | memctl server time (calls) "
        "| floor wall | floor server time (calls) | memctl / floor | goal 1.25× |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in bench.rows:
        m, m0, f = r["m"], r["m0"], r["f"]
        cpu = "-" if m.killed else f"{m.cpu:.3f} s"
        wall = (f"> {m.wall:.0f} s (killed at --timeout)" if m.killed else f"{m.wall:.3f} s") + (
            f" / {m0.wall:.3f} s" if m0 else "")
        ratio = m.wall / f.wall
        ratio_cell = ("> " if m.killed else "") + f"{ratio:.2f}×" + (f" / {m0.wall / f.wall:.2f}×" if m0 else "")
        best = min(ratio, m0.wall / f.wall) if m0 else ratio
        goal = "**not met**" if m.killed else "met" if ratio <= GOAL else ("met with `--settle 0s`" if best <= GOAL else "**not met**")
        rss = "-" if m.killed else f"{r['rss']:.0f} MiB"
        lines.append(f"| `{r['name']}` | {wall} | {cpu} | {rss} | {m.server_cell()} | "
                     f"{f.wall:.3f} s | {f.server_cell()} | {ratio_cell} | {goal} |")
    lines.append("")
    lines.append("Checks: " + "; ".join(f"{n}: {'ok' if ok else 'FAILED'} ({t})" for n, ok, t in bench.checks))
    lines.append("")
    for note in bench.notes:
        lines += [note, ""]
    lines.append("Where memctl is above 1.25× (the 0 s-settle run where there is one): gap = memctl wall − floor wall;"
                 " client CPU = memctl user+sys; server = memctl's server time − the floor's; round trips = statements.")
    lines.append("")
    lines.append("| command | gap | memctl CPU | server time memctl − floor | statements memctl / floor | fixed wait |")
    lines.append("|---|---|---|---|---|---|")
    for r in bench.rows:
        m = r["m0"] or r["m"]
        f = r["f"]
        if r["m"].wall / f.wall <= GOAL:
            continue
        calls_m = statistics.median(c for _, c in m.server)
        calls_f = statistics.median(c for _, c in f.server)
        wait = "1 s settle (removed in this row)" if r["m0"] else "-"
        if m.killed:  # its CPU died with it; the gap is a lower bound
            lines.append(f"| `{r['name']}` | > {m.wall - f.wall:+.3f} s | - (killed) | "
                         f"{m.server_s - f.server_s:+.3f} s until killed | {calls_m:,.0f} / {calls_f:,.0f} | {wait} |")
            continue
        lines.append(f"| `{r['name']}` | {m.wall - f.wall:+.3f} s | {m.cpu:.3f} s | "
                     f"{m.server_s - f.server_s:+.3f} s | {calls_m:,.0f} / {calls_f:,.0f} | {wait} |")
    return lines


# ---- perf ----------------------------------------------------------------------------------


def fixed_cost(a, admin) -> list[str]:
    """What a process costs before any work: memctl `threads list` and `tokens --all` on an
    empty saver database (start, connect, check the schema), psql running `SELECT 1`."""
    if a.load_only:
        return []
    from langgraph.checkpoint.postgres import PostgresSaver

    db = "floors_empty"
    admin.execute(f"DROP DATABASE IF EXISTS {db} WITH (FORCE)")
    admin.execute(f"CREATE DATABASE {db}")
    url = db_url(a.url, db)
    with PostgresSaver.from_conn_string(url) as s:
        s.setup()
    script = a.work / "empty.sql"
    script.write_text("SELECT 1;\n")
    walls: dict[str, list[float]] = {"memctl threads list": [], "memctl tokens --all": [], "psql SELECT 1": []}
    for _ in range(max(a.runs, 3)):
        walls["memctl threads list"].append(run_once(
            [a.memctl, "threads", "list", "--db", url, "--format", "json"], a.work / "empty.out")[0])
        walls["memctl tokens --all"].append(run_once(
            [a.memctl, "tokens", "--all", "--db", url, "--format", "json"], a.work / "empty.out")[0])
        walls["psql SELECT 1"].append(run_once(psql_cmd(url, script), a.work / "empty.out")[0])
    # What a round trip costs here: 10,000 statements from one psql session, one at a time.
    many = a.work / "many.sql"
    many.write_text("SELECT 1;\n" * 10_000)
    trips = statistics.median(run_once(psql_cmd(url, many), a.work / "empty.out")[0] for _ in range(3))
    admin.execute(f"DROP DATABASE IF EXISTS {db} WITH (FORCE)")
    walls["psql 10,000 × SELECT 1 (one session)"] = [trips]
    cells = ", ".join(f"{k} {statistics.median(v):.3f} s" for k, v in walls.items())
    line = f"Fixed cost of a process on an empty saver database (median of {len(walls['psql SELECT 1'])}, load {load_avg()}): {cells}."
    log(line)
    return [line]


def perf_split(bench: Bench, label: str, make_cmd, rewrite: bool) -> dict:
    """One more run of a command (make_cmd(db)) under `perf record -a`: the CPU samples of the
    process itself (all its threads), of its server backends (pids polled from
    pg_stat_activity during the run) and of everything else on the machine."""
    a = bench.a
    db = bench.fresh() if rewrite else bench.src
    data = a.work / f"{bench.tag}-{label}.perf"
    pids: set[int] = set()
    stop = threading.Event()

    def poll():
        import psycopg
        with psycopg.connect(a.url, autocommit=True) as c:
            while not stop.is_set():
                pids.update(p for (p,) in c.execute(
                    "SELECT pid FROM pg_stat_activity WHERE datname = %s", (db,)))
                time.sleep(0.02)
    t = threading.Thread(target=poll)
    t.start()
    pidfile = data.with_suffix(".pid")
    # sh records its pid and execs the command: the samples of that pid are the command's.
    cmd = ["perf", "record", "-a", "-F", "499", "-o", str(data), "--", "sh", "-c",
           f'echo $$ > "{pidfile}"; exec "$@"', "sh", *make_cmd(db)]
    t0 = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    stop.set()
    t.join()
    if rewrite:
        bench.drop(db)
    mine = int(pidfile.read_text().split()[0])
    rep = subprocess.run(["perf", "script", "-i", str(data), "-F", "pid"], capture_output=True, text=True).stdout
    me = backend = other = 0
    for line in rep.split():
        pid = int(line) if line.isdigit() else -1
        if pid == mine:
            me += 1
        elif pid in pids:
            backend += 1
        else:
            other += 1
    data.unlink(missing_ok=True)
    hz = 499
    return {"wall": wall, "self": me / hz, "server": backend / hz, "other": other / hz}


def perf_lines(bench: Bench) -> list[str]:
    """For each job above the goal: memctl (the 0 s-settle variant where there is one) and
    its floor, each once more under perf."""
    lines = ["", "CPU under `perf record -a` (one more run each, 499 Hz; \"client\" is memctl or psql, "
             "\"server\" its backends, \"others\" every other process on the shared machine meanwhile):", "",
             "| command | memctl: wall / client / server CPU | floor: wall / client / server CPU | others during memctl |",
             "|---|---|---|---|"]
    for r in bench.rows:
        if r["m"].wall / r["f"].wall <= GOAL or r["m"].killed:
            continue
        m = perf_split(bench, r["key"] + "-memctl", lambda db: bench.memctl(db, r["argv"]), r["rewrite"])
        f = perf_split(bench, r["key"] + "-floor",
                       lambda db: psql_cmd(db_url(bench.a.url, db), r["floor_script"]), r["rewrite"])
        lines.append(f"| `{r['name']}` | {m['wall']:.2f} / {m['self']:.2f} / {m['server']:.2f} s | "
                     f"{f['wall']:.2f} / {f['self']:.2f} / {f['server']:.2f} s | {m['other']:.2f} s |")
    return lines


def many_threads(a: argparse.Namespace) -> list[str]:
    """benches/scale.py's Postgres measures (its table, printed as it goes) on `a.threads`
    short threads: the first rows of the streamed lists, the newest 50 threads with and
    without the index `stats` recommends, memory, and prune beside an app."""
    log(f"scale.py on {a.threads:,} threads (database memctl_scale)")
    cmd = [sys.executable, str(HERE / "scale.py"), "--db", str(a.work / f"many-{a.threads}"), "--skip-sqlite",
           "--pg", a.url, "--memctl", a.memctl, "--threads", str(a.threads), "--repeat", "1",
           "--json", str(a.work / "scale.json")]
    text = subprocess.run(cmd, check=True, stdout=subprocess.PIPE, text=True).stdout.strip()
    print(text, flush=True)
    return [f"{a.threads:,} short threads (benches/scale.py, Postgres only):", "", *text.splitlines(), ""]


# ---- main --------------------------------------------------------------------------------


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--url", required=True, help="a superuser URL of a scratch server with pg_stat_statements")
    ap.add_argument("--memctl", required=True)
    ap.add_argument("--scale", type=float, nargs="+", default=[1.0, 10.0])
    ap.add_argument("--work", type=Path, default=Path("target/floors"))
    ap.add_argument("--runs", type=int, default=3, help="runs per figure at scales up to 2")
    ap.add_argument("--big-runs", type=int, default=1, help="runs per figure above scale 2")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2, help="generate.py workers")
    ap.add_argument("--perf", action="store_true", help="split the CPU of each job above 1.25x with perf")
    ap.add_argument("--markdown", type=Path)
    ap.add_argument("--timeout", type=float, default=300,
                    help="seconds after which a memctl run is killed and reported as longer")
    ap.add_argument("--threads", type=int, default=1_000_000,
                    help="then benches/scale.py on this many short threads in database memctl_scale "
                         "(made by benches/many.py --pg when missing); 0: skip")
    ap.add_argument("--load-only", action="store_true",
                    help="generate and load each scale's database (cached for a later run), measure nothing")
    a = ap.parse_args()
    a.work = a.work.resolve()
    a.work.mkdir(parents=True, exist_ok=True)
    a.memctl = str(Path(a.memctl).resolve())
    import psycopg

    admin = psycopg.connect(a.url, autocommit=True)
    admin.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
    admin.execute("SELECT 1 FROM pg_stat_statements LIMIT 1")
    started = datetime.now(timezone.utc)
    out = [f"Run {started:%Y-%m-%d %H:%M} UTC; PostgreSQL {admin.execute('SHOW server_version').fetchone()[0]} "
           f"(shared_buffers {admin.execute('SHOW shared_buffers').fetchone()[0]}, fsync "
           f"{admin.execute('SHOW fsync').fetchone()[0]}); {platform.machine()}, {os.cpu_count()} cores; "
           f"load average {load_avg()} at the start.", ""]
    out += fixed_cost(a, admin) + [""]
    for scale in a.scale:
        src = f"floors_x{scale:g}_src".replace(".", "_")
        info = ensure_loaded(admin, a, scale, src)
        if a.load_only:
            log(f"loaded {src}: {json.dumps(info)}")
            continue
        bench = Bench(a, admin, scale, src, info)
        bench.run_all()
        lines = table(bench)
        if a.perf:
            lines += perf_lines(bench)
        text = "\n".join(lines)
        print(text, flush=True)
        out += lines + [""]
        (a.work / f"table-x{scale:g}.md").write_text(text + "\n")
    if a.threads and not a.load_only:
        out += many_threads(a)
    if a.markdown:
        a.markdown.write_text("\n".join(out) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
