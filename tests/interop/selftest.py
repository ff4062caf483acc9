#!/usr/bin/env python
"""Self-test of tests/interop/harness.py, runnable from either venv:

    .venv/new/bin/python tests/interop/selftest.py     # uses fixtures/new.sqlite
    .venv/old/bin/python tests/interop/selftest.py     # uses fixtures/old.sqlite

memctl's writer does not exist yet, so NEW is made by real LangGraph (update_state with the
expected list, as the reference does). check-rewrite must PASS for every thread and expect
below, and must FAIL for deliberately corrupted copies; an untouched NEW passes only as a
no-op. Exit 0 when all of that holds. Re-executes itself with PYTHONHASHSEED=0.
Options: --db PATH (default: the fixture of this venv's generation), --threads a,b,...,
--json (print the full per-run results as JSON).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness  # noqa: E402
from harness import graphs  # noqa: E402

THREADS = ["1", "tools", "custom-state", "system", "unicode", "blocks", "usage", "summarized",
           "subgraph", "dict-input", "tuple-args"]
EXPECTS = [
    {"mode": "trim", "max_tokens": 4, "counter": "len"},
    {"mode": "trim", "max_tokens": 60, "counter": "approximate"},
    # exercises memctl's fallback (no human left) and keep_first
    {"mode": "trim", "max_tokens": 2, "counter": "len", "keep_first": True},
]
SUMMARY_PREFIX = "Here is a summary of the conversation to date:\n\n"


def extra_expects(fixture: str, thread: str) -> list[dict]:
    """An "ids" and a "messages" expect built from the thread's state: the tail from the last
    HumanMessage; for "messages" preceded by a NEW summary HumanMessage (as memctl makes)."""
    scratch = fixture + ".scratch"
    harness.sqlite_copy(fixture, scratch)
    with harness.open_graph(scratch, thread) as (graph, _m, _s):
        msgs = list(graph.get_state(graphs.config(thread)).values["messages"])
    os.remove(scratch)
    last_h = max(i for i, m in enumerate(msgs) if m.type == "human")
    tail = [m.id for m in msgs[last_h:]]
    summary = harness.HumanMessage(
        SUMMARY_PREFIX + f"memctl selftest summary of {thread} \u2713",
        id=str(uuid.uuid4()), additional_kwargs={"lc_source": "summarization"})
    return [
        {"mode": "ids", "ids": tail},
        {"mode": "messages", "messages": [summary.model_dump(), *[{"id": i} for i in tail]]},
    ]


def label(expect: dict) -> str:
    if expect["mode"] == "trim":
        return (f"trim {expect['counter']}<={expect['max_tokens']}"
                + (" keep_first" if expect.get("keep_first") else ""))
    return expect["mode"]


def generation() -> str:
    from importlib.metadata import version

    return "new" if tuple(int(x) for x in version("langgraph").split(".")[:2]) >= (1, 2) else "old"


def make_langgraph_rewrite(src: str, dst: str, thread: str, expect: dict) -> dict:
    """NEW made by real LangGraph: update_state(REMOVE_ALL + expected list)."""
    harness.sqlite_copy(src, dst)
    cfg = graphs.config(thread)
    with harness.open_graph(dst, thread) as (graph, _m, saver):
        msgs = list(graph.get_state(cfg).values.get("messages", []))
        exp, _ = harness.expected_list(msgs, expect)
        tup = saver.get_tuple(cfg)
        upd_cfg = graphs.config(thread, **harness.app_config_extras(tup.metadata))
        info = harness.langgraph_update(graph, saver, upd_cfg, exp)
        info["as_node_inferred"] = harness.infer_node_name(graph, tup.checkpoint["versions_seen"])
    # leave the file as a single rollback-journal DB, like a tool would hand it over
    con = sqlite3.connect(dst)
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()
    return info


def new_row(path: str, thread: str, base_snap: dict):
    snap = harness.snapshot(path)
    keys = [k for k in snap["checkpoints"] if k[0] == thread and k not in base_snap["checkpoints"]]
    return max(keys, key=lambda k: k[2])


# ---- corruptions (each returns a short description) ----------------------------------------


def _serde():
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

    return JsonPlusSerializer()


def corrupt_message_content(path, thread, base):
    k = new_row(path, thread, base)
    con = sqlite3.connect(path)
    t, blob = con.execute("SELECT type, checkpoint FROM checkpoints WHERE thread_id=? AND "
                          "checkpoint_ns=? AND checkpoint_id=?", k).fetchone()
    s = _serde()
    cp = s.loads_typed((t, blob))
    m = cp["channel_values"]["messages"][-1]
    m.content = "tampered"
    t2, b2 = s.dumps_typed(cp)
    con.execute("UPDATE checkpoints SET checkpoint=? WHERE thread_id=? AND checkpoint_ns=? AND "
                "checkpoint_id=?", (b2, *k))
    con.commit()
    con.close()
    return f"content of kept message {m.id} changed in the checkpoint blob"


def corrupt_delete_write(path, thread, base):
    con = sqlite3.connect(path)
    keys = [k for k in harness.snapshot(path)["writes"] if k[0] == thread and k not in base["writes"]]
    for k in keys:
        con.execute("DELETE FROM writes WHERE thread_id=? AND checkpoint_ns=? AND checkpoint_id=? "
                    "AND task_id=? AND idx=?", k)
    con.commit()
    con.close()
    return f"deleted {len(keys)} update write row(s) on the parent"


def corrupt_bump_version(path, thread, base):
    k = new_row(path, thread, base)
    con = sqlite3.connect(path)
    t, blob = con.execute("SELECT type, checkpoint FROM checkpoints WHERE thread_id=? AND "
                          "checkpoint_ns=? AND checkpoint_id=?", k).fetchone()
    s = _serde()
    cp = s.loads_typed((t, blob))
    ch = next(c for c in sorted(cp["channel_versions"]) if c != "messages")
    v = cp["channel_versions"][ch]
    n = int(str(v).split(".")[0]) + 1
    cp["channel_versions"][ch] = f"{n:032}.{0.5:016}"
    _, b2 = s.dumps_typed(cp)
    con.execute("UPDATE checkpoints SET checkpoint=? WHERE thread_id=? AND checkpoint_ns=? AND "
                "checkpoint_id=?", (b2, *k))
    con.commit()
    con.close()
    return f"bumped channel_versions[{ch!r}]"


def corrupt_write_value_bytes(path, thread, base):
    """Same decoded value, different bytes: the write value's outer msgpack array header
    0x9N (fixarray) is re-encoded as 0xdc 00 0N (array16)."""
    con = sqlite3.connect(path)
    keys = [k for k in harness.snapshot(path)["writes"] if k[0] == thread and k not in base["writes"]]
    k = keys[0]
    (v,) = con.execute("SELECT value FROM writes WHERE thread_id=? AND checkpoint_ns=? AND "
                       "checkpoint_id=? AND task_id=? AND idx=?", k).fetchone()
    if not 0x90 <= v[0] <= 0x9F:
        raise RuntimeError("unexpected write value header")
    b2 = bytes([0xDC, 0x00, v[0] & 0x0F]) + v[1:]
    con.execute("UPDATE writes SET value=? WHERE thread_id=? AND checkpoint_ns=? AND "
                "checkpoint_id=? AND task_id=? AND idx=?", (b2, *k))
    con.commit()
    con.close()
    return "write value re-encoded (array16 header): decodes equal, bytes differ"


def corrupt_version_fraction(path, thread, base):
    k = new_row(path, thread, base)
    con = sqlite3.connect(path)
    t, blob = con.execute("SELECT type, checkpoint FROM checkpoints WHERE thread_id=? AND "
                          "checkpoint_ns=? AND checkpoint_id=?", k).fetchone()
    s = _serde()
    cp = s.loads_typed((t, blob))
    n = cp["channel_versions"]["messages"].split(".")[0]
    cp["channel_versions"]["messages"] = n + ".1"
    _, b2 = s.dumps_typed(cp)
    con.execute("UPDATE checkpoints SET checkpoint=? WHERE thread_id=? AND checkpoint_ns=? AND "
                "checkpoint_id=?", (b2, *k))
    con.commit()
    con.close()
    return "messages version fraction '.1' (not f'{random():016}')"


def corrupt_other_thread(path, thread, base):
    con = sqlite3.connect(path)
    other = next(k for k in base["checkpoints"] if k[0] != thread)
    con.execute("UPDATE checkpoints SET metadata=? WHERE thread_id=? AND checkpoint_ns=? AND "
                "checkpoint_id=?", (b'{"source": "loop", "step": 99, "parents": {}}', *other))
    con.commit()
    con.close()
    return f"changed metadata of another thread's checkpoint {other}"


def corrupt_metadata_run_id(path, thread, base):
    k = new_row(path, thread, base)
    con = sqlite3.connect(path)
    (md,) = con.execute("SELECT metadata FROM checkpoints WHERE thread_id=? AND checkpoint_ns=? "
                        "AND checkpoint_id=?", k).fetchone()
    d = json.loads(md)
    d["run_id"] = "copied-run-id"
    con.execute("UPDATE checkpoints SET metadata=? WHERE thread_id=? AND checkpoint_ns=? AND "
                "checkpoint_id=?", (json.dumps(d).encode(), *k))
    con.commit()
    con.close()
    return "added run_id to the new checkpoint's metadata"


CORRUPTIONS = [
    ("message-content", corrupt_message_content, ("1_get_state", "3_checkpoint")),
    ("delete-write-row", corrupt_delete_write, ("3_writes",)),
    ("bump-other-version", corrupt_bump_version, ("3_checkpoint",)),
    ("write-value-bytes", corrupt_write_value_bytes, ("3_writes",)),
    ("version-fraction", corrupt_version_fraction, ("3_checkpoint",)),
    ("other-thread-row", corrupt_other_thread, ("5_rows",)),
    ("metadata-run-id", corrupt_metadata_run_id, ("3_checkpoint",)),
]


def main() -> int:
    gen = generation()
    ap = argparse.ArgumentParser()
    ap.add_argument("--db", default=str(harness.ROOT / "fixtures" / f"{gen}.sqlite"))
    ap.add_argument("--threads", default=",".join(THREADS))
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    t0 = time.time()
    tmp = tempfile.mkdtemp(prefix="memctl-selftest-")
    ok_all = True
    results = {"generation": gen, "db": a.db, "pass_runs": [], "fail_runs": []}
    try:
        fixture = os.path.join(tmp, "fixture.sqlite")
        shutil.copy(a.db, fixture)  # never open the repo fixture itself with LangGraph
        print(f"selftest: generation {gen}, {a.db}")
        for thread in a.threads.split(","):
            for expect in EXPECTS + extra_expects(fixture, thread):
                orig = os.path.join(tmp, f"orig-{thread}.sqlite")
                new = os.path.join(tmp, f"new-{thread}.sqlite")
                shutil.copy(fixture, orig)
                made = make_langgraph_rewrite(fixture, new, thread, expect)
                rep = harness.check_rewrite(orig, new, thread, expect, workdir=tmp)
                ok = rep["passed"]
                ok_all &= ok
                ru = rep.get("reference_update", {})
                line = (f"  PASS-expected {thread:13} {label(expect):28} "
                        f"-> {'PASS' if ok else 'FAIL'}  as_node={made['as_node_inferred']!r} "
                        f"({made['as_node_source']}) kept={rep.get('expected', {}).get('ids')} "
                        f"write-bytes-equal={rep['checks'].get('3_writes', {}).get('value bytes equal (summary)', {}).get('detail')}")
                print(line)
                for f in rep["failures"]:
                    print(f"      {f}"[:600])
                for w in rep["warnings"]:
                    print(f"      warning: {w}")
                results["pass_runs"].append({"thread": thread, "expect": expect, "passed": ok,
                                             "as_node": made["as_node_inferred"],
                                             "reference_as_node": ru.get("as_node"),
                                             "failures": rep["failures"]})
                os.remove(orig)
                os.remove(new)

        # corrupted copies must FAIL, and in the expected check group
        thread, expect = "tools", EXPECTS[0]
        for name, fn, groups in CORRUPTIONS:
            orig = os.path.join(tmp, "orig-c.sqlite")
            new = os.path.join(tmp, "new-c.sqlite")
            shutil.copy(fixture, orig)
            make_langgraph_rewrite(fixture, new, thread, expect)
            what = fn(new, thread, harness.snapshot(orig))
            rep = harness.check_rewrite(orig, new, thread, expect, workdir=tmp)
            hit = [f for f in rep["failures"] if any(f.startswith(f"[{g}]") for g in groups)]
            ok = (not rep["passed"]) and bool(hit)
            ok_all &= ok
            print(f"  FAIL-expected {name:20} ({what}) -> "
                  f"{'detected' if ok else 'NOT DETECTED'}: {len(rep['failures'])} failure(s)")
            for f in rep["failures"][:4]:
                print(f"      {f}"[:300])
            results["fail_runs"].append({"corruption": name, "what": what, "detected": ok,
                                         "failures": rep["failures"]})

        # no-op: NEW untouched. Passes only when the expected list equals the current one and
        # "expect_write" is not set.
        for exp, should_pass in (({"mode": "trim", "max_tokens": 100, "counter": "len"}, True),
                                 ({"mode": "trim", "max_tokens": 100, "counter": "len",
                                   "expect_write": True}, False),
                                 ({"mode": "trim", "max_tokens": 2, "counter": "len"}, False)):
            orig = os.path.join(tmp, "orig-n.sqlite")
            new = os.path.join(tmp, "new-n.sqlite")
            shutil.copy(fixture, orig)
            shutil.copy(fixture, new)
            rep = harness.check_rewrite(orig, new, "1", exp, workdir=tmp)
            ok = rep["passed"] == should_pass
            ok_all &= ok
            print(f"  untouched NEW, {json.dumps(exp)} -> {'PASS' if rep['passed'] else 'FAIL'} "
                  f"(noop={rep.get('noop')}) {'as expected' if ok else 'WRONG'}")
            for f in rep["failures"][:2]:
                print(f"      {f}"[:200])

        # the CLI itself, once each way (exit codes and stdout JSON)
        orig = os.path.join(tmp, "orig-cli.sqlite")
        new = os.path.join(tmp, "new-cli.sqlite")
        shutil.copy(fixture, orig)
        make_langgraph_rewrite(fixture, new, "1", EXPECTS[0])
        exp_path = os.path.join(tmp, "expect.json")
        Path(exp_path).write_text(json.dumps(EXPECTS[0]))
        cmd = [sys.executable, str(Path(harness.__file__)), "check-rewrite", "--original", orig,
               "--rewritten", new, "--thread", "1", "--expect", exp_path]
        p = subprocess.run(cmd, capture_output=True, text=True)
        cli_ok = p.returncode == 0 and json.loads(p.stdout)["passed"]
        corrupt_delete_write(new, "1", harness.snapshot(orig))
        p2 = subprocess.run(cmd, capture_output=True, text=True)
        cli_ok &= p2.returncode == 1 and "FAIL [3_writes]" in p2.stderr
        p3 = subprocess.run([sys.executable, str(Path(harness.__file__)), "continue", "--db", new,
                             "--thread", "1"], capture_output=True, text=True)
        cli_ok &= p3.returncode == 0 and json.loads(p3.stdout)["messages_after"] > 0
        p4 = subprocess.run([sys.executable, str(Path(harness.__file__)), "continue", "--db",
                             os.path.join(tmp, "missing-dir", "x.sqlite"), "--thread", "1"],
                            capture_output=True, text=True)
        cli_ok &= p4.returncode == 1
        print(f"  CLI: check-rewrite pass rc={p.returncode}, corrupted rc={p2.returncode}, "
              f"continue rc={p3.returncode}, continue on bad path rc={p4.returncode} -> "
              f"{'ok' if cli_ok else 'BROKEN'}")
        ok_all &= cli_ok
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"selftest {gen}: {'OK' if ok_all else 'FAILED'} in {time.time() - t0:.1f}s")
    if a.json:
        print(json.dumps(results, ensure_ascii=False, indent=1))
    return 0 if ok_all else 1


if __name__ == "__main__":
    harness.ensure_hashseed_0(os.path.abspath(__file__))
    sys.exit(main())
