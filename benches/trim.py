"""Only the trim row of bench.py: `memctl trim --all --keep 4` against the Python way
(get_state + trim_messages + update_state per thread), each run on a fresh copy of the database
made and flushed to disk before the timed run (as bench.py does). Prints the medians; writes
nothing to BENCHMARKS.md.

    .venv/bench/bin/python benches/trim.py --memctl target/release/memctl \
        --db target/bench/db-realistic-seed1.sqlite [--runs 5] [--py-runs 3] [--work DIR]

`--py-runs 0` times memctl alone. The source database is only read (copied).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench import PY, fresh_copy, run_once  # noqa: E402


def loadavg() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def timed(name: str, cmd: list[str], runs: int, prepare, work: Path) -> tuple[list[float], list[float], list[int]]:
    walls, cpus, rss = [], [], []
    for i in range(runs):
        prepare()
        out, err = work / f"{name}.{i}.out", work / f"{name}.{i}.err"
        wall, kib, rc, cpu = run_once(cmd, out, err)
        if rc != 0:
            sys.exit(f"{name} run {i + 1} failed (exit {rc}): {err.read_text(errors='replace')[-500:]}")
        walls.append(wall)
        cpus.append(cpu)
        rss.append(kib)
        print(f"  {name} run {i + 1}/{runs}: {wall:.3f} s wall, {cpu:.3f} s CPU, {kib / 1024:.1f} MiB "
              f"(load {loadavg()})", file=sys.stderr)
    return walls, cpus, rss


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--memctl", required=True)
    ap.add_argument("--db", required=True, type=Path)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--py-runs", type=int, default=3)
    ap.add_argument("--work", type=Path, default=HERE.parent / "target" / "bench" / "work-trim")
    ap.add_argument("--arg", action="append", default=[], help="an extra argument for memctl trim")
    a = ap.parse_args()
    a.work.mkdir(parents=True, exist_ok=True)
    db = a.db.resolve()
    mcopy, pcopy = a.work / "trim-memctl.sqlite", a.work / "trim-python.sqlite"
    print(f"load average at start: {loadavg()}", file=sys.stderr)
    m = timed("memctl", [str(Path(a.memctl).resolve()), "trim", "--all", "--keep", "4", "--db", str(mcopy),
                         "--format", "json", *a.arg], a.runs, fresh_copy(db, mcopy), a.work)
    print(f"memctl trim --all --keep 4: median {statistics.median(m[0]):.3f} s wall, "
          f"{statistics.median(m[1]):.3f} s CPU, max RSS {max(m[2]) / 1024:.1f} MiB "
          f"(walls {', '.join(f'{w:.3f}' for w in sorted(m[0]))})")
    if a.py_runs > 0:
        p = timed("python", [PY, str(HERE / "pybench.py"), "trim", str(pcopy), "--out",
                             str(a.work / "trim-python.json")], a.py_runs, fresh_copy(db, pcopy), a.work)
        pw, pc = statistics.median(p[0]), statistics.median(p[1])
        print(f"python get_state + trim_messages + update_state: median {pw:.3f} s wall, {pc:.3f} s CPU "
              f"(walls {', '.join(f'{w:.3f}' for w in sorted(p[0]))})")
        print(f"ratio: {pw / statistics.median(m[0]):.1f}x wall, {pc / statistics.median(m[1]):.1f}x CPU")
    for s in ("", "-wal", "-shm"):
        for c in (mcopy, pcopy):
            Path(str(c) + s).unlink(missing_ok=True)
    print(f"load average at the end: {loadavg()}", file=sys.stderr)


if __name__ == "__main__":
    main()
