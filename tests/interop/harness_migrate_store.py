#!/usr/bin/env python
"""Interop harness for `memctl migrate`'s Store part (issue #29): what real LangGraph reads
from a store, in a form that compares across backends (SqliteStore in venv .venv/new, or
.venv/vec with --index; PostgresStore in .venv/pg, a postgresql:// URL).

    harness_migrate_store.py [--index] view --db DB
        every namespace of list_namespaces(), and for each the items search() returns for it
        (refresh_ttl=False, only those of exactly that namespace, by key) with get()'s Item
        (refresh_ttl=False): namespace, key, value, created_at, updated_at. Timestamps are
        given as UTC instants (SqliteStore returns naive UTC datetimes, PostgresStore aware
        ones in the session's time zone). With --index: the vector searches of
        generate_store.vector_view and the store_vectors rows.
    harness_migrate_store.py [--index] sweep --db DB
        store.sweep_ttl(), then view: {"swept": N, "view": ...}

Prints a JSON report on stdout; exit 0 when it worked, 1 otherwise.
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness_store as hs  # noqa: E402


def utc(t) -> str | None:
    """A datetime as an ISO UTC instant, naive ones taken as UTC (SqliteStore's)."""
    if t is None:
        return None
    if t.tzinfo is not None:
        t = t.astimezone(datetime.timezone.utc).replace(tzinfo=None)
    return t.isoformat(timespec="microseconds")


def item(i) -> dict:
    return {
        "namespace": list(i.namespace),
        "key": i.key,
        "value": i.value,
        "created_at": utc(i.created_at),
        "updated_at": utc(i.updated_at),
    }


def view(conn, store, index: bool) -> dict:
    out = []
    for ns in store.list_namespaces(limit=100000):
        found = store.search(ns, limit=100000, refresh_ttl=False)
        items = sorted((i for i in found if tuple(i.namespace) == tuple(ns)), key=lambda i: i.key)
        out.append({
            "namespace": list(ns),
            "items": [item(i) for i in items],
            "get": [item(store.get(ns, i.key, refresh_ttl=False)) for i in items],
        })
    report = {"namespaces": out}
    if index:
        report.update(hs.gs.vector_view(store))
        report["vectors"] = [list(r) for r in conn.execute(
            "SELECT prefix, key, field_name, hex(embedding) FROM store_vectors "
            "ORDER BY prefix, key, field_name")]
    return report


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("cmd", choices=["view", "sweep"])
    ap.add_argument("--db", required=True)
    ap.add_argument("--index", action="store_true")
    a = ap.parse_args()
    conn, store = hs.open_store(a.db, a.index)
    if a.cmd == "view":
        report = view(conn, store, a.index)
    else:
        swept = store.sweep_ttl()
        report = {"swept": swept, "view": view(conn, store, a.index)}
    conn.close()
    print(json.dumps(report, ensure_ascii=False, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
