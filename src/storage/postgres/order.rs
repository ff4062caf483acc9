//! Whole-table reads in thread-id order, streamed from a cursor (issue #30: the first row of
//! `threads list --sort thread` at a million threads).
//!
//! memctl lists threads in bytewise order (as SQLite orders them). `PostgresSaver`'s primary
//! keys begin with `thread_id` in the column's collation: where that collation is bytewise
//! (`C`, `POSIX`, the builtin `C.UTF-8`), the keys are already in memctl's order, and a
//! grouped read can walk them and hand out its first rows at once. Written as
//! `ORDER BY thread_id COLLATE "C"` the server would sort the whole result first, even there
//! (34 s before the first row at 1,000,000 threads): so the order clause names the column's
//! own collation when it is bytewise (`PostgresStore::thread_order`).
//!
//! Elsewhere (ICU, `en_US.UTF-8`: most servers' default) no key the saver makes is in that
//! order, and the server sorts every thread's aggregates before the first row (20 s at
//! 500,000 threads). An index on `thread_id COLLATE "C"` on each of the three tables gives the
//! order back: grouped by that expression (a deterministic collation's equality is the bytes'
//! own, so the groups are the same), the read walks those indexes as it walks the primary keys
//! of a bytewise column ([`ThreadOrder::Indexed`]; same rows, same total time, measured).
//! `stats` recommends them where they are missing ([`THREAD_INDEX_ADVICE`]).
//!
//! The rows come from a `DECLARE`d cursor: the server plans it for its first rows
//! (`cursor_tuple_fraction`), where a protocol-level portal is planned for all of them.
//! JIT compilation is off while it is planned: compiling took 0.2 s of a first fetch of 10 ms.

use std::sync::atomic::{AtomicU64, Ordering};

use anyhow::Result;

use super::PostgresStore;

/// The collations of `checkpoints.thread_id` and of the database, for
/// [`bytewise_collation`]. Read through `to_jsonb` so that the columns a server version does
/// not have (`datlocprovider` before 15, `datlocale` / `colllocale` before 17) read as null.
const COLLATION: &str = "SELECT a.attcollation = 100, \
        to_jsonb(co) ->> 'collprovider', co.collcollate, to_jsonb(co) ->> 'colllocale', \
        to_jsonb(d) ->> 'datlocprovider', d.datcollate, to_jsonb(d) ->> 'datlocale' \
     FROM pg_attribute a \
     LEFT JOIN pg_collation co ON co.oid = a.attcollation \
     JOIN pg_database d ON d.datname = current_database() \
     WHERE a.attrelid = 'checkpoints'::regclass AND a.attname = 'thread_id'";

/// A collation's provider and locale, as the catalogs give them.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Collation {
    /// `c` (libc), `i` (ICU), `b` (builtin, PostgreSQL 17+), `d` (the database's); none on
    /// servers before 15, which only have libc.
    pub provider: Option<String>,
    /// libc's `LC_COLLATE` name (`collcollate`, `datcollate`).
    pub libc: Option<String>,
    /// The ICU or builtin locale (`colllocale`, `datlocale`; PostgreSQL 17+).
    pub locale: Option<String>,
}

/// True when text in `collation` sorts by its bytes: libc's `C` / `POSIX`, the builtin
/// provider's `C` and `C.UTF-8` (code point order, which UTF-8 bytes keep). ICU never does.
pub fn bytewise_collation(collation: &Collation) -> bool {
    let is = |v: &Option<String>, names: &[&str]| v.as_deref().is_some_and(|v| names.contains(&v));
    match collation.provider.as_deref() {
        None | Some("c") => is(&collation.libc, &["C", "POSIX"]),
        Some("b") => is(&collation.locale, &["C", "C.UTF-8", "PG_UNICODE_FAST"]),
        _ => false,
    }
}

/// How a server gives the thread ids of the saver's tables in bytewise order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ThreadOrder {
    /// The column's collation is bytewise: the primary keys are in that order.
    Bytewise,
    /// Not bytewise, but indexes on `thread_id COLLATE "C"` give that order: reads group by
    /// that expression.
    Indexed,
    /// Neither: the server sorts.
    Sorted,
}

impl ThreadOrder {
    /// The expression a read groups each table's rows by (named `thread_id` in its result).
    pub fn group_key(self) -> &'static str {
        match self {
            ThreadOrder::Indexed => "thread_id COLLATE \"C\"",
            _ => "thread_id",
        }
    }

    /// `thread_id` as an expression that compares bytewise (for a range such as `> $1`).
    pub fn bytewise_key(self) -> &'static str {
        match self {
            ThreadOrder::Bytewise => "thread_id",
            _ => "thread_id COLLATE \"C\"",
        }
    }

    /// What follows a grouped result's `thread_id` column in its `ORDER BY`.
    pub fn order_suffix(self) -> &'static str {
        match self {
            ThreadOrder::Sorted => " COLLATE \"C\"",
            _ => "",
        }
    }
}

/// The indexes `stats` recommends where `thread_id`'s collation is not bytewise and the
/// reads would sort, as an operator would create them (`CONCURRENTLY`: the app's writes go
/// on; in the tables' schema, `%I`).
pub const THREAD_INDEX_ADVICE: [&str; 3] = [
    "CREATE INDEX CONCURRENTLY IF NOT EXISTS checkpoints_thread_id_c_idx ON %I.checkpoints (thread_id COLLATE \"C\")",
    "CREATE INDEX CONCURRENTLY IF NOT EXISTS checkpoint_writes_thread_id_c_idx ON %I.checkpoint_writes (thread_id COLLATE \"C\")",
    "CREATE INDEX CONCURRENTLY IF NOT EXISTS checkpoint_blobs_thread_id_c_idx ON %I.checkpoint_blobs (thread_id COLLATE \"C\")",
];

/// Cursors opened by this process, for unique names (a stream may run inside another's `f`).
static CURSORS: AtomicU64 = AtomicU64::new(0);

impl PostgresStore {
    /// How this server gives the thread ids in bytewise order (asked once): by the
    /// column's collation, else by whether the cursor over every thread's aggregates would
    /// read indexes on `thread_id COLLATE "C"` without a sort.
    pub(super) fn thread_ids(&self) -> Result<ThreadOrder> {
        if let Some(&order) = self.thread_ids.get() {
            return Ok(order);
        }
        let order = if self.bytewise_threads()? {
            ThreadOrder::Bytewise
        } else if self.cursor_reads_in_order(&super::summaries_sql(false, ThreadOrder::Indexed))? {
            ThreadOrder::Indexed
        } else {
            ThreadOrder::Sorted
        };
        Ok(*self.thread_ids.get_or_init(|| order))
    }

    /// True when the server would plan a cursor over `sql` without a sort.
    fn cursor_reads_in_order(&self, sql: &str) -> Result<bool> {
        let plan = self.query(
            &format!("EXPLAIN (COSTS OFF) DECLARE memctl_plan NO SCROLL CURSOR FOR {sql}"),
            &[],
        )?;
        let mut sorted = false;
        for r in &plan {
            sorted |= super::get_str(r, 0)?.contains("Sort");
        }
        Ok(!sorted)
    }

    /// The statements that create [`THREAD_INDEX_ADVICE`]'s indexes in this store's schema
    /// where the reads would sort; none otherwise.
    pub(super) fn thread_index_advice(&self) -> Result<Vec<String>> {
        if self.thread_ids()? != ThreadOrder::Sorted {
            return Ok(Vec::new());
        }
        let mut advice = Vec::with_capacity(THREAD_INDEX_ADVICE.len());
        for sql in THREAD_INDEX_ADVICE {
            advice.extend(self.advice_in_schema(sql)?);
        }
        Ok(advice)
    }

    /// True when `checkpoints.thread_id`'s collation sorts bytewise.
    fn bytewise_threads(&self) -> Result<bool> {
        let rows = self.query(COLLATION, &[])?;
        let bytewise = match rows.first() {
            Some(r) => {
                let e = |e| self.err(e);
                let text = |i: usize| r.try_get::<_, Option<String>>(i).map_err(e);
                let column = Collation {
                    provider: text(1)?,
                    libc: text(2)?,
                    locale: text(3)?,
                };
                let database = Collation {
                    provider: text(4)?,
                    libc: text(5)?,
                    locale: text(6)?,
                };
                let default: bool = r.try_get(0).map_err(e)?;
                bytewise_collation(if default { &database } else { &column })
            }
            None => false,
        };
        Ok(bytewise)
    }

    /// Runs `sql` (no parameters) through a cursor in this store's read snapshot and hands its
    /// rows to `f` `batch` at a time, until they end or `f` returns false: the server keeps
    /// the result, memctl holds one batch. The connection is free while `f` runs.
    pub(super) fn stream_rows(
        &self,
        sql: &str,
        batch: usize,
        f: &mut dyn FnMut(Vec<postgres::Row>) -> Result<bool>,
    ) -> Result<()> {
        let name = format!("memctl_stream_{}", CURSORS.fetch_add(1, Ordering::Relaxed));
        let fetch = format!("FETCH FORWARD {} FROM {name}", batch.max(1));
        self.in_read_snapshot(|| {
            self.client()
                .batch_execute(&format!(
                    "SET LOCAL jit = off; DECLARE {name} NO SCROLL CURSOR FOR {sql}; RESET jit"
                ))
                .map_err(|e| self.err(e))?;
            // Prepared once: a FETCH given as text would be parsed anew each time, a round
            // trip of its own (88,589 of them in a forget at 10 GB, 9 s).
            let fetch = self.client().prepare(&fetch).map_err(|e| self.err(e))?;
            loop {
                let rows = self.client().query(&fetch, &[]).map_err(|e| self.err(e))?;
                let last = rows.len() < batch.max(1);
                if rows.is_empty() || !f(rows)? || last {
                    break;
                }
            }
            self.client()
                .batch_execute(&format!("CLOSE {name}"))
                .map_err(|e| self.err(e))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(provider: Option<&str>, libc: Option<&str>, locale: Option<&str>) -> Collation {
        Collation {
            provider: provider.map(str::to_owned),
            libc: libc.map(str::to_owned),
            locale: locale.map(str::to_owned),
        }
    }

    #[test]
    fn only_byte_order_collations_count_as_bytewise() {
        assert!(bytewise_collation(&c(Some("c"), Some("C"), None)));
        assert!(bytewise_collation(&c(Some("c"), Some("POSIX"), None)));
        assert!(bytewise_collation(&c(None, Some("C"), None)));
        assert!(bytewise_collation(&c(
            Some("b"),
            Some("C"),
            Some("C.UTF-8")
        )));
        assert!(!bytewise_collation(&c(
            Some("c"),
            Some("en_US.UTF-8"),
            None
        )));
        assert!(!bytewise_collation(&c(Some("c"), Some("C.UTF-8"), None)));
        assert!(!bytewise_collation(&c(Some("i"), Some("C"), Some("und"))));
        assert!(!bytewise_collation(&c(Some("d"), None, None)));
        assert!(!bytewise_collation(&Collation::default()));
    }
}
