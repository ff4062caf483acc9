"""The Postgres half of benches/many.py (`--pg URL`): the same clones in a PostgresSaver database.

`memctl migrate` of a million-thread SQLite file takes about half an hour here (20,000 threads:
38 s at load 8), so the clones are made inside the server instead:

1. the --templates real threads (played by many.py through `SqliteSaver`) are migrated into
   the empty PostgresSaver tables by `memctl migrate` (so their rows are exactly what memctl
   writes for PostgresSaver), copied to temporary tables and the saver's tables emptied;
2. the plan (clone number, thread id, time of its first checkpoint: the same `make_plan` and
   `clone_id` as the SQLite file, so the same threads and idle ages) goes in by `COPY`;
3. `INSERT ... SELECT` per table joins plan and templates, oldest thread first, 200,000 threads
   per statement, with the saver's primary keys and indexes dropped for the load and rebuilt
   after it (their definitions read from the catalog and replayed as they were). A clone's
   checkpoint ids (and parent ids, and the write rows' ids) are the template's uuid6 with the
   time replaced by the clone's (clock sequence and node kept; the checkpoints as far apart as
   the template's); the checkpoint JSONB's `id` and `ts` are set to the new id and its time.
   Blobs and writes are the template's bytes under the clone's thread id.
4. `VACUUM ANALYZE`, then a read check with the real `PostgresSaver` (history, `get_tuple`,
   messages equal to the template's) and with --check a `StateGraph(MessagesState)` with a fake
   model continuing one clone.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import time
import uuid
from datetime import datetime, timedelta
from pathlib import Path

import psycopg

from many_ids import UUID_EPOCH, WORDS, clone_id, id_time_ns

TABLES = ("checkpoints", "checkpoint_blobs", "checkpoint_writes")
CHUNK = 200_000

FUNCTIONS = f"""
CREATE FUNCTION pg_temp.tick(cid text) RETURNS bigint IMMUTABLE LANGUAGE sql AS
$$ SELECT ('x' || lpad(substr(cid, 1, 8) || substr(cid, 10, 4) || substr(cid, 16, 3), 16, '0'))::bit(64)::bigint $$;
CREATE FUNCTION pg_temp.at(cid text, t bigint) RETURNS text IMMUTABLE LANGUAGE sql AS
$$ SELECT substr(h, 1, 8) || '-' || substr(h, 9, 4) || '-6' || lpad(to_hex(t & 4095), 3, '0') || substr(cid, 19)
   FROM (SELECT lpad(to_hex(t >> 12), 12, '0') AS h) x $$;
CREATE FUNCTION pg_temp.iso(t bigint) RETURNS text IMMUTABLE LANGUAGE sql AS
$$ SELECT to_char(timestamp 'epoch' + ((t - {UUID_EPOCH}) / 10) * interval '1 microsecond',
                  'YYYY-MM-DD"T"HH24:MI:SS.US"+00:00"') $$;
"""

TEMPLATES = """
CREATE TEMP TABLE tt AS
  SELECT thread_id, (row_number() OVER (ORDER BY thread_id COLLATE "C"))::int - 1 AS k
  FROM (SELECT DISTINCT thread_id FROM checkpoints) d;
CREATE TEMP TABLE tc AS
  SELECT t.k, c.*, min(pg_temp.tick(c.checkpoint_id)) OVER (PARTITION BY c.thread_id) AS first
  FROM checkpoints c JOIN tt t USING (thread_id);
CREATE TEMP TABLE tw AS
  SELECT t.k, w.*, f.first FROM checkpoint_writes w JOIN tt t USING (thread_id)
  JOIN (SELECT DISTINCT thread_id, first FROM tc) f USING (thread_id);
CREATE TEMP TABLE tb AS SELECT t.k, b.* FROM checkpoint_blobs b JOIN tt t USING (thread_id);
CREATE TEMP TABLE plan (ord int PRIMARY KEY, k int NOT NULL, thread_id text NOT NULL, base bigint NOT NULL);
"""

INSERTS = {
    "checkpoints": """
INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata)
SELECT p.thread_id, c.checkpoint_ns, n.id,
       CASE WHEN c.parent_checkpoint_id IS NULL OR c.parent_checkpoint_id = '' THEN c.parent_checkpoint_id
            ELSE pg_temp.at(c.parent_checkpoint_id, p.base + pg_temp.tick(c.parent_checkpoint_id) - c.first) END,
       c.type,
       jsonb_set(jsonb_set(c.checkpoint, '{id}', to_jsonb(n.id)), '{ts}', to_jsonb(pg_temp.iso(n.t))),
       c.metadata
FROM plan p JOIN tc c ON c.k = p.k
CROSS JOIN LATERAL (SELECT p.base + pg_temp.tick(c.checkpoint_id) - c.first AS t) m
CROSS JOIN LATERAL (SELECT pg_temp.at(c.checkpoint_id, m.t) AS id, m.t) n
WHERE p.ord >= %(lo)s AND p.ord < %(hi)s
ORDER BY p.ord, c.checkpoint_id""",
    "checkpoint_blobs": """
INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob)
SELECT p.thread_id, b.checkpoint_ns, b.channel, b.version, b.type, b.blob
FROM plan p JOIN tb b ON b.k = p.k
WHERE p.ord >= %(lo)s AND p.ord < %(hi)s
ORDER BY p.ord, b.channel, b.version""",
    "checkpoint_writes": """
INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob, task_path)
SELECT p.thread_id, w.checkpoint_ns, pg_temp.at(w.checkpoint_id, p.base + pg_temp.tick(w.checkpoint_id) - w.first),
       w.task_id, w.idx, w.channel, w.type, w.blob, w.task_path
FROM plan p JOIN tw w ON w.k = p.k
WHERE p.ord >= %(lo)s AND p.ord < %(hi)s
ORDER BY p.ord, w.checkpoint_id, w.task_id, w.idx""",
}


def log(msg: str, t0: float) -> None:
    print(f"many.py: {time.perf_counter() - t0:7.1f} s  {msg}", file=sys.stderr, flush=True)


def setup(url: str) -> None:
    """The saver's own tables (PostgresSaver.setup()); refuses a database that holds checkpoints."""
    from langgraph.checkpoint.postgres import PostgresSaver

    with PostgresSaver.from_conn_string(url) as saver:
        saver.setup()
    with psycopg.connect(url) as c:
        for t in TABLES:
            if c.execute(f"SELECT EXISTS (SELECT 1 FROM {t})").fetchone()[0]:
                sys.exit(f"many.py: {t} is not empty in {url}; --pg loads an empty database only")


def indexes(c: psycopg.Connection) -> list[tuple[str, str, str | None, str]]:
    """(table, index, constraint or None, definition) of every index on the saver's tables."""
    return c.execute("""
        SELECT i.indrelid::regclass::text, i.indexrelid::regclass::text, k.conname,
               coalesce(pg_get_constraintdef(k.oid), pg_get_indexdef(i.indexrelid))
        FROM pg_index i LEFT JOIN pg_constraint k ON k.conindid = i.indexrelid AND k.contype IN ('p', 'u')
        WHERE i.indrelid::regclass::text = ANY(%s) ORDER BY 1, 2""", (list(TABLES),)).fetchall()


def load(a, tmpl_path: Path, plan: list[tuple[datetime, int]], now: datetime, t0: float) -> int:
    url = a.pg
    setup(url)
    got = subprocess.run([str(a.memctl), "migrate", "--db", str(tmpl_path), "--to", url, "--quiet"],
                         capture_output=True, text=True)
    if got.returncode != 0:
        sys.exit(f"many.py: memctl migrate of the templates failed ({got.returncode}): {got.stderr[-1500:]}")
    log(f"{a.templates} templates migrated by memctl", t0)
    with psycopg.connect(url, autocommit=True) as c:
        c.execute("SET maintenance_work_mem = '1GB'")
        c.execute(FUNCTIONS)
        c.execute(TEMPLATES)
        n_tmpl = c.execute("SELECT count(*) FROM tt").fetchone()[0]
        if n_tmpl != a.templates:
            sys.exit(f"many.py: {n_tmpl} template threads in Postgres, {a.templates} played")
        # Thread ids in a template's JSON or metadata would need replacing too: none are expected.
        leaks = c.execute("SELECT count(*) FROM tc WHERE position(thread_id IN checkpoint::text) > 0 "
                          "OR position(thread_id IN metadata::text) > 0").fetchone()[0]
        if leaks:
            sys.exit(f"many.py: {leaks} template checkpoints name their thread id; not cloned")
        c.execute("TRUNCATE " + ", ".join(TABLES))
        with c.cursor().copy("COPY plan (ord, k, thread_id, base) FROM STDIN") as cp:
            for ord_, (when, j) in enumerate(plan):
                base = int(when.timestamp() * 1e9) // 100 + UUID_EPOCH
                cp.write_row((ord_, j % n_tmpl, clone_id(a.seed, j), base))
        c.execute("ANALYZE plan")
        log(f"plan of {len(plan):,} threads copied", t0)
        defs = indexes(c)
        for table, index, con, _ in defs:
            c.execute(f"ALTER TABLE {table} DROP CONSTRAINT {con}" if con else f"DROP INDEX {index}")
        try:
            for lo in range(0, len(plan), CHUNK):
                for table in TABLES:
                    c.execute(INSERTS[table], {"lo": lo, "hi": lo + CHUNK})
                log(f"{min(lo + CHUNK, len(plan)):,} threads inserted", t0)
        finally:
            for table, index, con, definition in defs:
                c.execute(f"ALTER TABLE {table} ADD CONSTRAINT {con} {definition}" if con else definition)
            log("primary keys and indexes rebuilt", t0)
        for t in TABLES:
            c.execute(f"VACUUM ANALYZE {t}")
        counts = {t: c.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in TABLES}
        size = c.execute("SELECT pg_database_size(current_database())").fetchone()[0]
        log(f"vacuumed: {counts}, {size / 2**30:.2f} GiB", t0)
    check(url, tmpl_path, plan, a.seed, n_tmpl)
    if a.check:
        continue_one(url, clone_id(a.seed, plan[len(plan) // 3][1]))
    summary = {
        "out": url.rsplit("@", 1)[-1], "backend": "postgres", "threads": len(plan), "templates": n_tmpl,
        "seed": a.seed, "checkpoints": counts["checkpoints"], "writes": counts["checkpoint_writes"],
        "blobs": counts["checkpoint_blobs"], "bytes": size,
        "idle_over_30d": sum(1 for when, _ in plan if now - when > timedelta(days=30)),
        "made_at": now.isoformat(), "total_seconds": round(time.perf_counter() - t0, 1),
    }
    Path(f"{a.out}.json").write_text(json.dumps(summary, indent=2))
    print(json.dumps(summary))
    return 0


def check(url: str, tmpl_path: Path, plan: list, seed: int, n_tmpl: int) -> None:
    """Real PostgresSaver reads three clones (oldest, middle, newest) like the app would: the
    history is the template's, newest first, parents chained, ids and `ts` at the clone's time,
    the messages the template's."""
    import sqlite3

    from langgraph.checkpoint.postgres import PostgresSaver
    from langgraph.checkpoint.sqlite import SqliteSaver

    tmpl_ids = sorted(r[0] for r in sqlite3.connect(tmpl_path).execute("SELECT DISTINCT thread_id FROM checkpoints"))
    sq = SqliteSaver(sqlite3.connect(tmpl_path, check_same_thread=False))
    with PostgresSaver.from_conn_string(url) as saver:
        for ord_ in (0, len(plan) // 2, len(plan) - 1):
            when, j = plan[ord_]
            cfg = {"configurable": {"thread_id": clone_id(seed, j), "checkpoint_ns": ""}}
            hist = list(saver.list(cfg))
            want = list(sq.list({"configurable": {"thread_id": tmpl_ids[j % n_tmpl], "checkpoint_ns": ""}}))
            assert len(hist) == len(want) > 0, (len(hist), len(want))
            for h, w in zip(hist, want):
                cid = h.config["configurable"]["checkpoint_id"]
                assert h.checkpoint["id"] == cid
                assert h.checkpoint["channel_values"].get("messages") == w.checkpoint["channel_values"].get("messages")
                assert h.metadata == w.metadata
                assert len(h.pending_writes or []) == len(w.pending_writes or [])
                ts = datetime.fromisoformat(h.checkpoint["ts"])
                assert abs(ts.timestamp() * 1e9 - id_time_ns(cid)) < 2000, (ts, cid)
            for newer, older in zip(hist, hist[1:]):
                assert newer.parent_config["configurable"]["checkpoint_id"] == older.config["configurable"]["checkpoint_id"]
            first_ns = id_time_ns(hist[-1].config["configurable"]["checkpoint_id"])
            assert abs(first_ns - when.timestamp() * 1e9) < 1e4, (first_ns, when)
            tup = saver.get_tuple(cfg)
            assert tup is not None and tup.config["configurable"]["checkpoint_id"] == hist[0].config["configurable"]["checkpoint_id"]
    print(f"many.py: PostgresSaver reads 3 clones as their templates (history, get_tuple, messages)",
          file=sys.stderr)


def continue_one(url: str, thread: str) -> None:
    """LangGraph continues clone `thread`: a StateGraph(MessagesState) with a fake model."""
    from langchain_core.messages import AIMessage, HumanMessage
    from langgraph.checkpoint.postgres import PostgresSaver
    from langgraph.graph import START, MessagesState, StateGraph

    rng = random.Random(7)

    def model(state: MessagesState) -> dict:
        return {"messages": [AIMessage(" ".join(rng.choice(WORDS) for _ in range(12)) + ".")]}

    g = StateGraph(MessagesState)
    g.add_node("model", model)
    g.add_edge(START, "model")
    cfg = {"configurable": {"thread_id": thread}}
    with PostgresSaver.from_conn_string(url) as saver:
        app = g.compile(checkpointer=saver)
        before = app.get_state(cfg)
        n_hist = len(list(app.get_state_history(cfg)))
        out = app.invoke({"messages": [HumanMessage("And the refund?")]}, cfg)
        after = list(app.get_state_history(cfg))
    old = before.values["messages"]
    assert len(old) == 2 and out["messages"][:2] == old and len(out["messages"]) == 4, out
    head = before.config["configurable"]["checkpoint_id"]
    assert len(after) > n_hist and any(s.config["configurable"]["checkpoint_id"] == head for s in after)
    assert after[0].parent_config is not None
    assert uuid.UUID(after[0].config["configurable"]["checkpoint_id"]) > uuid.UUID(
        before.config["configurable"]["checkpoint_id"])
    print(f"many.py: LangGraph continued clone {thread}: 2 -> 4 messages, history {n_hist} -> {len(after)}",
          file=sys.stderr)
