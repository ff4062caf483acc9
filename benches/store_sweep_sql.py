#!/usr/bin/env python3
"""The SQL of a batched store sweep, timed in Python sqlite3 on a fresh copy of a benches/store.py
data file (issue #28): the bare DELETE; `rowid IN (SELECT rowid ... LIMIT N)` per batch
(memctl until 2026-12-03); the expired rowids read once, ordered by (prefix, key) or rowid, then
deleted N per transaction, each DELETE rechecking the expiry (memctl now). Prints total time, items
and the longest transaction. Usage: python benches/store_sweep_sql.py DATA.sqlite bare
"lambda: sub(5000)" "lambda: sorted_ids(5000)" "lambda: sorted_ids(5000, 'rowid')"
"""
import sqlite3, shutil, time, sys, os
SRC = sys.argv[1]
W = SRC + '.sweep-work'
EXP="(expires_at IS NOT NULL AND expires_at < ?1)"
def fresh():
    for s in ('','-wal','-shm'):
        try: os.unlink(W+s)
        except FileNotFoundError: pass
    shutil.copyfile(SRC,W)
    with open(W,'rb') as f:
        while f.read(1<<22): pass
    c=sqlite3.connect(W,isolation_level=None); return c
def bare():
    c=fresh(); t=time.perf_counter()
    c.execute("BEGIN IMMEDIATE"); n=c.execute(f"DELETE FROM store WHERE expires_at IS NOT NULL AND expires_at < CURRENT_TIMESTAMP").rowcount; c.execute("COMMIT")
    return time.perf_counter()-t, n, time.perf_counter()-t
def sub(batch):
    c=fresh(); t=time.perf_counter(); now=c.execute("select CURRENT_TIMESTAMP").fetchone()[0]; n=0; longest=0
    while True:
        t1=time.perf_counter()
        c.execute("BEGIN IMMEDIATE")
        r=c.execute(f"DELETE FROM store WHERE {EXP} AND rowid IN (SELECT rowid FROM store WHERE {EXP} LIMIT {batch}) RETURNING prefix,key,length(CAST(value AS BLOB))",(now,)).fetchall()
        c.execute("COMMIT"); longest=max(longest,time.perf_counter()-t1)
        if not r: break
        n+=len(r)
    return time.perf_counter()-t, n, longest
def sorted_ids(batch, order="prefix, key"):
    c=fresh(); t=time.perf_counter(); now=c.execute("select CURRENT_TIMESTAMP").fetchone()[0]; n=0; longest=0
    ids=[r[0] for r in c.execute(f"SELECT rowid FROM store WHERE {EXP} ORDER BY {order}",(now,))]
    for i in range(0,len(ids),batch):
        chunk=ids[i:i+batch]
        t1=time.perf_counter()
        c.execute("BEGIN IMMEDIATE")
        r=c.execute(f"DELETE FROM store WHERE {EXP} AND rowid IN (SELECT value FROM json_each(?2)) RETURNING prefix,key,length(CAST(value AS BLOB))",(now,'['+','.join(map(str,chunk))+']')).fetchall()
        c.execute("COMMIT"); longest=max(longest,time.perf_counter()-t1)
        n+=len(r)
    return time.perf_counter()-t, n, longest
for name,f in [(a, eval(a)) for a in sys.argv[2:]]:
    tot,n,lg=f()
    print(f"{name:40s} total {tot:.2f}s  n={n}  longest tx {lg:.2f}s  load {os.getloadavg()[0]:.1f}", flush=True)
