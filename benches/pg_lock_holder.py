#!/usr/bin/env python3
"""prune beside an app while another session holds a VACUUM's lock (issue #30, Postgres).

VACUUM, ANALYZE and autovacuum hold SHARE UPDATE EXCLUSIVE on the table they work on: it does
not block an app's `PostgresSaver.put`, but it blocks memctl's `LOCK TABLE ... SHARE ROW
EXCLUSIVE`, and a lock request waiting in the server's queue makes every later `put` queue
behind it. This runs `memctl prune --idle 30d --yes` on a copy of DB (`CREATE DATABASE ...
TEMPLATE`, dropped after) beside the stand-in app of benches/scale.py, and once memctl starts
its first write transaction (+1 s) a session holds `LOCK TABLE checkpoints IN SHARE UPDATE
EXCLUSIVE MODE` for --hold seconds. Prints memctl's result and the app's puts over 50 ms:

    .venv/pg/bin/python benches/pg_lock_holder.py --pg ADMIN_URL --db memctl_scale \\
        --memctl target/release/memctl [--hold 3]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent))
import scale  # noqa: E402


def hold_once_memctl_writes(url: str, hold: float, held: dict) -> None:
    with psycopg.connect(url, autocommit=True) as c:
        while not c.execute("SELECT count(*) FROM pg_stat_activity WHERE application_name = 'memctl' "
                            "AND query LIKE 'BEGIN ISOLATION%'").fetchone()[0]:
            time.sleep(0.01)
        time.sleep(1.0)
        c.execute("BEGIN")
        c.execute("LOCK TABLE checkpoints IN SHARE UPDATE EXCLUSIVE MODE")
        held["at"] = time.monotonic()
        time.sleep(hold)
        c.execute("COMMIT")
        held["until"] = time.monotonic()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pg", required=True, help="admin URL of a scratch server")
    ap.add_argument("--db", default="memctl_scale", help="database to copy (made by scale.py --pg)")
    ap.add_argument("--memctl", type=Path, default=scale.ROOT / "target/release/memctl")
    ap.add_argument("--hold", type=float, default=3.0, help="seconds the lock is held")
    a = ap.parse_args()
    work = f"{a.db}_hold"
    with psycopg.connect(a.pg, autocommit=True) as c:
        c.execute(f"DROP DATABASE IF EXISTS {work}")
        c.execute(f"CREATE DATABASE {work} TEMPLATE {a.db} STRATEGY FILE_COPY")
    url = scale.db_url(a.pg, work)
    app = subprocess.Popen([sys.executable, "-c", scale.APP, "postgres", url, "hold-app"],
                           stdout=subprocess.PIPE, text=True)
    assert app.stdout is not None
    if app.stdout.readline().strip() != "ready":
        sys.exit("pg_lock_holder.py: the stand-in app did not start")
    time.sleep(0.5)
    held: dict = {}
    threading.Thread(target=hold_once_memctl_writes, args=(url, a.hold, held), daemon=True).start()
    t0, load = time.monotonic(), os.getloadavg()
    m = subprocess.run([str(a.memctl), "prune", "--idle", "30d", "--yes", "--format", "json", "--db", url],
                       capture_output=True, text=True)
    t1 = time.monotonic()
    app.terminate()
    out, _ = app.communicate(timeout=60)
    res = json.loads(out.strip().splitlines()[-1])
    print(f"memctl {t1 - t0:.1f} s, exit {m.returncode}; load {load[0]:.1f} -> {os.getloadavg()[0]:.1f}")
    if m.returncode == 0:
        print(f"deleted: {json.loads(m.stdout)['deleted']}")
    else:
        print(m.stderr.strip()[-500:])
    print("lock held from/until (s from memctl's start):", {k: round(v - t0, 2) for k, v in held.items()})
    print(f"app: {res['puts']} puts, {res['failures']} failed, longest {res['max_s'] * 1000:.0f} ms, "
          f"p99 {res['p99_s'] * 1000:.0f} ms")
    for at, took in res["slow"]:
        print(f"  slow put at {at - t0:+.2f} s: {took * 1000:.0f} ms")
    with psycopg.connect(a.pg, autocommit=True) as c:
        c.execute(f"DROP DATABASE {work}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
