#!/usr/bin/env python3
"""A DeltaChannel thread with thousands of updates since its seed (#16): memctl against
LangGraph's `get_state` and friends on the same file, in one run; prints the times, the ratios
and a markdown table.

    .venv/new/bin/python scripts/make_long_delta_thread.py target/bench/long-delta.sqlite --turns 2500
    .venv/new/bin/python benches/delta.py --db target/bench/long-delta.sqlite \\
        --memctl target/release/memctl [--runs 3] [--slow-runs 1] [--history 200]

The file is the one `scripts/make_long_delta_thread.py` writes (thread `long`, whose `messages`
is a DeltaChannel that never snapshots: every read replays every write since the first
checkpoint; 2,500 turns = 5,000 updates, 7,500 checkpoints). Each job is a whole process on
both sides (Python's imports included, as a user runs it), wall time and CPU time (user +
system) of the child; the in-process time after imports is printed too:

  latest state   memctl show long --format json  |  graph.get_state(cfg)
  threads list   memctl threads list             |  graph.get_state(cfg) (the message count)
  tokens         memctl tokens long              |  get_state + count_tokens_approximately
  history        memctl history long --limit N   |  list(graph.get_state_history(cfg, limit=N))
  trim           memctl trim long --keep 4       |  get_state + trim_messages + update_state
                 (each on its own fresh copy, made and synced before the timed run)

Both sides' results are compared (message counts, token counts, per-checkpoint counts, the
kept message ids after the trim); the script exits 1 when they differ.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
CFG = {"configurable": {"thread_id": "long"}}


# ------------------------------------------------------------------ the Python side (a child)
def python_task(task: str, db: str, limit: int) -> dict:
    """One job the LangGraph way; returns what it found (run in a child process)."""
    t0 = time.perf_counter()
    sys.path.insert(0, str(HERE.parent / "scripts"))
    from make_long_delta_thread import build  # noqa: E402  (the graph that wrote the file)
    from langchain_core.messages import RemoveMessage
    from langchain_core.messages.utils import count_tokens_approximately, trim_messages
    from langgraph.checkpoint.sqlite import SqliteSaver
    from langgraph.graph.message import REMOVE_ALL_MESSAGES

    t_imports = time.perf_counter()
    con = sqlite3.connect(db, check_same_thread=False)
    graph = build(SqliteSaver(con))
    out: dict = {}
    if task in ("show", "threads"):
        out["messages"] = len(graph.get_state(CFG).values["messages"])
    elif task == "tokens":
        out["tokens"] = count_tokens_approximately(graph.get_state(CFG).values["messages"])
    elif task == "history":
        out["counts"] = [len(s.values.get("messages", []))
                         for s in graph.get_state_history(CFG, limit=limit)]
    elif task == "trim":
        msgs = graph.get_state(CFG).values["messages"]
        kept = trim_messages(msgs, strategy="last", token_counter=len, max_tokens=4,
                             start_on="human", include_system=True)
        graph.update_state(CFG, {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), *kept]})
        con.commit()
        out["ids"] = [m.id for m in graph.get_state(CFG).values["messages"]]
    con.close()
    out["in_process"] = time.perf_counter() - t_imports
    out["imports"] = t_imports - t0
    return out


# ------------------------------------------------------------------ the harness
def run(cmd: list[str], prepare=None) -> tuple[float, float, str]:
    """Runs `cmd` once (after `prepare`, untimed); returns (wall, CPU of the child, stdout)."""
    if prepare:
        prepare()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({p.returncode}): {p.stderr.strip()[:2000]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, p.stdout


def measure(cmd: list[str], runs: int, prepare=None) -> tuple[float, float, str]:
    results = [run(cmd, prepare) for _ in range(runs)]
    return (statistics.median(r[0] for r in results), statistics.median(r[1] for r in results),
            results[-1][2])


def fresh_copy(src: str, dst: str):
    def prepare():
        for suffix in ("", "-wal", "-shm"):
            Path(dst + suffix).unlink(missing_ok=True)
        shutil.copyfile(src, dst)
        with open(dst, "rb+") as f:
            os.fsync(f.fileno())
    return prepare


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--db", required=True)
    ap.add_argument("--memctl", required=True)
    ap.add_argument("--runs", type=int, default=3, help="runs per memctl job (median)")
    ap.add_argument("--slow-runs", type=int, default=1, help="runs per Python job (median)")
    ap.add_argument("--history", type=int, default=200,
                    help="checkpoints the history job reads (newest first)")
    ap.add_argument("--python-task", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.python_task:
        print(json.dumps(python_task(a.python_task, a.db, a.history)))
        return 0

    db, memctl, py = a.db, a.memctl, sys.executable
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    n_cp = con.execute("SELECT count(*) FROM checkpoints WHERE thread_id = 'long'").fetchone()[0]
    n_w = con.execute("SELECT count(*) FROM writes WHERE thread_id = 'long'").fetchone()[0]
    con.close()
    print(f"database: {db} ({os.path.getsize(db) / 2**20:.1f} MiB), thread 'long': {n_cp} "
          f"checkpoints, {n_w} writes; load average {os.getloadavg()[0]:.2f}", flush=True)
    tmp = tempfile.mkdtemp(prefix="memctl-delta-bench-")
    pyjob = lambda task, path=db: [py, __file__, "--db", path, "--memctl", memctl,  # noqa: E731
                                   "--history", str(a.history), "--python-task", task]
    m_copy, p_copy = os.path.join(tmp, "m.sqlite"), os.path.join(tmp, "p.sqlite")
    jobs = [
        ("latest state", [memctl, "show", "long", "--db", db, "--format", "json"], pyjob("show"),
         "graph.get_state", None, None),
        ("threads list", [memctl, "threads", "list", "--db", db, "--format", "json"],
         pyjob("threads"), "graph.get_state (message count)", None, None),
        ("tokens", [memctl, "tokens", "long", "--db", db, "--format", "json"], pyjob("tokens"),
         "get_state + count_tokens_approximately", None, None),
        (f"history, newest {a.history}",
         [memctl, "history", "long", "--db", db, "--limit", str(a.history), "--format", "json"],
         pyjob("history"), f"get_state_history(limit={a.history})", None, None),
        ("trim --keep 4", [memctl, "trim", "long", "--keep", "4", "--db", m_copy, "--format", "json"],
         pyjob("trim", p_copy), "get_state + trim_messages + update_state",
         fresh_copy(db, m_copy), fresh_copy(db, p_copy)),
    ]
    rows, checks = [], []
    for name, mcmd, pcmd, pname, mprep, pprep in jobs:
        mw, mc, mout = measure(mcmd, a.runs, mprep)
        pw, pc, pout = measure(pcmd, a.slow_runs, pprep)
        res = json.loads(pout)
        rows.append((name, mw, mc, pname, pw, pc, res["in_process"]))
        print(f"{name}: memctl {mw:.3f} s (CPU {mc:.3f} s), {pname} {pw:.3f} s (CPU {pc:.3f} s, "
              f"in-process {res['in_process']:.3f} s): {pw / mw:.1f}x", flush=True)
        m = json.loads(mout)
        if name == "latest state":
            checks.append((name, len(m["messages"]), res["messages"]))
        elif name == "threads list":
            checks.append((name, next(t["messages"] for t in m if t["thread_id"] == "long"),
                           res["messages"]))
        elif name == "tokens":
            checks.append((name, m["total"], res["tokens"]))
        elif name.startswith("history"):
            checks.append((name, [c["messages"] for c in m], res["counts"]))
        elif name.startswith("trim"):
            shown = subprocess.run([memctl, "show", "long", "--db", m_copy, "--format", "json"],
                                   check=True, capture_output=True, text=True).stdout
            checks.append((name, [x.get("id") for x in json.loads(shown)["messages"]], res["ids"]))
    shutil.rmtree(tmp, ignore_errors=True)

    print()
    print("| job | memctl wall (CPU) | LangGraph way | wall (CPU) | ratio wall (CPU) "
          "| LangGraph in-process (after imports) / memctl whole process |")
    print("|---|---|---|---|---|---|")
    for name, mw, mc, pname, pw, pc, pin in rows:
        print(f"| {name} | {mw:.3f} s ({mc:.3f} s) | {pname} | {pw:.3f} s ({pc:.3f} s) | "
              f"{pw / mw:.1f}× ({pc / mc:.1f}×) | {pin:.3f} s: {pin / mw:.1f}× |")
    print()
    ok = True
    for name, mine, theirs in checks:
        same = mine == theirs
        ok &= same
        summary = f"{len(mine)} items" if isinstance(mine, list) else str(mine)
        print(f"- {name}: memctl {'equals' if same else 'DIFFERS FROM'} LangGraph ({summary})")
    print(f"\nload average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
