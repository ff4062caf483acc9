"""The Python baselines that memctl is measured against (one task per invocation).

    python benches/pybench.py TASK DB [--out RESULT.json]

Tasks (each is what a person does today with LangGraph / LangChain, or an SQL floor):

  walk            SqliteSaver.list(None) over every checkpoint, grouped per thread
                  (count, latest checkpoint id, step, ts)
  floor-decode    SQL floor (GROUP BY thread_id) + fetch each thread's latest root checkpoint blob
                  and ormsgpack.unpackb it with ext types passed through (not decoded)
  floor-decode-deep  the same, but ext payloads are unpacked recursively (closer to what memctl
                  must do to count messages)
  sql-floor       the SQL floor alone through Python's sqlite3 module (used when the sqlite3
                  shell is absent)
  tokens-approx   saver.get_tuple per thread + count_tokens_approximately(messages)
  tokens-o200k    saver.get_tuple per thread + ChatOpenAI(model="gpt-4o").get_num_tokens_from_messages
  tokens-tiktoken saver.get_tuple per thread + tiktoken o200k_base .encode() of each message's text
                  (plain BPE over the texts, no chat framing: a lower bound, not comparable 1:1)
  trim            graph.get_state + trim_messages(strategy="last", start_on="human",
                  include_system=True, token_counter=len, max_tokens=4) + graph.update_state(
                  cfg, {"messages": [RemoveMessage(REMOVE_ALL_MESSAGES), *kept]}) per thread
                  (threads whose messages are unchanged by the trim are not updated, as memctl does)
  latest-ids      (check, not timed) each thread's latest-state message ids

The per-thread results go to --out as JSON; stderr gets one line {"task", "seconds"} where
seconds is the in-process time after imports (the harness also times the whole process).
"""

from __future__ import annotations

import argparse
import glob
import hashlib
import json
import os
import shutil
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
TIKTOKEN_URLS = {
    "o200k_base": "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
    "cl100k_base": "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
}


def setup_tiktoken_cache() -> None:
    """Offline tiktoken: the BPE files fixtures/generate.py finds (rebuilt from the token lists
    in data/tiktoken/, or $MEMCTL_TIKTOKEN_DIR), loaded from that file without its imports."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("_bpe", HERE.parent / "fixtures" / "bpe_files.py")
    bpe = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bpe)
    files = bpe.find_bpe_files(TIKTOKEN_URLS)
    if files is None:
        sys.exit("pybench: tiktoken BPE files not found (data/tiktoken/, or set MEMCTL_TIKTOKEN_DIR)")
    cache = Path(tempfile.mkdtemp(prefix="memctl-bench-tiktoken-"))
    for n, url in TIKTOKEN_URLS.items():
        bpe.copy_bpe(files[n], cache / hashlib.sha1(url.encode()).hexdigest())
    os.environ["TIKTOKEN_CACHE_DIR"] = str(cache)


def root_cfg(t: str) -> dict:
    return {"configurable": {"thread_id": t, "checkpoint_ns": ""}}


def thread_ids(conn) -> list[str]:
    return [r[0] for r in conn.execute("SELECT DISTINCT thread_id FROM checkpoints WHERE checkpoint_ns = ''")]


def saver_for(db: str):
    from langgraph.checkpoint.sqlite import SqliteSaver

    conn = sqlite3.connect(db, check_same_thread=False)
    return conn, SqliteSaver(conn)


SQL_FLOOR = ("SELECT thread_id, COUNT(*), MAX(checkpoint_id) FROM checkpoints "
             "GROUP BY thread_id")
SQL_LATEST = ("SELECT c.thread_id, c.type, c.checkpoint FROM checkpoints c JOIN "
              "(SELECT thread_id, MAX(checkpoint_id) AS m FROM checkpoints WHERE checkpoint_ns = '' "
              "GROUP BY thread_id) l ON c.thread_id = l.thread_id AND c.checkpoint_ns = '' "
              "AND c.checkpoint_id = l.m")


def task_walk(db):
    conn, saver = saver_for(db)
    t0 = time.perf_counter()
    threads: dict[str, dict] = {}
    for tup in saver.list(None):
        tid = tup.config["configurable"]["thread_id"]
        e = threads.setdefault(tid, {"checkpoints": 0, "latest": None, "step": None, "ts": None})
        e["checkpoints"] += 1
        cid = tup.checkpoint["id"]
        if e["latest"] is None or cid > e["latest"]:
            e["latest"] = cid
            e["ts"] = tup.checkpoint.get("ts")
            e["step"] = (tup.metadata or {}).get("step")
            e["messages"] = len(tup.checkpoint["channel_values"].get("messages", []))
    return time.perf_counter() - t0, threads


def task_sql_floor(db):
    t0 = time.perf_counter()
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    rows = conn.execute(SQL_FLOOR).fetchall()
    return time.perf_counter() - t0, {r[0]: {"checkpoints": r[1], "latest": r[2]} for r in rows}


def _floor_decode(db, deep: bool):
    import ormsgpack

    t0 = time.perf_counter()
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    out = {r[0]: {"checkpoints": r[1], "latest": r[2]} for r in conn.execute(SQL_FLOOR)}
    if deep:
        def hook(code, data):
            return (code, ormsgpack.unpackb(data, ext_hook=hook, option=ormsgpack.OPT_NON_STR_KEYS))
    else:
        def hook(code, data):
            return (code, data)
    for tid, typ, blob in conn.execute(SQL_LATEST):
        if typ != "msgpack":
            continue
        cp = ormsgpack.unpackb(blob, ext_hook=hook, option=ormsgpack.OPT_NON_STR_KEYS)
        out[tid]["messages"] = len(cp.get("channel_values", {}).get("messages", []))
    return time.perf_counter() - t0, out


def task_floor_decode(db):
    return _floor_decode(db, deep=False)


def task_floor_decode_deep(db):
    return _floor_decode(db, deep=True)


def _latest_messages(saver, conn):
    for t in thread_ids(conn):
        tup = saver.get_tuple(root_cfg(t))
        yield t, tup.checkpoint["channel_values"].get("messages", [])


def task_tokens_approx(db):
    from langchain_core.messages.utils import count_tokens_approximately

    conn, saver = saver_for(db)
    t0 = time.perf_counter()
    out = {t: count_tokens_approximately(m) for t, m in _latest_messages(saver, conn)}
    return time.perf_counter() - t0, out


def task_tokens_o200k(db):
    setup_tiktoken_cache()
    from langchain_openai import ChatOpenAI

    conn, saver = saver_for(db)
    t0 = time.perf_counter()  # includes loading the encoding (first call), as memctl's time does
    model = ChatOpenAI(model="gpt-4o", api_key="x")
    out = {t: model.get_num_tokens_from_messages(m) for t, m in _latest_messages(saver, conn)}
    return time.perf_counter() - t0, out


def task_tokens_tiktoken(db):
    setup_tiktoken_cache()
    import tiktoken

    conn, saver = saver_for(db)
    t0 = time.perf_counter()
    enc = tiktoken.get_encoding("o200k_base")
    out = {}
    for t, msgs in _latest_messages(saver, conn):
        n = 0
        for m in msgs:
            n += len(enc.encode(m.text if isinstance(m.text, str) else m.text(), disallowed_special=()))
        out[t] = n
    return time.perf_counter() - t0, out


def task_trim(db):
    from langchain_core.messages import RemoveMessage
    from langchain_core.messages.utils import trim_messages
    from langgraph.graph.message import REMOVE_ALL_MESSAGES

    sys.path.insert(0, str(HERE))
    import generate  # the same create_agent graph (fake model, same tools) that wrote the DB

    create_agent, BenchChatModel, tools, _, _ = generate.build_stack()
    conn, saver = saver_for(db)
    graph = create_agent(BenchChatModel(), tools=tools, checkpointer=saver)
    t0 = time.perf_counter()
    out = {}
    for t in thread_ids(conn):
        cfg = {"configurable": {"thread_id": t}}
        state = graph.get_state(cfg)
        if state.next:  # waiting on work: memctl skips these too
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
    return time.perf_counter() - t0, out


def task_latest_ids(db):
    conn, saver = saver_for(db)
    t0 = time.perf_counter()
    out = {t: [m.id for m in msgs] for t, msgs in _latest_messages(saver, conn)}
    return time.perf_counter() - t0, out


TASKS = {
    "walk": task_walk, "sql-floor": task_sql_floor, "floor-decode": task_floor_decode,
    "floor-decode-deep": task_floor_decode_deep, "tokens-approx": task_tokens_approx,
    "tokens-o200k": task_tokens_o200k, "tokens-tiktoken": task_tokens_tiktoken,
    "trim": task_trim, "latest-ids": task_latest_ids,
}


def main() -> None:
    ap = argparse.ArgumentParser(description="memctl benchmark baselines")
    ap.add_argument("task", choices=sorted(TASKS))
    ap.add_argument("db")
    ap.add_argument("--out", type=Path)
    a = ap.parse_args()
    secs, result = TASKS[a.task](a.db)
    if a.out:
        a.out.write_text(json.dumps(result, ensure_ascii=False, default=str))
    print(json.dumps({"task": a.task, "seconds": secs}), file=sys.stderr)


if __name__ == "__main__":
    main()
