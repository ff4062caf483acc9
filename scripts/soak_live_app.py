#!/usr/bin/env python
"""Live-app soak (issue #12): does an app beside memctl ever lose a turn?

A LangGraph app (SqliteSaver, WAL, graph "1" of fixtures/graphs.py, fake model) invokes its
threads in a loop, while memctl rewrites and collects the same file again and again
(`trim --all --keep 2`, `rm --type ai`, `gc --all --keep-checkpoints 3`), and a third
connection holds the write lock 150 ms of every 300 ms to widen every race window.

A turn is lost when the app's next call on a thread does not hand the model the human message
the app saved just before (trim --keep 2 keeps exactly the last turn and rm removes only AI
replies, so it must always be there), or when it is missing from get_state right after the call.

    .venv/new/bin/python scripts/soak_live_app.py [--seconds 300] [--memctl target/release/memctl]

Prints a JSON report (calls, lost turns, memctl runs and what they reported) and exits 1 when
a turn was lost, the app saw an error, or memctl failed other than by refusing a thread that
was mid-run. Not part of the default test run: the deterministic
race test is (tests/interop.rs, a_live_apps_held_turn_wins_over_a_concurrent_rewrite).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "fixtures"))

import graphs  # noqa: E402
from langchain_core.messages import HumanMessage  # noqa: E402
from langgraph.checkpoint.sqlite import SqliteSaver  # noqa: E402


def app_loop(db: str, threads: list[str], stop: threading.Event, report: dict) -> None:
    con = sqlite3.connect(db, check_same_thread=False, timeout=30)
    saver = SqliteSaver(con)
    graph, model = graphs.build("1", saver)
    last: dict[str, str | None] = {t: None for t in threads}
    n = 0
    while not stop.is_set():
        t = threads[n % len(threads)]
        hid = f"soak-{t}-{n}"
        cfg = graphs.config(t)
        try:
            graph.invoke({"messages": [HumanMessage(f"soak turn {n}", id=hid)]}, cfg)
            report["calls"] += 1
            received = [m.id for m in model.calls[-1]]
            if last[t] is not None and last[t] not in received:
                report["lost_turns"].append(
                    {"thread": t, "turn": last[t], "model_received": received[-6:]})
            ids = [m.id for m in graph.get_state(cfg).values.get("messages", [])]
            if hid not in ids:
                report["lost_turns"].append({"thread": t, "turn": hid, "state": ids[-6:]})
            last[t] = hid
        except Exception as e:  # the point: there must be none
            report["app_errors"].append(f"{t}: {type(e).__name__}: {e}")
            if len(report["app_errors"]) > 50:
                stop.set()
        n += 1
    con.close()


def lock_holder(db: str, stop: threading.Event, report: dict) -> None:
    con = sqlite3.connect(db, timeout=30, isolation_level=None)
    while not stop.is_set():
        try:
            con.execute("BEGIN IMMEDIATE")
            time.sleep(0.15)
            con.execute("COMMIT")
            report["lock_holds"] += 1
        except sqlite3.OperationalError:
            pass
        time.sleep(0.15)
    con.close()


MEMCTL_JOBS = [
    ["trim", "--all", "--keep", "2"],
    ["trim", "--all", "--keep", "2", "--settle", "0s"],
    ["gc", "--all", "--keep-checkpoints", "3"],
    ["trim", "--all", "--keep", "2"],
]


def memctl_loop(memctl: str, db: str, threads: list[str], stop: threading.Event,
                report: dict) -> None:
    n = 0
    while not stop.is_set():
        if n % 5 == 4:
            # Removes the AI replies: the app's last human turn stays, so the check holds.
            args = ["rm", "--thread", threads[n % len(threads)], "--type", "ai"]
        else:
            args = MEMCTL_JOBS[n % len(MEMCTL_JOBS)]
        n += 1
        out = subprocess.run([memctl, *args, "--db", db, "--format", "json",
                              "--busy-timeout", "30000"], capture_output=True, text=True)
        report["memctl_runs"] += 1
        key = f"exit {out.returncode}"
        report["memctl_exits"][key] = report["memctl_exits"].get(key, 0) + 1
        try:
            body = json.loads(out.stdout) if out.stdout.strip() else []
        except json.JSONDecodeError:
            body = []
        rows = body if isinstance(body, list) else body.get("threads", [])
        for row in rows:
            st = row.get("status", "?")
            report["memctl_statuses"][st] = report["memctl_statuses"].get(st, 0) + 1
        refused = ("memctl does not edit a thread that is waiting",
                   "changed while memctl was working on it")
        if out.returncode == 1 and any(r in out.stderr for r in refused):
            report["memctl_refusals"] += 1  # a thread mid-run: left alone, as it must be
        elif out.returncode not in (0, 3):
            report["memctl_errors"].append(f"{args}: {out.stderr.strip()[:300]}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=300)
    ap.add_argument("--memctl", default=str(ROOT / "target" / "release" / "memctl"))
    ap.add_argument("--threads", type=int, default=3)
    a = ap.parse_args()
    if not Path(a.memctl).exists():
        print(f"no memctl at {a.memctl}: cargo build --release first", file=sys.stderr)
        return 2
    tmp = tempfile.mkdtemp(prefix="memctl-soak-")
    db = os.path.join(tmp, "soak.sqlite")
    shutil.copy(ROOT / "fixtures" / "new.sqlite", db)
    # A live SqliteSaver file is in WAL mode (its setup() sets it); set it before the
    # threads start, as the app would have long before memctl comes along.
    with sqlite3.connect(db) as con:
        con.execute("PRAGMA journal_mode=WAL")
    threads = [f"soak-{i}" for i in range(a.threads)]
    report: dict = {"seconds": a.seconds, "calls": 0, "lost_turns": [], "app_errors": [],
                    "lock_holds": 0, "memctl_runs": 0, "memctl_exits": {},
                    "memctl_statuses": {}, "memctl_refusals": 0, "memctl_errors": []}
    stop = threading.Event()
    workers = [
        threading.Thread(target=app_loop, args=(db, threads, stop, report)),
        threading.Thread(target=lock_holder, args=(db, stop, report)),
        threading.Thread(target=memctl_loop, args=(a.memctl, db, threads, stop, report)),
    ]
    for w in workers:
        w.start()
    stop.wait(a.seconds)
    stop.set()
    for w in workers:
        w.join()
    report["lost_turn_count"] = len(report["lost_turns"])
    print(json.dumps(report, indent=1))
    shutil.rmtree(tmp, ignore_errors=True)
    return 1 if report["lost_turns"] or report["app_errors"] or report["memctl_errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
