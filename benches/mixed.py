"""o200k on mixed-script text (issue #30): `memctl tokens --all --counter o200k` against the Python
way on a `--preset mixed` database, in one run, with CPU times and the load average.

    .venv/bench/bin/python benches/generate.py --preset mixed --scale 0.3 --out target/bench/mixed.sqlite
    .venv/bench/bin/python benches/mixed.py --memctl target/release/memctl --db target/bench/mixed.sqlite

Measured (bench.py's `measure`: wall and CPU seconds of the whole process, median of --runs):

  * memctl tokens --all --counter o200k --format json;
  * the Python way: saver.get_tuple per thread + ChatOpenAI(gpt-4o).get_num_tokens_from_messages
    (pybench.py tokens-o200k), and the same with bare tiktoken encode (tokens-tiktoken);
  * tiktoken's Rust core alone: the texts of every latest message, read before timing, encoded
    with `encode_ordinary` (CoreBPE: fancy-regex pre-tokenizer + byte-pair merges on a
    HashMap<Vec<u8>, Rank>), timed in-process: the floor of the Python way's token counting.

It prints a JSON summary (per-token CPU of memctl and of tiktoken's core included) and checks that
memctl's totals equal ChatOpenAI's for every thread.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import bench  # noqa: E402  (measure, memctl_tokens, mismatches)


def core_floor(db: str) -> None:
    """In a child process: tiktoken's core on the texts alone (printed as bench's in-process JSON)."""
    import pybench

    pybench.setup_tiktoken_cache()
    import tiktoken

    conn, saver = pybench.saver_for(db)
    texts = []
    for _, msgs in pybench._latest_messages(saver, conn):
        for m in msgs:
            texts.append(m.text if isinstance(m.text, str) else m.text())
    enc = tiktoken.get_encoding("o200k_base")
    enc.encode_ordinary("warm up")
    t0 = time.perf_counter()
    c0 = time.process_time()
    n = sum(len(enc.encode_ordinary(t)) for t in texts)
    secs, cpu = time.perf_counter() - t0, time.process_time() - c0
    chars = sum(len(t) for t in texts)
    cjk = sum(1 for t in texts for c in t if 0x3000 <= ord(c) <= 0x9FFF or 0xAC00 <= ord(c) <= 0xD7AF
              or 0xFF00 <= ord(c) <= 0xFFEF)
    print(json.dumps({"task": "core", "seconds": secs, "cpu": cpu, "tokens": n, "texts": len(texts),
                      "chars": chars, "cjk_share": cjk / max(1, chars),
                      "bytes": sum(len(t.encode()) for t in texts)}), file=sys.stderr)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--memctl", required=True)
    ap.add_argument("--db", required=True, type=Path)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--slow-runs", type=int, default=3)
    ap.add_argument("--core", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.core:
        core_floor(str(a.db))
        return
    db = a.db.resolve()
    work = HERE.parent / "target" / "bench" / "work-mixed"
    work.mkdir(parents=True, exist_ok=True)
    with open(db, "rb") as f:  # warm the page cache
        while f.read(1 << 24):
            pass
    load0 = os.getloadavg()
    memctl = str(Path(a.memctl).resolve())
    pb = [sys.executable, str(HERE / "pybench.py")]
    m = bench.measure("memctl tokens --all --counter o200k",
                      [memctl, "tokens", "--all", "--counter", "o200k", "--db", str(db), "--format", "json"],
                      a.runs, work)
    p = bench.measure("python get_tuple + ChatOpenAI(gpt-4o).get_num_tokens_from_messages",
                      [*pb, "tokens-o200k", str(db), "--out", str(work / "tok-o200k.json")], a.slow_runs, work,
                      inproc=True)
    t = bench.measure("python get_tuple + tiktoken o200k_base encode (texts only)",
                      [*pb, "tokens-tiktoken", str(db)], a.slow_runs, work, inproc=True)
    core = bench.measure("tiktoken core encode_ordinary on the texts (in-process)",
                         [sys.executable, __file__, "--memctl", memctl, "--db", str(db), "--core"],
                         a.slow_runs, work, inproc=True)
    load1 = os.getloadavg()
    infos = [json.loads((work / f"tiktoken-core-encode-ordinary-on-the-texts-in-process.{i}.err")
                        .read_text().strip().splitlines()[-1]) for i in range(len(core.walls))]
    info = infos[0]
    mine = bench.memctl_tokens(m.stdout) if m.stdout else {}
    theirs = json.loads((work / "tok-o200k.json").read_text()) if p.stdout else {}
    tokens = sum(mine.values())
    med = lambda xs: sorted(xs)[len(xs) // 2] if xs else None  # noqa: E731
    out = {
        "db": str(db), "mib": round(db.stat().st_size / 2**20, 1), "threads": len(mine),
        "load_start": [round(x, 2) for x in load0], "load_end": [round(x, 2) for x in load1],
        "memctl_wall": med(m.walls), "memctl_cpu": med(m.cpu),
        "python_chatopenai_wall": med(p.walls), "python_chatopenai_cpu": med(p.cpu),
        "python_tiktoken_wall": med(t.walls), "python_tiktoken_cpu": med(t.cpu),
        "core_encode_seconds": med(core.inproc), "core_encode_cpu": med([i["cpu"] for i in infos]),
        "ratio_wall_chatopenai": med(p.walls) / med(m.walls) if m.walls and p.walls else None,
        "ratio_cpu_chatopenai": med(p.cpu) / med(m.cpu) if m.cpu and p.cpu else None,
        "memctl_tokens_total": tokens, "core_tokens_texts": info["tokens"], "texts": info["texts"],
        "text_chars": info["chars"], "text_bytes": info["bytes"], "cjk_share": round(info["cjk_share"], 3),
        "memctl_cpu_ns_per_token": med(m.cpu) / tokens * 1e9 if tokens and m.cpu else None,
        "core_cpu_ns_per_token": med([i["cpu"] for i in infos]) / info["tokens"] * 1e9,
        "threads_differing": bench.mismatches(mine, theirs) if mine and theirs else None,
    }
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
