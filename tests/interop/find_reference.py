#!/usr/bin/env python
"""The Python way to answer `memctl find` (#18): walk every checkpoint with LangGraph's own
loader (SqliteSaver.list) and search message text, tool calls and string state channels.

    find_reference.py --db FILE --pattern P [--regex] [--ignore-case] [--history]

Prints a JSON list of hits: [thread_id, checkpoint_id, index or null, message_id or null,
role]. The rules are memctl's, stated independently: a message is searched as its text
(a string content, or the text blocks of a list content joined by newlines), then each tool
call's name and arguments (a JSON object printed compactly); a state channel is searched when
its value is a string and it is not LangGraph's own (`__…`, `branch:to:…`) or `messages`.
The latest state is each thread's newest root checkpoint; --history walks all of them.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sqlite3
import sys
import tempfile

from langgraph.checkpoint.sqlite import SqliteSaver


def text_of(m) -> str:
    content = m.content if hasattr(m, "content") else m.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for b in content:
            if isinstance(b, str):
                parts.append(b)
            elif isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str):
                parts.append(b["text"])
        return "\n".join(parts)
    return ""


def searchable(m) -> str:
    out = text_of(m)
    for key in ("tool_calls", "invalid_tool_calls"):
        calls = getattr(m, key, None) if not isinstance(m, dict) else m.get(key)
        for call in calls or []:
            name = call.get("name")
            if isinstance(name, str):
                out += "\n" + name
            args = call.get("args")
            if isinstance(args, str):
                out += "\n" + args
            elif isinstance(args, (dict, list)):
                out += "\n" + json.dumps(args, separators=(",", ":"), ensure_ascii=False)
    return out


def internal(name: str) -> bool:
    return name.startswith("__") or name.startswith("branch:to:")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--db", required=True)
    ap.add_argument("--pattern", required=True)
    ap.add_argument("--regex", action="store_true")
    ap.add_argument("--ignore-case", action="store_true")
    ap.add_argument("--history", action="store_true")
    a = ap.parse_args()
    source = a.pattern if a.regex else re.escape(a.pattern)
    pat = re.compile(source, re.IGNORECASE if a.ignore_case else 0)
    # SqliteSaver writes its schema on first use: it reads a copy (the backup API copies a
    # WAL-mode file whole).
    tmp = tempfile.mkdtemp(prefix="memctl-findref-")
    copy = os.path.join(tmp, "db.sqlite")
    src = sqlite3.connect(f"file:{a.db}?mode=ro", uri=True)
    dst = sqlite3.connect(copy)
    src.backup(dst)
    src.close()
    dst.close()
    con = sqlite3.connect(copy, check_same_thread=False)
    saver = SqliteSaver(con)
    threads = [r[0] for r in con.execute(
        "SELECT DISTINCT thread_id FROM checkpoints WHERE checkpoint_ns = '' ORDER BY thread_id")]
    hits = []
    for thread in threads:
        cfg = {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}
        tuples = list(saver.list(cfg))  # newest first
        if not a.history:
            tuples = tuples[:1]
        else:
            tuples.sort(key=lambda t: t.config["configurable"]["checkpoint_id"])
        for t in tuples:
            cid = t.config["configurable"]["checkpoint_id"]
            values = t.checkpoint["channel_values"]
            msgs = values.get("messages")
            if isinstance(msgs, list):
                for i, m in enumerate(msgs):
                    if pat.search(searchable(m)):
                        mid = m.id if not isinstance(m, dict) else m.get("id")
                        role = m.type if not isinstance(m, dict) else m.get("type") or m.get("role")
                        hits.append([thread, cid, i, mid, role])
            for name, v in values.items():
                if name == "messages" or internal(name) or not isinstance(v, str):
                    continue
                if pat.search(v):
                    hits.append([thread, cid, None, None, f"channel:{name}"])
    con.close()
    shutil.rmtree(tmp, ignore_errors=True)
    print(json.dumps(hits, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
