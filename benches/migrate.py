#!/usr/bin/env python3
"""The migrate benchmark (#29 "Speed"): `memctl migrate` between a SQLiteSaver file and
PostgresSaver tables, both ways, against the Python way people write today and against the
floor (the same rows written by the database's own bulk path), side by side in one run. Runs
under .venv/pg (langgraph-checkpoint-sqlite and langgraph-checkpoint-postgres, psycopg).

    .venv/pg/bin/python benches/migrate.py --url ADMIN_URL --sqlite DB.sqlite --memctl BIN \
        [--growth A.sqlite B.sqlite ...] [--python-budget SECONDS] [--markdown OUT.md]

ADMIN_URL is a superuser URL of a scratch server (`scripts/pg.sh start DIR` gives one). DB.sqlite
is the 1 GB realistic file:

    .venv/new/bin/python benches/generate.py --preset realistic --scale 1 --seed 1 --jobs 1 \
        --out target/bench/db-realistic-seed1.sqlite

(and --scale 0.25 / 1 / 2.5 for a growth series: the files of a larger scale hold the threads
of the smaller ones and more). Databases memctl_mig_* are created on the server and dropped.

SQLite -> Postgres (each target database made empty by `PostgresSaver.setup()`):
  memctl   `memctl migrate --db DB.sqlite --to URL`
  Python   a loop over `SqliteSaver.list(None)` calling `PostgresSaver.put` (with the channel
           versions not put before as new_versions, so each blob is sent once) and
           `put_writes` per task of the checkpoint's pending writes
  floor    the rows memctl wrote, dumped with `COPY ... TO STDOUT (FORMAT binary)`, then
           `COPY ... FROM STDIN (FORMAT binary)` into the empty tables (indexes included) in one
           transaction: only the COPY is timed
Postgres -> SQLite (the source: the database memctl wrote above; a new file each time):
  memctl   `memctl migrate --db URL --to NEW.sqlite`
  Python   a loop over `PostgresSaver.list(None)` calling `SqliteSaver.put` / `put_writes`
  floor    the rows memctl wrote, inserted into a fresh file made by `SqliteSaver.setup()` in
           one transaction, two ways, the faster counts: `INSERT INTO t SELECT ... FROM
           src.t WHERE 1` from the ATTACHed file (row by row in the engine; the WHERE keeps
           SQLite from copying the b-tree pages whole, which is no insert) and
           `executemany(INSERT ...)` fed from a cursor on the file. The sqlite3 shell's
           `.import` reads CSV text, which cannot carry the BLOB columns.

A Python loop that would run past --python-budget seconds stops there and its time is
extrapolated by the share of the source's bytes it had moved (labelled so). Peak RSS from
/usr/bin/time (%M) when it is there, else wait4. The load average is printed with each figure.
Checks: the Python way and memctl write the same rows (checkpoints and blobs: md5 of the
ordered rows; writes: count, as SqliteSaver's list does not give task_path back), the floor
holds the same row counts, and each way back holds the same rows as memctl's file.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

TIME = "/usr/bin/time" if Path("/usr/bin/time").exists() else None
PG_TABLES = {
    "checkpoints": "thread_id, checkpoint_ns, checkpoint_id",
    "checkpoint_blobs": "thread_id, checkpoint_ns, channel, version",
    "checkpoint_writes": "thread_id, checkpoint_ns, checkpoint_id, task_id, idx",
}
LITE_TABLES = {
    "checkpoints": "thread_id, checkpoint_ns, checkpoint_id",
    "writes": "thread_id, checkpoint_ns, checkpoint_id, task_id, idx",
}


def db_url(admin: str, db: str) -> str:
    base, _, query = admin.partition("?")
    return base.rsplit("/", 1)[0] + f"/{db}" + (f"?{query}" if query else "")


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"{one:.1f}"


# ---- the Python ways (a child process each: `migrate.py task NAME SRC DST BUDGET OUT`) -------


def source_bytes_lite(con: sqlite3.Connection) -> int:
    return con.execute("SELECT COALESCE(SUM(length(checkpoint) + length(metadata)), 0) FROM checkpoints"
                       ).fetchone()[0] + con.execute(
        "SELECT COALESCE(SUM(length(value)), 0) FROM writes").fetchone()[0]


def task_s2p(src: str, dst: str, budget: float) -> dict:
    from langgraph.checkpoint.postgres import PostgresSaver
    from langgraph.checkpoint.sqlite import SqliteSaver

    con = sqlite3.connect(f"file:{Path(src).resolve()}?mode=ro", uri=True, check_same_thread=False)
    # The bytes of each checkpoint's rows, for the extrapolation when the budget runs out.
    size = {(t, ns, c): n for t, ns, c, n in con.execute(
        "SELECT c.thread_id, c.checkpoint_ns, c.checkpoint_id, length(c.checkpoint) + length(c.metadata) "
        "+ COALESCE((SELECT SUM(length(w.value)) FROM writes w WHERE w.thread_id = c.thread_id AND "
        "w.checkpoint_ns = c.checkpoint_ns AND w.checkpoint_id = c.checkpoint_id), 0) FROM checkpoints c")}
    lite = SqliteSaver(con)
    put: set = set()
    done = moved = 0
    t0 = time.perf_counter()
    with PostgresSaver.from_conn_string(dst) as pg:
        for tup in lite.list(None):
            c = tup.config["configurable"]
            t, ns = c["thread_id"], c["checkpoint_ns"]
            new_versions = {k: v for k, v in tup.checkpoint["channel_versions"].items()
                            if (t, ns, k, v) not in put}
            put.update((t, ns, k, v) for k, v in new_versions.items())
            cfg = {"configurable": {"thread_id": t, "checkpoint_ns": ns}}
            if tup.parent_config:
                cfg["configurable"]["checkpoint_id"] = tup.parent_config["configurable"]["checkpoint_id"]
            pg.put(cfg, tup.checkpoint, tup.metadata, new_versions)
            by_task: dict[str, list] = {}
            for task_id, channel, value in tup.pending_writes or []:
                by_task.setdefault(task_id, []).append((channel, value))
            for task_id, writes in by_task.items():
                pg.put_writes(tup.config, writes, task_id)
            done += 1
            moved += size[(t, ns, c["checkpoint_id"])]
            if time.perf_counter() - t0 > budget:
                break
    return {"checkpoints": done, "of": len(size), "bytes": moved, "seconds": time.perf_counter() - t0}


def task_p2s(src: str, dst: str, budget: float) -> dict:
    import psycopg
    from langgraph.checkpoint.postgres import PostgresSaver
    from langgraph.checkpoint.sqlite import SqliteSaver

    with psycopg.connect(src) as c:
        n = c.execute("SELECT count(*) FROM checkpoints").fetchone()[0]
    con = sqlite3.connect(dst, check_same_thread=False)
    lite = SqliteSaver(con)
    lite.setup()
    done = 0
    t0 = time.perf_counter()
    with PostgresSaver.from_conn_string(src) as pg:
        for tup in pg.list(None):
            c = tup.config["configurable"]
            cfg = {"configurable": {"thread_id": c["thread_id"], "checkpoint_ns": c["checkpoint_ns"]}}
            if tup.parent_config:
                cfg["configurable"]["checkpoint_id"] = tup.parent_config["configurable"]["checkpoint_id"]
            lite.put(cfg, tup.checkpoint, tup.metadata, tup.checkpoint["channel_versions"])
            by_task: dict[str, list] = {}
            for task_id, channel, value in tup.pending_writes or []:
                by_task.setdefault(task_id, []).append((channel, value))
            for task_id, writes in by_task.items():
                lite.put_writes(tup.config, writes, task_id)
            done += 1
            if time.perf_counter() - t0 > budget:
                break
    con.close()
    # Bytes moved, in SqliteSaver's terms: measured on the file written.
    written = sqlite3.connect(dst)
    moved = source_bytes_lite(written)
    return {"checkpoints": done, "of": n, "bytes": moved, "seconds": time.perf_counter() - t0}


TASKS = {"s2p": task_s2p, "p2s": task_p2s}


# ---- measuring -------------------------------------------------------------------------------


def run_once(cmd: list[str], out: Path) -> tuple[float, float, int, str]:
    """Wall seconds, CPU seconds (wait4), peak RSS (KiB) and the load average at the end."""
    rss_file = out.with_suffix(".rss")
    full = [TIME, "-f", "%M", "-o", str(rss_file), *cmd] if TIME else cmd
    err_file = out.with_suffix(".err")
    with open(out, "wb") as f, open(err_file, "wb") as e:
        t0 = time.perf_counter()
        p = subprocess.Popen(full, stdout=f, stderr=e)
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 3):
        sys.exit(f"migrate.py: {' '.join(cmd[:4])}… failed ({code}): "
                 f"{err_file.read_text(errors='replace')[-2000:]}")
    rss = ru.ru_maxrss
    if TIME and rss_file.exists():
        rss = int(rss_file.read_text().split()[-1])
    return wall, ru.ru_utime + ru.ru_stime, rss, load()


class Bench:
    def __init__(self, a):
        import psycopg

        self.a = a
        self.admin = psycopg.connect(a.url, autocommit=True)
        self.py = sys.executable
        self.me = str(Path(__file__).resolve())
        a.work.mkdir(parents=True, exist_ok=True)

    # -- Postgres databases
    def fresh_pg(self, name: str) -> str:
        from langgraph.checkpoint.postgres import PostgresSaver
        import psycopg

        self.admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        self.admin.execute(f"CREATE DATABASE {name}")
        url = db_url(self.a.url, name)
        with psycopg.connect(url, autocommit=True) as c:
            PostgresSaver(c).setup()
        return url

    def drop_pg(self, name: str) -> None:
        self.admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")

    def pg_counts(self, url: str) -> dict:
        import psycopg

        with psycopg.connect(url) as c:
            return {t: c.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in PG_TABLES}

    def pg_digest(self, url: str) -> dict:
        """md5 of the ordered rows of checkpoints and checkpoint_blobs, and the write count."""
        import psycopg

        with psycopg.connect(url) as c:
            return {
                "checkpoints": c.execute(
                    "SELECT md5(string_agg(md5(concat_ws('|', thread_id, checkpoint_ns, checkpoint_id, "
                    "parent_checkpoint_id, checkpoint::text, metadata::text)), '' ORDER BY thread_id, "
                    "checkpoint_ns, checkpoint_id)) FROM checkpoints").fetchone()[0],
                "checkpoint_blobs": c.execute(
                    "SELECT md5(string_agg(md5(concat_ws('|', thread_id, checkpoint_ns, channel, version, type, "
                    "md5(blob))), '' ORDER BY thread_id, checkpoint_ns, channel, version)) "
                    "FROM checkpoint_blobs").fetchone()[0],
                "checkpoint_writes": c.execute("SELECT count(*) FROM checkpoint_writes").fetchone()[0],
            }

    # -- the jobs
    def memctl(self, src: str, dst: str, tag: str) -> dict:
        out = self.a.work / f"{tag}.out"
        wall, cpu, rss, la = run_once([self.a.memctl, "migrate", "--db", src, "--to", dst, "--format", "json"], out)
        return {"wall": wall, "cpu": cpu, "rss": rss, "load": la}

    def python(self, task: str, src: str, dst: str, tag: str, total: int) -> dict:
        """A Python way in a child process; `total`: the source's checkpoint and write bytes
        (as SqliteSaver stores them), for the extrapolation when the budget runs out."""
        out = self.a.work / f"{tag}.out"
        res = self.a.work / f"{tag}.json"
        wall, cpu, rss, la = run_once([self.py, self.me, "task", task, src, dst,
                                       str(self.a.python_budget), str(res)], out)
        r = json.loads(res.read_text())
        r.update(wall=wall, cpu=cpu, rss=rss, load=la)
        r["complete"] = r["checkpoints"] == r["of"]
        if not r["complete"]:
            # Extrapolated by bytes: the loop's time per source byte moved, times all of them.
            r["extrapolated"] = r["seconds"] / max(1, r["bytes"]) * total + (wall - r["seconds"])
        return r

    def copy_floor(self, src_url: str, name: str) -> dict:
        """memctl's rows dumped in COPY binary, then COPY'd into the empty tables: COPY timed."""
        import psycopg

        dumps = {}
        with psycopg.connect(src_url) as c:
            for t in PG_TABLES:
                path = self.a.work / f"{t}.copy"
                with open(path, "wb") as f, c.cursor().copy(f"COPY {t} TO STDOUT (FORMAT binary)") as cp:
                    for chunk in cp:
                        f.write(chunk)
                dumps[t] = path
        url = self.fresh_pg(name)
        with psycopg.connect(url) as c:
            t0 = time.perf_counter()
            for t, path in dumps.items():
                with open(path, "rb") as f, c.cursor().copy(f"COPY {t} FROM STDIN (FORMAT binary)") as cp:
                    while chunk := f.read(1 << 20):
                        cp.write(chunk)
            c.commit()
            wall = time.perf_counter() - t0
        la = load()
        counts = self.pg_counts(url)
        for p in dumps.values():
            p.unlink()
        return {"wall": wall, "load": la, "counts": counts, "url": url}

    def read_floor(self, src_url: str) -> dict:
        """Reading the source's rows out of Postgres, which the INSERT floor does not include:
        `COPY ... TO STDOUT (FORMAT binary)` of the three tables, the data dropped."""
        import psycopg

        with psycopg.connect(src_url) as c:
            t0 = time.perf_counter()
            n = 0
            for t in PG_TABLES:
                with c.cursor().copy(f"COPY {t} TO STDOUT (FORMAT binary)") as cp:
                    for chunk in cp:
                        n += len(chunk)
            wall = time.perf_counter() - t0
        return {"wall": wall, "load": load(), "bytes": n}

    def insert_floor(self, src_file: Path, tag: str) -> dict:
        """memctl's SQLite rows inserted into a file SqliteSaver.setup() made, one transaction."""
        from langgraph.checkpoint.sqlite import SqliteSaver

        ways = {}
        for way in ("insert-select", "executemany"):
            dst = self.a.work / f"{tag}-{way}.sqlite"
            for s in ("", "-wal", "-shm"):
                Path(str(dst) + s).unlink(missing_ok=True)
            con = sqlite3.connect(dst, isolation_level=None, check_same_thread=False)
            SqliteSaver(con).setup()
            cols = {t: [r[1] for r in con.execute(f"PRAGMA table_info({t})")] for t in LITE_TABLES}
            if way == "insert-select":
                con.execute(f"ATTACH DATABASE 'file:{src_file.resolve()}?mode=ro' AS src")
                t0 = time.perf_counter()
                con.execute("BEGIN")
                for t in LITE_TABLES:
                    cl = ", ".join(cols[t])
                    con.execute(f"INSERT INTO main.{t} ({cl}) SELECT {cl} FROM src.{t} WHERE 1")
                con.execute("COMMIT")
            else:
                src = sqlite3.connect(f"file:{src_file.resolve()}?mode=ro", uri=True)
                t0 = time.perf_counter()
                con.execute("BEGIN")
                for t in LITE_TABLES:
                    cl = ", ".join(cols[t])
                    marks = ", ".join("?" * len(cols[t]))
                    con.executemany(f"INSERT INTO {t} ({cl}) VALUES ({marks})",
                                    src.execute(f"SELECT {cl} FROM {t}"))
                con.execute("COMMIT")
                src.close()
            wall = time.perf_counter() - t0
            ways[way] = {"wall": wall, "load": load(),
                         "counts": {t: con.execute(f"SELECT count(*) FROM main.{t}").fetchone()[0]
                                    for t in LITE_TABLES}}
            con.close()
            for s in ("", "-wal", "-shm"):
                Path(str(dst) + s).unlink(missing_ok=True)
        best = min(ways, key=lambda w: ways[w]["wall"])
        return {**ways[best], "way": best, "ways": ways}


def lite_counts(path: Path) -> dict:
    con = sqlite3.connect(f"file:{path.resolve()}?mode=ro", uri=True)
    try:
        return {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in LITE_TABLES}
    finally:
        con.close()


def lite_digest(path: Path) -> str:
    """md5 of the ordered checkpoint rows (no task_path: SqliteSaver's list does not give it)."""
    import hashlib

    con = sqlite3.connect(f"file:{path.resolve()}?mode=ro", uri=True)
    h = hashlib.md5()
    for row in con.execute("SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, "
                           "checkpoint, metadata FROM checkpoints ORDER BY thread_id, checkpoint_ns, checkpoint_id"):
        for v in row:
            h.update(v if isinstance(v, bytes) else str(v).encode())
            h.update(b"|")
    for row in con.execute("SELECT thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, value "
                           "FROM writes ORDER BY thread_id, checkpoint_ns, checkpoint_id, task_id, idx"):
        for v in row:
            h.update(v if isinstance(v, bytes) else str(v).encode())
            h.update(b"|")
    con.close()
    return h.hexdigest()


def unlink_lite(path: Path) -> None:
    for s in ("", "-wal", "-shm"):
        Path(str(path) + s).unlink(missing_ok=True)


def one_file(b: Bench, src: Path, python: bool) -> dict:
    """Both directions on one source file; the Python ways only when `python`."""
    tag = src.stem
    w = b.a.work
    print(f"== {src.name} ({src.stat().st_size / 2**20:.0f} MiB), load {load()}", file=sys.stderr)
    r: dict = {"file": src.name, "mib": src.stat().st_size / 2**20}
    lite = sqlite3.connect(f"file:{src.resolve()}?mode=ro", uri=True)
    r["threads"], r["checkpoints"] = lite.execute(
        "SELECT count(DISTINCT thread_id), count(*) FROM checkpoints").fetchone()
    r["writes"] = lite.execute("SELECT count(*) FROM writes").fetchone()[0]
    total = source_bytes_lite(lite) if python else 0
    lite.close()

    # SQLite -> Postgres
    m_url = b.fresh_pg("memctl_mig_m")
    r["s2p_memctl"] = b.memctl(str(src), m_url, f"{tag}-s2p")
    print(f"  s2p memctl {r['s2p_memctl']['wall']:.1f}s", file=sys.stderr)
    r["pg_mib"] = b.admin.execute("SELECT pg_database_size('memctl_mig_m')").fetchone()[0] / 2**20
    r["s2p_floor"] = b.copy_floor(m_url, "memctl_mig_f")
    b.drop_pg("memctl_mig_f")
    print(f"  s2p COPY {r['s2p_floor']['wall']:.1f}s", file=sys.stderr)
    m_counts = b.pg_counts(m_url)
    r["checks"] = {"COPY floor holds memctl's row counts": r["s2p_floor"].pop("counts") == m_counts}
    if python:
        p_url = b.fresh_pg("memctl_mig_p")
        r["s2p_python"] = b.python("s2p", str(src), p_url, f"{tag}-s2p-py", total)
        print(f"  s2p Python {r['s2p_python']['wall']:.1f}s", file=sys.stderr)
        if r["s2p_python"]["complete"]:
            r["checks"]["SQLite->Postgres: memctl's rows = PostgresSaver.put's rows (md5)"] = (
                b.pg_digest(m_url) == b.pg_digest(p_url))
        b.drop_pg("memctl_mig_p")

    # Postgres -> SQLite, from the database memctl wrote
    m_file = w / f"{tag}-back-memctl.sqlite"
    unlink_lite(m_file)
    r["p2s_memctl"] = b.memctl(m_url, str(m_file), f"{tag}-p2s")
    print(f"  p2s memctl {r['p2s_memctl']['wall']:.1f}s", file=sys.stderr)
    r["p2s_floor"] = b.insert_floor(m_file, tag)
    r["p2s_read"] = b.read_floor(m_url)
    print(f"  p2s floor {r['p2s_floor']['wall']:.1f}s ({r['p2s_floor']['way']})", file=sys.stderr)
    back = lite_counts(m_file)
    r["checks"]["INSERT floor holds memctl's row counts"] = all(
        v["counts"] == back for v in r["p2s_floor"]["ways"].values())
    r["checks"]["Postgres->SQLite: memctl's file has the source's rows (counts)"] = (
        back == {"checkpoints": r["checkpoints"], "writes": r["writes"]})
    if python:
        p_file = w / f"{tag}-back-python.sqlite"
        unlink_lite(p_file)
        r["p2s_python"] = b.python("p2s", m_url, str(p_file), f"{tag}-p2s-py", total)
        print(f"  p2s Python {r['p2s_python']['wall']:.1f}s", file=sys.stderr)
        if r["p2s_python"]["complete"]:
            # SqliteSaver.put_writes gets no task_path from PostgresSaver.list: compare without it.
            r["checks"]["Postgres->SQLite: memctl's file = SqliteSaver.put's file (md5, no task_path)"] = (
                lite_digest(m_file) == lite_digest(p_file))
        unlink_lite(p_file)
    unlink_lite(m_file)
    b.drop_pg("memctl_mig_m")
    for k, ok in r["checks"].items():
        print(f"  check {k}: {'ok' if ok else 'FAILED'}", file=sys.stderr)
    (w / f"{tag}.json").write_text(json.dumps(r, indent=1, default=str))
    return r


def fmt_job(j: dict) -> str:
    return f"{j['wall']:.1f} s (CPU {j['cpu']:.1f} s, {j['rss'] / 1024:.0f} MiB, load {j['load']})"


def py_time(p: dict) -> float:
    return p["wall"] if p["complete"] else p["extrapolated"]


def py_cell(p: dict) -> str:
    if p["complete"]:
        return fmt_job(p)
    return (f"**{p['extrapolated']:.0f} s extrapolated** ({p['checkpoints']:,} of {p['of']:,} checkpoints, "
            f"{p['bytes'] / 2**20:.0f} MiB of the source's rows in {p['seconds']:.0f} s; "
            f"{p['rss'] / 1024:.0f} MiB, load {p['load']})")


def report(main: dict, growth: list[dict], b: Bench) -> str:
    server = b.admin.execute("SHOW server_version").fetchone()[0]
    lines = [
        f"Data: `{main['file']}` ({main['mib']:.0f} MiB, {main['threads']} threads, "
        f"{main['checkpoints']:,} checkpoints, {main['writes']:,} writes; {main['pg_mib']:.0f} MiB "
        f"once in Postgres). PostgreSQL {server} on the same machine; {platform.machine()}, "
        f"{os.cpu_count()} cores shared with other work (load average, 1 min, after each job in the "
        "cells). One run of each. Times are wall times of whole processes (memctl, Python) or of "
        "the bulk statement alone (floors); peak RSS from /usr/bin/time.",
        "",
        "| direction | memctl | Python way | floor | memctl vs Python | memctl / floor |",
        "|---|---|---|---|---|---|",
    ]
    for d, label, floor_name in (("s2p", "SQLite → Postgres", "COPY binary"),
                                 ("p2s", "Postgres → SQLite", None)):
        m, f = main[f"{d}_memctl"], main[f"{d}_floor"]
        p = main.get(f"{d}_python")
        fname = floor_name or f"`{f['way']}`, one transaction"
        lines.append(
            f"| {label} | {fmt_job(m)} | {py_cell(p) if p else '-'} | {f['wall']:.1f} s ({fname}, load "
            f"{f['load']}) | {(py_time(p) / m['wall']) if p else 0:.1f}× | {m['wall'] / f['wall']:.2f}× |")
    if "p2s_floor" in main:
        ways = main["p2s_floor"]["ways"]
        rd = main["p2s_read"]
        lines += ["", "Postgres → SQLite floors: " + "; ".join(
            f"`{k}` {v['wall']:.1f} s" for k, v in ways.items()) + ". Not in them: getting the rows "
            f"out of Postgres, `COPY ... TO STDOUT (FORMAT binary)` of the three tables "
            f"({rd['bytes'] / 2**20:.0f} MiB): {rd['wall']:.1f} s (load {rd['load']}); read + insert "
            f"{rd['wall'] + main['p2s_floor']['wall']:.1f} s, memctl / (read + insert) "
            f"{main['p2s_memctl']['wall'] / (rd['wall'] + main['p2s_floor']['wall']):.2f}×."]
    if growth:
        lines += ["", "Growth (memctl and the floors only):", "",
                  "| data | threads / checkpoints | SQLite → Postgres: memctl | COPY | ratio "
                  "| Postgres → SQLite: memctl | INSERT | ratio | COPY TO (read) |",
                  "|---|---|---|---|---|---|---|---|---|"]
        for g in growth:
            lines.append(
                f"| {g['mib']:.0f} MiB | {g['threads']:,} / {g['checkpoints']:,} | {fmt_job(g['s2p_memctl'])} | "
                f"{g['s2p_floor']['wall']:.1f} s | {g['s2p_memctl']['wall'] / g['s2p_floor']['wall']:.2f}× | "
                f"{fmt_job(g['p2s_memctl'])} | {g['p2s_floor']['wall']:.1f} s | "
                f"{g['p2s_memctl']['wall'] / g['p2s_floor']['wall']:.2f}× | {g['p2s_read']['wall']:.1f} s |")
    checks = {k: v for r in [main, *(g for g in growth if g is not main)] for k, v in ((f"{r['file']}: {k}", v) for k, v in r["checks"].items())}
    lines += ["", "Checks: " + "; ".join(f"{k}: {'ok' if v else 'FAILED'}" for k, v in checks.items())]
    return "\n".join(lines) + "\n"


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "task":
        _, _, name, src, dst, budget, out = sys.argv
        Path(out).write_text(json.dumps(TASKS[name](src, dst, float(budget))))
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--url", required=True, help="a superuser URL of a scratch server")
    ap.add_argument("--sqlite", required=True, type=Path, help="the source file (1x: the Python ways run on it)")
    ap.add_argument("--memctl", required=True)
    ap.add_argument("--growth", type=Path, nargs="*", default=[],
                    help="more source files for the growth series (memctl and the floors only)")
    ap.add_argument("--python-budget", type=float, default=600,
                    help="seconds after which a Python loop stops and its time is extrapolated")
    ap.add_argument("--no-python", action="store_true", help="skip the Python ways")
    ap.add_argument("--work", type=Path, default=Path("target/migbench"))
    ap.add_argument("--markdown", type=Path)
    a = ap.parse_args()
    b = Bench(a)
    print(f"load average at start {load()}", file=sys.stderr)
    main_r = one_file(b, a.sqlite, not a.no_python)
    # A growth file that is the main file reuses its figures (the same jobs, measured once).
    growth = [main_r if g.resolve() == a.sqlite.resolve() else one_file(b, g, False) for g in a.growth]
    (a.work / "migrate.json").write_text(json.dumps({"main": main_r, "growth": growth}, indent=1, default=str))
    text = report(main_r, growth, b)
    print(text)
    if a.markdown:
        a.markdown.write_text(text)
    ok = all(v for r in [main_r, *growth] for v in r["checks"].values())
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
