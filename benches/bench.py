"""Time memctl against the Python baselines on one database file; print and record the table.

Called by benches/run.sh (which builds memctl, the venvs and the database); run it directly only
with everything in place:

    .venv/bench/bin/python benches/bench.py --memctl target/release/memctl --db F \
        --runs 5 --slow-runs 3 --label small [--peer .venv/bench-peer/bin/langgraph-checkpoint]

Every measurement is one whole process (startup and imports included), timed with
time.perf_counter around fork/exec + os.wait4; peak RSS is ru_maxrss from the same wait4 (the
number `/usr/bin/time -v` prints as "Maximum resident set size"). Python tasks also report their
in-process time after imports (pybench.py), shown as a separate column.
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib.metadata
import json
import os
import platform
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
PY = sys.executable


TIME = "/usr/bin/time" if Path("/usr/bin/time").exists() else None


def run_once(cmd: list[str], stdout: Path, stderr: Path, env=None) -> tuple[float, int, int, float]:
    """(wall seconds, peak RSS KiB, exit code, CPU seconds) of one process.

    CPU seconds are user + system time of the process and its threads (ru_utime + ru_stime from
    wait4; /usr/bin/time's own share is negligible). On a loaded machine, and under `nice`, wall
    time includes waiting for a core; CPU time mostly does not, so both are reported.

    Peak RSS is GNU time's %M ("Maximum resident set size" of `/usr/bin/time -v`): the command
    runs under /usr/bin/time, whose own footprint is ~2 MiB, so the number is the command's. (A
    child forked straight from this Python process would inherit its high-water mark: Linux
    keeps ru_maxrss across execve.) Without /usr/bin/time, ru_maxrss from wait4 is used.
    """
    rss_file = stderr.with_suffix(".rss")
    full = [TIME, "-f", "%M", "-o", str(rss_file), *cmd] if TIME else cmd
    with open(stdout, "wb") as out, open(stderr, "wb") as err:
        t0 = time.perf_counter()
        p = subprocess.Popen(full, stdout=out, stderr=err, env=env)
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
        p.returncode = os.waitstatus_to_exitcode(status)
    rss = ru.ru_maxrss
    if TIME:
        try:
            rss = int(rss_file.read_text().split()[-1])
        except (OSError, ValueError, IndexError):
            pass
    return wall, rss, p.returncode, ru.ru_utime + ru.ru_stime


class Result:
    def __init__(self, name: str):
        self.name = name
        self.walls: list[float] = []
        self.rss: list[int] = []
        self.inproc: list[float] = []
        self.cpu: list[float] = []
        self.error: str | None = None
        self.stdout: Path | None = None

    @property
    def median(self):
        return statistics.median(self.walls) if self.walls else None

    @property
    def cpu_median(self):
        return statistics.median(self.cpu) if self.cpu else None

    @property
    def inproc_median(self):
        return statistics.median(self.inproc) if self.inproc else None

    @property
    def rss_max_mib(self):
        return max(self.rss) / 1024 if self.rss else None


def measure(name: str, cmd: list[str], runs: int, work: Path, prepare=None, env=None,
            inproc=False) -> Result:
    r = Result(name)
    slug = re.sub(r"[^A-Za-z0-9]+", "-", name).strip("-")
    for i in range(runs):
        if prepare:
            prepare()
        out, err = work / f"{slug}.{i}.out", work / f"{slug}.{i}.err"
        wall, rss, rc, cpu = run_once(cmd, out, err, env=env)
        if rc != 0:
            tail = err.read_text(errors="replace").strip().splitlines()[-3:]
            r.error = f"exit {rc}: " + " | ".join(tail)
            print(f"  {name}: FAILED ({r.error})", file=sys.stderr)
            return r
        r.walls.append(wall)
        r.rss.append(rss)
        r.cpu.append(cpu)
        r.stdout = out
        if inproc:
            last = err.read_text().strip().splitlines()[-1]
            r.inproc.append(json.loads(last)["seconds"])
        extra = f", in-process {r.inproc[-1]:.3f}s" if inproc else ""
        print(f"  {name} run {i + 1}/{runs}: {wall:.3f}s (CPU {cpu:.3f}s), peak RSS {rss / 1024:.1f} MiB{extra}",
              file=sys.stderr)
    return r


def fresh_copy(src: Path, dst: Path):
    """A fresh copy of the database before each timed run, flushed to disk (not timed).

    Without the flush the copy's ~1 GB sits dirty in the page cache, and the first fsync of the
    timed run (its commit or WAL checkpoint) pays for writing all of it out: seconds that belong
    to the copy, not to the task, on either side (seen: Python 2.97 s vs 2.41 s, memctl 0.97 s
    vs 0.58 s on the same run). A production file is not freshly copied. The final os.sync()
    also writes out whatever else is dirty (the previous copy's deletion, the harness's own
    output files), so the timed run starts with nothing of the harness's left to write back.
    """
    def prepare():
        for s in ("", "-wal", "-shm"):
            Path(str(dst) + s).unlink(missing_ok=True)
        shutil.copyfile(src, dst)
        # an empty -wal (left by a reader of the source) carries nothing; copied, it would make
        # the copy look in use by a live app and memctl would wait its --settle second
        if Path(str(src) + "-wal").exists() and Path(str(src) + "-wal").stat().st_size > 0:
            shutil.copyfile(str(src) + "-wal", str(dst) + "-wal")
        for s in ("", "-wal"):
            if Path(str(dst) + s).exists():
                with open(str(dst) + s, "rb+") as f:
                    os.fsync(f.fileno())
        os.sync()
    return prepare


def memctl_tokens(path: Path) -> dict:
    return {row["thread_id"]: row["tokens"] for row in json.loads(path.read_text())}


def mismatches(a: dict, b: dict) -> int:
    return sum(1 for k in set(a) | set(b) if a.get(k) != b.get(k))


def versions(python: str, pkgs: list[str]) -> dict:
    code = ("import importlib.metadata as m, json, sys\n"
            "out = {}\n"
            "for p in sys.argv[1:]:\n"
            "    try: out[p] = m.version(p)\n"
            "    except m.PackageNotFoundError: out[p] = None\n"
            "print(json.dumps(out))")
    try:
        return json.loads(subprocess.run([python, "-c", code, *pkgs], capture_output=True,
                                         text=True, check=True).stdout)
    except Exception as e:  # noqa: BLE001
        return {"error": str(e)}


def machine() -> dict:
    cpu = "?"
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    mem = "?"
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal"):
            mem = f"{int(line.split()[1]) / 2**20:.1f} GiB"
    return {"nproc": os.cpu_count(), "cpu": cpu, "ram": mem, "kernel": platform.release(),
            "loadavg_at_start": Path("/proc/loadavg").read_text().split()[:3]}


def fmt_s(v):
    return "—" if v is None else (f"{v * 1000:.0f} ms" if v < 1 else f"{v:.2f} s")


def fmt_cpu(mem: Result, base: Result):
    if mem.cpu_median is None or base.cpu_median is None:
        return "—"
    r = f" ({base.cpu_median / mem.cpu_median:.1f}×)" if mem.cpu_median > 0 else ""
    return f"{fmt_s(mem.cpu_median)} / {fmt_s(base.cpu_median)}{r}"


def fmt_ratio(base: Result, mem: Result):
    if base.median is None or mem.median is None:
        return "—"
    return f"{base.median / mem.median:.1f}×"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--memctl", required=True)
    ap.add_argument("--memctl-rev", default="?")
    ap.add_argument("--db", required=True, type=Path)
    ap.add_argument("--label", default="bench")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--slow-runs", type=int, default=3)
    ap.add_argument("--peer", help="langgraph-checkpoint executable (peer CLI)")
    ap.add_argument("--peer-python", help="python of the peer venv (for its versions)")
    ap.add_argument("--peer-note", default="", help="why the peer CLI is unavailable")
    ap.add_argument("--gen-summary", type=Path)
    ap.add_argument("--data-note", default="", help="one line on what the data set is (for BENCHMARKS.md)")
    ap.add_argument("--markdown", type=Path, default=ROOT / "BENCHMARKS.md")
    a = ap.parse_args()

    db = a.db.resolve()
    work = ROOT / "target" / "bench" / f"work-{a.label}"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    mach = machine()
    memctl = str(Path(a.memctl).resolve())
    pb = [PY, str(HERE / "pybench.py")]
    R, S = a.runs, a.slow_runs

    # warm the page cache so the first run of the first task is not penalised
    with open(db, "rb") as f:
        while f.read(1 << 24):
            pass
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    n_threads = conn.execute("SELECT COUNT(DISTINCT thread_id) FROM checkpoints").fetchone()[0]
    n_cp = conn.execute("SELECT COUNT(*) FROM checkpoints").fetchone()[0]
    n_wr = conn.execute("SELECT COUNT(*) FROM writes").fetchone()[0]
    conn.close()
    db_mib = db.stat().st_size / 2**20
    print(f"bench: {db} ({db_mib:.1f} MiB, {n_threads} threads, {n_cp} checkpoints, {n_wr} writes)",
          file=sys.stderr)

    res: dict[str, Result] = {}
    m = res
    print("threads list", file=sys.stderr)
    m["m_threads"] = measure("memctl threads list", [memctl, "threads", "list", "--db", str(db),
                                                     "--format", "json"], R, work)
    m["p_walk"] = measure("python SqliteSaver.list(None) walk", [*pb, "walk", str(db), "--out",
                          str(work / "walk.json")], S, work, inproc=True)
    if a.peer:
        m["peer"] = measure("langgraph-checkpoint threads", [a.peer, "threads", "--db", str(db)], S, work)
        if m["peer"].error:
            a.peer_note = f"langgraph-checkpoint threads failed: {m['peer'].error}"
    sqlite_shell = shutil.which("sqlite3")
    floor_sql = ("SELECT thread_id, COUNT(*), MAX(checkpoint_id) FROM checkpoints GROUP BY thread_id;")
    if sqlite_shell:
        floor_label = "SQL floor (sqlite3 shell)"
        m["floor"] = measure(floor_label, [sqlite_shell, "-readonly", str(db), floor_sql], R, work)
    else:
        floor_label = "SQL floor (Python sqlite3 module; no sqlite3 shell)"
        m["floor"] = measure(floor_label, [*pb, "sql-floor", str(db)], R, work, inproc=True)
    m["floor_dec"] = measure("SQL floor + latest blob ormsgpack (ext passed through)",
                             [*pb, "floor-decode", str(db)], R, work, inproc=True)
    m["floor_deep"] = measure("SQL floor + latest blob ormsgpack (ext decoded recursively)",
                              [*pb, "floor-decode-deep", str(db)], R, work, inproc=True)

    print("tokens", file=sys.stderr)
    m["m_tok"] = measure("memctl tokens --all (approx)", [memctl, "tokens", "--all", "--db", str(db),
                                                          "--format", "json"], R, work)
    m["p_tok"] = measure("python get_tuple + count_tokens_approximately",
                         [*pb, "tokens-approx", str(db), "--out", str(work / "tok-approx.json")],
                         S, work, inproc=True)
    m["m_o200k"] = measure("memctl tokens --all --counter o200k",
                           [memctl, "tokens", "--all", "--counter", "o200k", "--db", str(db),
                            "--format", "json"], R, work)
    m["p_o200k"] = measure("python get_tuple + ChatOpenAI(gpt-4o).get_num_tokens_from_messages",
                           [*pb, "tokens-o200k", str(db), "--out", str(work / "tok-o200k.json")],
                           S, work, inproc=True)
    m["p_tiktoken"] = measure("python get_tuple + tiktoken o200k_base encode (texts only)",
                              [*pb, "tokens-tiktoken", str(db)], S, work, inproc=True)

    print("trim", file=sys.stderr)
    mcopy, pcopy = work / "trim-memctl.sqlite", work / "trim-python.sqlite"
    m["m_trim"] = measure("memctl trim --all --keep 4", [memctl, "trim", "--all", "--keep", "4", "--db",
                          str(mcopy), "--format", "json"], R, work, prepare=fresh_copy(db, mcopy))
    m["p_trim"] = measure("python get_state + trim_messages + update_state",
                          [*pb, "trim", str(pcopy), "--out", str(work / "trim-python.json")], S, work,
                          prepare=fresh_copy(db, pcopy), inproc=True)

    # ---------------------------------------------------------------- correctness
    checks = {}
    if m["m_tok"].stdout and m["p_tok"].stdout:
        checks["tokens approx: threads whose total differs (memctl vs count_tokens_approximately)"] = \
            mismatches(memctl_tokens(m["m_tok"].stdout), json.loads((work / "tok-approx.json").read_text()))
    if m["m_o200k"].stdout and m["p_o200k"].stdout:
        checks["tokens o200k: threads whose total differs (memctl vs ChatOpenAI gpt-4o)"] = \
            mismatches(memctl_tokens(m["m_o200k"].stdout), json.loads((work / "tok-o200k.json").read_text()))
    if m["m_threads"].stdout and m["p_walk"].stdout:
        mt = {r["thread_id"]: r["checkpoints"] for r in json.loads(m["m_threads"].stdout.read_text())}
        pw = {t: e["checkpoints"] for t, e in json.loads((work / "walk.json").read_text()).items()}
        checks["threads list: threads whose checkpoint count differs (memctl vs SqliteSaver.list)"] = \
            mismatches(mt, pw)
    if m["m_trim"].walls and m["p_trim"].walls:
        ids = {}
        for side, path in (("memctl", mcopy), ("python", pcopy)):
            out = work / f"ids-{side}.json"
            subprocess.run([*pb, "latest-ids", str(path), "--out", str(out)], check=True,
                           capture_output=True)
            ids[side] = json.loads(out.read_text())
        trimmed = json.loads(m["m_trim"].stdout.read_text())
        # The rewrite report is an object with the per-thread records under "threads" (#26).
        rows = trimmed["threads"] if isinstance(trimmed, dict) else trimmed
        mt = {r["thread_id"]: r for r in rows}
        diff = [t for t in set(ids["memctl"]) | set(ids["python"])
                if ids["memctl"].get(t) != ids["python"].get(t)]
        # memctl documents one deliberate divergence: when the last N messages hold no human
        # message, trim_messages(start_on="human") keeps nothing (or only the system message)
        # while memctl keeps from the latest human message and says so in `notes`.
        fallback = [t for t in diff if any("no human message" in n for n in mt.get(t, {}).get("notes", []))
                    and len([i for i in ids["python"].get(t, []) if not i.startswith("system-")]) == 0]
        checks["trim: threads whose latest message ids differ (memctl copy vs Python copy)"] = (
            f"{len(diff)} (of which {len(fallback)} are memctl's documented fallback: the last 4 "
            f"messages hold no human message, trim_messages keeps nothing but the system message, "
            f"memctl keeps from the latest human message; unexplained: {len(diff) - len(fallback)})")
        py_status = json.loads((work / "trim-python.json").read_text()).values()
        checks["trim: threads rewritten by memctl / updated by Python"] = (
            f"{sum(1 for r in mt.values() if r['status'] == 'rewritten')} / "
            f"{sum(1 for v in py_status if v == 'trimmed')}")

    # the two trim copies (2 GB on the 1 GB file) are not needed once checked
    for path in (mcopy, pcopy):
        for sfx in ("", "-wal", "-shm"):
            Path(str(path) + sfx).unlink(missing_ok=True)

    # ---------------------------------------------------------------- table
    rows = [
        ("threads list", "m_threads", "p_walk"), ("threads list", "m_threads", "peer"),
        ("threads list", "m_threads", "floor"), ("threads list", "m_threads", "floor_dec"),
        ("threads list", "m_threads", "floor_deep"),
        ("tokens approx", "m_tok", "p_tok"), ("tokens o200k", "m_o200k", "p_o200k"),
        ("tokens o200k", "m_o200k", "p_tiktoken"), ("trim --keep 4", "m_trim", "p_trim"),
    ]
    head = ("| task | memctl median | memctl peak RSS | baseline | baseline median | ratio (baseline/memctl) "
            "| baseline in-process (after imports) | baseline peak RSS | runs (memctl/baseline) "
            "| CPU user+sys: memctl / baseline (ratio) |")
    lines = [head, "|" + "---|" * 10]
    for task, mk, bk in rows:
        mem = m[mk]
        if bk not in m:
            lines.append(f"| {task} | {fmt_s(mem.median)} | — | langgraph-checkpoint threads | not run: "
                         f"{a.peer_note or 'unavailable'} | — | — | — | — | — |")
            continue
        b = m[bk]
        bname = b.name if not b.error else f"{b.name} (FAILED: {b.error[:120]})"
        lines.append(
            f"| {task} | {fmt_s(mem.median)} | "
            f"{'—' if mem.rss_max_mib is None else f'{mem.rss_max_mib:.1f} MiB'} | {bname} | "
            f"{fmt_s(b.median)} | {fmt_ratio(b, mem)} | {fmt_s(b.inproc_median)} | "
            f"{'—' if b.rss_max_mib is None else f'{b.rss_max_mib:.1f} MiB'} | "
            f"{len(mem.walls)}/{len(b.walls)} | {fmt_cpu(mem, b)} |")
    table = "\n".join(lines)

    def ratio(bk, mk):
        b, mm = m.get(bk), m.get(mk)
        return None if not b or b.median is None or mm.median is None else b.median / mm.median

    def goal(label, ok):
        return f"- {'PASS' if ok else ('MISS' if ok is not None else 'n/a ')} {label}"

    rss_all = [r.rss_max_mib for k, r in m.items() if k.startswith("m_") and r.rss_max_mib]
    def floor_goal(key, label):
        # memctl against a floor's in-process time (its Python start-up excluded), and against
        # its whole process.
        f, mm = m.get(key), m["m_threads"].median
        r_in = mm / f.inproc_median if f and f.inproc_median and mm else None
        r_whole = ratio(key, "m_threads")
        return goal(f"threads list within 2x of {label}, judged against the floor's in-process time "
                    "(memctl / floor = " + ("n/a" if r_in is None else f"{r_in:.2f}")
                    + ("" if r_whole is None else f"; against its whole process: {1 / r_whole:.2f}") + ")",
                    None if r_in is None else r_in <= 2)

    def ratio_goal(label, bk, mk, want):
        r = ratio(bk, mk)
        shown = "n/a" if r is None else f"{r:.1f}x"
        return goal(f"{label} (measured {shown})", None if r is None else r >= want)

    max_rss = max(rss_all) if rss_all else None
    goals = [
        ratio_goal("threads list >=100x faster than the Python SqliteSaver.list walk", "p_walk", "m_threads", 100),
        ratio_goal("threads list >=100x faster than langgraph-checkpoint threads", "peer", "m_threads", 100),
        floor_goal("floor_deep", "SQL floor + decoding each thread's latest blob, messages included "
                   "(ormsgpack, ext payloads unpacked recursively)"),
        floor_goal("floor_dec", "SQL floor + decoding only the top level of each latest blob (stricter: "
                   "ext payloads, i.e. the messages, left as bytes)"),
        ratio_goal("tokens approx >=10x faster than the Python loop", "p_tok", "m_tok", 10),
        ratio_goal("tokens o200k >=10x faster than the Python loop (ChatOpenAI)", "p_o200k", "m_o200k", 10),
        ratio_goal("trim >=20x faster than the Python update_state loop", "p_trim", "m_trim", 20),
        goal("peak RSS of every memctl run < 100 MB (max "
             + ("n/a" if max_rss is None else f"{max_rss:.1f} MiB = {max_rss * 1.048576:.1f} MB") + ")",
             None if max_rss is None else max_rss * 1.048576 < 100),
    ]

    vers = versions(PY, ["langgraph", "langgraph-checkpoint", "langgraph-checkpoint-sqlite", "langchain",
                         "langchain-core", "langchain-openai", "tiktoken", "ormsgpack", "pydantic"])
    peer_vers = versions(a.peer_python, ["langgraph-checkpoint-cli", "langgraph-checkpoint",
                                         "langgraph-checkpoint-sqlite"]) if a.peer_python else {}
    sqlite_ver = (subprocess.run([sqlite_shell, "--version"], capture_output=True, text=True).stdout.split()[0]
                  if sqlite_shell else f"(no shell) python sqlite3 {sqlite3.sqlite_version}")
    gen = json.loads(a.gen_summary.read_text()) if a.gen_summary and a.gen_summary.exists() else None

    md = [f"## `{a.label}`: {db_mib:.0f} MiB, {n_threads} threads, {n_cp} checkpoints", "",
          f"- date: {dt.datetime.now(dt.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}",
          f"- machine: {mach['nproc']} cores, {mach['cpu']}, {mach['ram']} RAM, Linux {mach['kernel']}; "
          f"load average at start {' '.join(mach['loadavg_at_start'])}",
          f"- memctl: {a.memctl_rev} (release build)",
          f"- Python {platform.python_version()}: " + ", ".join(f"{k} {v}" for k, v in vers.items()),
          "- peer CLI: " + (", ".join(f"{k} {v}" for k, v in peer_vers.items()) if peer_vers else
                            (a.peer_note or "not run")),
          f"- SQL shell: sqlite3 {sqlite_ver}",
          f"- database: `{db.name}`, {db.stat().st_size} bytes ({db_mib:.1f} MiB), {n_threads} threads, "
          f"{n_cp} checkpoints, {n_wr} writes"
          + (f"; generated by `benches/generate.py --preset {gen.get('preset', 'legacy')}"
             + (f" --scale {gen['scale']:g}" if gen.get("scale", 1) != 1 else "")
             + f"` (seed {gen['seed']}, {gen['jobs']} jobs) in {gen['generate_seconds']} s + merge "
             f"{gen['merge_seconds']} s"
             + (f" ({gen['mib_per_worker_second']} MiB per worker-second)" if "mib_per_worker_second" in gen else "")
             if gen else ""),
          *([f"- data: {a.data_note}"] if a.data_note else []),
          f"- medians of whole-process wall times; memctl {R} runs, Python walks/loops and the peer CLI "
          f"{S} runs, SQL floors {R} runs; trim runs each on a fresh copy, flushed to disk (copy and flush not timed); peak RSS = "
          + ("GNU time %M (`/usr/bin/time -v` \"Maximum resident set size\")" if TIME else
             "ru_maxrss from wait4 (no /usr/bin/time: includes the forking Python's ~30 MiB)")
          + ", max over runs; CPU = user + system time of the whole process (median), shown because wall "
          "times on a loaded machine include waiting for a core", "",
          table, "", "Correctness:", ""]
    md += [f"- {k}: {v}" for k, v in checks.items()]
    md += ["", "Goals:", ""] + goals + ["", f"Load average at the end: {' '.join(Path('/proc/loadavg').read_text().split()[:3])}", ""]
    section = "\n".join(md)

    print("\n" + section)
    # BENCHMARKS.md keeps one section per label; this run replaces its own.
    begin, end = f"<!-- bench:{a.label} -->", f"<!-- /bench:{a.label} -->"
    old = a.markdown.read_text() if a.markdown.exists() else (
        "# memctl benchmarks\n\nWritten by `benches/run.sh` (see `benches/README.md`). One section "
        "per database; each run replaces its own section.\n\n")
    block = f"{begin}\n{section}{end}\n"
    if begin in old and end in old:
        new = old[:old.index(begin)] + block + old[old.index(end) + len(end) + 1:]
    else:
        new = old.rstrip("\n") + "\n\n" + block
    a.markdown.write_text(new)
    (work / "results.json").write_text(json.dumps(
        {k: {"name": r.name, "walls": r.walls, "rss_kib": r.rss, "inproc": r.inproc, "error": r.error}
         | {"cpu": r.cpu} for k, r in m.items()} | {"checks": checks}, indent=1, ensure_ascii=False))
    print(f"bench: wrote {a.markdown} and {work / 'results.json'}", file=sys.stderr)


if __name__ == "__main__":
    main()
