#!/usr/bin/env python3
"""memctl on very many threads (issue #30 "Scale"), SQLite and Postgres, in one run.

Data: a SqliteSaver file of short threads made by benches/many.py (made here when --db does not
exist: --threads, default 1,000,000), and with --pg ADMIN_URL its Postgres copy (database
`memctl_scale`: PostgresSaver.setup(), then `memctl migrate` into it, timed and shown).
Per backend:

  list 50         `threads list --limit 50 --sort updated`          goal: < 1 s
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
    saver = PostgresSaver(psycopg.connect(target, autocommit=True, prepare_threshold=0))
cfg = {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}
waits, failures, stop, step = [], 0, False, 0
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
    except Exception as e:
        failures += 1
        print(f"app: {e}", file=sys.stderr)
    step += 1
    time.sleep(0.02)
waits.sort()
print(json.dumps({"puts": len(waits), "failures": failures,
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


def beside_app(kind: str, target: str, memctl: list[str]) -> dict:
    """memctl's run while the stand-in app puts a checkpoint every 20 ms."""
    thread = f"beside-app-{os.getpid()}"
    app = subprocess.Popen([sys.executable, "-c", APP, kind, target, thread],
                           stdout=subprocess.PIPE, text=True)
    assert app.stdout is not None
    if app.stdout.readline().strip() != "ready":
        sys.exit("scale.py: the stand-in app did not start")
    time.sleep(0.5)
    try:
        m = run(memctl, keep=True)
    finally:
        app.terminate()
    report = json.loads(m.pop("stdout"))
    m["deleted_threads"] = report["deleted"]["threads"]
    out, _ = app.communicate(timeout=60)
    return {"memctl": m, "app": json.loads(out.strip().splitlines()[-1])}


def db_url(admin: str, db: str) -> str:
    base, _, query = admin.partition("?")
    return base.rsplit("/", 1)[0] + f"/{db}" + (f"?{query}" if query else "")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--db", type=Path, required=True)
    ap.add_argument("--memctl", type=Path, default=ROOT / "target/release/memctl")
    ap.add_argument("--pg", help="admin URL of a scratch PostgreSQL server")
    ap.add_argument("--threads", type=int, default=1_000_000, help="threads of a new --db")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", type=Path)
    a = ap.parse_args()
    memctl = str(a.memctl.resolve())
    if not a.db.exists():
        subprocess.run([sys.executable, str(ROOT / "benches/many.py"), "--threads", str(a.threads),
                        "--out", str(a.db)], check=True)
    meta = json.loads(Path(f"{a.db}.json").read_text())
    out: dict = {"data": meta, "load": os.getloadavg(), "backends": {}}
    targets = [("sqlite", str(a.db))]
    if a.pg:
        import psycopg
        from langgraph.checkpoint.postgres import PostgresSaver

        url = db_url(a.pg, "memctl_scale")
        with psycopg.connect(a.pg, autocommit=True) as c:
            exists = c.execute("SELECT 1 FROM pg_database WHERE datname = 'memctl_scale'").fetchone()
        if not exists:
            with psycopg.connect(a.pg, autocommit=True) as c:
                c.execute("CREATE DATABASE memctl_scale")
            with PostgresSaver.from_conn_string(url) as saver:
                saver.setup()
            t0 = time.perf_counter()
            m = run([memctl, "migrate", "--db", str(a.db), "--to", url, "--format", "json", "--quiet"])
            out["pg_load"] = {"seconds": time.perf_counter() - t0, "rss_mib": m["rss_mib"]}
            with psycopg.connect(url, autocommit=True) as c:
                c.execute("VACUUM ANALYZE")
        targets.append(("postgres", url))

    for kind, db in targets:
        r: dict = {}
        r["list50"] = fastest([run([memctl, "threads", "list", "--db", db, "--limit", "50", "--sort",
                                    "updated", "--format", "json"]) for _ in range(a.repeat)])
        r["tokens"] = fastest([run([memctl, "tokens", "--all", "--db", db, "--format", "jsonl"])
                               for _ in range(a.repeat)])
        r["list_all"] = fastest([run([memctl, "threads", "list", "--db", db, "--format", "jsonl"])
                                 for _ in range(a.repeat)])
        r["tokens_stream"] = fastest([run([memctl, "tokens", "--all", "--sort", "thread", "--db", db,
                                           "--format", "jsonl"]) for _ in range(a.repeat)])
        r["list_stream"] = fastest([run([memctl, "threads", "list", "--sort", "thread", "--db", db,
                                         "--format", "jsonl"]) for _ in range(a.repeat)])
        prune = [memctl, "prune", "--idle", "30d", "--yes", "--format", "json"]
        if kind == "sqlite":
            work = a.db.with_name("scale-prune.sqlite")
            for suffix in ("", "-wal", "-shm"):
                Path(f"{work}{suffix}").unlink(missing_ok=True)
            shutil.copyfile(a.db, work)
            r["prune"] = beside_app("sqlite", str(work), prune + ["--db", str(work)])
            for suffix in ("", "-wal", "-shm"):
                Path(f"{work}{suffix}").unlink(missing_ok=True)
        else:
            import psycopg

            with psycopg.connect(a.pg, autocommit=True) as c:
                c.execute("DROP DATABASE IF EXISTS memctl_scale_prune")
                c.execute("CREATE DATABASE memctl_scale_prune TEMPLATE memctl_scale")
            work_url = db_url(a.pg, "memctl_scale_prune")
            r["prune"] = beside_app("postgres", work_url, prune + ["--db", work_url])
            with psycopg.connect(a.pg, autocommit=True) as c:
                c.execute("DROP DATABASE memctl_scale_prune")
        out["backends"][kind] = r
    out["load_after"] = os.getloadavg()
    js = a.json or ROOT / "target/bench-scale.json"
    js.parent.mkdir(parents=True, exist_ok=True)
    js.write_text(json.dumps(out, indent=2))

    print(f"\n{meta['threads']:,} threads, {meta['checkpoints']:,} checkpoints, "
          f"{meta['bytes'] / 2**30:.2f} GiB (SQLite); fastest of {a.repeat} runs; load "
          f"{out['load'][0]:.1f} before, {out['load_after'][0]:.1f} after")
    if "pg_load" in out:
        print(f"Postgres copy made by memctl migrate in {out['pg_load']['seconds']:.0f} s")
    print("\n| backend | measure | memctl | goal |\n|---|---|---|---|")
    for kind, r in out["backends"].items():
        l50, tok, la, pr = r["list50"], r["tokens"], r["list_all"], r["prune"]
        print(f"| {kind} | threads list --limit 50 --sort updated | {l50['wall']:.2f} s, "
              f"{l50['rss_mib']:.0f} MiB | < 1 s |")
        print(f"| {kind} | tokens --all (jsonl) | first line {tok['first'] or float('nan'):.2f} s, "
              f"all {tok['wall']:.1f} s, {tok['rss_mib']:.0f} MiB | first < 1 s, < 100 MB |")
        print(f"| {kind} | threads list (all, jsonl) | {la['wall']:.1f} s, {la['rss_mib']:.0f} MiB "
              f"| < 100 MB |")
        for key, what in (("tokens_stream", "tokens --all --sort thread (jsonl)"),
                          ("list_stream", "threads list --sort thread (jsonl)")):
            m = r[key]
            print(f"| {kind} | {what} | first line {m['first'] or float('nan'):.2f} s, "
                  f"all {m['wall']:.1f} s, {m['rss_mib']:.0f} MiB | first < 1 s, < 100 MB |")
        deleted = f"{pr['memctl']['deleted_threads']:,} threads deleted"
        app = pr["app"]
        print(f"| {kind} | prune --idle 30d beside an app | {pr['memctl']['wall']:.1f} s ({deleted}); "
              f"app: {app['puts']} puts, {app['failures']} failed, longest "
              f"{(app['max_s'] or 0) * 1000:.0f} ms, p99 {(app['p99_s'] or 0) * 1000:.0f} ms | longest < 100 ms |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
