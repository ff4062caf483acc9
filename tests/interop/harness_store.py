#!/usr/bin/env python
"""Interop harness for the LangGraph Store (issue #28): real LangGraph's SqliteStore (venv
.venv/new, a file path) or PostgresStore (venv .venv/pg, a postgresql:// URL) reads what
memctl left, or makes the same change the Python way on another copy.

    harness_store.py [--index] view --db DB
                                         what LangGraph reads (list_namespaces, search, get;
                                         nothing refreshed): fixtures/generate_store.py's view
    harness_store.py delete --db DB --ns A.B [--key K ...]
                                         store.delete of the keys, or of every item search()
                                         finds in exactly that namespace
    harness_store.py sweep --db DB       store.sweep_ttl(); prints {"swept": N}
    harness_store.py live --db DB --stop-file F --progress-file P
                                         a live app (tests/store_live.rs): rounds of put() in
                                         LIVE_WRITES until F exists, each round's number written
                                         to P; prints {"rounds", "errors", "final"} (the value
                                         of its last write of each key)
    harness_store.py seed --db DB --n N  puts N items with store.batch: namespaces
                                         ("bulk", "b-K") for K < 50, values {"user_id": "b-K",
                                         "text": ...}; prints {"put": N}
    harness_store.py carry-on --db DB    the app carries on: put an item in a namespace memctl
                                         touched and a new one, get both back, list namespaces

--index opens a SQLite store with the embedding index of fixtures/store-vec.sqlite
(generate_store.VEC_INDEX; venv .venv/vec, whose sqlite3 loads sqlite-vec): then `view` adds
the vector searches (search(query=...)) and the store_vectors rows, and `carry-on` puts items
that get embedded.

Prints a JSON report on stdout; exit 0 when it worked, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "fixtures"))

import generate_store as gs  # noqa: E402


def open_store(db: str, index: bool):
    if db.startswith(("postgres://", "postgresql://")):
        return gs.pg_store(db)
    return gs.sqlite_store(Path(db), index=index)


# What the live app rewrites each round: (namespace, key pattern, how many keys). tests/store_live.rs
# seeds the same keys first (expired ones in live.old, plain ones in live.bulk and u-9's).
# The keys the live app rewrites: the first quarter of each seeded namespace (tests/store_live.rs
# seeds 12,000 / 1,200 / 600), so that however many rounds the app makes while memctl runs, the
# other three quarters are items only memctl touches (and must delete); live.app is the app's own.
LIVE_WRITES = [
    (("live", "old"), "o{}", 3000),
    (("live", "bulk"), "b{}", 300),
    (("users", "u-9", "memories"), "m{}", 150),
    (("live", "app"), "k{}", 50),
]


def live(store, stop: Path, progress: Path) -> dict:
    """Rewrite a few keys of every LIVE_WRITES namespace per round (new value, a TTL far in the
    future) until `stop` exists; every error is recorded, never raised."""
    errors: list[str] = []
    final: dict[str, dict] = {}
    r = 0
    while not stop.exists():
        for ns, pattern, n in LIVE_WRITES:
            for j in range(3):
                key = pattern.format((r * 7 + j * 101) % n)
                value = {"app": r, "text": f"written by the app, round {r}"}
                try:
                    store.put(ns, key, value, ttl=gs.FAR)
                    final[".".join(ns) + "|" + key] = value
                except Exception as e:  # noqa: BLE001  (recorded: the test fails on any)
                    errors.append(f"{ns}/{key}: {type(e).__name__}: {e}")
        r += 1
        progress.write_text(str(r))
    return {"rounds": r, "errors": errors, "final": final}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("cmd", choices=["view", "delete", "sweep", "carry-on", "live", "seed"])
    ap.add_argument("--n", type=int, default=0)
    ap.add_argument("--stop-file")
    ap.add_argument("--progress-file")
    ap.add_argument("--db", required=True)
    ap.add_argument("--ns")
    ap.add_argument("--key", action="append", default=[])
    ap.add_argument("--index", action="store_true")
    a = ap.parse_args()
    conn, store = open_store(a.db, a.index)
    if a.cmd == "live":
        report = live(store, Path(a.stop_file), Path(a.progress_file))
    elif a.cmd == "view":
        report = gs.view(store)
        if a.index:
            report.update(gs.vector_view(store))
            report["vectors"] = [list(r) for r in conn.execute(
                "SELECT prefix, key, field_name FROM store_vectors ORDER BY prefix, key, field_name")]
    elif a.cmd == "delete":
        ns = tuple(a.ns.split("."))
        keys = a.key or [i.key for i in store.search(ns, limit=1_000_000, refresh_ttl=False)
                         if tuple(i.namespace) == ns]
        for k in keys:
            store.delete(ns, k)
        report = {"deleted": sorted(keys)}
    elif a.cmd == "sweep":
        report = {"swept": store.sweep_ttl()}
    elif a.cmd == "seed":
        from langgraph.store.base import PutOp
        store.batch([PutOp(("bulk", f"b-{i % 50}"), f"k{i:06d}",
                           {"user_id": f"b-{i % 50}", "text": f"bulk memory {i} ü"})
                     for i in range(a.n)])
        report = {"put": a.n}
    else:
        store.put(("users", "u-42", "memories"), "after", {"text": "written after memctl"})
        store.put(("fresh",), "k", {"v": "ü"})
        a1 = store.get(("users", "u-42", "memories"), "after", refresh_ttl=False)
        a2 = store.get(("fresh",), "k", refresh_ttl=False)
        ok = a1 is not None and a1.value["text"] == "written after memctl" and a2 is not None
        if a.index:
            hits = store.search(("users", "u-42"), query="written after memctl", limit=1, refresh_ttl=False)
            ok = ok and [h.key for h in hits] == ["after"]
        report = {"ok": ok, "namespaces": [list(n) for n in store.list_namespaces(limit=100000)]}
        if not ok:
            print(json.dumps(report), file=sys.stderr)
            return 1
    conn.close()
    print(json.dumps(report, ensure_ascii=False, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
