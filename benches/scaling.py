"""How cost grows: the same jobs on several database files; time and peak RSS per job and size.

Called by `benches/run.sh --scaling "1 4 10" [--long-thread 100000]` (which builds memctl and the
venvs and generates the files); directly:

    .venv/bench/bin/python benches/scaling.py --memctl target/release/memctl \
        --db 1x=target/bench/db-realistic-seed1.sqlite --db 4x=target/bench/db-realistic-x4-seed1.sqlite ...

Jobs (the same commands as bench.py, measured the same way: whole processes, wall time and GNU
time's peak RSS, median / max over runs): threads list, tokens approx, tokens o200k, trim --all
--keep 4 (each run on a fresh copy made and flushed before the timed run), each for memctl and
for the Python way. The Python ways take minutes on 10 GB: --slow-runs (default 1); --no-python
measures memctl alone. Writes a section `scaling-<label>` to BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import shutil
import sqlite3
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import bench as B  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--memctl", required=True)
    ap.add_argument("--memctl-rev", default="?")
    ap.add_argument("--db", action="append", required=True, help="LABEL=PATH (repeat; in table order)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--slow-runs", type=int, default=1)
    ap.add_argument("--no-python", action="store_true")
    ap.add_argument("--label", default="realistic")
    ap.add_argument("--markdown", type=Path, default=B.ROOT / "BENCHMARKS.md")
    a = ap.parse_args()

    memctl = str(Path(a.memctl).resolve())
    pb = [B.PY, str(HERE / "pybench.py")]
    mach = B.machine()
    dbs = []
    for spec in a.db:
        label, _, path = spec.partition("=")
        p = Path(path).resolve()
        conn = sqlite3.connect(f"file:{p}?mode=ro", uri=True)
        n_th = conn.execute("SELECT COUNT(DISTINCT thread_id) FROM checkpoints").fetchone()[0]
        n_cp = conn.execute("SELECT COUNT(*) FROM checkpoints").fetchone()[0]
        big = conn.execute("SELECT MAX(LENGTH(checkpoint)) FROM checkpoints").fetchone()[0]
        conn.close()
        dbs.append({"label": label, "path": p, "bytes": p.stat().st_size, "threads": n_th,
                    "checkpoints": n_cp, "largest_blob": big})

    jobs = [
        ("threads list", lambda db, w: [memctl, "threads", "list", "--db", str(db), "--format", "json"],
         lambda db, w: [*pb, "walk", str(db), "--out", str(w / "walk.json")], False),
        ("tokens approx", lambda db, w: [memctl, "tokens", "--all", "--db", str(db), "--format", "json"],
         lambda db, w: [*pb, "tokens-approx", str(db), "--out", str(w / "tok-approx.json")], False),
        ("tokens o200k", lambda db, w: [memctl, "tokens", "--all", "--counter", "o200k", "--db", str(db),
                                        "--format", "json"],
         lambda db, w: [*pb, "tokens-o200k", str(db), "--out", str(w / "tok-o200k.json")], False),
        ("trim --all --keep 4", lambda db, w: [memctl, "trim", "--all", "--keep", "4", "--db", str(db),
                                               "--format", "json"],
         lambda db, w: [*pb, "trim", str(db), "--out", str(w / "trim-python.json")], True),
    ]
    results: dict = {}
    checks: dict = {}
    for d in dbs:
        work = B.ROOT / "target" / "bench" / f"work-scaling-{a.label}-{d['label']}"
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
        print(f"scaling: {d['label']}: {d['path']} ({d['bytes'] / 2**20:.0f} MiB, {d['threads']} threads)",
              file=sys.stderr)
        with open(d["path"], "rb") as f:  # warm the page cache, as bench.py does
            while f.read(1 << 24):
                pass
        for job, mcmd, pcmd, writes in jobs:
            copy = work / "copy.sqlite"
            src = copy if writes else d["path"]
            prep = B.fresh_copy(d["path"], copy) if writes else None
            m = B.measure(f"memctl {job}", mcmd(src, work), a.runs, work, prepare=prep)
            p = None
            if not a.no_python:
                p = B.measure(f"python {job}", pcmd(src, work), a.slow_runs, work, prepare=prep, inproc=True)
            results[(d["label"], job)] = (m, p)
            if writes:
                for s in ("", "-wal", "-shm"):
                    Path(str(copy) + s).unlink(missing_ok=True)
        if not a.no_python:
            for job, key, fname in (("tokens approx", "approx", "tok-approx.json"),
                                    ("tokens o200k", "o200k", "tok-o200k.json")):
                m, p = results[(d["label"], job)]
                if m.stdout and p and p.walls:
                    checks[(d["label"], key)] = B.mismatches(B.memctl_tokens(m.stdout),
                                                             json.loads((work / fname).read_text()))

    def cell_t(r):
        if r is None or r.median is None:
            return "—"
        return B.fmt_s(r.median) + (f" (CPU {B.fmt_s(r.cpu_median)})" if r.cpu_median is not None else "")

    def cell_m(r):
        return "—" if r is None or r.rss_max_mib is None else f"{r.rss_max_mib:.0f} MiB"

    head = "| job | side | " + " | ".join(
        f"{d['label']}: {d['bytes'] / 2**30:.2f} GiB, {d['threads']} threads" for d in dbs) + " |"
    lines = [head, "|---|---|" + "---|" * len(dbs)]
    for job, *_ in jobs:
        ms = [results[(d["label"], job)][0] for d in dbs]
        ps = [results[(d["label"], job)][1] for d in dbs]
        lines.append(f"| {job} | memctl | " + " | ".join(f"{cell_t(m)}, {cell_m(m)}" for m in ms) + " |")
        if not a.no_python:
            lines.append(f"| {job} | Python | " + " | ".join(f"{cell_t(p)}, {cell_m(p)}" for p in ps) + " |")
            def ratio(m, p):
                if not p or p.median is None or m.median is None:
                    return "—"
                cpu = (f" (CPU {p.cpu_median / m.cpu_median:.1f}×)"
                       if p.cpu_median and m.cpu_median else "")
                return B.fmt_ratio(p, m) + cpu

            lines.append(f"| {job} | ratio Python / memctl | " + " | ".join(
                ratio(m, p) for m, p in zip(ms, ps)) + " |")
    md = [f"## How cost grows (`scaling-{a.label}`)", "",
          f"- date: {dt.datetime.now(dt.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}",
          f"- machine: {mach['nproc']} cores, {mach['cpu']}, {mach['ram']} RAM, Linux {mach['kernel']}; "
          f"load average at start {' '.join(mach['loadavg_at_start'])}, at the end "
          f"{' '.join(Path('/proc/loadavg').read_text().split()[:3])}",
          f"- memctl: {a.memctl_rev} (release build)",
          "- files: " + "; ".join(
              f"{d['label']} = `{d['path'].name}`, {d['bytes']} bytes, {d['threads']} threads, "
              f"{d['checkpoints']} checkpoints, largest checkpoint blob {d['largest_blob'] / 2**20:.1f} MiB"
              for d in dbs),
          f"- each cell: median whole-process wall time (median CPU time, user + system), max peak RSS (GNU time %M); memctl {a.runs} runs, "
          f"Python {a.slow_runs}; trim on a fresh copy per run, flushed before the timed run", "",
          *lines, ""]
    if checks:
        md += ["Token totals, threads whose total differs (memctl vs Python): " + ", ".join(
            f"{lbl} {key} {v}" for (lbl, key), v in checks.items()), ""]
    section = "\n".join(md)
    print("\n" + section)
    begin, end = f"<!-- bench:scaling-{a.label} -->", f"<!-- /bench:scaling-{a.label} -->"
    old = a.markdown.read_text() if a.markdown.exists() else "# memctl benchmarks\n\n"
    block = f"{begin}\n{section}{end}\n"
    if begin in old and end in old:
        new = old[:old.index(begin)] + block + old[old.index(end) + len(end) + 1:]
    else:
        new = old.rstrip("\n") + "\n\n" + block
    a.markdown.write_text(new)
    out = B.ROOT / "target" / "bench" / f"scaling-{a.label}.json"
    out.write_text(json.dumps({f"{k[0]}|{k[1]}": {side: (None if r is None else
                                                          {"walls": r.walls, "cpu": r.cpu, "rss_kib": r.rss,
                                                           "inproc": r.inproc, "error": r.error})
                                                   for side, r in zip(("memctl", "python"), v)}
                               for k, v in results.items()}, indent=1))
    print(f"scaling: wrote {a.markdown} and {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
