#!/usr/bin/env python
"""Interop harness for PostgresSaver databases (venv .venv/pg): real LangGraph reads what memctl
wrote, makes the same change itself, and continues threads. Reuses harness.py's expected
message lists and update_state call.

    harness_pg.py check-rewrite --original URL --rewritten URL --thread T --expect JSON
        ORIGINAL is a throwaway copy of the database as it was before memctl ran; the harness
        runs LangGraph's own update_state there (the reference) and compares the rows each
        side added: one checkpoints row (JSONB, metadata, parent), the blob rows (only for the
        channels the update changed), the write rows on the parent. Then LangGraph loads the
        rewritten thread (get_state == the expected messages) and continues it (invoke), and
        the model must receive the kept messages.
    harness_pg.py state --url URL --thread T [--graph G]
    harness_pg.py continue --url URL --thread T [--graph G]
    harness_pg.py prune --url URL --threads A,B      PostgresSaver.prune(keep_latest)
    harness_pg.py delete-threads --url URL --threads A,B   PostgresSaver.delete_thread each
    harness_pg.py load-scenario --url URL --graph delta:T  writes graphs' scenario T (e.g.
        graphs.DELTA_EXTRA's) with PostgresSaver into URL (setup() first)
    harness_pg.py load-forget --url URL              graphs.FORGET's threads, by PostgresSaver
    harness_pg.py setup --url URL [--upto N] [--store]
        PostgresSaver.setup() (with --upto N: setup() with its MIGRATIONS up to level N only,
        as an older saver's setup() left the tables); with --store, PostgresStore.setup() too.
        Reports the checkpoint_migrations levels after it.
    harness_pg.py delta-states --url URL   every checkpoint of every DeltaChannel thread as
        LangGraph shows it (harness.delta_states; what expected/postgres-delta.json holds)
    harness_pg.py find-text --url URL --text T       rows holding T (decrypted values too)
    harness_pg.py held-app --url URL --thread T --hold-file F --go-file G
    harness_pg.py live-app --url URL --threads A,B[=GRAPH] --seconds S [--stop-file F]
        [--mirror FILE]

Encrypted databases: with LANGGRAPH_AES_KEY set, every saver uses
EncryptedSerializer.from_pycryptodome_aes() as an app does, and blob and write values are
compared decrypted.

Prints a JSON report; exit 0 when every check passes, 1 otherwise (FAIL lines on stderr).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import traceback
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness  # noqa: E402  (also puts fixtures/ on sys.path)
from harness import NEXT_ID, NEXT_TEXT, Report, dumps, graphs, jsonable  # noqa: E402
import psycopg  # noqa: E402
from langchain_core.messages import HumanMessage  # noqa: E402
from langgraph.checkpoint.postgres import PostgresSaver  # noqa: E402
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer  # noqa: E402

# With LANGGRAPH_AES_KEY set, the app's EncryptedSerializer (as harness.py): every saver the
# harness opens reads and writes encrypted values, and the row comparisons decrypt.
SERDE = harness.make_serde() or JsonPlusSerializer()


def rows(url: str) -> dict:
    """Every row of the saver's tables, keyed by primary key."""
    out: dict[str, dict] = {"checkpoints": {}, "blobs": {}, "writes": {}}
    with psycopg.connect(url) as c:
        for r in c.execute("SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, "
                           "checkpoint, metadata FROM checkpoints"):
            out["checkpoints"][r[:3]] = {"parent": r[3], "checkpoint": r[4], "metadata": r[5]}
        for r in c.execute("SELECT thread_id, checkpoint_ns, channel, version, type, blob FROM checkpoint_blobs"):
            out["blobs"][r[:4]] = {"type": r[4], "blob": bytes(r[5]) if r[5] is not None else None}
        for r in c.execute("SELECT thread_id, checkpoint_ns, checkpoint_id, task_id, idx, task_path, "
                           "channel, type, blob FROM checkpoint_writes"):
            out["writes"][r[:5]] = {"checkpoint_ns": r[1], "checkpoint_id": r[2], "task_id": r[3],
                                    "idx": r[4], "task_path": r[5], "channel": r[6], "type": r[7],
                                    "value": bytes(r[8])}
    return out


def added(before: dict, after: dict, table: str, thread: str) -> dict:
    return {k: v for k, v in after[table].items() if k[0] == thread and k not in before[table]}


class Opened:
    def __init__(self, url: str, graph_name: str):
        self.cm = PostgresSaver.from_conn_string(url)
        self.saver = self.cm.__enter__()
        self.saver.serde = SERDE
        self.graph, self.model = graphs.build(graph_name, self.saver)

    def close(self):
        self.cm.__exit__(None, None, None)


def check_rewrite(original: str, rewritten: str, thread: str, expect: dict, graph_name: str) -> dict:
    rep = Report()
    cfg = graphs.config(thread)
    before = rows(original)
    o = Opened(original, graph_name)
    try:
        orig_hist = harness._history_ids(o.graph, cfg)
        orig_msgs = o.graph.get_state(cfg).values.get("messages", [])
        want, info = harness.expected_list(orig_msgs, expect)
        ref_info = harness.langgraph_update(o.graph, o.saver, cfg, want, expect.get("values"))
    finally:
        o.close()
    ref = rows(original)
    new = rows(rewritten)
    G = "rows"
    # Other threads and the thread's old rows: untouched (a purge may rewrite old blobs).
    for table in ("checkpoints", "blobs", "writes"):
        changed = [str(k) for k, v in before[table].items()
                   if new[table].get(k) != v
                   and not (expect.get("purge") and k[0] == thread and table != "checkpoints")]
        rep.check(G, f"old {table} rows unchanged", not changed, changed[:10] or None)
    ncp, rcp = added(before, new, "checkpoints", thread), added(before, ref, "checkpoints", thread)
    rep.check(G, "one new checkpoint each", len(ncp) == 1 and len(rcp) == 1,
              {"new": list(ncp), "ref": list(rcp)})
    if len(ncp) == 1 and len(rcp) == 1:
        (nk, n), (rk, r) = next(iter(ncp.items())), next(iter(rcp.items()))
        nc, rc = n["checkpoint"], r["checkpoint"]
        rep.check(G, "parent", n["parent"] == r["parent"], {"new": n["parent"], "ref": r["parent"]})
        rep.check(G, "metadata", n["metadata"] == r["metadata"], {"new": n["metadata"], "ref": r["metadata"]})
        for key in ("v", "channel_values", "versions_seen", "updated_channels"):
            rep.check(G, f"checkpoint.{key}", nc.get(key) == rc.get(key),
                      None if nc.get(key) == rc.get(key) else {"new": nc.get(key), "ref": rc.get(key)})
        rep.check(G, "checkpoint keys", sorted(nc) == sorted(rc), {"new": sorted(nc), "ref": sorted(rc)})
        nv, rv = nc.get("channel_versions", {}), rc.get("channel_versions", {})
        parent_v = before["checkpoints"].get((thread, nk[1], n["parent"]), {}).get("checkpoint", {}).get(
            "channel_versions", {})
        changed_n = sorted(k for k in nv if nv[k] != parent_v.get(k))
        changed_r = sorted(k for k in rv if rv[k] != parent_v.get(k))
        rep.check(G, "channels whose version changed", changed_n == changed_r,
                  {"new": changed_n, "ref": changed_r})
        for k in changed_n:
            ok = nv[k].split(".")[0] == rv.get(k, "").split(".")[0]
            rep.check(G, f"version {k} integer part", ok, {"new": nv[k], "ref": rv.get(k)})
        rep.check(G, "checkpoint id sorts last", all(k[2] <= nk[2] for k in before["checkpoints"] if k[0] == thread))
    nb, rb = added(before, new, "blobs", thread), added(before, ref, "blobs", thread)
    nbs = sorted((k[1], k[2], v["type"]) for k, v in nb.items())
    rbs = sorted((k[1], k[2], v["type"]) for k, v in rb.items())
    rep.check(G, "new blob rows (ns, channel, type)", nbs == rbs, {"new": nbs, "ref": rbs})
    for (nk, nv_), (rk, rv_) in zip(sorted(nb.items()), sorted(rb.items())):
        a = SERDE.loads_typed((nv_["type"], nv_["blob"]))
        b = SERDE.loads_typed((rv_["type"], rv_["blob"]))
        ok = dumps(a) == dumps(b) if isinstance(a, list) else harness.norm(a) == harness.norm(b)
        rep.check(G, f"blob {nk[2]} decoded", ok, None if ok else {"new": jsonable(a), "ref": jsonable(b)})
        rep.checks.setdefault(G, {})[f"blob {nk[2]} bytes equal (info)"] = {
            "ok": True, "detail": nv_["blob"] == rv_["blob"]}
    nw = list(added(before, new, "writes", thread).values())
    rw = list(added(before, ref, "writes", thread).values())
    harness.compare_writes(rep, SERDE, nw, rw, True)
    # LangGraph reads the rewritten thread and continues it.
    o = Opened(rewritten, graph_name)
    try:
        hist = harness._history_ids(o.graph, cfg)
        head = hist[0] if hist else (None, None, None, None)
        o_latest, o_step = (orig_hist[0][0], orig_hist[0][2]) if orig_hist else (None, None)
        rep.check("history", "head is an update after the original latest",
                  head[1] == "update" and head[3] == o_latest
                  and isinstance(o_step, int) and head[2] == o_step + 1,
                  {"head": head, "original_latest": o_latest, "original_step": o_step})
        rest = [h[0] for h in hist[1:]] == [h[0] for h in orig_hist]
        rep.check("history", "the rest is the original history", rest, None if rest else
                  {"new": [h[0] for h in hist[1:]], "orig": [h[0] for h in orig_hist]})
        st = o.graph.get_state(cfg)
        got = st.values.get("messages", [])
        rep.check("load", "get_state messages == expected", dumps(got) == dumps(want),
                  None if dumps(got) == dumps(want) else {"got": dumps(got), "want": dumps(want)})
        o.graph.invoke({"messages": [HumanMessage(NEXT_TEXT, id=NEXT_ID)]}, cfg)
        after = o.graph.get_state(cfg).values.get("messages", [])
        ids = [m.id for m in after]
        rep.check("continue", "the next turn is in the state", NEXT_ID in ids, ids)
        if o.model.calls:
            received = [m.id for m in o.model.calls[0]]
            kept = [m.id for m in want]
            ok = received[: len(kept)] == kept or graph_name == "summarized"
            rep.check("continue", "the model received the kept messages first", ok,
                      None if ok else {"received": received, "kept": kept})
    finally:
        o.close()
    return {"thread": thread, "info": jsonable(info), "reference": jsonable(ref_info),
            "checks": rep.checks, "failures": rep.failures, "passed": not rep.failures}


def cmd_state(url: str, thread: str, graph_name: str) -> dict:
    o = Opened(url, graph_name)
    try:
        cfg = graphs.config(thread)
        st = o.graph.get_state(cfg)
        return {"thread": thread, "exists": o.saver.get_tuple(cfg) is not None,
                "messages": [m.model_dump() for m in st.values.get("messages", [])],
                "next": list(st.next),
                "interrupts": [{"id": i.id, "value": i.value} for i in st.interrupts],
                "history": len(list(o.graph.get_state_history(cfg)))}
    finally:
        o.close()


def cmd_continue(url: str, thread: str, graph_name: str) -> dict:
    o = Opened(url, graph_name)
    try:
        cfg = graphs.config(thread)
        before = o.graph.get_state(cfg)
        errors = []
        if tuple(before.next):
            from langgraph.types import Command
            o.graph.invoke(Command(resume="approved"), cfg)
        o.graph.invoke({"messages": [HumanMessage(NEXT_TEXT, id=NEXT_ID)]}, cfg)
        after = o.graph.get_state(cfg)
        msgs = after.values.get("messages", [])
        if not msgs or NEXT_ID not in [m.id for m in msgs]:
            errors.append(f"the next turn is not in the state: {[m.id for m in msgs]}")
        return {"thread": thread, "messages_before": len(before.values.get("messages", [])),
                "messages_after": len(msgs), "model_received": [dumps(c) for c in o.model.calls],
                "errors": errors}
    finally:
        o.close()


def cmd_history(url: str, thread: str, graph_name: str, at: str | None = None) -> dict:
    """One thread as LangGraph shows it through PostgresSaver: harness.py's `history`."""
    o = Opened(url, graph_name)
    try:
        with psycopg.connect(url) as c:
            namespaces = [r[0] for r in c.execute(
                'SELECT DISTINCT checkpoint_ns COLLATE "C" FROM checkpoints '
                "WHERE thread_id = %s AND checkpoint_ns != '' ORDER BY 1", (thread,))]
        rep = harness.delta_states(o.saver, [thread], lambda _t: namespaces,
                                   {thread: graph_name})["threads"][thread]
        cfg = graphs.config(thread, **({"checkpoint_id": at} if at else {}))
        rep["state"] = harness.snapshot_record(o.graph, o.graph.get_state(cfg))
        return rep
    finally:
        o.close()


def cmd_check_all(url: str, expected_path: str) -> dict:
    """Every thread of expected/postgres.json: LangGraph sees the same messages and next nodes
    (what a gc must keep), and the thread continues (a paused one is resumed first)."""
    exp = json.loads(Path(expected_path).read_text())
    errors = []
    done = []
    for thread, want in exp["threads"].items():
        try:
            st = cmd_state(url, thread, want["graph"])
            if st["messages"] != want["messages"] or st["next"] != want["next"]:
                errors.append(f"{thread}: LangGraph sees {len(st['messages'])} messages next={st['next']}, "
                              f"expected {len(want['messages'])} next={want['next']}")
                continue
            r = cmd_continue(url, thread, want["graph"])
            errors.extend(r["errors"])
            done.append(thread)
        except Exception as e:  # noqa: BLE001
            errors.append(f"{thread}: {type(e).__name__}: {e}")
    return {"continued": done, "errors": errors}


def cmd_load_forget(url: str) -> dict:
    """Writes the threads of graphs.FORGET (forget.sqlite's scenarios) with PostgresSaver."""
    with PostgresSaver.from_conn_string(url) as saver:
        saver.setup()
        for s in graphs.FORGET.values():
            graphs.run(s, saver)
    return {"threads": list(graphs.FORGET)}


def cmd_delta_states(url: str, graph_of: dict | None = None) -> dict:
    """Every checkpoint of every thread of a database of DeltaChannel threads (graphs
    'delta:<thread>', or `graph_of[thread]`), as `get_state_history` / `get_state` show them
    through PostgresSaver."""
    with PostgresSaver.from_conn_string(url) as saver, psycopg.connect(url) as c:
        ids = [r[0] for r in c.execute(
            'SELECT DISTINCT thread_id COLLATE "C" FROM checkpoints ORDER BY 1')]

        def namespaces_of(thread: str) -> list[str]:
            return [r[0] for r in c.execute(
                'SELECT DISTINCT checkpoint_ns COLLATE "C" FROM checkpoints '
                "WHERE thread_id = %s AND checkpoint_ns != '' ORDER BY 1", (thread,))]

        return harness.delta_states(saver, ids, namespaces_of, graph_of)


def cmd_find_text(url: str, text: str) -> dict:
    """Rows holding `text`: in a blob or write value (decrypted when encrypted, with the
    serializer's cipher), in the checkpoint JSONB or metadata, or in the stored bytes."""
    needle = text.encode()
    found = []
    with psycopg.connect(url) as c:
        for r in c.execute("SELECT thread_id, checkpoint_ns, checkpoint_id, checkpoint::text, "
                           "metadata::text FROM checkpoints"):
            if text in r[3] or text in (r[4] or ""):
                found.append(["checkpoints", *r[:3]])
        for table, key in (("checkpoint_blobs", "channel, version"),
                           ("checkpoint_writes", "checkpoint_id, task_id, idx")):
            for r in c.execute(f"SELECT thread_id, checkpoint_ns, {key}, type, blob FROM {table}"):
                typ, blob = r[-2], bytes(r[-1] or b"")
                plain = harness.plain_bytes(SERDE, typ, blob)[1] if typ != "empty" else b""
                if needle in plain or needle in blob:
                    found.append([table, *[str(x) for x in r[:-2]]])
    return {"text": text, "rows": found}


def cmd_setup(url: str, upto: int | None, store: bool) -> dict:
    """PostgresSaver.setup() as an app calls it (up to level `upto` when given: the same
    method with the saver's MIGRATIONS cut after that level); PostgresStore.setup() too with
    `store`."""
    with PostgresSaver.from_conn_string(url) as saver:
        if upto is not None:
            saver.MIGRATIONS = PostgresSaver.MIGRATIONS[: upto + 1]
        saver.setup()
    if store:
        from langgraph.store.postgres import PostgresStore

        with PostgresStore.from_conn_string(url) as st:
            st.setup()
    with psycopg.connect(url) as c:
        levels = [r[0] for r in c.execute("SELECT v FROM checkpoint_migrations ORDER BY v")]
    return {"levels": levels}


def cmd_prune(url: str, threads: list[str]) -> dict:
    with PostgresSaver.from_conn_string(url) as saver:
        saver.prune(threads, strategy="keep_latest")
    return {"pruned": threads}


def cmd_delete_threads(url: str, threads: list[str]) -> dict:
    """LangGraph's own deletion of whole threads (every row of the three tables)."""
    with PostgresSaver.from_conn_string(url) as saver:
        for t in threads:
            saver.delete_thread(t)
    return {"deleted": threads}


def cmd_load_scenario(url: str, graph_name: str) -> dict:
    """Writes the thread of scenario `graph_name` ('delta:<thread>') with PostgresSaver."""
    thread = graph_name.split(":", 1)[1]
    s = graphs.DELTA_THREADS.get(thread) or graphs.DELTA_EXTRA[thread]
    with PostgresSaver.from_conn_string(url) as saver:
        saver.setup()
        saver.serde = SERDE
        graph, _model, _ = graphs.run(s, saver)
        md = graph.get_state(graphs.config(thread)).metadata
    return {"thread": thread, "metadata": md}


def cmd_held_app(url: str, graph_name: str, thread: str, hold_file: str, go_file: str) -> dict:
    """The race of issue #12 on Postgres: one app turn whose every commit (put, put_writes)
    waits, after its checkpoint ids are made, until GO_FILE appears; HOLD_FILE says it is
    waiting. Then the app's turn must be the thread's state and its next turn must see it."""
    o = Opened(url, graph_name)
    saver, graph, model = o.saver, o.graph, o.model
    cfg = graphs.config(thread)
    made: list[str] = []
    orig_put, orig_put_writes = saver.put, saver.put_writes

    def hold() -> None:
        if not Path(hold_file).exists():
            Path(hold_file).write_text(json.dumps(made))
        deadline = time.monotonic() + 120
        while not Path(go_file).exists():
            if time.monotonic() > deadline:
                raise TimeoutError("never released")
            time.sleep(0.005)

    def put(config, checkpoint, metadata, new_versions):
        made.append(checkpoint["id"])
        hold()
        return orig_put(config, checkpoint, metadata, new_versions)

    def put_writes(config, writes, task_id, task_path=""):
        hold()
        return orig_put_writes(config, writes, task_id, task_path)

    try:
        saver.put, saver.put_writes = put, put_writes
        graph.invoke({"messages": [HumanMessage(harness.HELD_TEXT, id=harness.HELD_ID)]}, cfg)
        saver.put, saver.put_writes = orig_put, orig_put_writes
        errors: list[str] = []
        state = graph.get_state(cfg)
        ids = [m.id for m in state.values.get("messages", [])]
        latest = state.config["configurable"]["checkpoint_id"]
        if harness.HELD_ID not in ids:
            errors.append(f"the app's turn was lost: the latest checkpoint {latest} has {ids}")
        graph.invoke({"messages": [HumanMessage(NEXT_TEXT, id=NEXT_ID)]}, cfg)
        received = [m.id for m in model.calls[-1]] if model.calls else []
        if harness.HELD_ID not in received:
            errors.append(f"the next turn did not see the held turn: the model got {received}")
        return {"made": made, "latest_after_turn": latest, "messages_after_turn": ids,
                "model_received": received, "errors": errors}
    finally:
        o.close()


def cmd_live_app(url: str, graph_name: str, threads: list[str], seconds: float,
                 stop_file: str | None, mirror: str | None = None,
                 max_turns: int | None = None, pause: float = 0.0) -> dict:
    """An app invoking `threads` (`thread` or `thread=graph`) in a loop through PostgresSaver
    until `seconds` pass or `stop_file` appears (harness.live_loop): every exception and every
    lost message is an error; with `mirror` every checkpoint and write it makes also goes into
    that SQLite file."""
    with PostgresSaver.from_conn_string(url) as saver:
        saver.serde = SERDE
        return harness.live_loop(saver, graph_name, threads, seconds, stop_file, mirror,
                                 max_turns, pause)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("check-rewrite")
    c.add_argument("--original", required=True)
    c.add_argument("--rewritten", required=True)
    c.add_argument("--thread", required=True)
    c.add_argument("--graph")
    c.add_argument("--expect", required=True, help="inline JSON or a file")
    for name in ("state", "continue"):
        p = sub.add_parser(name)
        p.add_argument("--url", required=True)
        p.add_argument("--thread", required=True)
        p.add_argument("--graph")
    ds = sub.add_parser("delta-states")
    ds.add_argument("--url", required=True)
    ds.add_argument("--graphs", default="",
                    help="THREAD=GRAPH,...: graphs of threads not named after theirs "
                         "(default: delta:THREAD)")
    hi = sub.add_parser("history")
    hi.add_argument("--url", required=True)
    hi.add_argument("--thread", required=True)
    hi.add_argument("--graph")
    hi.add_argument("--at")
    ca = sub.add_parser("check-all")
    ca.add_argument("--url", required=True)
    ca.add_argument("--expected", required=True)
    lf = sub.add_parser("load-forget")
    lf.add_argument("--url", required=True)
    su = sub.add_parser("setup")
    su.add_argument("--url", required=True)
    su.add_argument("--upto", type=int)
    su.add_argument("--store", action="store_true")
    ft = sub.add_parser("find-text")
    ft.add_argument("--url", required=True)
    ft.add_argument("--text", required=True)
    p = sub.add_parser("prune")
    p.add_argument("--url", required=True)
    p.add_argument("--threads", required=True)
    p = sub.add_parser("delete-threads")
    p.add_argument("--url", required=True)
    p.add_argument("--threads", required=True)
    p = sub.add_parser("load-scenario")
    p.add_argument("--url", required=True)
    p.add_argument("--graph", required=True)
    h = sub.add_parser("held-app")
    h.add_argument("--url", required=True)
    h.add_argument("--graph", default="1")
    h.add_argument("--thread", required=True)
    h.add_argument("--hold-file", required=True)
    h.add_argument("--go-file", required=True)
    la = sub.add_parser("live-app")
    la.add_argument("--url", required=True)
    la.add_argument("--graph", default="1")
    la.add_argument("--threads", required=True)
    la.add_argument("--seconds", type=float, default=10.0)
    la.add_argument("--stop-file")
    la.add_argument("--mirror", help="also write every checkpoint and write into this SQLite file")
    la.add_argument("--max-turns", type=int, default=None,
                    help="stop invoking after this many turns (then wait for the stop)")
    la.add_argument("--pause", type=float, default=0.0, help="seconds between turns")
    a = ap.parse_args(argv)
    try:
        if a.cmd == "check-rewrite":
            src = a.expect.strip()
            expect = json.loads(src) if src.startswith("{") else json.loads(Path(src).read_text())
            rep = check_rewrite(a.original, a.rewritten, a.thread, expect, a.graph or a.thread)
            print(json.dumps(jsonable(rep), ensure_ascii=False, indent=1))
            for f in rep["failures"]:
                print(f"FAIL {f}".replace("\n", " | "), file=sys.stderr)
            return 0 if rep["passed"] else 1
        if a.cmd == "state":
            rep = cmd_state(a.url, a.thread, a.graph or a.thread)
        elif a.cmd == "continue":
            rep = cmd_continue(a.url, a.thread, a.graph or a.thread)
        elif a.cmd == "delta-states":
            rep = cmd_delta_states(a.url, dict(t.split("=", 1) for t in a.graphs.split(",") if t))
        elif a.cmd == "history":
            rep = cmd_history(a.url, a.thread, a.graph or a.thread, a.at)
        elif a.cmd == "check-all":
            rep = cmd_check_all(a.url, a.expected)
        elif a.cmd == "load-forget":
            rep = cmd_load_forget(a.url)
        elif a.cmd == "setup":
            rep = cmd_setup(a.url, a.upto, a.store)
        elif a.cmd == "find-text":
            rep = cmd_find_text(a.url, a.text)
        elif a.cmd == "prune":
            rep = cmd_prune(a.url, a.threads.split(","))
        elif a.cmd == "delete-threads":
            rep = cmd_delete_threads(a.url, a.threads.split(","))
        elif a.cmd == "load-scenario":
            rep = cmd_load_scenario(a.url, a.graph)
        elif a.cmd == "held-app":
            rep = cmd_held_app(a.url, a.graph, a.thread, a.hold_file, a.go_file)
        else:
            rep = cmd_live_app(a.url, a.graph, a.threads.split(","), a.seconds, a.stop_file,
                               a.mirror, a.max_turns, a.pause)
    except Exception as e:
        print(json.dumps({"error": f"{type(e).__name__}: {e}"}))
        print(f"FAIL {a.cmd}: {type(e).__name__}: {e}", file=sys.stderr)
        traceback.print_exc(file=sys.stderr)
        return 1
    print(json.dumps(jsonable(rep), ensure_ascii=False, indent=1))
    for err in rep.get("errors", []):
        print(f"FAIL {a.cmd}: {err}", file=sys.stderr)
    return 1 if rep.get("errors") else 0


if __name__ == "__main__":
    harness.ensure_hashseed_0(os.path.abspath(__file__))
    sys.exit(main())
