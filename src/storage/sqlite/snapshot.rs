//! Read connections on one SQLite file that all see the same state of it, so that a scan of a
//! whole table can be split across cores (`store namespaces`, forget's passes over the
//! Store) and still read exactly what one connection would have read.
//!
//! In WAL mode a read transaction sees the file as of its start, and an app may commit
//! between two connections' starts. Each extra connection reads `PRAGMA data_version` before
//! the first connection begins its read transaction, and again once its own has begun: the
//! value changes when another connection committed in between (the pragma's documented use),
//! so equal values on every extra connection mean all of them, and the first, began on the
//! same state. When one differs the split is given up ([`Pinned`] is not made) and the caller
//! reads on its one connection, as it would have anyway.
//!
//! A file in rollback-journal mode is never split: there, an app's write waiting for its
//! exclusive lock blocks new readers, so a second reader could wait behind the app while the
//! app waits for the first reader to finish. A file opened `immutable` (a WAL-mode file with no
//! `-wal`) or with its WAL index in memory (a `-wal` with no `-shm`) takes no locks at all:
//! each connection reads the file as it is, the assumption one connection already makes there.

use anyhow::Result;
use rusqlite::{Connection, Transaction};

/// The most connections a split scan uses (the first and three more): the scans are limited
/// by the page reads, which stop scaling beyond a few cores.
pub const MOST: usize = 4;

/// A table's rows at or above this many rowids apart are worth a split: below, opening the
/// extra connections costs more than it saves.
pub const SPLIT_FROM: i64 = 20_000;

/// How the file was opened, which decides whether connections can be pinned to one state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Locking {
    /// With SQLite's file locks (the usual way): split only in WAL mode, checked.
    Locked,
    /// Without locks (`immutable`, or the WAL index in memory): nothing to check.
    None,
}

/// A first connection and more, each in a read transaction begun on the same state of the
/// file. The transactions end (read only: nothing to commit) when it is dropped.
pub struct Pinned<'c> {
    first: Transaction<'c>,
    /// The other connections, each to be read on a thread of its own.
    pub more: Vec<Connection>,
}

impl Pinned<'_> {
    /// The first connection, in its read transaction.
    pub fn first(&self) -> &Connection {
        &self.first
    }
}

/// Pins `first` and `more.len()` other connections (opened the same way on the same file) to
/// one state of the file. `None`, every transaction ended, when that cannot be had: `first`
/// is already in a transaction, the file is in rollback-journal mode, or an app committed
/// while they began (then read on `first` alone).
pub fn pin(
    first: &Connection,
    locking: Locking,
    more: Vec<Connection>,
) -> Result<Option<Pinned<'_>>> {
    if more.is_empty() || !first.is_autocommit() {
        return Ok(None);
    }
    let locked = locking == Locking::Locked;
    if locked {
        let mode: String = first.query_row("PRAGMA journal_mode", [], |r| r.get(0))?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Ok(None);
        }
    }
    let before = if locked {
        more.iter().map(data_version).collect::<Result<Vec<_>>>()?
    } else {
        Vec::new()
    };
    let txn = first.unchecked_transaction()?;
    // The read transaction begins with the first read.
    data_version(&txn)?;
    for (i, c) in more.iter().enumerate() {
        c.execute_batch("BEGIN")?;
        let now = data_version(c)?;
        if locked && before[i] != now {
            return Ok(None);
        }
    }
    Ok(Some(Pinned { first: txn, more }))
}

fn data_version(c: &Connection) -> Result<i64> {
    Ok(c.query_row("PRAGMA data_version", [], |r| r.get(0))?)
}

/// `table`'s rowids in `parts` contiguous ranges (inclusive; the first starts at `i64::MIN`,
/// the last ends at `i64::MAX`, so together they hold every row), split evenly between the
/// lowest and highest rowid `conn` sees. One range when the table spans fewer than
/// [`SPLIT_FROM`] rowids.
pub fn rowid_ranges(conn: &Connection, table: &str, parts: usize) -> Result<Vec<(i64, i64)>> {
    // Each aggregate alone: SQLite reads one end of the table for a lone `min` or `max`, and
    // the whole table for both in one `SELECT`.
    let (lo, hi): (Option<i64>, Option<i64>) = conn.query_row(
        &format!(
            "SELECT (SELECT min(rowid) FROM \"{table}\"), (SELECT max(rowid) FROM \"{table}\")"
        ),
        [],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    let (Some(lo), Some(hi)) = (lo, hi) else {
        return Ok(vec![(i64::MIN, i64::MAX)]);
    };
    Ok(ranges(lo, hi, parts))
}

/// [`rowid_ranges`] of a table whose rowids run from `lo` to `hi`.
fn ranges(lo: i64, hi: i64, parts: usize) -> Vec<(i64, i64)> {
    let span = i128::from(hi) - i128::from(lo) + 1;
    if parts <= 1 || span < i128::from(SPLIT_FROM) {
        return vec![(i64::MIN, i64::MAX)];
    }
    let n = parts as i128;
    // Starts of the second range on: lo + span * i / n, each within lo..=hi.
    let starts: Vec<i64> = (1..n)
        .map(|i| i64::try_from(i128::from(lo) + span * i / n).unwrap_or(hi))
        .collect();
    let mut out = Vec::with_capacity(parts);
    let mut from = i64::MIN;
    for s in starts {
        out.push((from, s - 1));
        from = s;
    }
    out.push((from, i64::MAX));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_cover_every_rowid_once() {
        let r = ranges(1, 1_000_000, 4);
        assert_eq!(r.len(), 4);
        assert_eq!(r[0].0, i64::MIN);
        assert_eq!(r[3].1, i64::MAX);
        for w in r.windows(2) {
            assert_eq!(w[0].1 + 1, w[1].0);
        }
        assert_eq!(r[1].0, 250_001);
        // Extreme rowids do not overflow.
        let r = ranges(i64::MIN, i64::MAX, 3);
        assert_eq!(r.len(), 3);
        assert!(r[0].1 < r[1].1 && r[1].1 < r[2].1);
        assert_eq!(ranges(1, 100, 4), vec![(i64::MIN, i64::MAX)]);
        assert_eq!(ranges(1, 1_000_000, 1), vec![(i64::MIN, i64::MAX)]);
    }

    fn wal_file(dir: &std::path::Path) -> std::path::PathBuf {
        let path = dir.join("s.sqlite");
        let c = Connection::open(&path).expect("open");
        c.execute_batch("PRAGMA journal_mode=WAL; CREATE TABLE t (x); INSERT INTO t VALUES (1);")
            .expect("made");
        path
    }

    #[test]
    fn pins_connections_to_one_state() {
        let dir = tempfile::tempdir().expect("dir");
        let path = wal_file(dir.path());
        let app = Connection::open(&path).expect("app");
        let first = Connection::open(&path).expect("first");
        let more = vec![Connection::open(&path).expect("more")];
        let pinned = pin(&first, Locking::Locked, more)
            .expect("pinned")
            .expect("quiet file");
        // A commit now is seen by neither.
        app.execute("INSERT INTO t VALUES (2)", [])
            .expect("app writes");
        let count = |c: &Connection| -> i64 {
            c.query_row("SELECT count(*) FROM t", [], |r| r.get(0))
                .expect("count")
        };
        assert_eq!(count(pinned.first()), 1);
        assert_eq!(count(&pinned.more[0]), 1);
        drop(pinned);
        assert_eq!(count(&first), 2);
    }

    #[test]
    fn data_version_shows_a_commit_between_two_starts() {
        let dir = tempfile::tempdir().expect("dir");
        let path = wal_file(dir.path());
        let first = Connection::open(&path).expect("first");
        let more = Connection::open(&path).expect("more");
        // `pin`'s premise: an app's commit between the first's start and the other's shows.
        let before = data_version(&more).expect("v");
        let txn = first.unchecked_transaction().expect("txn");
        data_version(&txn).expect("read");
        Connection::open(&path)
            .expect("app")
            .execute("INSERT INTO t VALUES (2)", [])
            .expect("app writes");
        more.execute_batch("BEGIN").expect("begin");
        assert_ne!(data_version(&more).expect("v"), before);
        drop(txn);
        more.execute_batch("ROLLBACK").expect("end");
        // A file in rollback-journal mode is not split.
        let plain = dir.path().join("p.sqlite");
        let c = Connection::open(&plain).expect("open");
        c.execute_batch("CREATE TABLE t (x)").expect("made");
        let other = vec![Connection::open(&plain).expect("more")];
        assert!(pin(&c, Locking::Locked, other).expect("asked").is_none());
        assert!(c.is_autocommit());
    }
}
