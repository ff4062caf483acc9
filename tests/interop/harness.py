#!/usr/bin/env python
"""Interop harness: proves with real LangGraph that a memctl-rewritten SqliteSaver DB is
indistinguishable from one where LangGraph itself ran

    graph.update_state(cfg, {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), *new_list]},
                       as_node=<inferred>)

Runs under either pinned venv (.venv/new or .venv/old). Imports fixtures/graphs.py from the
repo root (found from __file__).

    harness.py check-rewrite --original ORIG.sqlite --rewritten NEW.sqlite --thread T --expect EXPECT.json
    harness.py continue --db PATH --thread T [--copy]
    harness.py delta-states --db DELTA.sqlite
    harness.py rows --db PATH            (every row decoded, as JSON: encrypted databases)
    harness.py find-text --db PATH --text T   (decrypted values and raw bytes holding T)
    harness.py plain-check --db PATH --thread T [--channels messages,files]
                                        (what only a DeltaChannel graph reads: --materialize;
                                        on a copy)

A graph name `plain:NAME` is graph NAME with its DeltaChannels made plain reducer channels
(`plain_channels`).

Encrypted databases: with LANGGRAPH_AES_KEY set, every saver the harness makes uses
EncryptedSerializer.from_pycryptodome_aes() as an app does (it reads plain rows too); raw
comparisons then compare decrypted bytes. With MEMCTL_INTEROP_OLD_AES_KEY also set, the
live app uses the two-key cipher of docs/encryption.md's rekey section (encrypts with the new key,
decrypts with either).

check-rewrite prints a JSON report on stdout; exit 0 when every check passes, 1 otherwise (one
line per failure on stderr). ORIG and NEW are never opened by LangGraph: the harness reads their
raw rows with sqlite3 and works on temporary copies (sqlite backup API, so WAL content counts).

EXPECT.json may add "values": {channel: value} — channels the rewrite also sets (e.g. a
summary kept in state); they are expected in get_state and passed to the reference update.
EXPECT.json: {"mode": "trim", "max_tokens": N, "counter": "len"|"approximate", "keep_first": bool}
| {"mode": "ids", "ids": [...]} | {"mode": "messages", "messages": [{"id": ...} | model_dump()]}.
Optional "expect_write": true. Without it, when the expected list equals the current list and
NEW added no row for the thread (memctl's "unchanged"), the run is a no-op check: NEW must equal
ORIG row for row and checks 2-4 are skipped (report "noop": true). Optional "batch": true (NEW
came from a rewrite of many threads): other threads may have new rows; their old rows must not
change.

Run as a script, the harness re-executes itself with PYTHONHASHSEED=0 (as fixtures/generate.py
does): LangGraph re-serializes set/frozenset values in hash order, and only with seed 0 do the
reference's bytes match the fixture's (memctl keeps the original bytes).
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import datetime as _dt
import json
import os
import shutil
import sqlite3
import sys
import tempfile
import traceback
import uuid
from pathlib import Path
from typing import Any

import warnings

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "fixtures"))

import langchain_core._api.deprecation  # noqa: E402,F401  (installs its own filters first)

# The old checkpoint library warns on import about JsonPlusSerializer(allowed_objects=...).
warnings.filterwarnings("ignore", message=".*allowed_objects.*")

import graphs  # noqa: E402
import ormsgpack  # noqa: E402
from langchain_core.messages import (  # noqa: E402
    AIMessage,
    BaseMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.messages.utils import trim_messages  # noqa: E402
from langgraph.checkpoint.sqlite import SqliteSaver  # noqa: E402
from langgraph.graph.message import REMOVE_ALL_MESSAGES  # noqa: E402

NEXT_TEXT = "memctl interop: next question"
NEXT_ID = "interop-next"

# Metadata keys LangGraph (or the graph's bound config) adds by itself; any other key of the
# latest checkpoint's metadata came from the app's config and is passed back in `configurable`.
LANGGRAPH_METADATA_KEYS = {
    "source", "step", "parents", "run_id", "ls_integration", "counters_since_delta_snapshot",
    "writes", "thread_id", "checkpoint_id", "checkpoint_ns", "checkpoint_map", "thread_ts",
    "langgraph_step", "langgraph_node", "langgraph_triggers", "langgraph_path",
    "langgraph_checkpoint_ns", "langgraph_version", "langgraph_api_version", "langgraph_plan",
    "langgraph_host", "langgraph_api_url", "ls_provider", "ls_model_name", "ls_model_type",
    "ls_temperature", "ls_max_tokens", "ls_stop",
}

MESSAGE_CLASSES = {
    "human": HumanMessage, "ai": AIMessage, "system": SystemMessage, "tool": ToolMessage,
    "remove": RemoveMessage,
}


# ------------------------------------------------------------------------------------------
# small utilities
# ------------------------------------------------------------------------------------------


def jsonable(v: Any) -> Any:
    """Best-effort JSON view of a value for the report."""
    if isinstance(v, BaseMessage):
        return jsonable(v.model_dump())
    if isinstance(v, dict):
        return {str(k): jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [jsonable(x) for x in v]
    if isinstance(v, (str, int, float, bool)) or v is None:
        return v
    if isinstance(v, bytes):
        return {"__bytes_hex__": v.hex()}
    return {"__repr__": repr(v)}


def dumps(msgs) -> list[dict]:
    return [m.model_dump() for m in msgs]


def norm(v: Any) -> Any:
    """Make decoded values comparable with ==: messages become ("msg", model_dump())."""
    if isinstance(v, BaseMessage):
        return ("msg", v.model_dump())
    if isinstance(v, list):
        return ["list", *[norm(x) for x in v]]
    if isinstance(v, tuple):
        return ("tuple", *[norm(x) for x in v])
    if isinstance(v, dict):
        return {k: norm(x) for k, x in v.items()}
    return v


class RawExt:
    """An msgpack ext value kept as (code, payload bytes)."""

    __slots__ = ("code", "data")

    def __init__(self, code: int, data: bytes):
        self.code, self.data = code, data

    def __eq__(self, other):
        return isinstance(other, RawExt) and (self.code, self.data) == (other.code, other.data)

    def __repr__(self):
        return f"RawExt({self.code}, {self.data!r})"


def raw_unpack(blob: bytes) -> Any:
    return ormsgpack.unpackb(blob, ext_hook=RawExt, option=ormsgpack.OPT_NON_STR_KEYS)


def raw_pack(v: Any) -> bytes:
    def conv(x):
        if isinstance(x, RawExt):
            return ormsgpack.Ext(x.code, x.data)
        if isinstance(x, dict):
            return {k: conv(y) for k, y in x.items()}
        if isinstance(x, list):
            return [conv(y) for y in x]
        return x

    return ormsgpack.packb(conv(v), option=ormsgpack.OPT_NON_STR_KEYS)


def sqlite_copy(src: str | Path, dst: str | Path) -> None:
    """Copy a DB with the backup API (includes committed WAL content)."""
    s = sqlite3.connect(str(src))
    d = sqlite3.connect(str(dst))
    try:
        s.backup(d)
    finally:
        d.close()
        s.close()


def table_rows(path: str | Path, table: str) -> tuple[list[str], dict[tuple, dict]]:
    """All rows of `checkpoints` or `writes`, keyed by primary key, as {column: raw value}."""
    if not Path(path).is_file():
        raise FileNotFoundError(f"no such database: {path}")
    try:
        con = sqlite3.connect(f"file:{Path(path).resolve()}?mode=ro", uri=True)
        con.execute("SELECT 1 FROM sqlite_master").fetchall()
    except sqlite3.OperationalError:  # e.g. WAL without a writable -shm
        con = sqlite3.connect(str(path))
    try:
        cols = [r[1] for r in con.execute(f"PRAGMA table_info({table})")]
        if not cols:
            return [], {}
        rows = {}
        for r in con.execute(f"SELECT {', '.join(cols)} FROM {table}"):
            d = dict(zip(cols, r))
            if table == "checkpoints":
                key = (d["thread_id"], d["checkpoint_ns"], d["checkpoint_id"])
            else:
                key = (d["thread_id"], d["checkpoint_ns"], d["checkpoint_id"], d["task_id"], d["idx"])
            rows[key] = d
        return cols, rows
    finally:
        con.close()


def snapshot(path: str | Path) -> dict:
    cc, cps = table_rows(path, "checkpoints")
    wc, wrs = table_rows(path, "writes")
    return {"checkpoint_cols": cc, "checkpoints": cps, "write_cols": wc, "writes": wrs}


class RotatingAesCipher:
    """docs/encryption.md's cipher for an app during `memctl rekey`: encrypts with the new key,
    decrypts with the new key or else the old one (pycryptodome's AES-EAX, LangGraph's layout
    nonce || tag || ciphertext)."""

    def __init__(self, new_key: bytes, old_key: bytes):
        self.keys = [new_key, old_key]

    def encrypt(self, plaintext: bytes) -> tuple[str, bytes]:
        from Crypto.Cipher import AES

        cipher = AES.new(self.keys[0], AES.MODE_EAX)
        ciphertext, tag = cipher.encrypt_and_digest(plaintext)
        return "aes", cipher.nonce + tag + ciphertext

    def decrypt(self, ciphername: str, ciphertext: bytes) -> bytes:
        from Crypto.Cipher import AES

        assert ciphername == "aes", f"Unsupported cipher: {ciphername}"
        nonce, tag, body = ciphertext[:16], ciphertext[16:32], ciphertext[32:]
        for key in self.keys:
            try:
                return AES.new(key, AES.MODE_EAX, nonce=nonce).decrypt_and_verify(body, tag)
            except ValueError:
                continue
        raise ValueError("MAC check failed")


def make_serde():
    """The app's serializer: EncryptedSerializer when LANGGRAPH_AES_KEY is set (and the
    rotating two-key cipher when MEMCTL_INTEROP_OLD_AES_KEY is set too), else LangGraph's
    default."""
    if "LANGGRAPH_AES_KEY" not in os.environ:
        return None
    from langgraph.checkpoint.serde.encrypted import EncryptedSerializer

    old = os.environ.get("MEMCTL_INTEROP_OLD_AES_KEY")
    if old:
        return EncryptedSerializer(RotatingAesCipher(os.environ["LANGGRAPH_AES_KEY"].encode(),
                                                     old.encode()))
    return EncryptedSerializer.from_pycryptodome_aes()


def make_saver(con):
    serde = make_serde()
    return SqliteSaver(con) if serde is None else SqliteSaver(con, serde=serde)


def plain_bytes(serde, typ: str, blob: bytes) -> tuple[str, bytes]:
    """(inner type, bytes) of a stored value: decrypted with the serializer's cipher when its
    type says it is encrypted."""
    if typ and "+" in typ:
        inner, ciphername = typ.split("+", 1)
        return inner, serde.cipher.decrypt(ciphername, blob)
    return typ, blob


@contextlib.contextmanager
def open_graph(path: str | Path, name: str):
    con = sqlite3.connect(str(path), check_same_thread=False)
    try:
        saver = make_saver(con)
        graph, model = graphs.build(name, saver)
        yield graph, model, saver
    finally:
        con.close()


def is_uuid6(s: str) -> bool:
    try:
        return uuid.UUID(s).version == 6
    except (ValueError, AttributeError, TypeError):
        return False


def valid_version_fraction(frac: str) -> bool:
    """LangGraph writes f"{random.random():016}"."""
    try:
        x = float(frac)
    except ValueError:
        return False
    return 0.0 <= x < 1.0 and f"{x:016}" == frac


def valid_ts(ts: Any) -> bool:
    if not isinstance(ts, str) or not ts.endswith("+00:00"):
        return False
    try:
        d = _dt.datetime.fromisoformat(ts)
    except ValueError:
        return False
    return d.utcoffset() == _dt.timedelta(0)


# ------------------------------------------------------------------------------------------
# expected message list
# ------------------------------------------------------------------------------------------


def message_from_dump(d: dict) -> BaseMessage:
    cls = MESSAGE_CLASSES.get(d.get("type"))
    if cls is None:
        raise ValueError(f"unsupported message type in expect: {d.get('type')!r}")
    return cls.model_validate(d)


def expected_list(orig: list[BaseMessage], expect: dict) -> tuple[list[BaseMessage], dict]:
    """The message list memctl must have written, computed from the ORIGINAL state messages."""
    info: dict[str, Any] = {"mode": expect.get("mode")}
    mode = expect.get("mode")
    orig = [m.model_copy(deep=True) for m in orig]
    if mode == "trim":
        counter_name = expect.get("counter", "len")
        counter = {"len": len, "approximate": "approximate"}.get(counter_name)
        if counter is None:
            raise ValueError(f"unknown counter {counter_name!r}")
        res = trim_messages(
            orig, max_tokens=int(expect["max_tokens"]), token_counter=counter,
            strategy="last", start_on="human", include_system=True,
        )
        info["trim_ids"] = [m.id for m in res]
        lead = orig[0] if orig and isinstance(orig[0], SystemMessage) else None
        if not any(not isinstance(m, SystemMessage) for m in res):
            last_h = max((i for i, m in enumerate(orig) if isinstance(m, HumanMessage)), default=None)
            if last_h is not None:
                res = ([lead] if lead is not None else []) + orig[last_h:]
                info["fallback"] = "from last HumanMessage"
        if expect.get("keep_first"):
            first = next((m for m in orig if not isinstance(m, SystemMessage)), None)
            if isinstance(first, HumanMessage) and all(m.id != first.id for m in res):
                pos = 1 if res and lead is not None and res[0] is lead else 0
                res = res[:pos] + [first] + res[pos:]
                info["keep_first_added"] = first.id
        return [m.model_copy(deep=True) for m in res], info
    by_id = {m.id: m for m in orig}
    if mode == "ids":
        missing = [i for i in expect["ids"] if i not in by_id]
        if missing:
            raise ValueError(f"expect ids not in the original state: {missing}")
        return [by_id[i].model_copy(deep=True) for i in expect["ids"]], info
    if mode == "messages":
        out = []
        for item in expect["messages"]:
            if set(item) == {"id"}:
                if item["id"] not in by_id:
                    raise ValueError(f"expect id not in the original state: {item['id']!r}")
                out.append(by_id[item["id"]].model_copy(deep=True))
            else:
                m = message_from_dump(item)
                if m.model_dump() != item:
                    info.setdefault("new_message_dump_differs", []).append(item.get("id"))
                out.append(m)
        return out, info
    raise ValueError(f"unknown expect mode {mode!r}")


# ------------------------------------------------------------------------------------------
# LangGraph operations
# ------------------------------------------------------------------------------------------


def app_config_extras(metadata: dict) -> dict:
    return {
        k: v for k, v in (metadata or {}).items()
        if k not in LANGGRAPH_METADATA_KEYS and not k.startswith("__")
        and isinstance(v, (str, int, float, bool))
    }


def fallback_as_node(graph, versions_seen: dict) -> str | None:
    """Node that ran last according to versions_seen (highest version it had seen)."""
    best = None
    for node, seen in versions_seen.items():
        if node not in graph.nodes or node == "__start__" or not seen:
            continue
        top = max(str(v) for v in seen.values())
        if best is None or (top, node) > best:
            best = (top, node)
    return best[1] if best else None


def langgraph_update(graph, saver, cfg: dict, messages: list[BaseMessage],
                     other: dict | None = None) -> dict:
    """Run real update_state with REMOVE_ALL + messages (+ other channel values, after
    messages, as memctl writes them); as_node inferred, with fallback."""
    values = {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES),
                           *[m.model_copy(deep=True) for m in messages]], **(other or {})}
    info: dict[str, Any] = {"config": cfg}
    try:
        new_cfg = graph.update_state(cfg, copy.deepcopy(values), as_node=None)
        info["as_node"] = None
        info["as_node_source"] = "inferred by LangGraph"
    except Exception as e:  # ambiguity or a branch raising
        info["inference_error"] = f"{type(e).__name__}: {e}"
        tup = saver.get_tuple(cfg)
        node = fallback_as_node(graph, tup.checkpoint.get("versions_seen", {}) if tup else {})
        if node is None:
            raise
        new_cfg = graph.update_state(cfg, copy.deepcopy(values), as_node=node)
        info["as_node"] = node
        info["as_node_source"] = "fallback: last node in versions_seen"
    info["new_checkpoint_id"] = new_cfg["configurable"]["checkpoint_id"]
    return info


def infer_node_name(graph, versions_seen: dict) -> str | None:
    """What update_state(as_node=None) picks (for the report): LangGraph's own
    `_infer_as_node` when it exists (1.2), else the 1.1 inline logic re-stated."""
    f = getattr(graph, "_infer_as_node", None)
    if f is not None:
        try:
            return f(versions_seen)
        except Exception:
            return None
    if len(graph.nodes) == 1:
        return next(iter(graph.nodes))
    if not any(v for vv in versions_seen.values() for v in vv.values()):
        ic = graph.input_channels
        return ic if isinstance(ic, str) and ic in graph.nodes else None
    seen = sorted((v, n) for n, s in versions_seen.items() if n in graph.nodes for v in s.values())
    if len(seen) == 1 or (seen and seen[-1][0] != seen[-2][0]):
        return seen[-1][1]
    return None


def continue_thread(path: str | Path, name: str, cfg: dict) -> dict:
    with open_graph(path, name) as (graph, model, saver):
        before = graph.get_state(cfg)
        graph.invoke({"messages": [HumanMessage(NEXT_TEXT, id=NEXT_ID)]}, cfg)
        after = graph.get_state(cfg)
        return {
            "messages_before": before.values.get("messages", []) if before.values else [],
            "next_before": tuple(before.next),
            "tasks_before": tuple(before.tasks),
            "model_calls": [list(c) for c in model.calls],
            "messages_after": after.values.get("messages", []) if after.values else [],
            "next_after": tuple(after.next),
        }


# ------------------------------------------------------------------------------------------
# check-rewrite
# ------------------------------------------------------------------------------------------


class _Skip(Exception):
    pass


class Report:
    def __init__(self):
        self.failures: list[str] = []
        self.checks: dict[str, dict] = {}
        self.warnings: list[str] = []

    def check(self, group: str, name: str, ok: bool, detail: Any = None) -> bool:
        g = self.checks.setdefault(group, {})
        g[name] = {"ok": bool(ok)} if detail is None else {"ok": bool(ok), "detail": jsonable(detail)}
        if not ok:
            d = "" if detail is None else f": {json.dumps(jsonable(detail), ensure_ascii=False)[:400]}"
            self.failures.append(f"[{group}] {name}{d}")
        return bool(ok)


def _history_ids(graph, cfg) -> list[tuple[str, Any, Any]]:
    out = []
    for s in graph.get_state_history(cfg):
        out.append((s.config["configurable"]["checkpoint_id"], s.metadata.get("source"),
                    s.metadata.get("step"),
                    (s.parent_config or {}).get("configurable", {}).get("checkpoint_id")))
    return out


def _decode_checkpoint(serde, row: dict) -> tuple[dict, dict, Any]:
    cp = serde.loads_typed((row["type"], row["checkpoint"]))
    md = json.loads(row["metadata"]) if row["metadata"] is not None else None
    inner, data = plain_bytes(serde, row["type"], row["checkpoint"])
    raw = raw_unpack(data) if inner == "msgpack" else None
    return cp, md, raw


def compare_checkpoints(rep: Report, serde, new_row: dict, ref_row: dict, new_snap: dict,
                        thread: str, parent_versions: dict | None = None) -> None:
    G = "3_checkpoint"
    ncp, nmd, nraw = _decode_checkpoint(serde, new_row)
    rcp, rmd, rraw = _decode_checkpoint(serde, ref_row)
    rep.check(G, "type column", new_row["type"] == ref_row["type"],
              {"new": new_row["type"], "ref": ref_row["type"]})
    rep.check(G, "v", ncp.get("v") == rcp.get("v"), {"new": ncp.get("v"), "ref": rcp.get("v")})
    if nraw is not None and rraw is not None and list(nraw) != list(rraw):
        rep.warnings.append(f"checkpoint map key order differs: new {list(nraw)} ref {list(rraw)}")
    # channel_values
    ncv, rcv = ncp.get("channel_values", {}), rcp.get("channel_values", {})
    rep.check(G, "channel_values keys", sorted(ncv) == sorted(rcv),
              {"new": sorted(ncv), "ref": sorted(rcv)})
    nm, rm = ncv.get("messages"), rcv.get("messages")
    # A DeltaChannel leaves the list out (both None) or stores a _DeltaSnapshot of it.
    delta = "messages" not in ncv and "messages" not in rcv
    if type(nm).__name__ == "_DeltaSnapshot" and type(rm).__name__ == "_DeltaSnapshot":
        nm, rm = nm.value, rm.value
    same_list = isinstance(nm, list) and isinstance(rm, list) and dumps(nm) == dumps(rm)
    rep.check(G, "channel_values.messages (model_dump)", delta or same_list,
              None if (delta or same_list) else {"new": nm, "ref": rm})
    if nraw is not None and rraw is not None:
        nrm = nraw.get("channel_values", {}).get("messages")
        rrm = rraw.get("channel_values", {}).get("messages")
        rep.checks.setdefault(G, {})["channel_values.messages raw msgpack equal (info)"] = {
            "ok": True, "detail": nrm == rrm}
    for k in sorted(set(ncv) | set(rcv)):
        if k == "messages":
            continue
        a, b = ncv.get(k, "<missing>"), rcv.get(k, "<missing>")
        rep.check(G, f"channel_values.{k} decoded", norm(a) == norm(b),
                  None if norm(a) == norm(b) else {"new": a, "ref": b})
        if nraw is not None and rraw is not None:
            ra = nraw.get("channel_values", {}).get(k)
            rb = rraw.get("channel_values", {}).get(k)
            pa, pb = raw_pack(ra), raw_pack(rb)
            rep.check(G, f"channel_values.{k} msgpack bytes", pa == pb,
                      None if pa == pb else {"new": pa.hex(), "ref": pb.hex()})
    # channel_versions
    nv, rv = ncp.get("channel_versions", {}), rcp.get("channel_versions", {})
    rep.check(G, "channel_versions keys", sorted(nv) == sorted(rv),
              {"new": sorted(nv), "ref": sorted(rv)})
    pv = parent_versions or {}
    moved_n = sorted(k for k in nv if nv[k] != pv.get(k))
    moved_r = sorted(k for k in rv if rv[k] != pv.get(k))
    rep.check(G, "channels whose version moved", moved_n == moved_r,
              None if moved_n == moved_r else {"new": moved_n, "ref": moved_r})
    for k in sorted(set(nv) & set(rv)):
        if k == "messages":
            continue
        if k in moved_r and rv[k] != rv.get("messages"):
            # Bumped only to store a snapshot (create_checkpoint: get_next_version of its own
            # version): the integer part is LangGraph's, the fraction is random.random().
            (ai, _, af), (bi, _, bf) = str(nv[k]).partition("."), str(rv[k]).partition(".")
            ok = ai == bi and valid_version_fraction(af) and valid_version_fraction(bf)
            rep.check(G, f"channel_versions.{k} (bumped) integer part and fraction form", ok,
                      None if ok else {"new": nv[k], "ref": rv[k], "parent": pv.get(k)})
            continue
        if rv[k] == rv.get("messages"):
            # Written by the same update (e.g. a summary channel): LangGraph gives every channel
            # of one step the same new version, so NEW's must equal its own messages version.
            ok = nv[k] == nv.get("messages")
            rep.check(G, f"channel_versions.{k} == messages version (written together)", ok,
                      None if ok else {"new": nv[k], "new_messages": nv.get("messages")})
            continue
        rep.check(G, f"channel_versions.{k}", nv[k] == rv[k], None if nv[k] == rv[k]
                  else {"new": nv[k], "ref": rv[k]})
    a, b = nv.get("messages"), rv.get("messages")
    if isinstance(a, str) and isinstance(b, str):
        ai, _, af = a.partition(".")
        bi, _, bf = b.partition(".")
        rep.check(G, "channel_versions.messages integer part", ai == bi and len(ai) == 32,
                  {"new": a, "ref": b})
        rep.check(G, "channel_versions.messages fraction form", valid_version_fraction(af)
                  and valid_version_fraction(bf), {"new": a, "ref": b})
    else:
        rep.check(G, "channel_versions.messages", a == b and a is not None, {"new": a, "ref": b})
    rep.check(G, "versions_seen", ncp.get("versions_seen") == rcp.get("versions_seen"),
              None if ncp.get("versions_seen") == rcp.get("versions_seen")
              else {"new": ncp.get("versions_seen"), "ref": rcp.get("versions_seen")})
    if nraw is not None:
        rep.check(G, "updated_channels present and None",
                  "updated_channels" in nraw and nraw["updated_channels"] is None
                  and "updated_channels" in rraw and rraw["updated_channels"] is None,
                  {"new": nraw.get("updated_channels", "<missing>"),
                   "ref": rraw.get("updated_channels", "<missing>")})
    else:
        rep.check(G, "updated_channels None", ncp.get("updated_channels") is None
                  and rcp.get("updated_channels") is None)
    rep.check(G, "metadata", nmd == rmd, {"new": nmd, "ref": rmd})
    if isinstance(new_row["metadata"], bytes) and isinstance(ref_row["metadata"], bytes) \
            and new_row["metadata"] != ref_row["metadata"]:
        rep.warnings.append("metadata JSON bytes differ (decoded equal)" if nmd == rmd
                            else "metadata JSON bytes differ")
    # ids
    nid, rid = new_row["checkpoint_id"], ref_row["checkpoint_id"]
    rep.check(G, "checkpoint id uuid6", is_uuid6(nid) and is_uuid6(rid), {"new": nid, "ref": rid})
    rep.check(G, "checkpoint id clock_seq", nid.split("-")[3:4] == rid.split("-")[3:4],
              {"new": nid, "ref": rid})
    rep.check(G, "blob id == row id", ncp.get("id") == nid, {"blob": ncp.get("id"), "row": nid})
    others = [k[2] for k in new_snap["checkpoints"] if k[0] == thread and k[2] != nid]
    later = [o for o in others if o >= nid]
    rep.check(G, "new id sorts after every other id of the thread", not later, later or None)
    rep.check(G, "parent_checkpoint_id", new_row["parent_checkpoint_id"] == ref_row["parent_checkpoint_id"],
              {"new": new_row["parent_checkpoint_id"], "ref": ref_row["parent_checkpoint_id"]})
    rep.check(G, "ts ISO 8601 +00:00", valid_ts(ncp.get("ts")) and valid_ts(rcp.get("ts")),
              {"new": ncp.get("ts"), "ref": rcp.get("ts")})


def compare_writes(rep: Report, serde, new_rows: list[dict], ref_rows: list[dict],
                   new_has_path: bool) -> None:
    G = "3_writes"
    key = lambda r: (r["checkpoint_ns"], r["checkpoint_id"], r["task_id"], r["idx"])  # noqa: E731
    new_rows, ref_rows = sorted(new_rows, key=key), sorted(ref_rows, key=key)
    rep.check(G, "row count", len(new_rows) == len(ref_rows),
              {"new": [(r["channel"], r["idx"]) for r in new_rows],
               "ref": [(r["channel"], r["idx"]) for r in ref_rows]})
    bytes_equal = []
    for i, (n, r) in enumerate(zip(new_rows, ref_rows)):
        p = f"row{i}"
        for col in ("checkpoint_ns", "checkpoint_id", "task_id", "idx", "channel", "type"):
            rep.check(G, f"{p}.{col}", n[col] == r[col], None if n[col] == r[col]
                      else {"new": n[col], "ref": r[col]})
        if new_has_path:
            rep.check(G, f"{p}.task_path", n.get("task_path") == r.get("task_path"),
                      None if n.get("task_path") == r.get("task_path")
                      else {"new": n.get("task_path"), "ref": r.get("task_path", "<no column>")})
        try:
            dn = serde.loads_typed((n["type"], n["value"]))
            dr = serde.loads_typed((r["type"], r["value"]))
            ok = norm(dn) == norm(dr)
            rep.check(G, f"{p}.value decoded", ok, None if ok else {"new": dn, "ref": dr})
        except Exception as e:
            rep.check(G, f"{p}.value decoded", False, f"{type(e).__name__}: {e}")
        # Encrypted values: their plain bytes (each value has its own random nonce).
        nb = plain_bytes(serde, n["type"], bytes(n["value"] or b""))[1]
        rb = plain_bytes(serde, r["type"], bytes(r["value"] or b""))[1]
        be = nb == rb
        bytes_equal.append(be)
        rep.check(G, f"{p}.value bytes equal", be, None if be else {
            "new": nb.hex(), "ref": rb.hex()})
    rep.checks.setdefault(G, {})["value bytes equal (summary)"] = {"ok": all(bytes_equal),
                                                                   "detail": bytes_equal}


def check_rewrite(original: str, rewritten: str, thread: str, expect: dict,
                  workdir: str | None = None, graph_name: str | None = None) -> dict:
    gname = graph_name or thread
    rep = Report()
    report: dict[str, Any] = {"thread": thread, "expect": expect}
    tmp = tempfile.mkdtemp(prefix="memctl-interop-", dir=workdir)
    try:
        # --- raw snapshots before anything touches the files --------------------------
        orig_snap = snapshot(original)
        new_snap = snapshot(rewritten)
        ref_db = os.path.join(tmp, "ref.sqlite")
        new_db = os.path.join(tmp, "new.sqlite")
        new_cont = os.path.join(tmp, "new-continue.sqlite")
        sqlite_copy(original, ref_db)
        sqlite_copy(rewritten, new_db)
        sqlite_copy(rewritten, new_cont)

        cfg = graphs.config(thread)

        # --- original state (reference copy, before the update) ------------------------
        with open_graph(ref_db, gname) as (graph, _m, saver):
            o_state = graph.get_state(cfg)
            o_hist = _history_ids(graph, cfg)
            o_tuple = saver.get_tuple(cfg)
            o_msgs = list(o_state.values.get("messages", []))
            o_other = {k: v for k, v in o_state.values.items() if k != "messages"}
            inferred = infer_node_name(graph, o_tuple.checkpoint.get("versions_seen", {}))
        o_latest = o_tuple.config["configurable"]["checkpoint_id"]
        o_step = o_tuple.metadata.get("step")
        extras = app_config_extras(o_tuple.metadata)
        upd_cfg = graphs.config(thread, **extras)
        report["original"] = {"latest_checkpoint_id": o_latest, "step": o_step,
                              "n_messages": len(o_msgs), "metadata": o_tuple.metadata,
                              "infer_as_node_preview": inferred}

        exp, exp_info = expected_list(o_msgs, expect)
        report["expected"] = {"ids": [m.id for m in exp], **exp_info}
        exp_dump = dumps(exp)

        # No-op: the expected list IS the current list and NEW added no row for the thread
        # (memctl reports "unchanged" and writes nothing). Then NEW must equal ORIG exactly;
        # the update-specific checks 2-4 are skipped. "expect_write": true forbids this.
        added_any = any(k[0] == thread and k not in orig_snap[t]
                        for t in ("checkpoints", "writes") for k in new_snap[t])
        noop = exp_dump == dumps(o_msgs) and not added_any
        report["noop"] = noop
        if noop and expect.get("expect_write"):
            rep.check("0_noop", "a write was expected but NEW added no rows", False)

        # --- 1. get_state on NEW -----------------------------------------------------
        G = "1_get_state"
        with open_graph(new_db, gname) as (graph, _m, saver):
            try:
                n_state = graph.get_state(cfg)
                n_msgs = list(n_state.values.get("messages", []))
                ok = dumps(n_msgs) == exp_dump
                rep.check(G, "messages == expected", ok, None if ok else {
                    "new_ids": [m.id for m in n_msgs], "expected_ids": [m.id for m in exp],
                    "first_diff": next(({"i": i, "new": a, "expected": b} for i, (a, b) in
                                        enumerate(zip(dumps(n_msgs), exp_dump)) if a != b), None)})
                n_other = {k: v for k, v in n_state.values.items() if k != "messages"}
                want_other = {**o_other, **expect.get("values", {})}
                rep.check(G, "other values == original (+ expected changes)", n_other == want_other,
                          None if n_other == want_other else {"new": n_other, "expected": want_other})
                rep.check(G, "next == ()", tuple(n_state.next) == (), n_state.next)
                rep.check(G, "tasks == ()", tuple(n_state.tasks) == (), n_state.tasks)
            except Exception as e:
                rep.check(G, "get_state", False, f"{type(e).__name__}: {e}")
            # --- 2. history ----------------------------------------------------------
            G = "2_history"
            try:
                if noop:
                    raise _Skip
                n_hist = _history_ids(graph, cfg)
                head = n_hist[0] if n_hist else (None, None, None, None)
                rep.check(G, "head source == update", head[1] == "update", head[1])
                rep.check(G, "head step == original step + 1",
                          isinstance(o_step, int) and head[2] == o_step + 1,
                          {"new": head[2], "orig": o_step})
                rep.check(G, "head parent == original latest", head[3] == o_latest,
                          {"new": head[3], "orig": o_latest})
                rest_ok = [h[0] for h in n_hist[1:]] == [h[0] for h in o_hist]
                rep.check(G, "rest == original history", rest_ok, None if rest_ok else {
                    "new": [h[0] for h in n_hist[1:]], "orig": [h[0] for h in o_hist]})
            except _Skip:
                pass
            except Exception as e:
                rep.check(G, "get_state_history", False, f"{type(e).__name__}: {e}")

        # --- 3. reference update and raw comparison ------------------------------------
        G = "3_reference"
        ref_ok = False
        if not noop:
            with open_graph(ref_db, gname) as (graph, _m, saver):
                serde = saver.serde
                try:
                    uinfo = langgraph_update(graph, saver, upd_cfg, exp, expect.get("values"))
                    report["reference_update"] = uinfo
                    ref_ok = True
                except Exception as e:
                    rep.check(G, "update_state", False, f"{type(e).__name__}: {e}")
        if ref_ok:
            rep.check(G, "update_state", True)
            if uinfo["as_node"] is None:
                uinfo["as_node"] = inferred
            ref_snap = snapshot(ref_db)
            new_cps = [r for k, r in new_snap["checkpoints"].items()
                       if k[0] == thread and k not in orig_snap["checkpoints"]]
            ref_cps = [r for k, r in ref_snap["checkpoints"].items()
                       if k[0] == thread and k not in orig_snap["checkpoints"]]
            rep.check(G, "NEW added exactly one checkpoint row", len(new_cps) == 1,
                      [(r["checkpoint_ns"], r["checkpoint_id"]) for r in new_cps])
            rep.check(G, "reference added exactly one checkpoint row", len(ref_cps) == 1,
                      [(r["checkpoint_ns"], r["checkpoint_id"]) for r in ref_cps])
            new_cps = sorted(new_cps, key=lambda r: (r["checkpoint_ns"] != "", r["checkpoint_id"]))
            if new_cps and ref_cps:
                nrow = new_cps[-1] if len(new_cps) == 1 else max(
                    (r for r in new_cps if r["checkpoint_ns"] == ""), key=lambda r: r["checkpoint_id"],
                    default=new_cps[0])
                rep.check(G, "NEW checkpoint in root namespace", nrow["checkpoint_ns"] == "",
                          nrow["checkpoint_ns"])
                report["new_checkpoint_id"] = nrow["checkpoint_id"]
                report["reference_checkpoint_id"] = ref_cps[0]["checkpoint_id"]
                try:
                    compare_checkpoints(rep, serde, nrow, ref_cps[0], new_snap, thread,
                                        o_tuple.checkpoint.get("channel_versions", {}))
                except Exception as e:
                    rep.check("3_checkpoint", "decode/compare", False,
                              f"{type(e).__name__}: {e}\n{traceback.format_exc()}")
            new_w = [r for k, r in new_snap["writes"].items()
                     if k[0] == thread and k not in orig_snap["writes"]]
            ref_w = [r for k, r in ref_snap["writes"].items()
                     if k[0] == thread and k not in orig_snap["writes"]]
            new_has_path = "task_path" in new_snap["write_cols"]
            if new_has_path != ("task_path" in orig_snap["write_cols"]):
                rep.check(G, "writes schema unchanged", False,
                          {"orig": orig_snap["write_cols"], "new": new_snap["write_cols"]})
            report["writes_task_path_column"] = new_has_path
            try:
                compare_writes(rep, serde, new_w, ref_w, new_has_path)
            except Exception as e:
                rep.check("3_writes", "decode/compare", False, f"{type(e).__name__}: {e}")

        # --- 4. continue both ---------------------------------------------------------
        G = "4_continue"
        try:
            if noop:
                raise _Skip
            nc = continue_thread(new_cont, gname, upd_cfg)
            rc = continue_thread(ref_db, gname, upd_cfg) if ref_ok else None
            n_first = nc["model_calls"][0] if nc["model_calls"] else None
            rep.check(G, "NEW: model called", n_first is not None)
            if n_first is not None:
                nd = dumps(n_first)
                want_last = HumanMessage(NEXT_TEXT, id=NEXT_ID).model_dump()
                rep.check(G, "NEW: model input ends with the new human message",
                          bool(nd) and nd[-1] == want_last, nd[-1] if nd else None)
                k = len(exp_dump)
                body = nd[-1 - k:-1] if k else []
                ok = len(nd) >= k + 1 and body == exp_dump
                rep.check(G, "NEW: expected list right before it", ok, None if ok else
                          {"received_ids": [m.get("id") for m in nd],
                           "expected_ids": [m["id"] for m in exp_dump]})
                report["continue_prefix_len"] = len(nd) - 1 - k
                if rc is not None:
                    r_first = rc["model_calls"][0] if rc["model_calls"] else None
                    ok = r_first is not None and dumps(r_first) == nd
                    rep.check(G, "first model input NEW == reference", ok, None if ok else
                              {"new": nd, "ref": dumps(r_first) if r_first else None})
            if rc is not None:
                known = {m["id"] for m in exp_dump} | {NEXT_ID}

                def shape(msgs):
                    return [(m.type, m.content, m.id if m.id in known else None) for m in msgs]

                a, b = shape(nc["messages_after"]), shape(rc["messages_after"])
                rep.check(G, "final messages NEW == reference", a == b, None if a == b
                          else {"new": a, "ref": b})
                rep.check(G, "model call count NEW == reference",
                          len(nc["model_calls"]) == len(rc["model_calls"]),
                          {"new": len(nc["model_calls"]), "ref": len(rc["model_calls"])})
            report["continue"] = {"new_model_calls": len(nc["model_calls"]),
                                  "new_messages_after": len(nc["messages_after"]),
                                  "new_next_after": nc["next_after"]}
        except _Skip:
            pass
        except Exception as e:
            rep.check(G, "invoke", False, f"{type(e).__name__}: {e}")

        # --- 5. other threads and old rows unchanged ------------------------------------
        G = "5_rows"
        rep.check(G, "checkpoints schema unchanged",
                  orig_snap["checkpoint_cols"] == new_snap["checkpoint_cols"],
                  {"orig": orig_snap["checkpoint_cols"], "new": new_snap["checkpoint_cols"]})
        other_latest = {}
        for k in orig_snap["checkpoints"]:
            if k[0] != thread and k[1] == "":
                other_latest[k[0]] = max(other_latest.get(k[0], ""), k[2])
        report["other_threads_latest"] = other_latest
        for table in ("checkpoints", "writes"):
            o = {k: v for k, v in orig_snap[table].items() if k[0] != thread}
            n = {k: v for k, v in new_snap[table].items() if k[0] != thread}
            if expect.get("batch"):
                # A batch rewrite changes other threads too, by adding rows only.
                diff = sorted(str(k) for k in o if k not in n or n[k] != o[k])
                rep.check(G, f"other threads: old {table} rows unchanged", not diff, diff[:20] or None)
            else:
                diff = sorted({str(k) for k in set(o) ^ set(n)} |
                              {str(k) for k in set(o) & set(n) if o[k] != n[k]})
                rep.check(G, f"other threads: {table} rows identical", not diff, diff[:20] or None)
            ot = {k: v for k, v in orig_snap[table].items() if k[0] == thread}
            nt = {k: v for k, v in new_snap[table].items() if k[0] == thread}
            lost = sorted(str(k) for k in ot if k not in nt or nt[k] != ot[k])
            rep.check(G, f"rewritten thread: old {table} rows unchanged", not lost, lost[:20] or None)
        added_cp = [k for k in new_snap["checkpoints"] if k[0] == thread
                    and k not in orig_snap["checkpoints"]]
        added_w = [k for k in new_snap["writes"] if k[0] == thread and k not in orig_snap["writes"]]
        if noop:
            rep.check(G, "no-op: no rows added", not added_cp and not added_w)
        else:
            rep.check(G, "rewritten thread: exactly one checkpoint row added",
                      len(added_cp) == 1 and added_cp[0][1] == "", added_cp)
            bad_w = [k for k in added_w if k[1] != "" or k[2] != o_latest]
            rep.check(G, "rewritten thread: added write rows are on the parent checkpoint",
                      bool(added_w) and not bad_w, {"added": added_w, "misplaced": bad_w})
    except Exception as e:
        rep.check("harness", "exception", False, f"{type(e).__name__}: {e}\n{traceback.format_exc()}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    report["checks"] = rep.checks
    report["warnings"] = rep.warnings
    report["failures"] = rep.failures
    report["passed"] = not rep.failures
    return report


# ------------------------------------------------------------------------------------------
# continue
# ------------------------------------------------------------------------------------------


def cmd_continue(db: str, thread: str, use_copy: bool, graph_name: str | None = None) -> dict:
    path, tmp = db, None
    if not Path(db).is_file():
        raise FileNotFoundError(f"no such database: {db}")
    if use_copy:
        tmp = tempfile.mkdtemp(prefix="memctl-interop-")
        path = os.path.join(tmp, "db.sqlite")
        sqlite_copy(db, path)
    try:
        r = continue_thread(path, graph_name or thread, graphs.config(thread))
        return {
            "thread": thread,
            "messages_before": len(r["messages_before"]),
            "next_before": list(r["next_before"]),
            "tasks_before": len(r["tasks_before"]),
            "messages_after": len(r["messages_after"]),
            "next_after": list(r["next_after"]),
            "model_calls": len(r["model_calls"]),
            "model_received": [dumps(c) for c in r["model_calls"]],
            "last_message": r["messages_after"][-1].model_dump() if r["messages_after"] else None,
        }
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)


# ------------------------------------------------------------------------------------------
# state / resume / live-app (for prune and gc)
# ------------------------------------------------------------------------------------------


def cmd_state(db: str, thread: str, graph_name: str) -> dict:
    """What LangGraph sees of a thread: whether any checkpoint exists, messages, next, interrupts."""
    if not Path(db).is_file():
        raise FileNotFoundError(f"no such database: {db}")
    tmp = tempfile.mkdtemp(prefix="memctl-interop-")
    path = os.path.join(tmp, "db.sqlite")
    sqlite_copy(db, path)
    try:
        with open_graph(path, graph_name) as (graph, _m, saver):
            cfg = graphs.config(thread)
            exists = saver.get_tuple(cfg) is not None
            st = graph.get_state(cfg)
            history = list(graph.get_state_history(cfg))
            return {
                "thread": thread,
                "exists": exists,
                "messages": [m.model_dump() for m in st.values.get("messages", [])],
                "next": list(st.next),
                "interrupts": [{"id": i.id, "value": i.value} for i in st.interrupts],
                "history": len(history),
            }
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def subgraph_states(graph, snap) -> list | None:
    """The subgraph states `get_state(..., subgraphs=True)` shows at the checkpoint of `snap`
    (a root StateSnapshot) for its pending subgraph tasks: per task its name, the
    subgraph checkpoint's namespace and id, messages, other values and `next`. None when no
    task is a subgraph's (nothing to ask)."""
    if not any(t.state for t in snap.tasks):
        return None
    full = graph.get_state(snap.config, subgraphs=True)
    out = []
    for t in full.tasks:
        st = t.state
        if st is None or not hasattr(st, "values"):
            continue
        conf = st.config["configurable"]
        out.append({"name": t.name, "checkpoint_ns": conf.get("checkpoint_ns"),
                    "checkpoint_id": conf.get("checkpoint_id"),
                    "messages": dumps(st.values.get("messages", [])),
                    "values": jsonable({k: v for k, v in st.values.items() if k != "messages"}),
                    "next": list(st.next)})
    return out


def snapshot_record(graph, snap) -> dict:
    """A root StateSnapshot as the tests compare it: its checkpoint and parent ids, step,
    messages (`model_dump()`), other values, `next`, `count_tokens_approximately` of its
    messages, metadata, tasks, interrupts and the states of its pending subgraph tasks."""
    from langchain_core.messages.utils import count_tokens_approximately

    msgs = list(snap.values.get("messages", []))
    return {
        "checkpoint_id": snap.config["configurable"]["checkpoint_id"],
        "step": snap.metadata.get("step"),
        "messages": dumps(msgs),
        "values": jsonable({k: v for k, v in snap.values.items() if k != "messages"}),
        "next": list(snap.next),
        "tokens_approx": count_tokens_approximately(msgs),
        "metadata": jsonable(snap.metadata),
        "parent_checkpoint_id": (snap.parent_config or {}).get("configurable", {}).get("checkpoint_id"),
        "tasks": [{"id": t.id, "name": t.name, "path": jsonable(t.path),
                   "error": repr(t.error) if t.error else None,
                   "interrupts": [{"id": i.id, "value": jsonable(i.value)} for i in t.interrupts],
                   "result": jsonable(t.result)}
                  for t in snap.tasks],
        "interrupts": [{"id": i.id, "value": jsonable(i.value)} for i in snap.interrupts],
        "subgraph_states": subgraph_states(graph, snap),
    }


def delta_states(saver, thread_ids, namespaces_of, graph_of: dict | None = None) -> dict:
    """Every checkpoint of the threads `thread_ids` as LangGraph shows it: per thread (the
    graph 'delta:<thread>'), `get_state_history` of the root namespace, newest first, each
    with its messages (`model_dump()`), the other values, `next`, and
    `count_tokens_approximately` of its messages, and the states of its pending subgraph
    tasks (`subgraph_states`); the same history in each subgraph namespace
    `namespaces_of(thread)` names (messages, other values, `next`, the root checkpoint it ran
    under, its parent); and the latest state (`get_state`). Shared by the
    SQLite command below and PostgresSaver's (harness_pg.py, fixtures/generate_pg.py)."""

    threads = {}
    for thread in thread_ids:
        graph, _model = graphs.build((graph_of or {}).get(thread, f"delta:{thread}"), saver)
        cfg = graphs.config(thread)
        history = []
        for snap in graph.get_state_history(cfg):
            history.append(snapshot_record(graph, snap))
        latest = graph.get_state(cfg)
        # Subgraph namespaces: every checkpoint as get_state_history shows it there.
        namespaces = {}
        for ns in namespaces_of(thread):
            namespaces[ns] = [
                {"checkpoint_id": snap.config["configurable"]["checkpoint_id"],
                 "messages": dumps(snap.values.get("messages", [])),
                 "values": jsonable({k: v for k, v in snap.values.items() if k != "messages"}),
                 "next": list(snap.next),
                 "root_parent": (snap.metadata or {}).get("parents", {}).get(""),
                 "parent_checkpoint_id": (snap.parent_config or {}).get("configurable", {}).get("checkpoint_id")}
                for snap in graph.get_state_history(graphs.config(thread, checkpoint_ns=ns))
            ]
        threads[thread] = {
            "namespaces": namespaces,
            "history": history,
            "latest_checkpoint_id": latest.config["configurable"]["checkpoint_id"],
            "latest_messages": dumps(latest.values.get("messages", [])),
        }
    return {"threads": threads}


def cmd_delta_states(db: str, graph_of: dict | None = None) -> dict:
    """Every checkpoint of every thread of delta.sqlite as LangGraph shows it (on a copy):
    see `delta_states` (`graph_of`: the graphs of threads not named after theirs)."""
    tmp = tempfile.mkdtemp(prefix="memctl-interop-")
    path = os.path.join(tmp, "db.sqlite")
    sqlite_copy(db, path)
    try:
        con = sqlite3.connect(path, check_same_thread=False)
        try:
            saver = make_saver(con)
            ids = [r[0] for r in con.execute("SELECT DISTINCT thread_id FROM checkpoints ORDER BY 1")]

            def namespaces_of(thread: str) -> list[str]:
                return [ns for (ns,) in con.execute(
                    "SELECT DISTINCT checkpoint_ns FROM checkpoints WHERE thread_id = ? "
                    "AND checkpoint_ns != '' ORDER BY 1", (thread,))]

            return delta_states(saver, ids, namespaces_of, graph_of)
        finally:
            con.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def cmd_history(db: str, thread: str, graph_name: str, at: str | None = None) -> dict:
    """One thread of a SQLite file as LangGraph shows it (on a copy): `delta_states` of that
    thread run with graph `graph_name`, and `state`: `get_state` at checkpoint `at` (default:
    the latest) as `snapshot_record` gives it."""
    tmp = tempfile.mkdtemp(prefix="memctl-interop-")
    path = os.path.join(tmp, "db.sqlite")
    sqlite_copy(db, path)
    try:
        con = sqlite3.connect(path, check_same_thread=False)
        try:
            saver = make_saver(con)

            def namespaces_of(t: str) -> list[str]:
                return [ns for (ns,) in con.execute(
                    "SELECT DISTINCT checkpoint_ns FROM checkpoints WHERE thread_id = ? "
                    "AND checkpoint_ns != '' ORDER BY 1", (t,))]

            rep = delta_states(saver, [thread], namespaces_of, {thread: graph_name})["threads"][thread]
            graph, _model = graphs.build(graph_name, saver)
            cfg = graphs.config(thread, **({"checkpoint_id": at} if at else {}))
            rep["state"] = snapshot_record(graph, graph.get_state(cfg))
            return rep
        finally:
            con.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def cmd_resume(db: str, thread: str, value: str) -> dict:
    """Resumes a thread paused on interrupt() with Command(resume=value), on a copy."""
    from langgraph.types import Command

    tmp = tempfile.mkdtemp(prefix="memctl-interop-")
    path = os.path.join(tmp, "db.sqlite")
    sqlite_copy(db, path)
    try:
        with open_graph(path, thread) as (graph, _m, _s):
            cfg = graphs.config(thread)
            before = graph.get_state(cfg)
            graph.invoke(Command(resume=value), cfg)
            after = graph.get_state(cfg)
            if tuple(after.next) != ():
                raise RuntimeError(f"still waiting after resume: next={after.next}")
            return {
                "thread": thread,
                "next_before": list(before.next),
                "interrupts_before": len(before.interrupts),
                "messages_after": [m.model_dump() for m in after.values.get("messages", [])],
            }
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _thread_graphs(threads: list[str], graph_name: str) -> list[tuple[str, str]]:
    """`thread` or `thread=graph` items: (thread, graph), the graph `graph_name` by default."""
    return [tuple(t.split("=", 1)) if "=" in t else (t, graph_name) for t in threads]


def tee(saver, mirror) -> None:
    """Makes `saver` also write every checkpoint and write into `mirror` (a SqliteSaver nothing
    else touches): the record of what the app wrote, as it wrote it, to compare with what is
    left after memctl worked on the real database."""
    put, put_writes = saver.put, saver.put_writes

    def tee_put(config, checkpoint, metadata, new_versions):
        out = put(config, checkpoint, metadata, new_versions)
        mirror.put(config, checkpoint, metadata, new_versions)
        return out

    def tee_put_writes(config, writes, task_id, task_path=""):
        put_writes(config, writes, task_id, task_path)
        mirror.put_writes(config, writes, task_id, task_path)

    saver.put, saver.put_writes = tee_put, tee_put_writes


def cmd_live_app(db: str, graph_name: str, threads: list[str], seconds: float,
                 stop_file: str | None, mirror: str | None = None,
                 max_turns: int | None = None, pause: float = 0.0) -> dict:
    """A LangGraph app invoking `threads` in a loop on `db` itself (WAL, as SqliteSaver sets it
    up): see `live_loop`."""
    con = sqlite3.connect(db, check_same_thread=False)
    try:
        return live_loop(make_saver(con), graph_name, threads, seconds, stop_file, mirror,
                         max_turns, pause)
    finally:
        con.close()


def live_loop(saver, graph_name: str, threads: list[str], seconds: float,
              stop_file: str | None, mirror: str | None = None,
              max_turns: int | None = None, pause: float = 0.0) -> dict:
    """An app invoking `threads` (`thread` or `thread=graph`) through `saver` in a loop, until
    `seconds` pass or `stop_file` appears. Every exception is recorded. Each turn's result
    (the state the graph held in memory at its end) must be the previous turn's plus its new
    messages, and the final state LangGraph reads back must be the last turn's: any message
    lost is an error. With `mirror` every checkpoint and write the app makes is also written
    into that SQLite file (`tee`). With `max_turns` it stops invoking after that many turns
    (and waits for the stop), with `pause` it sleeps that long between turns: the record a
    test checks afterwards stays small however long the test's other side takes."""
    import time

    mcon = sqlite3.connect(mirror, check_same_thread=False) if mirror else None
    if mcon is not None:
        tee(saver, SqliteSaver(mcon))
    pairs = _thread_graphs(threads, graph_name)
    built = {g: graphs.build(g, saver)[0] for g in {g for _, g in pairs}}
    graph_of = {t: built[g] for t, g in pairs}
    names = [t for t, _ in pairs]
    counts = {t: 0 for t in names}
    errors: list[str] = []
    ids_of = {t: [m.id for m in graph_of[t].get_state(graphs.config(t)).values.get("messages", [])]
              for t in names}
    len_before = {t: len(ids_of[t]) for t in names}
    start = time.monotonic()
    n = 0
    while time.monotonic() - start < seconds and not (stop_file and Path(stop_file).exists()):
        if max_turns is not None and n >= max_turns:
            time.sleep(0.05)
            continue
        if n and pause:
            time.sleep(pause)
        t = names[n % len(names)]
        mid = f"live-{t}-{n}"
        try:
            out = graph_of[t].invoke({"messages": [HumanMessage(f"live message {n}", id=mid)]},
                                     graphs.config(t))
            counts[t] += 1
            got = [m.id for m in out["messages"]]
            if got[:len(ids_of[t])] != ids_of[t] or mid not in got[len(ids_of[t]):]:
                errors.append(f"{t}: turn {n} ended with {got}, the turn before with {ids_of[t]}")
            ids_of[t] = got
        except Exception as e:  # the point: there must be none
            errors.append(f"{t}: {type(e).__name__}: {e}")
        n += 1
    final = {}
    for t in names:
        msgs = graph_of[t].get_state(graphs.config(t)).values.get("messages", [])
        final[t] = len(msgs)
        if [m.id for m in msgs] != ids_of[t]:
            errors.append(f"{t}: LangGraph reads {[m.id for m in msgs]}, the last turn ended "
                          f"with {ids_of[t]}")
        if dict(pairs)[t] == "1" and len(msgs) != len_before[t] + 2 * counts[t]:
            errors.append(f"{t}: {len(msgs)} messages, expected {len_before[t]} + 2 x {counts[t]}")
    if mcon is not None:
        mcon.close()
    return {"invocations": counts, "messages": final, "errors": errors,
            "seconds": time.monotonic() - start}


HELD_TEXT = "memctl interop: a turn whose commit was held"
HELD_ID = "interop-held-turn"


def cmd_held_app(db: str, graph_name: str, thread: str, hold_file: str, go_file: str) -> dict:
    """The race of issue #12, made deterministic: a LangGraph app (SqliteSaver on `db` itself)
    runs one turn whose every commit is held — its checkpoint ids are made, nothing is written —
    until `go_file` appears. When the first commit is held it writes `hold_file`. Then it checks
    that its turn is the thread's state, runs one more turn, and checks that the model got it."""
    import time

    con = sqlite3.connect(db, check_same_thread=False)
    saver = make_saver(con)
    graph, model = graphs.build(graph_name, saver)
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

    saver.put, saver.put_writes = put, put_writes
    graph.invoke({"messages": [HumanMessage(HELD_TEXT, id=HELD_ID)]}, cfg)
    saver.put, saver.put_writes = orig_put, orig_put_writes
    errors: list[str] = []
    state = graph.get_state(cfg)
    ids = [m.id for m in state.values.get("messages", [])]
    latest = state.config["configurable"]["checkpoint_id"]
    if HELD_ID not in ids:
        errors.append(f"the app's turn was lost: the latest checkpoint {latest} has {ids}")
    graph.invoke({"messages": [HumanMessage(NEXT_TEXT, id=NEXT_ID)]}, cfg)
    received = [m.id for m in model.calls[-1]] if model.calls else []
    if HELD_ID not in received:
        errors.append(f"the next turn did not see the held turn: the model got {received}")
    con.close()
    return {"made": made, "latest_after_turn": latest, "messages_after_turn": ids,
            "model_received": received, "errors": errors}


def cmd_rows(db: str) -> dict:
    """Every row of checkpoints and writes decoded by the app's serializer (a row that does
    not load fails the command), with its stored type: to compare a database before and after
    `memctl rekey`."""
    serde = make_serde()
    if serde is None:
        from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

        serde = JsonPlusSerializer()
    snap = snapshot(db)
    out = {"checkpoints": {}, "writes": {}, "types": {}}
    for table, col in (("checkpoints", "checkpoint"), ("writes", "value")):
        for key, row in sorted(snap[table].items(), key=lambda kv: str(kv[0])):
            value = serde.loads_typed((row["type"], row[col]))
            k = json.dumps([str(x) for x in key])
            out[table][k] = jsonable(norm(value))
            out["types"][row["type"]] = out["types"].get(row["type"], 0) + 1
    return out


def cmd_find_text(db: str, text: str) -> dict:
    """Where `text` is: in the decrypted (or plain) value of any row, in metadata, or
    anywhere in the bytes of the file and its WAL."""
    serde = make_serde()
    needle = text.encode()
    snap = snapshot(db)
    rows = []
    for table, col in (("checkpoints", "checkpoint"), ("writes", "value")):
        for key, row in snap[table].items():
            _, data = plain_bytes(serde, row["type"], bytes(row[col] or b""))
            md = row.get("metadata")
            md = md.encode() if isinstance(md, str) else (md or b"")
            if needle in data or needle in md:
                rows.append([table, *[str(x) for x in key]])
    raw = [p for p in (db, db + "-wal") if Path(p).exists() and needle in Path(p).read_bytes()]
    return {"text": text, "rows": rows, "raw_files": raw}


def ensure_hashseed_0(script: str) -> None:
    """Re-exec with PYTHONHASHSEED=0 (as fixtures/generate.py does). LangGraph re-serializes
    set/frozenset values in iteration order, which depends on the string hash seed; with seed 0
    the reference's bytes match the fixture's."""
    if os.environ.get("PYTHONHASHSEED") != "0":
        env = dict(os.environ, PYTHONHASHSEED="0")
        os.execve(sys.executable, [sys.executable, script, *sys.argv[1:]], env)


def plain_channels(graph):
    """`graph` (and its subgraphs) with every DeltaChannel replaced by the plain reducer
    channel a graph without DeltaChannel declares for it: a `BinaryOperatorAggregate` whose
    operator is the DeltaChannel's reducer applied to one update (`add_messages` for
    `_messages_delta_reducer`). For `copy --materialize`: the app as it would be had its
    channels never been DeltaChannels."""
    from langgraph.channels.binop import BinaryOperatorAggregate
    try:
        from langgraph.channels.delta import DeltaChannel
    except ImportError:  # old generation: no DeltaChannel
        return graph
    graphs_ = [graph] + [g for _, g in graph.get_subgraphs(recurse=True)]
    for g in graphs_:
        for k, ch in list(g.channels.items()):
            if isinstance(ch, DeltaChannel):
                reducer = ch.reducer
                plain = BinaryOperatorAggregate(ch.typ, lambda a, b, r=reducer: r(a, [b]))
                plain.key = k
                g.channels[k] = plain
    return graph


_graphs_build = graphs.build


def _build(name: str, checkpointer, **kw):
    """graphs.build, and `plain:NAME`: graph NAME with `plain_channels`."""
    if name.startswith("plain:"):
        graph, model = _graphs_build(name[len("plain:"):], checkpointer, **kw)
        return plain_channels(graph), model
    return _graphs_build(name, checkpointer, **kw)


graphs.build = _build


def cmd_plain_check(saver, thread: str, channels: list[str]) -> dict:
    """What of `thread` (every namespace) a graph without DeltaChannel could not read as its
    own: a checkpoint that stores a `_DeltaSnapshot`, leaves one of `channels` out although
    it has a version of it, or counts DeltaChannel updates in its metadata."""
    from langgraph.checkpoint.serde.types import _DeltaSnapshot
    problems = []
    n = 0
    for t in saver.list({"configurable": {"thread_id": thread}}):
        n += 1
        cp, md = t.checkpoint, t.metadata or {}
        where = f"{t.config['configurable'].get('checkpoint_ns', '')}/{cp['id']}"
        for k, v in cp["channel_values"].items():
            if isinstance(v, _DeltaSnapshot):
                problems.append(f"{where}: {k} is a _DeltaSnapshot")
        for k in channels:
            if k in cp["channel_versions"] and k not in cp["channel_values"]:
                problems.append(f"{where}: {k} has a version and no value")
        if "counters_since_delta_snapshot" in md:
            problems.append(f"{where}: metadata counts DeltaChannel updates")
    return {"checkpoints": n, "problems": problems}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("check-rewrite", help="compare a memctl rewrite with real update_state")
    c.add_argument("--original", required=True, help="untouched copy of the fixture DB")
    c.add_argument("--rewritten", required=True, help="copy rewritten by memctl")
    c.add_argument("--thread", required=True)
    c.add_argument("--expect", required=True, help="EXPECT.json path (or inline JSON)")
    c.add_argument("--graph", help="scenario graph to build (default: the thread id)")
    k = sub.add_parser("continue", help="load a thread and invoke one more user message")
    k.add_argument("--db", required=True)
    k.add_argument("--thread", required=True)
    k.add_argument("--copy", action="store_true", help="work on a temporary copy of --db")
    k.add_argument("--graph", help="scenario graph to build (default: the thread id)")
    st = sub.add_parser("state", help="what LangGraph sees of a thread (on a copy)")
    st.add_argument("--db", required=True)
    st.add_argument("--thread", required=True)
    st.add_argument("--graph", help="scenario graph to build (default: the thread id)")
    r = sub.add_parser("resume", help="resume a paused thread with Command(resume=VALUE) (on a copy)")
    r.add_argument("--db", required=True)
    r.add_argument("--thread", required=True)
    r.add_argument("--value", required=True)
    la = sub.add_parser("live-app", help="invoke threads in a loop on DB itself, recording errors")
    la.add_argument("--db", required=True)
    la.add_argument("--graph", default="1")
    la.add_argument("--threads", required=True,
                    help="comma-separated thread ids, each maybe with its graph: THREAD=GRAPH")
    la.add_argument("--seconds", type=float, default=10.0)
    la.add_argument("--max-turns", type=int, default=None,
                    help="stop invoking after this many turns (then wait for the stop)")
    la.add_argument("--pause", type=float, default=0.0, help="seconds between turns")
    la.add_argument("--stop-file")
    la.add_argument("--mirror", help="also write every checkpoint and write into this SQLite file")
    ha = sub.add_parser("held-app", help="one app turn whose commits wait for GO_FILE (the id race)")
    ha.add_argument("--db", required=True)
    ha.add_argument("--graph", default="1")
    ha.add_argument("--thread", required=True)
    ha.add_argument("--hold-file", required=True)
    ha.add_argument("--go-file", required=True)
    ds = sub.add_parser("delta-states", help="every checkpoint of every thread of a delta DB as LangGraph shows it")
    ds.add_argument("--db", required=True)
    ds.add_argument("--graphs", default="",
                    help="THREAD=GRAPH,...: graphs of threads not named after theirs "
                         "(default: delta:THREAD)")
    hi = sub.add_parser("history", help="one thread's get_state_history and get_state (on a copy)")
    hi.add_argument("--db", required=True)
    hi.add_argument("--thread", required=True)
    hi.add_argument("--graph", help="scenario graph to build (default: the thread id)")
    hi.add_argument("--at", help="the checkpoint get_state reads (default: the latest)")
    rw = sub.add_parser("rows", help="every row decoded by the app's serializer, as JSON")
    rw.add_argument("--db", required=True)
    pc = sub.add_parser("plain-check", help="what of a thread only a DeltaChannel graph reads")
    pc.add_argument("--db", required=True)
    pc.add_argument("--thread", required=True)
    pc.add_argument("--channels", default="messages", help="CH,...: channels that must be stored")
    ft = sub.add_parser("find-text", help="rows (decrypted) and raw bytes holding TEXT")
    ft.add_argument("--db", required=True)
    ft.add_argument("--text", required=True)
    a = ap.parse_args(argv)

    if a.cmd == "history":
        rep = cmd_history(a.db, a.thread, a.graph or a.thread, a.at)
        print(json.dumps(jsonable(rep), ensure_ascii=False, indent=1))
        return 0

    if a.cmd == "plain-check":
        # On a copy: the saver switches a file to WAL mode (fixtures stay as committed).
        tmp = tempfile.mkdtemp(prefix="memctl-interop-")
        path = os.path.join(tmp, "db.sqlite")
        sqlite_copy(a.db, path)
        con = sqlite3.connect(path)
        try:
            rep = cmd_plain_check(make_saver(con), a.thread, [c for c in a.channels.split(",") if c])
        finally:
            con.close()
            shutil.rmtree(tmp, ignore_errors=True)
        print(json.dumps(rep, ensure_ascii=False, indent=1))
        return 0

    if a.cmd == "delta-states":
        graph_of = dict(t.split("=", 1) for t in a.graphs.split(",") if t)
        print(json.dumps(cmd_delta_states(a.db, graph_of), ensure_ascii=False, indent=1))
        return 0

    if a.cmd in ("state", "resume", "live-app", "held-app", "rows", "find-text"):
        try:
            if a.cmd == "rows":
                rep = cmd_rows(a.db)
            elif a.cmd == "find-text":
                rep = cmd_find_text(a.db, a.text)
            elif a.cmd == "state":
                rep = cmd_state(a.db, a.thread, a.graph or a.thread)
            elif a.cmd == "resume":
                rep = cmd_resume(a.db, a.thread, a.value)
            elif a.cmd == "held-app":
                rep = cmd_held_app(a.db, a.graph, a.thread, a.hold_file, a.go_file)
            else:
                rep = cmd_live_app(a.db, a.graph, a.threads.split(","), a.seconds, a.stop_file,
                                   a.mirror, a.max_turns, a.pause)
        except Exception as e:
            print(json.dumps({"error": f"{type(e).__name__}: {e}"}))
            print(f"FAIL {a.cmd}: {type(e).__name__}: {e}", file=sys.stderr)
            traceback.print_exc(file=sys.stderr)
            return 1
        print(json.dumps(jsonable(rep), ensure_ascii=False, indent=1))
        if rep.get("errors"):
            for err in rep["errors"]:
                print(f"FAIL {a.cmd}: {err}", file=sys.stderr)
            return 1
        return 0

    if a.cmd == "check-rewrite":
        src = a.expect.strip()
        expect = json.loads(src) if src.startswith("{") else json.loads(Path(src).read_text())
        rep = check_rewrite(a.original, a.rewritten, a.thread, expect, graph_name=a.graph)
        print(json.dumps(jsonable(rep), ensure_ascii=False, indent=1))
        for f in rep["failures"]:
            print(f"FAIL {f}".replace("\n", " | "), file=sys.stderr)
        return 0 if rep["passed"] else 1
    try:
        rep = cmd_continue(a.db, a.thread, a.copy, a.graph)
    except Exception as e:
        print(json.dumps({"thread": a.thread, "error": f"{type(e).__name__}: {e}"}))
        print(f"FAIL continue: {type(e).__name__}: {e}", file=sys.stderr)
        traceback.print_exc(file=sys.stderr)
        return 1
    print(json.dumps(jsonable(rep), ensure_ascii=False, indent=1))
    return 0


if __name__ == "__main__":
    ensure_hashseed_0(os.path.abspath(__file__))
    sys.exit(main())
