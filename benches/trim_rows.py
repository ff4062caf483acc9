"""md5 of the rows a trim appended to a copy of a database (rowids above the source's), with
the parts that differ on every run masked: the new checkpoint's id, its `ts`, and the channel
version strings (their random part). Two builds that write the same rows print the same sums.

    python3 benches/trim_rows.py COPY SOURCE
"""
import hashlib, re, sqlite3, sys
copy, src = sys.argv[1], sys.argv[2]
s = sqlite3.connect(f"file:{src}?mode=ro&immutable=1", uri=True)  # never creates -wal/-shm
cmax = s.execute("select max(rowid) from checkpoints").fetchone()[0]
wmax = s.execute("select max(rowid) from writes").fetchone()[0]
c = sqlite3.connect(copy)
TS = re.compile(rb"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?\+00:00")
VER = re.compile(rb"\xd9.\d{32}\.\d+\.\d+", re.S)
h = hashlib.md5(); n = 0
for row in c.execute("select thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata "
                     "from checkpoints where rowid > ? order by thread_id", (cmax,)):
    t, ns, cid, parent, typ, blob, md = row
    blob = blob.replace(cid.encode(), b"<ID>")
    blob = TS.sub(b"<TS>", blob)
    blob = VER.sub(b"<V>", blob)
    h.update(repr((t, ns, parent, typ, blob, md)).encode()); n += 1
print("checkpoints", n, h.hexdigest())
h = hashlib.md5(); n = 0
for row in c.execute("select * from writes where rowid > ? order by thread_id, task_id, idx", (wmax,)):
    h.update(repr(row).encode()); n += 1
print("writes", n, h.hexdigest())
