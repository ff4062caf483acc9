#!/usr/bin/env python3
"""`memctl find` on the benchmark database (#18): against a full read of the file (`cat FILE >
/dev/null`) and against the Python way (LangGraph's `SqliteSaver` decoding every checkpoint and
searching the message text), latest state and `--history`; prints the times and the ratios.

    .venv/new/bin/python benches/find.py --db target/bench/db-realistic-seed1.sqlite \\
        --memctl target/release/memctl [--pattern timeout] [--ignore-case] [--runs 3] [--slow-runs 1]

The database is only read (the Python side skips SqliteSaver's schema setup, which writes).
The Python way counts hits with the rules `find` documents (a message's text, its tool calls'
names and arguments, string state channels); the counts of both sides are printed and must be
equal. Run it niced on a shared machine; the load average at start and end is printed.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sqlite3
import statistics
import subprocess
import sys
import time

from langgraph.checkpoint.sqlite import SqliteSaver


def timed(fn, runs: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(runs):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


def text_of(m) -> str:
    content = m.get("content") if isinstance(m, dict) else getattr(m, "content", "")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(b if isinstance(b, str) else b.get("text", "")
                         for b in content
                         if isinstance(b, str) or (isinstance(b, dict) and b.get("type") == "text"))
    return ""


def searchable(m) -> str:
    out = text_of(m)
    for key in ("tool_calls", "invalid_tool_calls"):
        calls = m.get(key) if isinstance(m, dict) else getattr(m, key, None)
        for call in calls or []:
            if isinstance(call.get("name"), str):
                out += "\n" + call["name"]
            args = call.get("args")
            if isinstance(args, str):
                out += "\n" + args
            elif isinstance(args, (dict, list)):
                out += "\n" + json.dumps(args, separators=(",", ":"), ensure_ascii=False)
    return out


def hits_in(values: dict, pat: re.Pattern) -> int:
    n = 0
    msgs = values.get("messages")
    if isinstance(msgs, list):
        n += sum(1 for m in msgs if pat.search(searchable(m)))
    for name, v in values.items():
        if name != "messages" and not name.startswith(("__", "branch:to:")) and isinstance(v, str):
            n += 1 if pat.search(v) else 0
    return n


def python_way(db: str, pat: re.Pattern, history: bool) -> int:
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, check_same_thread=False)
    saver = SqliteSaver(con)
    saver.is_setup = True  # read only: no schema setup
    threads = [r[0] for r in con.execute(
        "SELECT DISTINCT thread_id FROM checkpoints WHERE checkpoint_ns = ''")]
    n = 0
    for thread in threads:
        cfg = {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}
        if history:
            for t in saver.list(cfg):
                n += hits_in(t.checkpoint["channel_values"], pat)
        else:
            t = saver.get_tuple(cfg)
            n += hits_in(t.checkpoint["channel_values"], pat) if t else 0
    con.close()
    return n


def memctl_way(memctl: str, db: str, pattern: str, ignore_case: bool, history: bool) -> int:
    args = [memctl, "find", "--db", db, "--count", "--format", "json"]
    args += ["-i"] if ignore_case else []
    args += ["--history"] if history else []
    out = subprocess.run([*args, "--", pattern], check=True, capture_output=True, text=True).stdout
    return sum(c["hits"] for c in json.loads(out))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--db", required=True)
    ap.add_argument("--memctl", required=True)
    ap.add_argument("--pattern", default="timeout")
    ap.add_argument("--ignore-case", action="store_true")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--slow-runs", type=int, default=1)
    a = ap.parse_args()
    pat = re.compile(re.escape(a.pattern), re.IGNORECASE if a.ignore_case else 0)
    size = os.path.getsize(a.db)
    print(f"database: {a.db} ({size / 2**20:.0f} MiB); pattern {a.pattern!r}"
          f"{' (ignoring case)' if a.ignore_case else ''}; load {os.getloadavg()[0]:.1f}")
    cat, _ = timed(lambda: subprocess.run(f"cat '{a.db}' > /dev/null", shell=True, check=True),
                   a.runs)
    print(f"cat FILE > /dev/null: {cat:.2f} s")
    rows = []
    for history in (False, True):
        what = "--history (every checkpoint)" if history else "latest state"
        m_time, m_hits = timed(lambda: memctl_way(a.memctl, a.db, a.pattern, a.ignore_case, history),
                               a.runs)
        p_time, p_hits = timed(lambda: python_way(a.db, pat, history), a.slow_runs)
        same = "equal" if m_hits == p_hits else "DIFFERENT"
        rows.append((what, m_time, p_time, m_hits, p_hits, same))
        print(f"{what}: memctl {m_time:.2f} s ({m_hits} hits), Python {p_time:.2f} s "
              f"({p_hits} hits, {same}); memctl / cat {m_time / cat:.2f}x, "
              f"Python / memctl {p_time / m_time:.1f}x")
    print()
    print("| search | memctl find | cat FILE | memctl / cat | SqliteSaver walk (Python) | Python / memctl | hits |")
    print("|---|---:|---:|---:|---:|---:|---|")
    for what, m, p, mh, ph, same in rows:
        print(f"| {what} | {m:.2f} s | {cat:.2f} s | {m / cat:.2f}x | {p:.2f} s | {p / m:.1f}x | "
              f"{mh} ({same} to Python's {ph}) |")
    print(f"\nload average at the end: {os.getloadavg()[0]:.1f}")
    return 0 if all(r[5] == "equal" for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
