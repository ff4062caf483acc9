#!/usr/bin/env python3
"""The Postgres benchmark (#15 "Speed"): a generated SQLite database (benches/generate.py) is
loaded into PostgreSQL through PostgresSaver, and memctl is measured against the Python way on
the same server, side by side in one run. Runs under .venv/pg (langgraph-checkpoint-postgres).

    .venv/pg/bin/python benches/pgbench.py --url ADMIN_URL --sqlite DB.sqlite --memctl BIN \
        [--runs N] [--slow-runs N] [--markdown OUT.md]

ADMIN_URL is a superuser URL of a scratch server (scripts/pg.sh start DIR gives one); the
script makes database memctl_pgbench_src from DB.sqlite (PostgresSaver.setup(), then every
checkpoint of every thread, oldest first, through PostgresSaver.put with the channels whose
version changed, and its pending writes through put_writes) and one copy per rewriting run
(CREATE DATABASE ... TEMPLATE), dropped afterwards.

Jobs (each a process of its own; wall time, CPU time and peak RSS from wait4):

  threads list        memctl threads list             vs  PostgresSaver.list(None) walk, grouped
                                                          per thread (count, latest id, step)
  tokens --all        memctl tokens --all (approx)    vs  get_tuple per thread +
                                                          count_tokens_approximately(messages)
  trim --all --keep 4 memctl trim --all --keep 4 (also with --settle 0s: without the 1 s wait
                      after its commits)          vs  graph.get_state + trim_messages(
                                                          strategy="last", start_on="human",
                                                          include_system=True, token_counter=len,
                                                          max_tokens=4) + graph.update_state
  gc                  memctl gc --all --keep-checkpoints 2 (and 1)
                                                      vs  PostgresSaver.prune(threads,
                                                          strategy="keep_latest") (keeps 1: it
                                                          has no keep-N)

Results are checked, not only timed: the Python walk and memctl list the same threads and
checkpoint counts, the token counts are equal, after both trims every thread has the same
message ids, after gc 1 and prune the same rows remain.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sqlite3
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SRC = "memctl_pgbench_src"


def db_url(admin: str, db: str) -> str:
    base, _, query = admin.partition("?")
    return base.rsplit("/", 1)[0] + f"/{db}" + (f"?{query}" if query else "")


def thread_ids(url: str) -> list[str]:
    import psycopg

    with psycopg.connect(url) as c:
        return [r[0] for r in c.execute("SELECT DISTINCT thread_id FROM checkpoints ORDER BY 1")]


# ---- the Python tasks (run in a child process: `pgbench.py task NAME URL OUT`) --------------


def task_walk(url: str) -> dict:
    from langgraph.checkpoint.postgres import PostgresSaver

    out: dict[str, dict] = {}
    with PostgresSaver.from_conn_string(url) as saver:
        for t in saver.list(None):
            c = t.config["configurable"]
            row = out.setdefault(c["thread_id"], {"checkpoints": 0, "latest": "", "step": None})
            row["checkpoints"] += 1
            if c["checkpoint_ns"] == "" and c["checkpoint_id"] > row["latest"]:
                row["latest"], row["step"] = c["checkpoint_id"], t.metadata.get("step")
    return out


def task_tokens(url: str) -> dict:
    from langchain_core.messages.utils import count_tokens_approximately
    from langgraph.checkpoint.postgres import PostgresSaver

    out = {}
    with PostgresSaver.from_conn_string(url) as saver:
        for t in thread_ids(url):
            tup = saver.get_tuple({"configurable": {"thread_id": t, "checkpoint_ns": ""}})
            msgs = tup.checkpoint["channel_values"].get("messages", []) if tup else []
            out[t] = count_tokens_approximately(msgs)
    return out


def task_trim(url: str) -> dict:
    from langchain_core.messages import RemoveMessage
    from langchain_core.messages.utils import trim_messages
    from langgraph.checkpoint.postgres import PostgresSaver
    from langgraph.graph.message import REMOVE_ALL_MESSAGES

    sys.path.insert(0, str(HERE))
    import generate  # the create_agent graph (fake model, same tools) that wrote the data

    create_agent, BenchChatModel, tools, _, _ = generate.build_stack()
    out = {}
    with PostgresSaver.from_conn_string(url) as saver:
        graph = create_agent(BenchChatModel(), tools=tools, checkpointer=saver)
        for t in thread_ids(url):
            cfg = {"configurable": {"thread_id": t}}
            state = graph.get_state(cfg)
            if state.next:
                out[t] = "skipped"
                continue
            msgs = state.values.get("messages", [])
            kept = trim_messages(msgs, strategy="last", start_on="human", include_system=True,
                                 token_counter=len, max_tokens=4)
            if [m.id for m in kept] == [m.id for m in msgs]:
                out[t] = "unchanged"
                continue
            graph.update_state(cfg, {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), *kept]})
            out[t] = "trimmed"
    return out


def task_prune(url: str) -> dict:
    from langgraph.checkpoint.postgres import PostgresSaver

    threads = thread_ids(url)
    with PostgresSaver.from_conn_string(url) as saver:
        saver.prune(threads, strategy="keep_latest")
    return {"pruned": len(threads)}


TASKS = {"walk": task_walk, "tokens": task_tokens, "trim": task_trim, "prune": task_prune}


# ---- loading ---------------------------------------------------------------------------------


def load(sqlite_path: Path, url: str) -> dict:
    """Every checkpoint of the SQLite file into Postgres through PostgresSaver, oldest first
    per thread, as the app would have written them there."""
    from langgraph.checkpoint.postgres import PostgresSaver
    from langgraph.checkpoint.sqlite import SqliteSaver

    # Read-only: the source file is often a shared cached one (hardlinked), never written.
    con = sqlite3.connect(f"file:{sqlite_path.resolve()}?mode=ro", uri=True, check_same_thread=False)
    lite = SqliteSaver(con)
    threads = [r[0] for r in con.execute("SELECT DISTINCT thread_id FROM checkpoints ORDER BY 1")]
    n = 0
    t0 = time.perf_counter()
    with PostgresSaver.from_conn_string(url) as pg:
        pg.setup()
        for t in threads:
            versions: dict[tuple[str, str], dict] = {}
            for tup in reversed(list(lite.list({"configurable": {"thread_id": t}}))):
                c = tup.config["configurable"]
                parent = tup.parent_config["configurable"]["checkpoint_id"] if tup.parent_config else None
                before = versions.get((c["checkpoint_ns"], parent), {}) if parent else {}
                now = tup.checkpoint["channel_versions"]
                new_versions = {k: v for k, v in now.items() if before.get(k) != v}
                cfg = {"configurable": {"thread_id": t, "checkpoint_ns": c["checkpoint_ns"]}}
                if parent:
                    cfg["configurable"]["checkpoint_id"] = parent
                pg.put(cfg, tup.checkpoint, tup.metadata, new_versions)
                versions[(c["checkpoint_ns"], c["checkpoint_id"])] = dict(now)
                by_task: dict[str, list] = {}
                for task_id, channel, value in tup.pending_writes or []:
                    by_task.setdefault(task_id, []).append((channel, value))
                for task_id, writes in by_task.items():
                    pg.put_writes(tup.config, writes, task_id)
                n += 1
    return {"threads": len(threads), "checkpoints": n, "seconds": time.perf_counter() - t0}


def trim_unexplained(report: list, memctl_ids: dict, python_ids: dict) -> int:
    """Threads whose message ids differ after the two trims, less memctl's one documented
    divergence (as benches/bench.py counts it): when the last N messages hold no human message,
    trim_messages(start_on="human") keeps nothing but the system message, while memctl keeps
    from the latest human message and says so in its notes."""
    notes = {r["thread_id"]: r.get("notes", []) for r in report}
    diff = [t for t in set(memctl_ids) | set(python_ids) if memctl_ids.get(t) != python_ids.get(t)]
    fallback = [t for t in diff if any("no human message" in n for n in notes.get(t, []))
                and not [i for i in python_ids.get(t, []) if not str(i).startswith("system-")]]
    print(f"trim: {len(diff)} threads differ, {len(fallback)} of them memctl's documented fallback",
          file=sys.stderr)
    return len(diff) - len(fallback)


# ---- measuring -------------------------------------------------------------------------------


TIME = "/usr/bin/time" if Path("/usr/bin/time").exists() else None


def run_once(cmd: list[str], out: Path) -> tuple[float, float, int]:
    """Wall seconds, CPU seconds (wait4) and peak RSS (KiB) of one process. Linux keeps a
    forked child's ru_maxrss across execve (it would start at this script's size), so the
    peak comes from /usr/bin/time's %M when it is there, as benches/bench.py does."""
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
        err = err_file.read_text(errors="replace")
        sys.exit(f"pgbench: {' '.join(cmd[:3])}… failed ({code}): {err[-2000:]}")
    rss = ru.ru_maxrss
    if TIME and rss_file.exists():
        rss = int(rss_file.read_text().split()[-1])
    return wall, ru.ru_utime + ru.ru_stime, rss


class Job:
    def __init__(self, name: str):
        self.name, self.walls, self.cpus, self.rss = name, [], [], []
        self.server: list[tuple[float, int]] = []  # (ms, statements) per run

    def add(self, wall: float, cpu: float, rss: int) -> None:
        self.walls.append(wall)
        self.cpus.append(cpu)
        self.rss.append(rss)

    def server_cell(self) -> str:
        """The server's own execution time (pg_stat_statements) and statements, median run."""
        if not self.server:
            return "-"
        ms = statistics.median(m for m, _ in self.server)
        n = statistics.median(c for _, c in self.server)
        return f"{ms / 1000:.3f} s / {n:,.0f}"

    def median(self) -> float:
        return statistics.median(self.walls)

    def row(self) -> str:
        return (f"{self.median():.3f} s | {statistics.median(self.cpus):.3f} s | "
                f"{max(self.rss) / 1024:.1f} MiB")


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "task":
        _, _, name, url, out = sys.argv
        res = TASKS[name](url)
        Path(out).write_text(json.dumps(res))
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--url", required=True, help="a superuser URL of a scratch server")
    ap.add_argument("--sqlite", required=True, type=Path)
    ap.add_argument("--memctl", required=True)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--slow-runs", type=int, default=1)
    ap.add_argument("--work", type=Path, default=Path("target/pgbench"))
    ap.add_argument("--markdown", type=Path)
    ap.add_argument("--reuse", action="store_true",
                    help=f"reuse database {SRC} a previous run loaded from the same file (kept at the end)")
    ap.add_argument("--load-only", action="store_true",
                    help=f"load {SRC} (unless --reuse finds it) and stop; a later --reuse run measures")
    a = ap.parse_args()
    import psycopg

    a.work.mkdir(parents=True, exist_ok=True)
    admin = psycopg.connect(a.url, autocommit=True)
    src = db_url(a.url, SRC)
    stamp = a.work / f"{SRC}.json"
    if a.reuse and stamp.exists() and json.loads(stamp.read_text()).get("sqlite") == str(a.sqlite.resolve()):
        loaded = json.loads(stamp.read_text())["loaded"]
    else:
        admin.execute(f"DROP DATABASE IF EXISTS {SRC} WITH (FORCE)")
        admin.execute(f"CREATE DATABASE {SRC}")
        loaded = load(a.sqlite, src)
        stamp.write_text(json.dumps({"sqlite": str(a.sqlite.resolve()), "loaded": loaded}))
    size = admin.execute(f"SELECT pg_database_size('{SRC}')").fetchone()[0]
    print(f"loaded {loaded} ({size / 2**20:.1f} MiB)", file=sys.stderr)
    if a.load_only:
        return 0
    copies = 0

    def fresh() -> str:
        nonlocal copies
        copies += 1
        name = f"memctl_pgbench_{copies}"
        admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        admin.execute(f"CREATE DATABASE {name} TEMPLATE {SRC}")
        return name

    def drop(name: str) -> None:
        admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")

    # The server's side of each run, when pg_stat_statements is loaded (shared_preload_libraries)
    # and its view exists in the admin database: statements executed and their time.
    try:
        admin.execute("SELECT 1 FROM pg_stat_statements LIMIT 1")
        stats = True
    except psycopg.Error:
        stats = False
    print(f"pg_stat_statements: {'on' if stats else 'off'}", file=sys.stderr)

    def server_time(db: str) -> tuple[float, int]:
        r = admin.execute(
            "SELECT COALESCE(sum(total_exec_time), 0), COALESCE(sum(calls), 0) FROM pg_stat_statements "
            "WHERE dbid = (SELECT oid FROM pg_database WHERE datname = %s)", (db,)).fetchone()
        return float(r[0]), int(r[1])

    py = sys.executable
    me = str(Path(__file__).resolve())
    jobs: dict[str, Job] = {}
    outputs: dict[str, object] = {}

    def measure(key: str, name: str, make_cmd, runs: int, rewrite: bool, after=None) -> None:
        job = jobs.setdefault(key, Job(name))
        for i in range(runs):
            db = fresh() if rewrite else SRC
            url = db_url(a.url, db)
            out = a.work / f"{key}.out"
            if stats:
                admin.execute("SELECT pg_stat_statements_reset()")
            job.add(*run_once(make_cmd(url, out), out))
            if stats:
                job.server.append(server_time(db))
            text = out.read_text() if out.exists() else ""
            outputs[key] = json.loads(text) if text.strip().startswith(("{", "[")) else text
            if after is not None:
                outputs[key + ":after"] = after(url)
            if rewrite:
                drop(db)
            print(f"  {name} run {i + 1}/{runs}: {job.walls[-1]:.3f}s", file=sys.stderr)

    def memctl(*args):
        return lambda url, out: [a.memctl, *args, "--db", url, "--format", "json"]

    def python(task):
        return lambda url, out: [py, me, "task", task, url, str(out) + ".json"]

    def py_result(key):
        return json.loads((a.work / f"{key}.out.json").read_text())

    def latest_ids(url: str) -> dict:
        ids = {}
        for t in thread_ids(url):
            r = subprocess.run([a.memctl, "dump", "--thread", t, "--db", url], capture_output=True,
                               text=True, check=True)
            ids[t] = [m.get("id") for m in json.loads(r.stdout)]
        return ids

    def remaining(url: str) -> list:
        with psycopg.connect(url) as c:
            return sorted(c.execute(
                "SELECT 'c', thread_id, checkpoint_ns, checkpoint_id FROM checkpoints UNION ALL "
                "SELECT 'b', thread_id, checkpoint_ns, channel || '/' || version FROM checkpoint_blobs UNION ALL "
                "SELECT 'w', thread_id, checkpoint_ns, checkpoint_id || '/' || task_id || '/' || idx "
                "FROM checkpoint_writes").fetchall())

    measure("m_list", "memctl threads list", memctl("threads", "list"), a.runs, False)
    measure("p_walk", "PostgresSaver.list(None) walk", python("walk"), a.slow_runs, False)
    measure("m_tok", "memctl tokens --all (approx)", memctl("tokens", "--all"), a.runs, False)
    measure("p_tok", "get_tuple + count_tokens_approximately", python("tokens"), a.slow_runs, False)
    measure("m_trim", "memctl trim --all --keep 4", memctl("trim", "--all", "--keep", "4"), a.runs,
            True, after=latest_ids)
    # memctl waits --settle (1 s) after its commits beside a possibly live app (see docs/safety.md):
    # the same trim without that wait shows the work itself.
    measure("m_trim0", "memctl trim --all --keep 4 --settle 0s",
            memctl("trim", "--all", "--keep", "4", "--settle", "0s"), a.runs, True)
    measure("p_trim", "get_state + trim_messages + update_state", python("trim"), a.slow_runs, True,
            after=latest_ids)
    measure("m_gc2", "memctl gc --all --keep-checkpoints 2",
            memctl("gc", "--all", "--keep-checkpoints", "2"), a.runs, True)
    measure("m_gc1", "memctl gc --all --keep-checkpoints 1",
            memctl("gc", "--all", "--keep-checkpoints", "1"), a.runs, True, after=remaining)
    measure("p_prune", 'PostgresSaver.prune(strategy="keep_latest")', python("prune"), a.slow_runs,
            True, after=remaining)

    # Checks: the same answers.
    walk = py_result("p_walk")
    listed = {r["thread_id"]: r["checkpoints"] for r in outputs["m_list"]}
    checks = {
        "threads list = walk (threads, checkpoints)":
            listed == {t: r["checkpoints"] for t, r in walk.items()},
        "tokens = count_tokens_approximately":
            {r["thread_id"]: r["tokens"] for r in outputs["m_tok"]} == py_result("p_tok"),
        "trim: no unexplained difference in the message ids": trim_unexplained(
            outputs["m_trim"], outputs["m_trim:after"], outputs["p_trim:after"]) == 0,
        "gc --keep-checkpoints 1 = prune(keep_latest): same rows left":
            outputs["m_gc1:after"] == outputs["p_prune:after"],
    }
    for k, ok in checks.items():
        print(f"check {k}: {'ok' if ok else 'FAILED'}", file=sys.stderr)
    (a.work / "outputs.json").write_text(json.dumps(outputs, indent=1, default=str))

    def ratio(b: str, m: str) -> str:
        return f"{jobs[b].median() / jobs[m].median():.1f}x"

    pairs = [("threads list", "m_list", "p_walk"), ("tokens --all", "m_tok", "p_tok"),
             ("trim --all --keep 4", "m_trim", "p_trim"),
             ("trim --all --keep 4 --settle 0s", "m_trim0", "p_trim"),
             ("gc --all --keep-checkpoints 2", "m_gc2", "p_prune"),
             ("gc --all --keep-checkpoints 1", "m_gc1", "p_prune")]
    load_avg = os.getloadavg()
    lines = [
        f"Data: `{a.sqlite.name}` ({loaded['threads']} threads, {loaded['checkpoints']} checkpoints), "
        f"loaded through `PostgresSaver.put`/`put_writes` in {loaded['seconds']:.1f} s: "
        f"{size / 2**20:.1f} MiB database. PostgreSQL "
        f"{admin.execute('SHOW server_version').fetchone()[0]} on the same machine; "
        f"{platform.machine()}, {os.cpu_count()} cores, load average {load_avg[0]:.1f} at the end. "
        f"memctl runs: median of {a.runs}; Python: median of {a.slow_runs}. Peak RSS from wait4 "
        "(the Python rows include the interpreter). Server time: the statements' execution time "
        "on the server by pg_stat_statements (a lock wait included; planning and round trips not), "
        "and how many statements ran, median run.",
        "",
        "| job | memctl | CPU | peak RSS | server time / statements | Python way | time | CPU | peak RSS "
        "| server time / statements | memctl faster |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for label, m, b in pairs:
        lines.append(f"| {label} | {jobs[m].row()} | {jobs[m].server_cell()} | {jobs[b].name} | "
                     f"{jobs[b].row()} | {jobs[b].server_cell()} | {ratio(b, m)} |")
    lines.append("")
    lines.append("Checks: " + "; ".join(f"{k}: {'ok' if ok else 'FAILED'}" for k, ok in checks.items()))
    text = "\n".join(lines) + "\n"
    print(text)
    if a.markdown:
        a.markdown.write_text(text)
    return 0 if all(checks.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
