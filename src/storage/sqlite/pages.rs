//! Whole-database lists read a page at a time on the handle that writes (issue #30): a
//! write run over every thread must not keep a read open on a second handle (a long read
//! transaction blocks WAL checkpoints, and in rollback-journal mode the writer), nor hold
//! every thread before it starts. Each page is one short query that seeks in the primary
//! key past the last thread handed out (`thread_id > ?`, as stored: a blob or integer id
//! pages in the order `ORDER BY thread_id` gives it), and is read whole before `f` runs.

use anyhow::Result;
use rusqlite::types::{ToSql, ToSqlOutput, ValueRef};

use super::{text, SqliteStore, ThreadAgg, CHECKPOINT_FACTS};
use crate::storage::ThreadSummary;

/// `(thread_id, latest root checkpoint id)` of the threads after `?2`, at most `?1`.
const LATEST_ROOT_AFTER: &str = "SELECT thread_id, MAX(checkpoint_id) FROM checkpoints \
     WHERE checkpoint_ns = '' AND thread_id > ?2 GROUP BY thread_id ORDER BY thread_id LIMIT ?1";

/// [`LATEST_ROOT_AFTER`] from the first thread.
const LATEST_ROOT_FIRST: &str = "SELECT thread_id, MAX(checkpoint_id) FROM checkpoints \
     WHERE checkpoint_ns = '' GROUP BY thread_id ORDER BY thread_id LIMIT ?1";

/// The thread ids after `?2`, at most `?1` (the primary key's index alone).
const THREADS_AFTER: &str = "SELECT DISTINCT thread_id FROM checkpoints WHERE thread_id > ?2 \
     ORDER BY thread_id LIMIT ?1";

/// [`THREADS_AFTER`] from the first thread.
const THREADS_FIRST: &str =
    "SELECT DISTINCT thread_id FROM checkpoints ORDER BY thread_id LIMIT ?1";

/// A thread id as stored, owned (rusqlite's `Value` would panic on text that is not UTF-8).
#[derive(Clone)]
enum Key {
    Null,
    Integer(i64),
    Real(f64),
    Text(Vec<u8>),
    Blob(Vec<u8>),
}

impl Key {
    fn of(v: ValueRef<'_>) -> Key {
        match v {
            ValueRef::Null => Key::Null,
            ValueRef::Integer(n) => Key::Integer(n),
            ValueRef::Real(x) => Key::Real(x),
            ValueRef::Text(t) => Key::Text(t.to_vec()),
            ValueRef::Blob(b) => Key::Blob(b.to_vec()),
        }
    }

    /// Its bytes, as the other thread reads show the id (`key` in the parent module).
    fn bytes(&self) -> Vec<u8> {
        match self {
            Key::Null => Vec::new(),
            Key::Integer(n) => n.to_string().into_bytes(),
            Key::Real(x) => x.to_string().into_bytes(),
            Key::Text(b) | Key::Blob(b) => b.clone(),
        }
    }
}

impl ToSql for Key {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(ToSqlOutput::Borrowed(match self {
            Key::Null => ValueRef::Null,
            Key::Integer(n) => ValueRef::Integer(*n),
            Key::Real(x) => ValueRef::Real(*x),
            Key::Text(t) => ValueRef::Text(t),
            Key::Blob(b) => ValueRef::Blob(b),
        }))
    }
}

impl SqliteStore {
    /// One page of `first` / `after` (the threads after `after`, at most `n`): per row, the
    /// thread id as stored and what `row` reads of it.
    fn page<T>(
        &self,
        first: &str,
        next: &str,
        after: Option<&Key>,
        n: usize,
        row: impl Fn(&rusqlite::Row<'_>) -> rusqlite::Result<T>,
    ) -> Result<Vec<(Key, T)>> {
        let sql_err = |e| self.sql_error(e);
        let limit = i64::try_from(n.max(1)).unwrap_or(i64::MAX);
        let mut stmt = self
            .conn
            .prepare_cached(if after.is_some() { next } else { first })
            .map_err(sql_err)?;
        let read = |r: &rusqlite::Row<'_>| Ok((Key::of(r.get_ref(0)?), row(r)?));
        let rows = match after {
            Some(a) => stmt.query_map(rusqlite::params![limit, a], read),
            None => stmt.query_map(rusqlite::params![limit], read),
        }
        .map_err(sql_err)?;
        rows.collect::<rusqlite::Result<Vec<_>>>().map_err(sql_err)
    }

    /// Hands `f` every page of `first` / `next` (see [`Self::page`]) until one is short or
    /// `f` returns false.
    fn pages<T>(
        &self,
        first: &str,
        next: &str,
        batch: usize,
        row: impl Fn(&rusqlite::Row<'_>) -> rusqlite::Result<T>,
        f: &mut dyn FnMut(Vec<(Key, T)>) -> Result<bool>,
    ) -> Result<()> {
        let mut after: Option<Key> = None;
        loop {
            let page = self.page(first, next, after.as_ref(), batch, &row)?;
            let full = page.len() >= batch.max(1);
            let Some((last, _)) = page.last() else {
                return Ok(());
            };
            after = Some(last.clone());
            if !f(page)? || !full {
                return Ok(());
            }
        }
    }

    /// [`crate::storage::CheckpointStore::page_latest_root_ids`].
    pub(super) fn latest_root_id_pages(
        &self,
        batch: usize,
        f: &mut dyn FnMut(Vec<(String, String)>) -> Result<bool>,
    ) -> Result<()> {
        self.pages(
            LATEST_ROOT_FIRST,
            LATEST_ROOT_AFTER,
            batch,
            |r| Ok((text(r, 0)?, text(r, 1)?)),
            &mut |page| f(page.into_iter().map(|(_, ids)| ids).collect()),
        )
    }

    /// [`crate::storage::CheckpointStore::page_threads`]: each thread's aggregates read by
    /// its id as stored, as [`crate::storage::CheckpointStore::summaries_of`] reads them.
    pub(super) fn thread_pages(
        &self,
        batch: usize,
        f: &mut dyn FnMut(Vec<ThreadSummary>) -> Result<bool>,
    ) -> Result<()> {
        self.pages(
            THREADS_FIRST,
            THREADS_AFTER,
            batch,
            |_| Ok(()),
            &mut |page| {
                let summaries = page
                    .iter()
                    .map(|(id, ())| self.summary_of_key(id))
                    .collect::<Result<Vec<_>>>()?;
                f(summaries.into_iter().flatten().collect())
            },
        )
    }

    /// The aggregates of the thread whose id is stored as `id` (`None` when it has no
    /// checkpoint left).
    fn summary_of_key(&self, id: &Key) -> Result<Option<ThreadSummary>> {
        self.summary_stored_as(id, &id.bytes())
    }

    /// The aggregates of the thread whose id is stored as `id` (shown as `bytes`; `None`
    /// when it has no checkpoint left): its checkpoints' facts, then its writes.
    pub(super) fn summary_stored_as(
        &self,
        id: &dyn ToSql,
        bytes: &[u8],
    ) -> Result<Option<ThreadSummary>> {
        let sql_err = |e| self.sql_error(e);
        let mut agg = ThreadAgg::default();
        let mut stmt = self
            .conn
            .prepare_cached(&format!(
                "SELECT {CHECKPOINT_FACTS} FROM checkpoints WHERE thread_id = ?1"
            ))
            .map_err(sql_err)?;
        let mut rows = stmt.query([id]).map_err(sql_err)?;
        while let Some(row) = rows.next().map_err(sql_err)? {
            agg.add_checkpoint(row, 0).map_err(sql_err)?;
        }
        if agg.checkpoints == 0 {
            return Ok(None);
        }
        self.with_writes(agg, bytes).map(Some)
    }
}
