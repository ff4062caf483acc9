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

/// Cursors opened by this process, for unique names (a stream may run inside another's `f`).
static CURSORS: AtomicU64 = AtomicU64::new(0);

impl PostgresStore {
    /// `ORDER BY` / `GROUP BY` key for thread ids in bytewise order: the bare column where its
    /// collation is bytewise (the primary key's order, no sort), else `COLLATE "C"`.
    pub(super) fn thread_order(&self) -> Result<&'static str> {
        if let Some(&bytewise) = self.bytewise_threads.get() {
            return Ok(order_by(bytewise));
        }
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
        Ok(order_by(*self.bytewise_threads.get_or_init(|| bytewise)))
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

fn order_by(bytewise: bool) -> &'static str {
    if bytewise {
        "thread_id"
    } else {
        "thread_id COLLATE \"C\""
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
