#!/usr/bin/env python
"""Interop harness for Redis databases written by langgraph-checkpoint-redis (venv .venv/redis):
loads a committed key dump into a server, and prints what real RedisSaver / ShallowRedisSaver /
RedisStore read back, so memctl's tests can judge a Redis database by LangGraph's own reading.

    harness_redis.py load --url URL --dump FILE [--dump FILE ...]
        runs RedisSaver.setup() (when the dump holds checkpoint keys) and RedisStore.setup()
        (when it holds store keys) to make the search indexes, then writes every key of the
        dump exactly (JSON documents with JSON.SET of the stored text, strings, zsets, sets,
        hashes, lists) and gives it its TTL (`"ttl": seconds`: EXPIRE; null: none).
    harness_redis.py dump --url URL --out FILE [--prefix P ...]
        every key of db URL (SCAN, never KEYS) as the dump format below, sorted by key.
    harness_redis.py expected --url URL --kind saver|shallow|store
        per thread, what RedisSaver (or ShallowRedisSaver) shows: get_state of the root and of
        every subgraph namespace, the checkpoint chain (get_state at each checkpoint, walking
        parent_config from the latest through get_tuple), what list() and
        get_state_history() return as they are (the library mixes namespaces there); for the
        Store, what RedisStore list_namespaces / search / get return beside the items as stored.
        The reading savers and store have no TTL config: nothing read refreshes a TTL.
    harness_redis.py continue --url URL --thread T [--graph G] [--shallow] [--ttl MINUTES]
        the app invokes one more turn on T with the unscripted fake model (a paused thread is
        resumed first); exit 1 when the turn is missing from get_state afterwards.
    harness_redis.py check --url URL --kind saver|shallow|store --expected FILE [--threads A,B]
            [--continue]
        `expected` against a committed file (its notes and generator aside): every difference
        is a FAIL line, exit 1; with --continue every checked thread then takes one more turn.
    harness_redis.py flush --url URL
        FLUSHDB and FT.DROPINDEX of every search index: an empty server again.

Dump format (one JSON object a line, sorted by the key's bytes):
    {"key": "...", "type": "ReJSON-RL", "value": <the document>, "raw": "<JSON.GET text>", "ttl": null}
    {"key": "...", "type": "string", "value": "...", "ttl": 86400}
    {"key": "...", "type": "zset", "value": [[member, score], ...], "ttl": null}   (ZRANGE order)
    {"key": "...", "type": "set" | "list" | "hash", "value": [...] | {...}, "ttl": null}
Key names, members and string values that are not UTF-8 are {"hex": "..."} instead.
`raw` is what JSON.GET returned (RedisJSON's own text: the loader writes it back verbatim, so
numbers keep their exact spelling); `value` is the same document parsed, for people and tests.
`ttl` is the TTL the key was given (seconds, as the saver's / store's EXPIRE set it), not what
was left of it when dumped: see snap_ttl.

Run as a script, the harness re-executes itself with PYTHONHASHSEED=0 (as harness.py does).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import traceback
from pathlib import Path
from typing import Any, Iterable

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness  # noqa: E402  (also puts fixtures/ on sys.path)
from harness import NEXT_ID, NEXT_TEXT, dumps, graphs, jsonable  # noqa: E402
import redis  # noqa: E402
from langchain_core.messages import BaseMessage, HumanMessage  # noqa: E402

# TTLs the generator configures (seconds): a dump records the one a key was given.
# RedisSaver(ttl={"default_ttl": 1440}) -> 86400; RedisStore.put(ttl=60) -> 3600.
KNOWN_TTLS = (3600, 86400)
# Threads whose graph is not named after them (graphs.build name), and the TTL (minutes) their
# app configured; every other thread runs the graph of its own name with no TTL.
THREAD_GRAPHS = {
    "delta": "delta",
    "ttl-chat": "1",
    "ttl-interrupt": "interrupt",
    "odd:id ü/1": "1",
}
THREAD_TTL = {"ttl-chat": 1440, "ttl-interrupt": 1440}


def graph_of(thread: str) -> str:
    return THREAD_GRAPHS.get(thread, thread)


def client(url: str) -> redis.Redis:
    return redis.Redis.from_url(url)


# ------------------------------------------------------------------------------------------
# dump / load
# ------------------------------------------------------------------------------------------


def _text(b: bytes) -> Any:
    try:
        return b.decode("utf-8")
    except UnicodeDecodeError:
        return {"hex": b.hex()}


def _bytes(v: Any) -> bytes:
    return bytes.fromhex(v["hex"]) if isinstance(v, dict) else v.encode("utf-8")


def snap_ttl(pttl_ms: int) -> int | None:
    """The TTL a key was given, from what is left of it: the smallest of KNOWN_TTLS at least
    the remaining seconds, when at most 10 minutes have passed since (the generator dumps
    right after writing). -1 (no TTL) is None. Anything else is an error: a dump must not
    record a TTL that would mean something else when loaded."""
    if pttl_ms == -1:
        return None
    if pttl_ms < 0:
        raise RuntimeError(f"PTTL {pttl_ms}: the key vanished while dumping")
    left = math.ceil(pttl_ms / 1000)
    for t in KNOWN_TTLS:
        if left <= t and t - left <= 600:
            return t
    raise RuntimeError(f"a TTL of {left}s left matches none of {KNOWN_TTLS}")


def dump_keys(url: str, prefixes: Iterable[str] = ()) -> list[dict]:
    """Every key of the database (SCAN), as dump lines sorted by the key's bytes."""
    r = client(url)
    keys = sorted(set(r.scan_iter(count=1000)))
    if prefixes:
        keys = [k for k in keys if any(k.startswith(p.encode()) for p in prefixes)]
    out = []
    for k in keys:
        typ = r.type(k).decode()
        line: dict[str, Any] = {"key": _text(k), "type": typ}
        if typ == "ReJSON-RL":
            raw = r.execute_command("JSON.GET", k)
            line["value"] = json.loads(raw)
            line["raw"] = raw.decode("utf-8")
        elif typ == "string":
            line["value"] = _text(r.get(k))
        elif typ == "zset":
            line["value"] = [[_text(m), s] for m, s in r.zrange(k, 0, -1, withscores=True)]
        elif typ == "set":
            line["value"] = sorted((_text(m) for m in r.smembers(k)), key=repr)
        elif typ == "list":
            line["value"] = [_text(m) for m in r.lrange(k, 0, -1)]
        elif typ == "hash":
            line["value"] = {_text(f): _text(v) for f, v in sorted(r.hgetall(k).items())}
        else:
            raise RuntimeError(f"key {k!r}: type {typ} is not dumped")
        line["ttl"] = snap_ttl(r.pttl(k))
        out.append(line)
    return out


def write_dump(lines: list[dict], path: Path) -> None:
    path.write_text("".join(json.dumps(l, ensure_ascii=False, sort_keys=True) + "\n" for l in lines))


def read_dump(path: str | Path) -> list[dict]:
    return [json.loads(l) for l in Path(path).read_text().splitlines() if l.strip()]


def setup_indexes(url: str, lines: list[dict]) -> list[str]:
    """The library's own setup() for what the dump holds (RedisSaver's and
    ShallowRedisSaver's indexes are the same two: checkpoint, checkpoint_write)."""
    made = []
    names = [l["key"] for l in lines if isinstance(l["key"], str)]
    if any(n.startswith(("checkpoint:", "checkpoint_write:")) for n in names):
        from langgraph.checkpoint.redis import RedisSaver

        with RedisSaver.from_conn_string(url) as s:
            s.setup()
        made += ["checkpoint", "checkpoint_write"]
    if any(n.startswith("store:") for n in names):
        from langgraph.store.redis import RedisStore

        with RedisStore.from_conn_string(url) as st:
            st.setup()
        made.append("store")
    return made


def load_dump(url: str, lines: list[dict]) -> dict:
    """setup() of the indexes, then every key exactly as dumped, with its TTL."""
    made = setup_indexes(url, lines)
    r = client(url)
    pipe = r.pipeline(transaction=False)
    for n, l in enumerate(lines, 1):
        k = _bytes(l["key"])
        typ, v = l["type"], l["value"]
        pipe.delete(k)
        if typ == "ReJSON-RL":
            pipe.execute_command("JSON.SET", k, "$", l["raw"])
        elif typ == "string":
            pipe.set(k, _bytes(v))
        elif typ == "zset":
            pipe.zadd(k, {_bytes(m): s for m, s in v})
        elif typ == "set":
            pipe.sadd(k, *[_bytes(m) for m in v])
        elif typ == "list":
            pipe.rpush(k, *[_bytes(m) for m in v])
        elif typ == "hash":
            pipe.hset(k, mapping={_bytes(f): _bytes(x) for f, x in v.items()})
        else:
            raise RuntimeError(f"unknown type {typ} for {l['key']!r}")
        if l.get("ttl") is not None:
            pipe.expire(k, int(l["ttl"]))
        if n % 500 == 0:
            pipe.execute()
    pipe.execute()
    return {"keys": len(lines), "indexes": made}


def flush(url: str) -> None:
    r = client(url)
    for name in r.execute_command("FT._LIST"):
        r.execute_command("FT.DROPINDEX", name)
    r.flushdb()


# ------------------------------------------------------------------------------------------
# what the library reads
# ------------------------------------------------------------------------------------------


def _messages(values: dict) -> list:
    """model_dump() of the messages; entries that are not messages (list() returns channel
    values unrevived) as they are."""
    return [m.model_dump() if isinstance(m, BaseMessage) else jsonable(m)
            for m in values.get("messages", []) or []]


def _checkpoint_docs(r: redis.Redis, shallow: bool) -> list[dict]:
    """thread_id / checkpoint_ns / checkpoint_id of every checkpoint document (read from the
    documents' fields, never split from key names: thread ids may hold ':')."""
    out = []
    for k in r.scan_iter(match=b"checkpoint:*", count=1000):
        doc = r.json().get(k, "$.thread_id", "$.checkpoint_ns", "$.checkpoint_id")
        out.append({"thread_id": doc["$.thread_id"][0], "checkpoint_ns": doc["$.checkpoint_ns"][0],
                    "checkpoint_id": doc["$.checkpoint_id"][0]})
    return out


def _ns(safe: str) -> str:
    return "" if safe == "__empty__" else safe


def thread_state(saver, thread: str, namespaces: list[str], shallow: bool) -> dict:
    graph, _model = graphs.build(graph_of(thread), saver)
    cfg = graphs.config(thread)
    latest = graph.get_state(cfg)
    rec: dict[str, Any] = {
        "graph": graph_of(thread),
        "ttl_minutes": THREAD_TTL.get(thread),
        "latest": harness.snapshot_record(graph, latest),
    }
    # The chain LangGraph's get_tuple gives: from the latest, parent by parent.
    chain = []
    tup = saver.get_tuple(cfg)
    while tup is not None:
        snap = graph.get_state(tup.config)
        chain.append(harness.snapshot_record(graph, snap))
        if tup.parent_config is None:
            break
        tup = saver.get_tuple(tup.parent_config)
    rec["chain"] = chain
    # What list() and get_state_history() return, as they are.
    rec["list"] = [{"checkpoint_ns": t.config["configurable"]["checkpoint_ns"],
                    "checkpoint_id": t.config["configurable"]["checkpoint_id"],
                    "parent_checkpoint_id": (t.parent_config or {}).get("configurable", {}).get("checkpoint_id"),
                    "step": (t.metadata or {}).get("step"),
                    "pending_writes": len(t.pending_writes or [])}
                   for t in saver.list(cfg)]
    hist = []
    for snap in graph.get_state_history(cfg):
        conf = snap.config["configurable"]
        hist.append({"checkpoint_ns": conf.get("checkpoint_ns"), "checkpoint_id": conf["checkpoint_id"],
                     "step": (snap.metadata or {}).get("step"), "next": list(snap.next),
                     "message_types": sorted({type(m).__name__ for m in snap.values.get("messages", []) or []})})
    rec["get_state_history"] = hist
    subs = {}
    for ns in namespaces:
        ncfg = graphs.config(thread, checkpoint_ns=ns)
        tup = saver.get_tuple(ncfg)
        sub_chain = []
        while tup is not None:
            sub_chain.append({
                "checkpoint_id": tup.config["configurable"]["checkpoint_id"],
                "parent_checkpoint_id": (tup.parent_config or {}).get("configurable", {}).get("checkpoint_id"),
                "step": (tup.metadata or {}).get("step"),
                "messages": _messages(tup.checkpoint["channel_values"]),
                "values": jsonable({k: v for k, v in tup.checkpoint["channel_values"].items() if k != "messages"}),
                "pending_writes": [[t, c, jsonable(v)] for t, c, v in tup.pending_writes or []],
            })
            if tup.parent_config is None:
                break
            tup = saver.get_tuple(tup.parent_config)
        subs[ns] = sub_chain
    rec["namespaces"] = subs
    return rec


def expected_savers(url: str, shallow: bool) -> dict:
    """Per thread (sorted), what the saver shows; see thread_state."""
    r = client(url)
    docs = _checkpoint_docs(r, shallow)
    threads: dict[str, set] = {}
    for d in docs:
        threads.setdefault(d["thread_id"], set()).add(_ns(d["checkpoint_ns"]))
    if shallow:
        from langgraph.checkpoint.redis import ShallowRedisSaver as Saver
    else:
        from langgraph.checkpoint.redis import RedisSaver as Saver
    out: dict[str, Any] = {"saver": Saver.__name__, "threads": {}}
    with Saver.from_conn_string(url) as saver:
        saver.setup()  # as the app does; creates nothing that exists (overwrite=False)
        for t in sorted(threads):
            out["threads"][t] = thread_state(saver, t, sorted(n for n in threads[t] if n), shallow)
    out["checkpoint_documents"] = len(docs)
    return out


def expected_store(url: str) -> dict:
    """The items as stored (every store:* document decoded as RedisStore decodes it), and
    what RedisStore list_namespaces / search / get return."""
    from langgraph.store.redis import RedisStore
    from langgraph.store.redis.base import _decode_ns

    r = client(url)
    out: dict[str, Any] = {}
    with RedisStore.from_conn_string(url) as store:
        store.setup()
        stored = []
        for k in sorted(r.scan_iter(match=b"store:*", count=1000)):
            doc = r.json().get(k)
            stored.append({"redis_key": k.decode(), "namespace": list(_decode_ns(doc["prefix"])),
                           "prefix": doc["prefix"], "key": doc["key"],
                           "value": jsonable(store._deserialize_value(doc.get("value"))),
                           "created_at": doc["created_at"], "updated_at": doc["updated_at"],
                           "ttl": snap_ttl(r.pttl(k))})
        stored.sort(key=lambda i: (i["namespace"], i["key"]))
        out["items"] = stored
        out["list_namespaces"] = [list(ns) for ns in store.list_namespaces(limit=1000)]
        # every namespace and every proper prefix of one ("users" of users.u-42.memories)
        namespaces = sorted({tuple(i["namespace"][:n]) for i in stored
                             for n in range(1, len(i["namespace"]) + 1)})
        out["search"] = {}
        for ns in namespaces:
            found = store.search(ns, limit=1000)
            out["search"][".".join(ns)] = sorted(
                [{"namespace": list(i.namespace), "key": i.key, "value": jsonable(i.value)} for i in found],
                key=lambda i: (i["namespace"], i["key"]))
        out["search_all"] = sorted([[list(i.namespace), i.key] for i in store.search((), limit=1000)])
        out["get"] = []
        for i in stored:
            got = store.get(tuple(i["namespace"]), i["key"])
            out["get"].append({"namespace": i["namespace"], "key": i["key"], "found": got is not None,
                               "value_equal": got is not None and jsonable(got.value) == i["value"]})
    return out


def expected(url: str, kind: str) -> dict:
    if kind == "store":
        return expected_store(url)
    return expected_savers(url, kind == "shallow")


def differences(got: Any, want: Any, path: str = "") -> list[str]:
    """Paths where two JSON values differ (at most a few per subtree)."""
    if isinstance(got, dict) and isinstance(want, dict):
        out = []
        for k in sorted(set(got) | set(want), key=str):
            if k not in got:
                out.append(f"{path}/{k}: missing")
            elif k not in want:
                out.append(f"{path}/{k}: not expected")
            else:
                out += differences(got[k], want[k], f"{path}/{k}")
        return out
    if isinstance(got, list) and isinstance(want, list) and len(got) == len(want):
        out = []
        for i, (g, w) in enumerate(zip(got, want)):
            out += differences(g, w, f"{path}[{i}]")
        return out
    if got != want:
        g, w = json.dumps(got, ensure_ascii=False), json.dumps(want, ensure_ascii=False)
        return [f"{path}: {g[:200]} != expected {w[:200]}"]
    return []


def cmd_check(url: str, kind: str, expected_path: str, threads: list[str] | None,
              carry_on: bool) -> dict:
    """What the library reads from URL against an expected file (fixtures/expected/redis*.json,
    its `notes` and `generator` aside); with `threads`, only those threads (saver kinds).
    With `carry_on`, every checked thread then takes one more turn (cmd_continue)."""
    want = json.loads(Path(expected_path).read_text())
    want.pop("notes", None)
    want.pop("generator", None)
    got = expected(url, kind)
    if threads is not None and kind != "store":
        want = {"threads": {t: want["threads"].get(t) for t in threads}}
        got = {"threads": {t: got["threads"].get(t) for t in threads}}
    errors = differences(got, want)
    continued = []
    if carry_on and kind != "store" and not errors:
        for t in sorted(got["threads"]):
            r = cmd_continue(url, t, graph_of(t), kind == "shallow", THREAD_TTL.get(t))
            errors += [f"{t}: {e}" for e in r["errors"]]
            continued.append(t)
    return {"kind": kind, "differences": len(errors), "continued": continued, "errors": errors[:50]}


def cmd_continue(url: str, thread: str, graph_name: str, shallow: bool, ttl: float | None) -> dict:
    if shallow:
        from langgraph.checkpoint.redis import ShallowRedisSaver as Saver
    else:
        from langgraph.checkpoint.redis import RedisSaver as Saver
    ttl_cfg = {"default_ttl": ttl} if ttl is not None else None
    with Saver.from_conn_string(url, ttl=ttl_cfg) as saver:
        saver.setup()
        graph, model = graphs.build(graph_name, saver)
        cfg = graphs.config(thread)
        before = graph.get_state(cfg)
        errors = []
        if tuple(before.next):
            from langgraph.types import Command
            graph.invoke(Command(resume="approved"), cfg)
        graph.invoke({"messages": [HumanMessage(NEXT_TEXT, id=NEXT_ID)]}, cfg)
        after = graph.get_state(cfg)
        msgs = after.values.get("messages", [])
        if NEXT_ID not in [m.id for m in msgs]:
            errors.append(f"the next turn is not in the state: {[m.id for m in msgs]}")
        return {"thread": thread, "messages_before": len(before.values.get("messages", [])),
                "messages_after": len(msgs), "model_received": [dumps(c) for c in model.calls],
                "errors": errors}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("load")
    p.add_argument("--url", required=True)
    p.add_argument("--dump", required=True, action="append")
    p = sub.add_parser("dump")
    p.add_argument("--url", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--prefix", action="append", default=[])
    p = sub.add_parser("expected")
    p.add_argument("--url", required=True)
    p.add_argument("--kind", choices=["saver", "shallow", "store"], required=True)
    p = sub.add_parser("continue")
    p.add_argument("--url", required=True)
    p.add_argument("--thread", required=True)
    p.add_argument("--graph")
    p.add_argument("--shallow", action="store_true")
    p.add_argument("--ttl", type=float, help="the app's default_ttl (minutes)")
    p = sub.add_parser("check")
    p.add_argument("--url", required=True)
    p.add_argument("--kind", choices=["saver", "shallow", "store"], required=True)
    p.add_argument("--expected", required=True, help="fixtures/expected/redis*.json")
    p.add_argument("--threads", help="A,B: only these threads (saver kinds)")
    p.add_argument("--continue", dest="carry_on", action="store_true",
                   help="then one more turn on every checked thread")
    p = sub.add_parser("flush")
    p.add_argument("--url", required=True)
    a = ap.parse_args(argv)
    try:
        if a.cmd == "load":
            rep = {"loaded": [load_dump(a.url, read_dump(d)) for d in a.dump]}
        elif a.cmd == "dump":
            lines = dump_keys(a.url, a.prefix)
            write_dump(lines, Path(a.out))
            rep = {"keys": len(lines)}
        elif a.cmd == "expected":
            rep = expected(a.url, a.kind)
        elif a.cmd == "check":
            rep = cmd_check(a.url, a.kind, a.expected,
                            a.threads.split(",") if a.threads else None, a.carry_on)
        elif a.cmd == "continue":
            ttl = a.ttl if a.ttl is not None else THREAD_TTL.get(a.thread)
            rep = cmd_continue(a.url, a.thread, a.graph or graph_of(a.thread), a.shallow, ttl)
        else:
            flush(a.url)
            rep = {"flushed": True}
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
