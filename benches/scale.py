#!/usr/bin/env python3
"""memctl on very many threads (issue #30 "Scale"), SQLite and Postgres, in one run.

Data: a SqliteSaver file of short threads made by benches/many.py (made here when --db does not
exist: --threads, default 1,000,000), and with --pg ADMIN_URL its Postgres copy (database
`memctl_scale`: PostgresSaver.setup(), then `memctl migrate` into it, timed and shown).
Per backend:

  list 50         `threads list --limit 50 --sort updated`          goal: < 1 s
  list 50, index  Postgres: the same, with the index `memctl stats` recommends (its
                  `postgres.index_advice` statement, run here and dropped after)
  first output    `tokens --all --format jsonl`: time to its first line, and the whole run
                  goal: first line < 1 s, peak RSS < 100 MB
  whole list      `threads list --format jsonl` (every thread)      peak RSS < 100 MB
  streamed        `tokens --all --sort thread --format jsonl` and `threads list --sort thread
                  --format jsonl` (rows written as read): first line, all, peak RSS
                  goal: first line < 1 s, peak RSS < 100 MB
  prune           `prune --idle 30d --yes` on a copy, while a stand-in app (the real saver's
                  `put` of a new checkpoint every 20 ms, in a thread of its own) keeps
                  writing: threads deleted, wall time, the app's longest and p99 put
                  goal: the app's longest put < 100 ms beside a prune of 100,000 threads

Each read runs --repeat times (fastest kept, largest RSS kept). Run under .venv/pg (both savers):

    cargo build --release
    .venv/pg/bin/python benches/scale.py --db /work/bench/many/m1m.sqlite \\
        --memctl target/release/memctl [--pg ADMIN_URL] [--threads 1000000]

ADMIN_URL is a superuser URL of a scratch server (`scripts/pg.sh start DIR`).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TIME = "/usr/bin/time" if Path("/usr/bin/time").exists() else None

APP = r'''
import json, signal, sys, time
from langgraph.checkpoint.base import empty_checkpoint
kind, target, thread = sys.argv[1], sys.argv[2], sys.argv[3]
if kind == "sqlite":
    import sqlite3
    from langgraph.checkpoint.sqlite import SqliteSaver
    saver = SqliteSaver(sqlite3.connect(target, check_same_thread=False))  # timeout 5 s
else:
    import psycopg
    from langgraph.checkpoint.postgres import PostgresSaver
    saver = PostgresSaver(psycopg.connect(target, autocommit=True, prepare_threshold=0,
                                          application_name="scale-app"))
cfg = {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}
waits, slow, failures, stop, step = [], [], 0, False, 0
def done(*_):
    global stop
    stop = True
signal.signal(signal.SIGTERM, done)
print("ready", flush=True)
while not stop:
    cp = empty_checkpoint()
    t0 = time.monotonic()
    try:
        cfg = saver.put(cfg, cp, {"source": "loop", "step": step, "parents": {}}, {})
        waits.append(time.monotonic() - t0)
        if waits[-1] >= 0.05:
            slow.append([round(t0, 3), round(waits[-1], 3)])  # CLOCK_MONOTONIC: the bench's too
    except Exception as e:
        failures += 1
        print(f"app: {e}", file=sys.stderr)
    step += 1
    time.sleep(0.02)
waits.sort()
print(json.dumps({"puts": len(waits), "failures": failures, "slow": slow,
                  "max_s": waits[-1] if waits else None,
                  "p99_s": waits[max(0, int(len(waits) * 0.99) - 1)] if waits else None}))
'''


def run(cmd: list[str], keep: bool = False) -> dict:
    """Wall time, time to the first line of stdout, peak RSS and exit code of one process
    (and its stdout when `keep`)."""
    rss_file = Path(tempfile.mktemp(suffix=".rss"))
    full = [TIME, "-f", "%M", "-o", str(rss_file), *cmd] if TIME else cmd
    t0 = time.perf_counter()
    # stderr to a file: a pipe nobody reads while stdout is read would fill and stall memctl.
    err_file = tempfile.TemporaryFile()
    p = subprocess.Popen(full, stdout=subprocess.PIPE, stderr=err_file)
    first = None
    lines = 0
    kept = []
    assert p.stdout is not None
    for line in p.stdout:
        if first is None:
            first = time.perf_counter() - t0
        lines += 1
        if keep:
            kept.append(line)
    code = p.wait()
    err_file.seek(0)
    err = err_file.read().decode(errors="replace")
    err_file.close()
    wall = time.perf_counter() - t0
    rss = int(rss_file.read_text().split()[-1]) / 1024 if rss_file.exists() else float("nan")
    rss_file.unlink(missing_ok=True)
    if code not in (0, 3):
        sys.exit(f"scale.py: {' '.join(cmd[:4])}... failed ({code}): {err[-1500:]}")
    got = {"wall": wall, "first": first, "rss_mib": rss, "lines": lines, "exit": code}
    if keep:
        got["stdout"] = b"".join(kept).decode()
    return got


def fastest(runs: list[dict]) -> dict:
    best = dict(min(runs, key=lambda r: r["wall"]))
    best["rss_mib"] = max(r["rss_mib"] for r in runs)
    best["first"] = min((r["first"] for r in runs if r["first"] is not None), default=None)
    best["walls"] = [round(r["wall"], 3) for r in runs]
    return best


SAMPLE_SQL = """
SELECT a.pid, a.application_name, a.backend_type, a.state, a.wait_event_type, a.wait_event,
       pg_blocking_pids(a.pid), now() - a.xact_start, left(a.query, 120)
FROM pg_stat_activity a
WHERE a.pid <> pg_backend_pid() AND a.datname = current_database()
  AND (a.wait_event_type = 'Lock' OR cardinality(pg_blocking_pids(a.pid)) > 0
       OR a.backend_type = 'autovacuum worker')"""


def sampler(url: str, stop: threading.Event, got: list) -> None:
    """Every 10 ms: the backends of `url`'s database that wait on a lock, block one, or are
    autovacuum, with what they wait on and who blocks them (the server's view of a stall)."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as c:
        while not stop.is_set():
            at = round(time.monotonic(), 3)  # the app's clock too (CLOCK_MONOTONIC)
            for r in c.execute(SAMPLE_SQL).fetchall():
                got.append([at, *[x.total_seconds() if hasattr(x, "total_seconds") else x for x in r]])
            time.sleep(0.01)


def wal_watch(path: str, stop: threading.Event, got: list) -> None:
    """Every 20 ms: the size of the SQLite file's `-wal` when it changed (CLOCK_MONOTONIC)."""
    last = None
    while not stop.is_set():
        try:
            size = os.stat(f"{path}-wal").st_size
        except FileNotFoundError:
            size = 0
        if size != last:
            got.append([round(time.monotonic(), 3), size])
            last = size
        time.sleep(0.02)


def beside_app(kind: str, target: str, memctl: list[str]) -> dict:
    """memctl's run while the stand-in app puts a checkpoint every 20 ms (on Postgres with the
    server's lock waits sampled beside it)."""
    thread = f"beside-app-{os.getpid()}"
    app = subprocess.Popen([sys.executable, "-c", APP, kind, target, thread],
                           stdout=subprocess.PIPE, text=True)
    assert app.stdout is not None
    if app.stdout.readline().strip() != "ready":
        sys.exit("scale.py: the stand-in app did not start")
    time.sleep(0.5)
    stop, samples = threading.Event(), []
    watch = threading.Thread(target=sampler if kind == "postgres" else wal_watch,
                             args=(target, stop, samples), daemon=True)
    watch.start()
    t_start = time.monotonic()
    load_before = os.getloadavg()
    try:
        m = run(memctl, keep=True)
        m["load_before"] = load_before
    finally:
        app.terminate()
        stop.set()
    if watch.is_alive():
        watch.join(timeout=5)
    report = json.loads(m.pop("stdout"))
    m["deleted_threads"] = report["deleted"]["threads"]
    out, _ = app.communicate(timeout=60)
    m["load_after"] = os.getloadavg()
    return {"memctl": m, "app": json.loads(out.strip().splitlines()[-1]),
            ("server_waits" if kind == "postgres" else "wal_sizes"): samples,
            "memctl_started_s": round(t_start, 3)}


def db_url(admin: str, db: str) -> str:
    base, _, query = admin.partition("?")
    return base.rsplit("/", 1)[0] + f"/{db}" + (f"?{query}" if query else "")


MEASURES = ("list50", "list50_index", "tokens", "list_all", "tokens_stream", "list_stream", "prune")


def with_advised_index(admin: str, memctl: str, db: str, measure) -> dict:
    """`measure()` with the index `memctl stats` recommends on `db` (its
    `postgres.index_advice` statement, run as given), dropped again afterwards; fails when
    stats recommends none (the benchmark's table is large enough that it must)."""
    import psycopg

    stats = json.loads(subprocess.run([memctl, "stats", "--db", db, "--format", "json"], check=True,
                                      capture_output=True, text=True).stdout)
    advice = (stats.get("postgres") or {}).get("index_advice")
    if not advice:
        sys.exit(f"scale.py: memctl stats recommends no index on {db}")
    t0 = time.perf_counter()
    with psycopg.connect(db, autocommit=True) as c:
        c.execute(advice)
    built = time.perf_counter() - t0
    try:
        got = measure()
    finally:
        with psycopg.connect(db, autocommit=True) as c:
            c.execute("DROP INDEX IF EXISTS checkpoints_checkpoint_id_c_idx")
    got["index_seconds"] = built
    got["advice"] = advice
    return got


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--db", type=Path, required=True)
    ap.add_argument("--memctl", type=Path, default=ROOT / "target/release/memctl")
    ap.add_argument("--pg", help="admin URL of a scratch PostgreSQL server")
    ap.add_argument("--threads", type=int, default=1_000_000, help="threads of a new --db")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--skip-sqlite", action="store_true", help="measure the Postgres copy only")
    ap.add_argument("--measures", default=",".join(MEASURES),
                    help=f"comma-separated subset of {','.join(MEASURES)}")
    a = ap.parse_args()
    memctl = str(a.memctl.resolve())
    measures = a.measures.split(",")
    out: dict = {"load": os.getloadavg(), "backends": {}}
    targets = []
    if not a.skip_sqlite:
        if not a.db.exists():
            subprocess.run([sys.executable, str(ROOT / "benches/many.py"), "--threads", str(a.threads),
                            "--out", str(a.db)], check=True)
        out["data"] = json.loads(Path(f"{a.db}.json").read_text())
        targets.append(("sqlite", str(a.db)))
    if a.pg:
        import psycopg

        url = db_url(a.pg, "memctl_scale")
        with psycopg.connect(a.pg, autocommit=True) as c:
            exists = c.execute("SELECT 1 FROM pg_database WHERE datname = 'memctl_scale'").fetchone()
        pg_meta = Path(f"{a.db}.pg.json")
        if not exists:
            # The same threads as many.py's SQLite file, cloned inside the server (many_pg.py):
            # `memctl migrate` of a million threads takes about half an hour.
            with psycopg.connect(a.pg, autocommit=True) as c:
                c.execute("CREATE DATABASE memctl_scale")
            t0 = time.perf_counter()
            subprocess.run([sys.executable, str(ROOT / "benches/many.py"), "--threads", str(a.threads),
                            "--out", f"{a.db}.pg", "--pg", url, "--memctl", memctl], check=True)
            out["pg_load"] = {"seconds": time.perf_counter() - t0}
        out["pg_data"] = json.loads(pg_meta.read_text()) if pg_meta.exists() else None
        targets.append(("postgres", url))

    def timed_run(cmd: list[str]) -> dict:
        load = os.getloadavg()
        got = fastest([run(cmd) for _ in range(a.repeat)])
        got["load"] = [load, os.getloadavg()]
        return got

    def timed(key: str, cmd: list[str]) -> None:
        if key in measures:
            r[key] = timed_run(cmd)

    for kind, db in targets:
        r: dict = {}
        timed("list50", [memctl, "threads", "list", "--db", db, "--limit", "50", "--sort", "updated",
                         "--format", "json"])
        if kind == "postgres" and "list50_index" in measures:
            r["list50_index"] = with_advised_index(a.pg, memctl, db, lambda: timed_run([
                memctl, "threads", "list", "--db", db, "--limit", "50", "--sort", "updated", "--format", "json"]))
        timed("tokens", [memctl, "tokens", "--all", "--db", db, "--format", "jsonl"])
        timed("list_all", [memctl, "threads", "list", "--db", db, "--format", "jsonl"])
        timed("tokens_stream", [memctl, "tokens", "--all", "--sort", "thread", "--db", db,
                                "--format", "jsonl"])
        timed("list_stream", [memctl, "threads", "list", "--sort", "thread", "--db", db,
                              "--format", "jsonl"])
        out["backends"][kind] = r
        if "prune" not in measures:
            continue
        prune = [memctl, "prune", "--idle", "30d", "--yes", "--format", "json"]
        if kind == "sqlite":
            work = a.db.with_name(a.db.stem + ".prune.sqlite")
            for suffix in ("", "-wal", "-shm"):
                Path(f"{work}{suffix}").unlink(missing_ok=True)
            shutil.copyfile(a.db, work)
            # The copy's gigabytes of dirty pages would otherwise be flushed by the first fsync
            # of the file: the app's first automatic checkpoint, a put of about 1 s (measured).
            os.sync()
            r["prune"] = beside_app("sqlite", str(work), prune + ["--db", str(work)])
            for suffix in ("", "-wal", "-shm"):
                Path(f"{work}{suffix}").unlink(missing_ok=True)
        else:
            import psycopg

            with psycopg.connect(a.pg, autocommit=True) as c:
                c.execute("DROP DATABASE IF EXISTS memctl_scale_prune")
                c.execute("CREATE DATABASE memctl_scale_prune TEMPLATE memctl_scale STRATEGY FILE_COPY")
            work_url = db_url(a.pg, "memctl_scale_prune")
            r["prune"] = beside_app("postgres", work_url, prune + ["--db", work_url])
            with psycopg.connect(a.pg, autocommit=True) as c:
                c.execute("DROP DATABASE memctl_scale_prune")
        out["backends"][kind] = r
    out["load_after"] = os.getloadavg()
    js = a.json or ROOT / "target/bench-scale.json"
    js.parent.mkdir(parents=True, exist_ok=True)
    js.write_text(json.dumps(out, indent=2))

    for key in ("data", "pg_data"):
        meta = out.get(key)
        if meta:
            print(f"\n{meta['threads']:,} threads, {meta['checkpoints']:,} checkpoints, "
                  f"{meta['bytes'] / 2**30:.2f} GiB ({'Postgres' if key == 'pg_data' else 'SQLite'})")
    print(f"fastest of {a.repeat} runs; load {out['load'][0]:.1f} before, {out['load_after'][0]:.1f} after")
    if "pg_load" in out:
        print(f"Postgres copy made by many.py --pg in {out['pg_load']['seconds']:.0f} s")
    print("\n| backend | measure | memctl | load (1 min) | goal |\n|---|---|---|---|---|")
    for kind, r in out["backends"].items():
        def row(what: str, m: dict, figure: str, goal: str) -> None:
            load = f"{m['load'][0][0]:.1f} → {m['load'][1][0]:.1f}" if "load" in m else ""
            print(f"| {kind} | {what} | {figure} | {load} | {goal} |")

        if "list50" in r:
            m = r["list50"]
            row("threads list --limit 50 --sort updated", m, f"{m['wall']:.2f} s, {m['rss_mib']:.0f} MiB", "< 1 s")
        if "list50_index" in r:
            m = r["list50_index"]
            row("the same with the index `stats` recommends", m,
                f"{m['wall']:.2f} s, {m['rss_mib']:.0f} MiB (index built in {m['index_seconds']:.0f} s: "
                f"`{m['advice']}`)", "< 1 s")
        for key, what in (("tokens", "tokens --all (jsonl)"), ("list_all", "threads list (all, jsonl)"),
                          ("tokens_stream", "tokens --all --sort thread (jsonl)"),
                          ("list_stream", "threads list --sort thread (jsonl)")):
            if key in r:
                m = r[key]
                row(what, m, f"first line {m['first'] or float('nan'):.2f} s, all {m['wall']:.1f} s, "
                    f"{m['rss_mib']:.0f} MiB", "first < 1 s where it streams, < 100 MB")
        if "prune" in r:
            pr = r["prune"]
            app, m = pr["app"], pr["memctl"]
            m["load"] = [m.get("load_before", out["load"]), m["load_after"]]
            row("prune --idle 30d beside an app", m,
                f"{m['wall']:.1f} s ({m['deleted_threads']:,} threads deleted, {m['rss_mib']:.0f} MiB); app: "
                f"{app['puts']} puts, {app['failures']} failed, longest {(app['max_s'] or 0) * 1000:.0f} ms, "
                f"p99 {(app['p99_s'] or 0) * 1000:.0f} ms", "longest < 100 ms")
            for at, took in app.get("slow", []):
                print(f"  slow put at {at - pr['memctl_started_s']:+.2f} s (from memctl's start): {took * 1000:.0f} ms")
            if "server_waits" in pr:
                waits = pr["server_waits"]
                print(f"  server: {len(waits)} samples of waiting/blocking/autovacuum backends"
                      + (f" (full list in {js})" if waits else ""))
            if pr.get("wal_sizes"):
                sizes = pr["wal_sizes"]
                print(f"  -wal: largest {max(b for _, b in sizes) / 2**20:.0f} MiB, {len(sizes)} changes "
                      f"(timeline in {js})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
