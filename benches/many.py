#!/usr/bin/env python3
"""A SqliteSaver file of very many short threads (issue #30 "Scale": 1,000,000 threads).

Production checkpointers of a chat product hold mostly short threads (a question, an answer)
and many of them. Playing a million threads through LangGraph takes hours, so this script plays
--templates real threads through the real stack (a `StateGraph(MessagesState)` whose one node is
a fake model answering from a seeded RNG, checkpointed by `SqliteSaver`: three checkpoints and
their writes per thread, exactly as LangGraph writes them), then writes --threads clones of them:
each clone is one template's rows with a new thread id and new checkpoint ids. A checkpoint id
is a uuid6 whose time is the app's clock; a clone's ids keep the template's clock sequence and
node and carry the clone's own time (its checkpoints as far apart as the template's), and the
`id` and `ts` inside each checkpoint blob are replaced by the same-length new ones (msgpack stays
valid byte for byte). 90 % of the threads were last active in the last 30 days, 10 % 30-120 days
ago (so `prune --idle 30d` has 100,000 threads to delete at 1 M). Rows are written oldest thread
first, as an app appends them.

    .venv/new/bin/python benches/many.py --threads 1000000 --out /work/bench/many/m1.sqlite

With --pg URL the same threads go into a PostgresSaver database instead (benches/many_pg.py:
the templates are migrated there by `memctl migrate`, then cloned by set-based SQL inside the
server; --out then only names the templates file and the `.json` summary):

    .venv/pg/bin/python benches/many.py --threads 1000000 --out /tmp/m1m-pg --pg URL [--check]

A `.json` summary beside the file records the counts, sizes and the cut-off ages.
"""

from __future__ import annotations

import argparse
import json
import random
import sqlite3
import sys
import time
import uuid

from many_ids import WORDS, clone_id, id_time_ns, uuid6_at
from datetime import datetime, timedelta, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
def make_templates(path: Path, n: int, seed: int) -> None:
    """n real one-turn threads through LangGraph (SqliteSaver, add_messages)."""
    from langchain_core.messages import AIMessage, HumanMessage
    from langgraph.checkpoint.sqlite import SqliteSaver
    from langgraph.graph import START, MessagesState, StateGraph

    rng = random.Random(seed)

    def model(state: MessagesState) -> dict:
        words = [rng.choice(WORDS) for _ in range(rng.randint(15, 90))]
        reply = " ".join(words).capitalize() + "."
        return {"messages": [AIMessage(reply, usage_metadata={
            "input_tokens": rng.randint(20, 200), "output_tokens": len(words) + 3,
            "total_tokens": 0})]}

    g = StateGraph(MessagesState)
    g.add_node("model", model)
    g.add_edge(START, "model")
    path.unlink(missing_ok=True)
    with SqliteSaver.from_conn_string(str(path)) as saver:
        app = g.compile(checkpointer=saver)
        for i in range(n):
            q = " ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 25))) + "?"
            app.invoke({"messages": [HumanMessage(q.capitalize())]},
                       {"configurable": {"thread_id": str(uuid.UUID(int=rng.getrandbits(128), version=4))}})


def make_plan(threads: int, seed: int, now: datetime) -> list[tuple[datetime, int]]:
    """(last activity, clone number) of every clone, oldest first: 90 % active in the last
    30 days, 10 % idle 30-120 days."""
    rng = random.Random(seed)
    plan = []
    for j in range(threads):
        old = rng.random() < 0.10
        days = 30 + rng.random() * 90 if old else rng.random() * 29.9
        plan.append((now - timedelta(days=days), j))
    plan.sort()
    return plan


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", type=int, default=1_000_000)
    ap.add_argument("--templates", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--pg", metavar="URL",
                    help="load a PostgresSaver database instead (URL of an empty or new one): "
                         "the templates migrated by memctl, the clones made inside Postgres")
    ap.add_argument("--memctl", type=Path, default=ROOT / "target/release/memctl",
                    help="memctl binary (--pg: migrates the templates)")
    ap.add_argument("--check", action="store_true",
                    help="--pg: then continue one clone with LangGraph (writes to it)")
    a = ap.parse_args()
    t0 = time.perf_counter()
    out = a.out
    tmpl_path = out.with_name(out.stem + ".templates.sqlite")
    make_templates(tmpl_path, a.templates, a.seed)
    if a.pg:
        import many_pg

        now = datetime.now(timezone.utc)
        return many_pg.load(a, tmpl_path, make_plan(a.threads, a.seed, now), now, t0)
    src = sqlite3.connect(tmpl_path)
    templates = []
    for (tid,) in src.execute("SELECT DISTINCT thread_id FROM checkpoints ORDER BY thread_id"):
        cps = src.execute("SELECT checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, "
                          "metadata FROM checkpoints WHERE thread_id = ? ORDER BY checkpoint_id", (tid,)).fetchall()
        ws = src.execute("SELECT checkpoint_ns, checkpoint_id, task_id, idx, channel, type, value, task_path "
                         "FROM writes WHERE thread_id = ?", (tid,)).fetchall()
        templates.append((tid, cps, ws))
    src.close()
    played_s = time.perf_counter() - t0

    # The output: the saver's own schema (setup()), then the clones, oldest thread first.
    from langgraph.checkpoint.sqlite import SqliteSaver
    for suffix in ("", "-wal", "-shm"):
        Path(f"{out}{suffix}").unlink(missing_ok=True)
    SqliteSaver(sqlite3.connect(out, check_same_thread=False)).setup()
    conn = sqlite3.connect(out, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    now = datetime.now(timezone.utc)
    plan = make_plan(a.threads, a.seed, now)
    idle_30d = sum(1 for when, _ in plan if now - when > timedelta(days=30))
    cp_rows, w_rows = [], []
    written = {"checkpoints": 0, "writes": 0}

    def flush() -> None:
        conn.executemany("INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, "
                         "parent_checkpoint_id, type, checkpoint, metadata) VALUES (?,?,?,?,?,?,?)", cp_rows)
        conn.executemany("INSERT INTO writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, "
                         "channel, type, value, task_path) VALUES (?,?,?,?,?,?,?,?,?)", w_rows)
        written["checkpoints"] += len(cp_rows)
        written["writes"] += len(w_rows)
        cp_rows.clear()
        w_rows.clear()

    conn.execute("BEGIN")
    for n, (when, j) in enumerate(plan):
        tid, cps, ws = templates[j % len(templates)]
        new_tid = clone_id(a.seed, j)
        first = id_time_ns(cps[0][1])
        base = int(when.timestamp() * 1e9)
        ids = {}
        for ns, cid, parent, typ, blob, meta in cps:
            when_ns = base + id_time_ns(cid) - first
            new = uuid6_at(cid, when_ns)
            ids[cid] = new
            ts_new = datetime.fromtimestamp(when_ns / 1e9, timezone.utc).isoformat()
            blob = blob.replace(cid.encode(), new.encode())
            # The blob's `ts` (msgpack: key "ts", then a str8 of the isoformat text, 32 bytes
            # unless the microseconds are 0): replaced when the new text has the same length.
            at = blob.find(b"\xa2ts\xd9")
            if at >= 0 and blob[at + 4] == len(ts_new):
                blob = blob[:at + 5] + ts_new.encode() + blob[at + 5 + len(ts_new):]
            cp_rows.append((new_tid, ns, new, ids.get(parent) if parent else None, typ, blob,
                            meta.replace(tid.encode(), new_tid.encode()) if isinstance(meta, bytes) else meta))
        for ns, cid, task, idx, ch, typ, val, path in ws:
            w_rows.append((new_tid, ns, ids[cid], task, idx, ch, typ, val, path))
        if len(cp_rows) >= 50_000:
            flush()
            if n % 200_000 < 20_000:
                conn.execute("COMMIT")
                conn.execute("BEGIN")
                print(f"many.py: {n:,} threads", file=sys.stderr)
    flush()
    conn.execute("COMMIT")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    summary = {
        "out": str(out), "threads": a.threads, "templates": len(templates), "seed": a.seed,
        "checkpoints": written["checkpoints"], "writes": written["writes"],
        "bytes": out.stat().st_size, "idle_over_30d": idle_30d, "made_at": now.isoformat(),
        "play_seconds": round(played_s, 1), "total_seconds": round(time.perf_counter() - t0, 1),
    }
    Path(f"{out}.json").write_text(json.dumps(summary, indent=2))
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
