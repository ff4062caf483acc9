#!/usr/bin/env bash
# SQLite's own cost of what `memctl trim` reads and writes, for comparison with memctl's time:
#
#   benches/trim_floor.sh SOURCE TRIMMED [N] [RUNS]
#
# SOURCE is the untouched database, TRIMMED a copy of it after `memctl trim --all ...` (only its
# new rows are used). The rows the trim appended (rowid above SOURCE's) are saved to a scratch
# database; then, RUNS times (default 5), on a fresh copy of SOURCE flushed to disk (not timed),
# the sqlite3 shell inserts the same rows in transactions of N threads (default 64, memctl's
# batch) with the file's default durability (synchronous FULL, WAL), timed with /usr/bin/time.
# Also timed: reading every thread's latest root checkpoint blob (the bytes trim reads).
# Scratch files go to target/bench/work-trim-floor/.
set -euo pipefail
src="$(realpath "$1")" trimmed="$(realpath "$2")" n="${3:-64}" runs="${4:-5}"
work="$(dirname "$0")/../target/bench/work-trim-floor"
mkdir -p "$work"; cd "$work"
rm -f new.sqlite copy.sqlite copy.sqlite-wal copy.sqlite-shm
cmax=$(sqlite3 "file:$src?mode=ro&immutable=1" "select max(rowid) from checkpoints")
wmax=$(sqlite3 "file:$src?mode=ro&immutable=1" "select max(rowid) from writes")
sqlite3 new.sqlite "ATTACH '$trimmed' AS t;
  CREATE TABLE checkpoints AS SELECT * FROM t.checkpoints WHERE rowid > $cmax ORDER BY rowid;
  CREATE TABLE writes AS SELECT * FROM t.writes WHERE rowid > $wmax ORDER BY rowid;"
threads=$(sqlite3 new.sqlite "select count(*) from checkpoints")
echo "new rows: $(sqlite3 new.sqlite "select count(*) || ' checkpoints, ' || sum(length(checkpoint) + length(metadata)) || ' bytes' from checkpoints"); $(sqlite3 new.sqlite "select count(*) || ' writes, ' || sum(length(value)) || ' bytes' from writes")"
sql="ATTACH 'new.sqlite' AS n;"
for ((s = 0; s < threads; s += n)); do
  sql+="BEGIN IMMEDIATE;
    INSERT INTO checkpoints SELECT * FROM n.checkpoints WHERE rowid > $s AND rowid <= $((s + n));
    INSERT INTO writes SELECT * FROM n.writes WHERE rowid > $s AND rowid <= $((s + n));
    COMMIT;"
done
latest="SELECT sum(length(substr(c.checkpoint, 2))) FROM checkpoints c JOIN (SELECT thread_id,
  MAX(checkpoint_id) AS m FROM checkpoints WHERE checkpoint_ns = '' GROUP BY thread_id) l
  ON c.thread_id = l.thread_id AND c.checkpoint_ns = '' AND c.checkpoint_id = l.m"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
for ((i = 1; i <= runs; i++)); do
  rm -f copy.sqlite copy.sqlite-wal copy.sqlite-shm
  cp "$src" copy.sqlite; sync
  /usr/bin/time -f "read latest blobs: %e s wall, %U + %S s CPU" sqlite3 -readonly copy.sqlite "$latest" >/dev/null
  /usr/bin/time -f "insert the rows, $n threads per transaction: %e s wall, %U + %S s CPU" sqlite3 copy.sqlite "$sql"
done
rm -f copy.sqlite copy.sqlite-wal copy.sqlite-shm
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
