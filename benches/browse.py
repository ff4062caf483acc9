#!/usr/bin/env python3
"""How quickly `memctl browse` answers (#31 "Speed"), measured the way a person meets it:
through a real terminal. memctl runs in a tmux pane of its own (120x40); the script sends keys
with `send-keys`, polls the screen with `capture-pane` and times each view from the key to the
moment its screen is drawn. Peak RSS is the browser's VmHWM (/proc) before it quits.

    python3 benches/browse.py --db target/bench/db-realistic-seed1.sqlite --memctl target/release/memctl
    python3 benches/browse.py --url postgresql://…/memctl_pgbench_src --memctl target/release/memctl
    .venv/pg/bin/python benches/browse.py --db FILE --pg ADMIN_URL --memctl BIN   # both; loads
        # FILE into database memctl_browse_src through PostgresSaver (benches/pgbench.py's
        # loader) unless it is already there

Goals (issue #31): first screen < 0.5 s, moving between views < 100 ms, RSS < 100 MB.
The times include one capture-pane poll (a few ms): the script prints that overhead too.
Each step is run --runs times (the median is reported); the database is opened read-only by
memctl and left unchanged (its bytes are compared for a file). A search over every thread's
latest state (`f`) is reported on its own: it reads the whole database, it is not a view move.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
GOAL_FIRST, GOAL_MOVE, GOAL_RSS_MB = 0.5, 0.1, 100
PATIENCE = 120.0


class Pane:
    """One tmux server (its own socket) with one pane running the browser."""

    count = 0

    def __init__(self, memctl: str, source: list[str], width: int = 120, height: int = 40):
        Pane.count += 1
        self.socket = f"memctl-browse-bench-{os.getpid()}-{Pane.count}"
        cmd = " ".join(f"'{a}'" for a in [memctl, "browse", *source])
        script = f"exec env -u MEMCTL_DB LANG=C.UTF-8 NO_COLOR=1 {cmd}"
        self.started = time.perf_counter()
        subprocess.run(
            ["tmux", "-L", self.socket, "-f", "/dev/null", "new-session", "-d",
             "-x", str(width), "-y", str(height), "sh", "-c", script],
            check=True,
        )
        out = self.tmux("list-panes", "-F", "#{pane_pid}")
        self.pid = int(out.split()[0])

    def tmux(self, *args: str) -> str:
        return subprocess.run(
            ["tmux", "-L", self.socket, *args], check=True, capture_output=True, text=True
        ).stdout

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-J")

    def wait(self, pattern: str, since: float, not_screen: str | None = None) -> tuple[float, str]:
        """Seconds from `since` until the screen matches `pattern` (and differs from
        `not_screen`), and that screen."""
        rx = re.compile(pattern)
        while True:
            s = self.screen()
            if rx.search(s) and s != not_screen:
                return time.perf_counter() - since, s
            if time.perf_counter() - since > PATIENCE:
                sys.exit(f"browse.py: the screen never matched {pattern!r}; it shows:\n{s}")

    def key(self, key: str, pattern: str, literal: bool = False) -> tuple[float, str]:
        before = self.screen()
        t0 = time.perf_counter()
        self.tmux("send-keys", *(["-l"] if literal else []), key)
        return self.wait(pattern, t0, not_screen=before)

    def rss_mb(self) -> float:
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
        return float("nan")

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True)


def poll_cost(pane: Pane) -> float:
    t0 = time.perf_counter()
    for _ in range(20):
        pane.screen()
    return (time.perf_counter() - t0) / 20


def session(memctl: str, source: list[str], pattern: str) -> dict:
    """One browser session: every view once, timed. Returns {step: seconds} and RSS."""
    pane = Pane(memctl, source)
    try:
        t = {}
        t["first screen (threads)"], first = pane.wait(r"\d+ of \d+ threads", pane.started)
        # The largest thread first: the most checkpoints, the longest chat.
        t["sort threads by size (s)"], _ = pane.key("s", r"\d+ of \d+ threads")
        t0 = time.perf_counter()
        t["open the largest thread (history)"], _ = pane.key("Enter", r"· \d+ checkpoints")
        # Its rows are drawn from the rows alone; their time, messages and tokens are read
        # between keys, a blob a step (pending cells show "…"): filled once the sparkline's
        # maximum is known.
        filled, _ = pane.wait(r"tokens per checkpoint \(max \d", t0)
        t["history: oldest checkpoint (G)"], _ = pane.key("G", r"· \d+ checkpoints")
        t["history: newest checkpoint (g)"], _ = pane.key("g", r"· \d+ checkpoints")
        t0 = time.perf_counter()
        t["open a checkpoint (show)"], _ = pane.key("Enter", r" · show")
        # Its chat is rendered a message at a time (the rest between keys: the row count).
        built, _ = pane.wait(r" · show · row \d+/\d+", t0)
        t["chat: end (G)"], _ = pane.key("G", r" · show")
        t["chat: top (g)"], _ = pane.key("g", r" · show · row 1/")
        t["tokens per message (t)"], _ = pane.key("t", r"tokens \(")
        t["back to the chat (t)"], _ = pane.key("t", r" · show")
        t["diff vs parent (d)"], _ = pane.key("d", r"diff vs parent")
        t["back to history (Esc)"], _ = pane.key("Escape", r"· \d+ checkpoints")
        t["back to threads (Esc)"], _ = pane.key("Escape", r"\d+ of \d+ threads")
        t["next thread (j)"], _ = pane.key("j", r"\d+ of \d+ threads")
        pane.key("f", r"find \(")
        pane.key(pattern, re.escape(pattern), literal=True)
        search, hits = pane.key("Enter", r"«|no hits")
        rss = pane.rss_mb()
        pane.tmux("send-keys", "q")
        return {"steps": t, "search": search, "filled": filled, "built": built, "rss": rss, "poll": poll_cost(pane),
                "first": first.splitlines()[0] if first else ""}
    finally:
        pane.close()


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def measure(name: str, memctl: str, source: list[str], runs: int, pattern: str) -> list[str]:
    results = [session(memctl, source, pattern) for _ in range(runs)]
    steps = list(results[0]["steps"])
    rows = [f"**{name}** (`memctl browse {' '.join(source)}`, {runs} sessions, median; "
            f"a capture-pane poll costs {statistics.median(r['poll'] for r in results) * 1000:.1f} ms)",
            "", "| step | median | worst | goal | |", "|---|---|---|---|---|"]
    for s in steps:
        xs = [r["steps"][s] for r in results]
        goal = GOAL_FIRST if s.startswith("first") else GOAL_MOVE
        ok = "met" if statistics.median(xs) < goal else "**missed**"
        rows.append(f"| {s} | {statistics.median(xs) * 1000:.0f} ms | {max(xs) * 1000:.0f} ms | < {goal * 1000:.0f} ms | {ok} |")
    filled = [r["filled"] for r in results]
    rows.append(f"| history's pending cells (time, messages, tokens) all filled in, from the key (between keys, not a view move) | "
                f"{statistics.median(filled) * 1000:.0f} ms | {max(filled) * 1000:.0f} ms | – | |")
    built = [r["built"] for r in results]
    rows.append(f"| the chat's row count known (every message rendered between keys), from the key (not a view move) | "
                f"{statistics.median(built) * 1000:.0f} ms | {max(built) * 1000:.0f} ms | – | |")
    search = [r["search"] for r in results]
    rows.append(f"| search `{pattern}` over every latest state (not a view move) | "
                f"{statistics.median(search) * 1000:.0f} ms | {max(search) * 1000:.0f} ms | – | |")
    rss = max(r["rss"] for r in results)
    rows.append(f"| peak RSS (VmHWM) | {rss:.1f} MiB | | < {GOAL_RSS_MB} MB | {'met' if rss < GOAL_RSS_MB else '**missed**'} |")
    return rows


def load_pg(db: Path, admin: str) -> str:
    """The SQLite file's threads in database memctl_browse_src (through PostgresSaver), made
    once; its URL."""
    sys.path.insert(0, str(HERE))
    import pgbench  # noqa: E402  (the loader, under .venv/pg)
    import psycopg

    url = pgbench.db_url(admin, "memctl_browse_src")
    with psycopg.connect(admin, autocommit=True) as c:
        exists = c.execute("SELECT 1 FROM pg_database WHERE datname = 'memctl_browse_src'").fetchone()
        if not exists:
            c.execute("CREATE DATABASE memctl_browse_src")
            print(f"loading {db} into memctl_browse_src …", file=sys.stderr)
            print(pgbench.load(db, url), file=sys.stderr)
    return url


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--db", type=Path, help="a SQLite file (opened read-only; checked unchanged)")
    ap.add_argument("--url", help="a Postgres database URL already holding checkpoints")
    ap.add_argument("--pg", help="a superuser URL: load --db into memctl_browse_src there and measure it too")
    ap.add_argument("--memctl", default=str(HERE.parent / "target/release/memctl"))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--pattern", default="timeout", help="what the search step looks for")
    a = ap.parse_args()
    if not shutil.which("tmux"):
        sys.exit("browse.py: needs tmux (apt-get install tmux)")
    if not (a.db or a.url):
        sys.exit("browse.py: give --db FILE and/or --url URL")
    load = os.getloadavg()[0]
    out = [f"## browse through tmux ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
           f"load {load:.1f} at start)", ""]
    if a.db:
        before = sha(a.db)
        size = a.db.stat().st_size / 2**20
        out += measure(f"SQLite, {a.db.name} ({size:.0f} MiB)", a.memctl, ["--db", str(a.db)], a.runs, a.pattern)
        if sha(a.db) != before:
            sys.exit("browse.py: the database file changed under the browser")
        out.append("")
    url = a.url or (load_pg(a.db, a.pg) if a.pg and a.db else None)
    if url:
        shown = re.sub(r"//([^:@/]+):[^@/]*@", r"//\1:***@", url)
        rows = measure("Postgres", a.memctl, ["--db", url], a.runs, a.pattern)
        rows[0] = rows[0].replace(url, shown)
        out += rows + [""]
    out.append(f"load {os.getloadavg()[0]:.1f} at end")
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
