//! `SqliteSaver`'s file: read-only opening, schema detection and queries.

pub mod copy;
pub mod freed;
pub mod freemap;
pub mod kept_open;
pub mod maintenance;
pub mod namespaces;
mod pages;
pub mod rekey;
pub mod snapshot;
pub mod store;
pub mod wal;

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};
use rusqlite::types::ValueRef;
use rusqlite::{Connection, ErrorCode, OpenFlags, OptionalExtension, Row};

use crate::codec::pieces::Pieces;

use crate::storage::{
    Batches, BlobKind, BlobRewriter, CheckpointInfo, CheckpointRewrite, CheckpointRow,
    CheckpointStore, Deleted, FileStats, Forensics, Gc, Leftover, Maintenance, MetadataRow,
    NewRows, Orphans, PageSize, RawBytes, RewriteValues, SchemaGeneration, Sharing, Space,
    ThreadMoved, ThreadSummary, ValueCursor, ValuePage, ValueRewriter, WriteRow,
};

/// Columns memctl reads from `checkpoints`.
const CHECKPOINT_COLUMNS: [&str; 7] = [
    "thread_id",
    "checkpoint_ns",
    "checkpoint_id",
    "parent_checkpoint_id",
    "type",
    "checkpoint",
    "metadata",
];
/// Columns memctl reads from `writes` (both generations).
const WRITE_COLUMNS: [&str; 8] = [
    "thread_id",
    "checkpoint_ns",
    "checkpoint_id",
    "task_id",
    "idx",
    "channel",
    "type",
    "value",
];

/// A `SqliteSaver` database.
pub struct SqliteStore {
    conn: Connection,
    path: PathBuf,
    generation: SchemaGeneration,
    busy_timeout: Duration,
    shared: bool,
    /// The WAL checkpointer of a batch rewrite (`None` inside until the first batch;
    /// `Some(None)` when the file is not in WAL mode).
    checkpointer: std::sync::Mutex<Option<Option<wal::WalCheckpointer>>>,
    /// The last [`crate::storage::Forensics::find_leftovers`] searched the file's free space only.
    searched_free_space: std::cell::Cell<bool>,
}

impl SqliteStore {
    /// Opens an existing file read-only. Never creates or changes the file, and leaves the
    /// directory as it found it:
    /// - a WAL-mode database whose `-wal` file does not exist (no connection has it open, and
    ///   every commit is in the main file) is opened `immutable`, so SQLite creates no `-wal` /
    ///   `-shm` files (which a read-only directory would not allow and which, left behind by
    ///   another user, lock the app out);
    /// - a `-wal` without its `-shm` (an app that crashed, or files copied without it: no
    ///   connection has the database open, or the `-shm` would be there) is read through
    ///   SQLite's `unix-none` VFS in `EXCLUSIVE` locking mode, which keeps the WAL index in
    ///   this process's memory: the commits in the `-wal` are read, and no `-shm` is made;
    /// - with both (a live app), the normal read-only open reads its commits through the
    ///   existing `-shm`.
    ///
    /// A hot rollback journal (an app interrupted mid-write in rollback-journal mode) is not
    /// rolled back (that is a write): the error says so ([`explain`]).
    pub fn open_read_only(path: &Path, busy_timeout: Duration) -> Result<SqliteStore> {
        check_file(path)?;
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
            | OpenFlags::SQLITE_OPEN_NO_MUTEX
            | OpenFlags::SQLITE_OPEN_URI;
        if is_wal_mode(path) && !sidecar(path, "-wal").exists() {
            let uri = format!("file:{}?immutable=1", uri_path(path));
            let conn = Connection::open_with_flags(&uri, flags)
                .map_err(|e| explain(e, path))
                .with_context(|| format!("cannot open '{}'", crate::storage::shown_path(path)))?;
            return SqliteStore::from_connection(conn, path, busy_timeout);
        }
        if cfg!(unix) && is_wal_mode(path) && !sidecar(path, "-shm").exists() {
            let uri = format!("file:{}?vfs=unix-none", uri_path(path));
            let conn = Connection::open_with_flags(&uri, flags)
                .map_err(|e| explain(e, path))
                .with_context(|| format!("cannot open '{}'", crate::storage::shown_path(path)))?;
            // Before the first read: the WAL index then lives in this process's memory.
            conn.pragma_update(None, "locking_mode", "EXCLUSIVE")
                .map_err(|e| explain(e, path))
                .with_context(|| format!("cannot open '{}'", crate::storage::shown_path(path)))?;
            no_checkpoint_on_close(&conn, path)?;
            return SqliteStore::from_connection(conn, path, busy_timeout);
        }
        let store = SqliteStore::open(path, busy_timeout, OpenFlags::SQLITE_OPEN_READ_ONLY, "")?;
        no_checkpoint_on_close(&store.conn, path)?;
        Ok(store)
    }

    /// Opens an existing file for writing (for rewrites). Never creates the file.
    pub fn open_read_write(path: &Path, busy_timeout: Duration) -> Result<SqliteStore> {
        SqliteStore::open(
            path,
            busy_timeout,
            OpenFlags::SQLITE_OPEN_READ_WRITE,
            " for writing",
        )
    }

    /// Opens an existing regular file with `mode` (never with CREATE).
    fn open(
        path: &Path,
        busy_timeout: Duration,
        mode: OpenFlags,
        what: &str,
    ) -> Result<SqliteStore> {
        check_file(path)?;
        if mode.contains(OpenFlags::SQLITE_OPEN_READ_WRITE) {
            check_writable(path)?;
        }
        let flags = mode | OpenFlags::SQLITE_OPEN_NO_MUTEX | OpenFlags::SQLITE_OPEN_URI;
        let conn = Connection::open_with_flags(path, flags)
            .map_err(|e| explain(e, path))
            .with_context(|| format!("cannot open '{}'{what}", crate::storage::shown_path(path)))?;
        SqliteStore::from_connection(conn, path, busy_timeout)
    }

    fn from_connection(
        conn: Connection,
        path: &Path,
        busy_timeout: Duration,
    ) -> Result<SqliteStore> {
        // Checked before this connection could create a -wal file of its own.
        let shared = might_be_shared(path);
        conn.busy_timeout(busy_timeout)
            .context("cannot set the busy timeout")?;
        let generation = detect_schema(&conn, path)?;
        Ok(SqliteStore {
            conn,
            path: path.to_owned(),
            generation,
            busy_timeout,
            shared,
            checkpointer: std::sync::Mutex::new(None),
            searched_free_space: std::cell::Cell::new(false),
        })
    }

    /// The underlying connection (for rewrites in the operations layer).
    pub fn connection(&self) -> &Connection {
        &self.conn
    }

    /// The file path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// How long a statement waits for a lock before giving up.
    pub fn busy_timeout(&self) -> Duration {
        self.busy_timeout
    }

    fn checkpoint_row(row: &Row<'_>) -> rusqlite::Result<CheckpointRow> {
        Ok(CheckpointRow {
            thread_id: text(row, 0)?,
            checkpoint_ns: text(row, 1)?,
            checkpoint_id: text(row, 2)?,
            parent_checkpoint_id: opt_text(row, 3)?,
            type_name: opt_text(row, 4)?.unwrap_or_default(),
            checkpoint: blob(row, 5)?.unwrap_or_default(),
            metadata: blob(row, 6)?,
        })
    }

    pub(super) fn sql_error(&self, e: rusqlite::Error) -> anyhow::Error {
        explain(e, &self.path)
    }
}

impl CheckpointStore for SqliteStore {
    fn generation(&self) -> SchemaGeneration {
        self.generation
    }

    /// Keyset pages on this handle (`sqlite::pages`).
    fn page_threads(
        &self,
        batch: usize,
        f: &mut dyn FnMut(Vec<ThreadSummary>) -> Result<bool>,
    ) -> Result<()> {
        self.thread_pages(batch, f)
    }

    /// Keyset pages on this handle (`sqlite::pages`).
    fn page_latest_root_ids(
        &self,
        batch: usize,
        f: &mut dyn FnMut(Vec<(String, String)>) -> Result<bool>,
    ) -> Result<()> {
        self.latest_root_id_pages(batch, f)
    }

    /// `(thread_id, latest root checkpoint id)` of every thread, from the primary key only.
    fn latest_root_ids(&self) -> Result<Vec<(String, String)>> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT thread_id, MAX(checkpoint_id) FROM checkpoints WHERE checkpoint_ns = '' \
                 GROUP BY thread_id ORDER BY thread_id",
            )
            .map_err(|e| self.sql_error(e))?;
        let rows = stmt
            .query_map([], |r| Ok((text(r, 0)?, text(r, 1)?)))
            .map_err(|e| self.sql_error(e))?;
        rows.collect::<rusqlite::Result<_>>()
            .map_err(|e| self.sql_error(e))
    }

    /// The latest checkpoint id of a thread and namespace (from the primary key only).
    fn latest_checkpoint_id(&self, thread_id: &str, ns: &str) -> Result<Option<String>> {
        self.conn
            .prepare_cached(
                "SELECT MAX(checkpoint_id) FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ?",
            )
            .and_then(|mut st| st.query_row([thread_id, ns], |r| opt_text(r, 0)))
            .map_err(|e| self.sql_error(e))
    }

    /// A second read-only connection to the same file, for work on another core.
    /// A file holding a LangGraph store and no checkpoints is opened as this handle was
    /// ([`store::saver_of_store_only`]: empty checkpoint tables of its connection's own).
    fn reopen_read_only(&self) -> Result<Box<dyn CheckpointStore>> {
        let store_only = self
            .conn
            .query_row(
                "SELECT count(*) FROM temp.sqlite_master WHERE name = 'checkpoints'",
                [],
                |r| r.get::<_, i64>(0),
            )
            .map_err(|e| explain(e, &self.path))?
            > 0;
        if store_only {
            if let Some(s) = store::saver_of_store_only(
                &self.path,
                crate::storage::Access::ReadOnly,
                self.busy_timeout,
            )? {
                return Ok(Box::new(s));
            }
        }
        Ok(Box::new(SqliteStore::open_read_only(
            &self.path,
            self.busy_timeout,
        )?))
    }

    fn checkpoint_infos(&self, thread_id: &str) -> Result<Vec<CheckpointInfo>> {
        SqliteStore::infos(self, thread_id)
    }

    fn row_counts(&self) -> Result<(u64, u64)> {
        SqliteStore::counts(self)
    }

    fn an_encrypted_value(&self) -> Result<Option<(String, Vec<u8>)>> {
        SqliteStore::encrypted_value(self)
    }

    fn append_update(
        &self,
        thread_id: &str,
        ns: &str,
        rows: &NewRows<'_>,
        expected_writes: usize,
        rewrite: Option<BlobRewriter<'_>>,
    ) -> Result<usize> {
        self.append(thread_id, ns, rows, expected_writes, rewrite)
    }

    fn rewrite_thread(
        &self,
        thread_id: &str,
        expected_latest: &str,
        expected_writes: usize,
        rewrite: BlobRewriter<'_>,
    ) -> Result<usize> {
        self.scrub_in_place(thread_id, expected_latest, expected_writes, rewrite)
    }

    fn backend(&self) -> &'static str {
        "sqlite"
    }

    fn searched(&self) -> Vec<String> {
        self.files()
            .iter()
            .map(|f| {
                let n = std::fs::metadata(f).map(|m| m.len()).unwrap_or(0);
                format!("every byte of '{}' ({n} bytes)", f.display())
            })
            .collect()
    }

    fn out_of_reach(&self) -> Vec<String> {
        vec![
            "SQLite: the freed space in the file was overwritten with zeros and its -wal truncated; copies outside it (backups, snapshots, replicas such as Litestream, blocks the filesystem or disk has not yet reused) are out of memctl's reach".into(),
        ]
    }

    fn delete_threads(&self, threads: &[(String, String)]) -> Result<(Deleted, Vec<String>)> {
        SqliteStore::delete_whole_threads(self, threads)
    }

    fn visit_thread(
        &self,
        thread_id: &str,
        f: &mut dyn FnMut(crate::storage::ThreadRow) -> Result<()>,
    ) -> Result<()> {
        self.visit_whole_thread(thread_id, f)
    }

    fn write_thread_from(
        &self,
        thread_id: &str,
        replace: bool,
        feed: crate::storage::RowFeed<'_>,
    ) -> Result<crate::storage::WrittenThread> {
        self.write_thread_rows(thread_id, replace, feed)
    }

    fn for_each_thread(&self, f: &mut dyn FnMut(ThreadSummary) -> Result<()>) -> Result<()> {
        // Aggregates only: no blob is read (LENGTH reads the record header). Each table is
        // scanned once in storage order, which touches every leaf page once; GROUP BY would
        // walk the primary-key index and visit the rows in random order (~2x slower on 1 GB).
        // Hashed (rows of many threads interleave in storage order), sorted once at the end.
        let mut threads: fnv::FnvHashMap<Vec<u8>, ThreadAgg> = Default::default();
        let sql_err = |e| self.sql_error(e);
        let mut stmt = self
            .conn
            .prepare(&format!(
                "SELECT thread_id, {CHECKPOINT_FACTS} FROM checkpoints"
            ))
            .map_err(sql_err)?;
        let mut rows = stmt.query([]).map_err(sql_err)?;
        while let Some(row) = rows.next().map_err(sql_err)? {
            let thread = key(row, 0).map_err(sql_err)?;
            let agg = match threads.get_mut(thread.as_ref()) {
                Some(a) => a,
                None => threads.entry(thread.into_owned()).or_default(),
            };
            agg.add_checkpoint(row, 1).map_err(sql_err)?;
        }
        let mut stmt = self
            .conn
            .prepare("SELECT thread_id, LENGTH(value) FROM writes")
            .map_err(sql_err)?;
        let mut rows = stmt.query([]).map_err(sql_err)?;
        while let Some(row) = rows.next().map_err(sql_err)? {
            let thread = key(row, 0).map_err(sql_err)?;
            if let Some(agg) = threads.get_mut(thread.as_ref()) {
                let n: i64 = row.get::<_, Option<i64>>(1).map_err(sql_err)?.unwrap_or(0);
                agg.bytes += n.max(0) as u64;
            }
        }
        let mut threads: Vec<(Vec<u8>, ThreadAgg)> = threads.into_iter().collect();
        threads.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        for (thread, agg) in threads {
            f(agg.summary(&thread))?;
        }
        Ok(())
    }

    fn stream_threads(
        &self,
        batch: usize,
        f: &mut dyn FnMut(Vec<ThreadSummary>) -> Result<bool>,
    ) -> Result<()> {
        // The primary key's order: each thread's rows come together, so only one thread's
        // aggregates and one batch are held (for_each_thread scans in storage order instead,
        // faster, holding every thread). The writes' sizes come from a second scan in the
        // same order, merged.
        let sql_err = |e| self.sql_error(e);
        let mut stmt = self
            .conn
            .prepare(&format!(
                "SELECT thread_id, {CHECKPOINT_FACTS} FROM checkpoints ORDER BY thread_id"
            ))
            .map_err(sql_err)?;
        let mut rows = stmt.query([]).map_err(sql_err)?;
        let mut writes_stmt = self
            .conn
            .prepare("SELECT thread_id, LENGTH(value) FROM writes ORDER BY thread_id")
            .map_err(sql_err)?;
        let mut writes = WriteSizes {
            rows: writes_stmt.query([]).map_err(sql_err)?,
            peeked: None,
            merging: true,
        };
        let mut out = Vec::with_capacity(batch);
        let mut current: Option<(Vec<u8>, ThreadAgg)> = None;
        // The current thread's id is text (the only kind the merge with the writes follows).
        let mut current_is_text = true;
        loop {
            let row = rows.next().map_err(sql_err)?;
            let thread = row.map(|r| key(r, 0)).transpose().map_err(sql_err)?;
            if current
                .as_ref()
                .is_some_and(|(t, _)| thread.as_deref() != Some(&t[..]))
            {
                if let Some((t, mut agg)) = current.take() {
                    if !current_is_text {
                        writes.merging = false;
                    }
                    match writes.of(&t).map_err(sql_err)? {
                        Some(bytes) => {
                            agg.bytes += bytes;
                            out.push(agg.summary(&t));
                        }
                        None => out.push(self.with_writes(agg, &t)?),
                    }
                }
                if out.len() >= batch && !f(std::mem::take(&mut out))? {
                    return Ok(());
                }
            }
            let (Some(row), Some(thread)) = (row, thread) else {
                break;
            };
            let agg = match &mut current {
                Some((_, agg)) => agg,
                None => {
                    current_is_text = matches!(row.get_ref(0), Ok(ValueRef::Text(_)));
                    &mut current
                        .insert((thread.into_owned(), ThreadAgg::default()))
                        .1
                }
            };
            agg.add_checkpoint(row, 1).map_err(sql_err)?;
        }
        if !out.is_empty() {
            f(out)?;
        }
        Ok(())
    }

    fn stream_latest_root_ids(
        &self,
        batch: usize,
        f: &mut dyn FnMut(Vec<(String, String)>) -> Result<bool>,
    ) -> Result<()> {
        let sql_err = |e| self.sql_error(e);
        let mut stmt = self
            .conn
            .prepare(
                "SELECT thread_id, MAX(checkpoint_id) FROM checkpoints WHERE checkpoint_ns = '' \
                 GROUP BY thread_id ORDER BY thread_id",
            )
            .map_err(sql_err)?;
        let mut rows = stmt.query([]).map_err(sql_err)?;
        let mut out = Vec::with_capacity(batch);
        while let Some(row) = rows.next().map_err(sql_err)? {
            out.push((
                text(row, 0).map_err(sql_err)?,
                text(row, 1).map_err(sql_err)?,
            ));
            if out.len() >= batch && !f(std::mem::take(&mut out))? {
                return Ok(());
            }
        }
        if !out.is_empty() {
            f(out)?;
        }
        Ok(())
    }

    fn for_each_latest_id(&self, f: &mut dyn FnMut(&str, &str) -> bool) -> Result<()> {
        // The primary key's index alone (thread_id, checkpoint_ns, checkpoint_id) covers it.
        let sql_err = |e| self.sql_error(e);
        let mut stmt = self
            .conn
            .prepare("SELECT thread_id, MAX(checkpoint_id) FROM checkpoints GROUP BY thread_id")
            .map_err(sql_err)?;
        let mut rows = stmt.query([]).map_err(sql_err)?;
        while let Some(row) = rows.next().map_err(sql_err)? {
            let (thread, id) = (key(row, 0).map_err(sql_err)?, key(row, 1).map_err(sql_err)?);
            let (Ok(thread), Ok(id)) = (std::str::from_utf8(&thread), std::str::from_utf8(&id))
            else {
                anyhow::bail!(
                    "'{}': a thread or checkpoint id is not UTF-8 text",
                    self.path.display()
                );
            };
            if !f(thread, id) {
                break;
            }
        }
        Ok(())
    }

    fn summaries_of(&self, thread_ids: &[String]) -> Result<Vec<ThreadSummary>> {
        let mut out = Vec::with_capacity(thread_ids.len());
        let mut ids: Vec<&String> = thread_ids.iter().collect();
        ids.sort_unstable_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
        ids.dedup();
        for thread in ids {
            out.extend(self.summary_stored_as(thread, thread.as_bytes())?);
        }
        Ok(out)
    }

    /// The primary key's index alone (a range past `thread_id`).
    fn count_threads_after(&self, thread_id: &str) -> Result<u64> {
        self.conn
            .query_row(
                "SELECT count(*) FROM (SELECT DISTINCT thread_id FROM checkpoints WHERE thread_id > ?1)",
                [thread_id],
                |r| r.get::<_, i64>(0),
            )
            .map(|n| n.max(0) as u64)
            .map_err(|e| self.sql_error(e))
    }

    fn thread_exists(&self, thread_id: &str) -> Result<bool> {
        self.conn
            .query_row(
                "SELECT 1 FROM checkpoints WHERE thread_id = ? LIMIT 1",
                [thread_id],
                |_| Ok(()),
            )
            .optional()
            .map(|o| o.is_some())
            .map_err(|e| self.sql_error(e))
    }

    fn namespaces(&self, thread_id: &str) -> Result<Vec<String>> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT DISTINCT checkpoint_ns FROM checkpoints WHERE thread_id = ? ORDER BY checkpoint_ns",
            )
            .map_err(|e| self.sql_error(e))?;
        let rows = stmt
            .query_map([thread_id], |r| text(r, 0))
            .map_err(|e| self.sql_error(e))?;
        rows.collect::<rusqlite::Result<Vec<_>>>()
            .map_err(|e| self.sql_error(e))
    }

    fn checkpoints(&self, thread_id: &str, ns: &str) -> Result<Vec<CheckpointRow>> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata \
                 FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ? ORDER BY checkpoint_id DESC",
            )
            .map_err(|e| self.sql_error(e))?;
        let rows = stmt
            .query_map([thread_id, ns], SqliteStore::checkpoint_row)
            .map_err(|e| self.sql_error(e))?;
        rows.collect::<rusqlite::Result<Vec<_>>>()
            .map_err(|e| self.sql_error(e))
    }

    fn checkpoint(
        &self,
        thread_id: &str,
        ns: &str,
        id: Option<&str>,
    ) -> Result<Option<CheckpointRow>> {
        let result = match id {
            Some(id) => self
                .conn
                .prepare_cached(
                    "SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata \
                     FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?",
                )
                .and_then(|mut s| s.query_row([thread_id, ns, id], SqliteStore::checkpoint_row).optional()),
            None => self
                .conn
                .prepare_cached(
                    "SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata \
                     FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ? ORDER BY checkpoint_id DESC LIMIT 1",
                )
                .and_then(|mut s| s.query_row([thread_id, ns], SqliteStore::checkpoint_row).optional()),
        };
        result.map_err(|e| self.sql_error(e))
    }

    fn write_counts(
        &self,
        thread_id: &str,
        ns: &str,
    ) -> Result<std::collections::HashMap<String, usize>> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT checkpoint_id, COUNT(*) FROM writes WHERE thread_id = ? AND checkpoint_ns = ? GROUP BY checkpoint_id",
            )
            .map_err(|e| self.sql_error(e))?;
        let rows = stmt
            .query_map([thread_id, ns], |r| {
                Ok((text(r, 0)?, r.get::<_, i64>(1)?.max(0) as usize))
            })
            .map_err(|e| self.sql_error(e))?;
        rows.collect::<rusqlite::Result<_>>()
            .map_err(|e| self.sql_error(e))
    }

    fn metadata(&self, thread_id: &str, ns: &str) -> Result<Vec<(String, Option<Vec<u8>>)>> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT checkpoint_id, metadata FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ? ORDER BY checkpoint_id DESC",
            )
            .map_err(|e| self.sql_error(e))?;
        let rows = stmt
            .query_map([thread_id, ns], |r| Ok((text(r, 0)?, blob(r, 1)?)))
            .map_err(|e| self.sql_error(e))?;
        rows.collect::<rusqlite::Result<_>>()
            .map_err(|e| self.sql_error(e))
    }

    /// A query per thread (on the primary key, in-process: a statement costs microseconds).
    fn metadata_of(&self, threads: &[&str]) -> Result<Vec<Vec<MetadataRow>>> {
        let sql_err = |e| self.sql_error(e);
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT checkpoint_ns, checkpoint_id, metadata FROM checkpoints WHERE thread_id = ? \
                 ORDER BY checkpoint_ns, checkpoint_id DESC",
            )
            .map_err(sql_err)?;
        threads
            .iter()
            .map(|thread| {
                let rows = stmt
                    .query_map([thread], |r| {
                        Ok(MetadataRow {
                            checkpoint_ns: text(r, 0)?,
                            checkpoint_id: text(r, 1)?,
                            metadata: blob(r, 2)?,
                        })
                    })
                    .map_err(sql_err)?;
                rows.collect::<rusqlite::Result<Vec<_>>>().map_err(sql_err)
            })
            .collect()
    }

    fn channel_writes(
        &self,
        thread_id: &str,
        ns: &str,
        checkpoint_id: &str,
        channels: &[String],
    ) -> Result<Vec<WriteRow>> {
        if channels.is_empty() {
            return Ok(vec![]);
        }
        let task_path = match self.generation {
            SchemaGeneration::V3 => "task_path",
            SchemaGeneration::V2 => "''",
        };
        let marks = vec!["?"; channels.len()].join(", ");
        let sql = format!(
            "SELECT task_id, {task_path}, idx, channel, type, value FROM writes \
             WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ? AND channel IN ({marks}) \
             ORDER BY {task_path}, task_id, idx"
        );
        let mut stmt = self
            .conn
            .prepare_cached(&sql)
            .map_err(|e| self.sql_error(e))?;
        let params: Vec<&str> = [thread_id, ns, checkpoint_id]
            .into_iter()
            .chain(channels.iter().map(String::as_str))
            .collect();
        let rows = stmt
            .query_map(rusqlite::params_from_iter(params), write_row)
            .map_err(|e| self.sql_error(e))?;
        rows.collect::<rusqlite::Result<Vec<_>>>()
            .map_err(|e| self.sql_error(e))
    }

    fn writes(&self, thread_id: &str, ns: &str, checkpoint_id: &str) -> Result<Vec<WriteRow>> {
        let sql = match self.generation {
            SchemaGeneration::V3 => {
                "SELECT task_id, task_path, idx, channel, type, value FROM writes \
                 WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ? \
                 ORDER BY task_path, task_id, idx"
            }
            SchemaGeneration::V2 => {
                "SELECT task_id, '', idx, channel, type, value FROM writes \
                 WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ? \
                 ORDER BY task_id, idx"
            }
        };
        let mut stmt = self
            .conn
            .prepare_cached(sql)
            .map_err(|e| self.sql_error(e))?;
        let rows = stmt
            .query_map([thread_id, ns, checkpoint_id], write_row)
            .map_err(|e| self.sql_error(e))?;
        rows.collect::<rusqlite::Result<Vec<_>>>()
            .map_err(|e| self.sql_error(e))
    }

    fn space(&self) -> Option<&dyn crate::storage::Space> {
        Some(self)
    }

    fn maintenance(&self) -> Option<&dyn crate::storage::Maintenance> {
        Some(self)
    }

    fn forensics(&self) -> Option<&dyn crate::storage::Forensics> {
        Some(self)
    }

    fn raw_bytes(&self) -> Option<&dyn crate::storage::RawBytes> {
        Some(self)
    }

    fn batches(&self) -> Option<&dyn crate::storage::Batches> {
        Some(self)
    }

    fn gc(&self) -> Option<&dyn crate::storage::Gc> {
        Some(self)
    }

    fn sharing(&self) -> Option<&dyn crate::storage::Sharing> {
        Some(self)
    }

    fn rewriter(&self) -> Option<&dyn crate::storage::RewriteValues> {
        Some(self)
    }
}

impl Space for SqliteStore {
    fn file_stats(&self) -> Result<FileStats> {
        SqliteStore::stats_of_file(self)
    }

    fn write_bytes_by_channel(&self) -> Result<Vec<(String, u64, u64)>> {
        SqliteStore::bytes_by_channel(self)
    }

    fn for_each_checkpoint_blob(&self, f: &mut dyn FnMut(&[u8]) -> Result<()>) -> Result<()> {
        SqliteStore::each_checkpoint_blob(self, f)
    }

    fn orphans(&self) -> Result<Orphans> {
        SqliteStore::orphan_rows(self)
    }
}

impl Maintenance for SqliteStore {
    fn vacuum(&self) -> Result<()> {
        self.check_vacuum_beside_app()?;
        self.vacuum_or_busy()
    }

    fn erase_freed(&self) -> Result<crate::storage::Erased> {
        Ok(crate::storage::Erased {
            pages_zeroed: Some(self.zero_free_pages()?),
            vacuumed: false,
        })
    }
}

impl Forensics for SqliteStore {
    fn find_leftovers(&self, thread_id: &str, texts: &[String]) -> Result<Vec<Leftover>> {
        self.leftovers(thread_id, texts)
    }
}

impl RawBytes for SqliteStore {
    fn files(&self) -> Vec<PathBuf> {
        vec![self.path.clone(), sidecar(&self.path, "-wal")]
    }

    fn free_space(&self) -> Result<Option<Vec<(u64, u64)>>> {
        SqliteStore::free_space(self)
    }

    fn raw_places_matching(&self, matches: &mut dyn FnMut(&[u8]) -> bool) -> Result<Vec<String>> {
        const OVERLAP: usize = 64 << 10;
        if let Some(ranges) = SqliteStore::free_space(self)? {
            let mut found = false;
            freemap::search_ranges(&self.path, &ranges, OVERLAP, &mut |piece| {
                found = matches(piece);
                !found
            })?;
            return Ok(match found {
                true => vec![self.path.display().to_string()],
                false => vec![],
            });
        }
        let mut hits = Vec::new();
        for path in self.files() {
            let mut found = false;
            read_in_pieces(&path, OVERLAP, &mut |piece| {
                found = matches(piece);
                !found
            })?;
            if found {
                hits.push(path.display().to_string());
            }
        }
        Ok(hits)
    }

    fn zero_deleted_content(&self) -> Result<()> {
        self.conn
            .execute_batch("PRAGMA secure_delete = ON")
            .map_err(|e| self.sql_error(e))
    }

    fn searched_free_space(&self) -> bool {
        self.searched_free_space.get()
    }
}

impl Batches for SqliteStore {
    fn begin_batch(&self) -> Result<()> {
        self.begin()
    }

    fn commit_batch(&self) -> Result<()> {
        self.commit()
    }

    fn end_batches(&self) -> Result<()> {
        self.end()
    }
}

impl Gc for SqliteStore {
    fn apply_gc(
        &self,
        thread_id: &str,
        delete: &[(String, String)],
        orphaned: &[(String, String)],
        rewrites: &[CheckpointRewrite],
        expected_latest: &str,
    ) -> Result<Option<Deleted>> {
        SqliteStore::delete_checkpoints(
            self,
            thread_id,
            delete,
            orphaned,
            rewrites,
            expected_latest,
        )
    }
}

impl Sharing for SqliteStore {
    /// False when no other connection had the database open when memctl opened it: a
    /// WAL-mode file (what SqliteSaver leaves) without a `-wal` file. True otherwise, including
    /// every file in another journal mode (there, memctl cannot tell).
    fn might_be_shared(&self) -> bool {
        self.shared
    }

    /// False: an app waiting for the write lock polls from its busy handler.
    fn queues_waiting_writers(&self) -> bool {
        false
    }

    /// True: a read held open beside a write run blocks WAL checkpoints (and, in
    /// rollback-journal mode, the writer); a write run pages on its own handle instead.
    fn second_reader_stalls_writes(&self) -> bool {
        true
    }

    /// None: a file has no setting for it.
    fn query_parallelism(&self) -> Result<Option<usize>> {
        Ok(None)
    }
}

impl RewriteValues for SqliteStore {
    fn rewrite_values(
        &self,
        from: ValueCursor,
        size: PageSize,
        write: bool,
        rewrite: ValueRewriter<'_>,
    ) -> Result<ValuePage> {
        self.value_page(from, size, write, rewrite)
    }
}

/// A pending write from a row of `task_id, task_path, idx, channel, type, value`.
fn write_row(row: &Row<'_>) -> rusqlite::Result<WriteRow> {
    Ok(WriteRow {
        task_id: text(row, 0)?,
        task_path: opt_text(row, 1)?.unwrap_or_default(),
        idx: row.get(2)?,
        channel: text(row, 3)?,
        type_name: opt_text(row, 4)?.unwrap_or_default(),
        value: blob(row, 5)?.unwrap_or_default(),
    })
}

/// `path` with `suffix` appended (`-wal`, `-shm`, `-journal`).
fn sidecar(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

/// See [`SqliteStore::might_be_shared`].
fn might_be_shared(path: &Path) -> bool {
    !is_wal_mode(path) || sidecar(path, "-wal").exists()
}

/// True when the database header says WAL mode (file format versions 2 at bytes 18–19).
fn is_wal_mode(path: &Path) -> bool {
    let mut header = [0u8; 20];
    kept_open::open(path)
        .and_then(|f| kept_open::read_at(&f, &mut header, 0))
        .is_ok_and(|n| n == header.len())
        && header.starts_with(b"SQLite format 3\0")
        && header[18] == 2
        && header[19] == 2
}

/// A path as the file part of an SQLite URI (`%`, `?`, `#` and non-ASCII bytes escaped).
fn uri_path(path: &Path) -> String {
    let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_owned());
    let mut out = String::new();
    for &b in abs.as_os_str().as_encoded_bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'/' | b'-' | b'_' | b'.' | b'~' => {
                out.push(char::from(b))
            }
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// A read-only connection that closes last would otherwise checkpoint the WAL and, when that
/// succeeds (an empty `-wal`: nothing to copy), delete the `-wal` and `-shm` files: a read
/// leaves them as it found them.
fn no_checkpoint_on_close(conn: &Connection, path: &Path) -> Result<()> {
    conn.set_db_config(
        rusqlite::config::DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE,
        true,
    )
    .map_err(|e| explain(e, path))
    .with_context(|| format!("cannot open '{}'", crate::storage::shown_path(path)))?;
    Ok(())
}

/// Decides, before SQLite opens `path` for writing, whether this user may write it, so that a
/// refusal creates nothing: SQLite opens a file it cannot write read-only without a word and
/// makes its `-wal` / `-shm` files on the first read, owned by this user, where the app's
/// next write then fails ("attempt to write a readonly database") until someone deletes
/// them. Refused ([`super::NotWritable`], nothing opened or created):
/// - a file, or an existing `-wal` / `-shm` / `-journal` beside it, that this user cannot
///   write;
/// - a directory this user cannot write, when SQLite would have to create a side file in it;
/// - a WAL-mode file of another user with no `-shm` yet (no app has it open), when memctl
///   does not run as root: SQLite would make the `-wal` / `-shm` as this user, with the
///   file's mode, which the app's user may not be able to write. As root SQLite hands the
///   files it makes to the database's owner itself.
#[cfg(unix)]
pub(crate) fn check_writable(path: &Path) -> Result<()> {
    use std::os::unix::fs::MetadataExt;
    let shown = crate::storage::shown_path(path);
    let refuse = |why: String| -> Result<()> { Err(super::NotWritable(why).into()) };
    if !may_write(path) {
        return refuse(format!(
            "cannot write '{shown}': the file is read-only for this user; nothing written"
        ));
    }
    let wal = is_wal_mode(path);
    let sides: &[&str] = match wal {
        true => &["-wal", "-shm"],
        false => &["-journal"],
    };
    let mut missing = false;
    for suffix in sides {
        let side = sidecar(path, suffix);
        match std::fs::symlink_metadata(&side) {
            Ok(_) if !may_write(&side) => {
                return refuse(format!(
                    "cannot write '{shown}': '{}' is not writable for this user (it belongs to another user, likely the app's: run memctl as that user); nothing written",
                    crate::storage::shown_path(&side)
                ))
            }
            Ok(_) => {}
            Err(_) => missing = true,
        }
    }
    if !missing {
        return Ok(());
    }
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if !may_write(dir) {
        return refuse(format!(
            "cannot write '{shown}': its directory '{}' is not writable for this user, and SQLite creates its -journal / -wal files there; nothing written",
            crate::storage::shown_path(dir)
        ));
    }
    let owner = std::fs::metadata(path).map(|m| m.uid()).ok();
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    if wal && !sidecar(path, "-shm").exists() && me != 0 && owner.is_some_and(|o| o != me) {
        return refuse(format!(
            "cannot write '{shown}': it belongs to another user (uid {}), and SQLite would create its -wal / -shm files as this user, which can lock that user's app out; run memctl as the file's owner (or as root); nothing written",
            owner.unwrap_or_default()
        ));
    }
    Ok(())
}

/// On other systems SQLite's own errors say it ([`explain`]).
#[cfg(not(unix))]
pub(crate) fn check_writable(_path: &Path) -> Result<()> {
    Ok(())
}

/// True when this process (its effective user and groups) may write `path`.
#[cfg(unix)]
fn may_write(path: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: `c` is a valid NUL-terminated path for the duration of the call.
    unsafe { libc::faccessat(libc::AT_FDCWD, c.as_ptr(), libc::W_OK, libc::AT_EACCESS) == 0 }
}

/// Refuses paths that are missing or not regular files, before SQLite could create one.
fn check_file(path: &Path) -> Result<()> {
    let meta = std::fs::metadata(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => anyhow!(
            "no such file: '{}' (check --db or MEMCTL_DB)",
            crate::storage::shown_path(path)
        ),
        _ => anyhow!("cannot read '{}': {e}", crate::storage::shown_path(path)),
    })?;
    if !meta.is_file() {
        bail!("'{}' is not a file", crate::storage::shown_path(path));
    }
    if meta.len() == 0 {
        bail!(
            "'{}' is empty, not a LangGraph checkpoint database",
            crate::storage::shown_path(path)
        );
    }
    Ok(())
}

/// Checks the tables and columns `SqliteSaver` creates and tells the generation apart.
fn detect_schema(conn: &Connection, path: &Path) -> Result<SchemaGeneration> {
    let columns = |table: &str| -> Result<Vec<String>> {
        let mut stmt = conn
            .prepare(&format!("PRAGMA table_info({table})"))
            .map_err(|e| explain(e, path))?;
        let names = stmt
            .query_map([], |r| r.get::<_, String>(1))
            .map_err(|e| explain(e, path))?
            .collect::<rusqlite::Result<Vec<_>>>()
            .map_err(|e| explain(e, path))?;
        Ok(names)
    };
    let cp = columns("checkpoints")?;
    let wr = columns("writes")?;
    if cp.is_empty() || wr.is_empty() {
        let missing = if cp.is_empty() {
            "checkpoints"
        } else {
            "writes"
        };
        bail!(
            "'{}' is a SQLite database but not a LangGraph checkpoint database (no '{missing}' table)",
            crate::storage::shown_path(path)
        );
    }
    for (table, have, need) in [
        ("checkpoints", &cp, &CHECKPOINT_COLUMNS[..]),
        ("writes", &wr, &WRITE_COLUMNS[..]),
    ] {
        if let Some(missing) = need.iter().find(|c| !have.iter().any(|h| h == *c)) {
            bail!(
                "'{}' has a '{table}' table without the '{missing}' column: not a schema written by langgraph-checkpoint-sqlite",
                crate::storage::shown_path(path)
            );
        }
    }
    Ok(if wr.iter().any(|c| c == "task_path") {
        SchemaGeneration::V3
    } else {
        SchemaGeneration::V2
    })
}

/// Makes a new SQLite file at `path` (never over another file: `create_new`, atomically) and
/// runs `setup` on a read-write connection to it; on failure the new file is removed again,
/// so a failed set-up leaves nothing behind.
pub(crate) fn make_new_file(
    path: &Path,
    setup: impl FnOnce(&mut rusqlite::Connection) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    use anyhow::Context as _;
    let shown = crate::storage::shown_path(path);
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .with_context(|| format!("cannot create '{shown}'"))?;
    let made = (|| -> anyhow::Result<()> {
        let flags =
            rusqlite::OpenFlags::SQLITE_OPEN_READ_WRITE | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let mut conn =
            rusqlite::Connection::open_with_flags(path, flags).map_err(|e| explain(e, path))?;
        setup(&mut conn)
    })();
    if let Err(e) = made {
        let _ = std::fs::remove_file(path);
        return Err(e.context(format!("cannot create '{shown}'")));
    }
    Ok(())
}

/// Turns SQLite's codes into sentences a user can act on.
pub fn explain(e: rusqlite::Error, path: &Path) -> anyhow::Error {
    let shown = crate::storage::shown_path(path);
    match e.sqlite_error_code() {
        Some(ErrorCode::NotADatabase) => anyhow!("'{shown}' is not a SQLite database"),
        Some(ErrorCode::DatabaseBusy) | Some(ErrorCode::DatabaseLocked) => anyhow!(
            "'{shown}' is locked by another process; try again later or raise --busy-timeout"
        ),
        Some(ErrorCode::DatabaseCorrupt) => anyhow!("'{shown}' is corrupt: {e}"),
        Some(ErrorCode::ReadOnly)
            if matches!(&e, rusqlite::Error::SqliteFailure(f, _)
                if f.extended_code == rusqlite::ffi::SQLITE_READONLY_ROLLBACK) =>
        {
            anyhow!(
                "'{shown}' has a hot rollback journal ('{shown}-journal'): an app was interrupted in the middle of a write, and until that write is rolled back the file holds half of it; memctl's reads never write, so open it once with the app or sqlite3 (e.g. sqlite3 '{shown}' 'PRAGMA quick_check', from a user who can write its directory) to roll it back, then run memctl again"
            )
        }
        Some(ErrorCode::ReadOnly) => {
            let file_writable = std::fs::OpenOptions::new().write(true).open(path).is_ok();
            if file_writable {
                let dir = path
                    .parent()
                    .filter(|d| !d.as_os_str().is_empty())
                    .unwrap_or(Path::new("."));
                super::NotWritable(format!(
                    "cannot write '{shown}': its directory '{}' is not writable for this user, and SQLite creates its -journal / -wal files there",
                    crate::storage::shown_path(dir)
                ))
                .into()
            } else {
                super::NotWritable(format!(
                    "cannot write '{shown}': the file is read-only for this user"
                ))
                .into()
            }
        }
        Some(ErrorCode::CannotOpen) => anyhow!("cannot open '{shown}': {e}"),
        _ => anyhow!("SQLite error on '{shown}': {e}"),
    }
}

pub(crate) fn text(row: &Row<'_>, i: usize) -> rusqlite::Result<String> {
    Ok(opt_text(row, i)?.unwrap_or_default())
}

/// Reads a TEXT column leniently: ids stored as integers or blobs are shown as text.
pub(crate) fn opt_text(row: &Row<'_>, i: usize) -> rusqlite::Result<Option<String>> {
    Ok(match row.get_ref(i)? {
        ValueRef::Null => None,
        ValueRef::Integer(n) => Some(n.to_string()),
        ValueRef::Real(f) => Some(f.to_string()),
        ValueRef::Text(t) | ValueRef::Blob(t) => Some(String::from_utf8_lossy(t).into_owned()),
    })
}

/// A TEXT column's bytes for comparing and grouping (as [`opt_text`] shows them; NULL is empty).
/// The columns [`ThreadAgg::add_checkpoint`] reads from a `checkpoints` row: no blob is read
/// (LENGTH reads the record header).
const CHECKPOINT_FACTS: &str =
    "checkpoint_ns, checkpoint_id, LENGTH(checkpoint) + COALESCE(LENGTH(metadata), 0)";

/// A thread's aggregates as its rows are read ([`ThreadSummary`] at the end).
#[derive(Default)]
struct ThreadAgg {
    checkpoints: u64,
    bytes: u64,
    namespaces: Vec<Vec<u8>>,
    latest_root: Option<Vec<u8>>,
    latest: Vec<u8>,
}

impl ThreadAgg {
    /// Adds a checkpoint row whose [`CHECKPOINT_FACTS`] start at column `at`.
    fn add_checkpoint(&mut self, row: &Row<'_>, at: usize) -> rusqlite::Result<()> {
        let (ns, id) = (key(row, at)?, key(row, at + 1)?);
        let size: i64 = row.get::<_, Option<i64>>(at + 2)?.unwrap_or(0);
        self.checkpoints += 1;
        self.bytes += size.max(0) as u64;
        if !self.namespaces.iter().any(|n| n[..] == ns[..]) {
            self.namespaces.push(ns.to_vec());
        }
        if ns.is_empty() && self.latest_root.as_deref().is_none_or(|l| id[..] > *l) {
            self.latest_root = Some(id.to_vec());
        }
        if id[..] > self.latest[..] {
            self.latest = id.into_owned();
        }
        Ok(())
    }

    fn summary(self, thread: &[u8]) -> ThreadSummary {
        let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        ThreadSummary {
            thread_id: text(thread),
            checkpoints: self.checkpoints,
            bytes: self.bytes,
            namespaces: self.namespaces.len() as u64,
            latest_root_id: self.latest_root.as_deref().map(text),
            latest_id: text(&self.latest),
        }
    }
}

/// A TEXT or BLOB column's bytes, borrowed from the row (numbers as they print; NULL is
/// empty).
pub(crate) fn key<'r>(row: &'r Row<'_>, i: usize) -> rusqlite::Result<std::borrow::Cow<'r, [u8]>> {
    Ok(match row.get_ref(i)? {
        ValueRef::Null => std::borrow::Cow::Borrowed(&[][..]),
        ValueRef::Text(t) | ValueRef::Blob(t) => std::borrow::Cow::Borrowed(t),
        ValueRef::Integer(n) => std::borrow::Cow::Owned(n.to_string().into_bytes()),
        ValueRef::Real(f) => std::borrow::Cow::Owned(f.to_string().into_bytes()),
    })
}

/// Reads a BLOB column; TEXT is accepted as its bytes.
pub(crate) fn blob(row: &Row<'_>, i: usize) -> rusqlite::Result<Option<Vec<u8>>> {
    Ok(match row.get_ref(i)? {
        ValueRef::Null => None,
        ValueRef::Blob(b) | ValueRef::Text(b) => Some(b.to_vec()),
        ValueRef::Integer(n) => Some(n.to_string().into_bytes()),
        ValueRef::Real(f) => Some(f.to_string().into_bytes()),
    })
}

/// Reads the file at `path` once, in 8 MiB pieces, each starting with the last `overlap`
/// bytes of the one before (so a match up to `overlap + 1` bytes long is whole in one piece),
/// and hands each piece to `f` until it returns false: memory stays flat on a file of any
/// size. A missing file is no error (nothing is handed over).
pub fn read_in_pieces(path: &Path, overlap: usize, f: &mut dyn FnMut(&[u8]) -> bool) -> Result<()> {
    const PIECE: usize = 8 << 20;
    let file = match kept_open::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => {
            return Err(e)
                .with_context(|| format!("cannot read '{}'", crate::storage::shown_path(path)))
        }
    };
    let mut buf = vec![0u8; PIECE + overlap];
    let mut have = 0;
    let mut offset = 0u64;
    loop {
        let n = kept_open::read_at(&file, &mut buf[have..], offset)
            .with_context(|| format!("cannot read '{}'", crate::storage::shown_path(path)))?;
        if n == 0 {
            return Ok(());
        }
        offset += n as u64;
        have += n;
        if !f(&buf[..have]) {
            return Ok(());
        }
        let keep = overlap.min(have);
        buf.copy_within(have - keep..have, 0);
        have = keep;
    }
}

/// For each of `needles`, the files among `files` that contain it (missing files are
/// skipped). Each file is read once (see [`read_in_pieces`]) and searched for every needle in
/// one pass (Aho-Corasick: a forget of a long thread searches for thousands of strings).
pub fn find_in_files(files: &[PathBuf], needles: &[String]) -> Result<Vec<Vec<String>>> {
    let mut found = vec![Vec::new(); needles.len()];
    if needles.is_empty() {
        return Ok(found);
    }
    for path in files {
        let seen = seen_in(needles, |overlap, f| read_in_pieces(path, overlap, f))?;
        for (i, _) in seen.into_iter().enumerate().filter(|(_, h)| *h) {
            found[i].push(crate::storage::shown_path(path));
        }
    }
    Ok(found)
}

/// For each of `needles`, `[path]` when the bytes of `ranges` of `path` hold it (else empty).
fn find_in_ranges(
    path: &Path,
    ranges: &[(u64, u64)],
    needles: &[String],
) -> Result<Vec<Vec<String>>> {
    let mut found = vec![Vec::new(); needles.len()];
    if needles.is_empty() {
        return Ok(found);
    }
    // The ranges shared out across the machine's cores (up to four) by their bytes, each
    // share searched on its own (an automaton each); a needle is seen when any share holds it.
    let parts = crate::par::cores().min(freemap::MOST_PARTS);
    let shares = share_ranges(ranges, parts);
    let seen_in_shares = crate::par::map_owned(shares, parts, |share| {
        seen_in(needles, |overlap, f| {
            freemap::search_ranges(path, &share, overlap, f)
        })
    });
    let mut seen = vec![false; needles.len()];
    for share in seen_in_shares {
        for (all, here) in seen.iter_mut().zip(share?) {
            *all |= here;
        }
    }
    for (i, _) in seen.into_iter().enumerate().filter(|(_, h)| *h) {
        found[i].push(path.display().to_string());
    }
    Ok(found)
}

/// `ranges` in `n` shares of about the same number of bytes, in order (a range is not cut).
fn share_ranges(ranges: &[(u64, u64)], n: usize) -> Vec<Vec<(u64, u64)>> {
    let total: u64 = ranges.iter().map(|(_, len)| len).sum();
    let each = total.div_ceil(n.max(1) as u64).max(1);
    let mut shares: Vec<Vec<(u64, u64)>> = vec![Vec::new()];
    let mut bytes = 0;
    for &r in ranges {
        if bytes >= each {
            shares.push(Vec::new());
            bytes = 0;
        }
        bytes += r.1;
        if let Some(last) = shares.last_mut() {
            last.push(r);
        }
    }
    shares
}

/// Which of `needles` appear in the pieces `read` hands over (it is given the overlap the
/// pieces must share and a visitor that answers whether to go on: not once all were seen).
fn seen_in(
    needles: &[String],
    read: impl FnOnce(usize, &mut dyn FnMut(&[u8]) -> bool) -> Result<()>,
) -> Result<Vec<bool>> {
    let mut search = crate::bytesearch::needles::Needles::new(needles)?;
    let mut hit = vec![false; needles.len()];
    let mut failed = None;
    read(search.overlap(), &mut |piece| {
        if let Err(e) = search.close_all_in(piece, &mut |i| hit[i] = true) {
            failed = Some(e);
            return false;
        }
        !search.done()
    })?;
    match failed {
        Some(e) => Err(e),
        None => Ok(hit),
    }
}

impl SqliteStore {
    /// `agg`'s summary with the bytes of the thread's writes added (one search of the
    /// writes' primary key; `thread` bound as the TEXT it was read as).
    fn with_writes(&self, mut agg: ThreadAgg, thread: &[u8]) -> Result<ThreadSummary> {
        let writes: i64 = self
            .conn
            .prepare_cached(
                "SELECT COALESCE(SUM(LENGTH(value)), 0) FROM writes WHERE thread_id IN (?1, ?2)",
            )
            .and_then(|mut st| {
                // The id as text and as a blob: a thread's rows are its bytes, whichever
                // type they were stored with (as the storage-order scan matches them).
                st.query_row(
                    [
                        rusqlite::types::ToSqlOutput::Borrowed(ValueRef::Text(thread)),
                        rusqlite::types::ToSqlOutput::Borrowed(ValueRef::Blob(thread)),
                    ],
                    |r| r.get(0),
                )
            })
            .map_err(|e| self.sql_error(e))?;
        agg.bytes += writes.max(0) as u64;
        Ok(agg.summary(thread))
    }
}

/// The `writes` rows' sizes in thread-id order, taken thread by thread beside the checkpoints
/// read in the same order ([`CheckpointStore::stream_threads`]).
struct WriteSizes<'s> {
    rows: rusqlite::Rows<'s>,
    /// The next row, read but not yet taken: its thread id and size.
    peeked: Option<(Vec<u8>, u64)>,
    /// False once a thread id that is not text was met (a blob: the column's text affinity
    /// turns numbers into text): SQLite orders those apart from the text ones, so the merge
    /// stops and each thread's writes are summed by a query of their own.
    merging: bool,
}

impl WriteSizes<'_> {
    /// The bytes of `thread`'s writes (a text thread id, after every thread asked before it
    /// in byte order); `None` when the merge has stopped (the caller asks the table).
    fn of(&mut self, thread: &[u8]) -> rusqlite::Result<Option<u64>> {
        let mut sum = 0u64;
        while self.merging {
            if self.peeked.is_none() {
                let Some(row) = self.rows.next()? else {
                    return Ok(Some(sum));
                };
                let ValueRef::Text(id) = row.get_ref(0)? else {
                    self.merging = false;
                    break;
                };
                let n: Option<i64> = row.get(1)?;
                self.peeked = Some((id.to_vec(), n.unwrap_or(0).max(0) as u64));
            }
            let Some((id, n)) = &self.peeked else {
                continue;
            };
            match id.as_slice().cmp(thread) {
                // Writes of a thread without checkpoints: not a thread, not counted.
                std::cmp::Ordering::Less => {}
                std::cmp::Ordering::Equal => sum += n,
                std::cmp::Ordering::Greater => return Ok(Some(sum)),
            }
            self.peeked = None;
        }
        Ok(None)
    }
}

impl SqliteStore {
    /// [`CheckpointStore::append_update`]: one `BEGIN IMMEDIATE` transaction (a savepoint
    /// inside a batch); with `rewrite`, every checkpoint and write blob of the thread (all
    /// namespaces) that it changes is replaced, with `secure_delete` on so freed pages are
    /// zeroed.
    fn append(
        &self,
        thread_id: &str,
        ns: &str,
        rows: &NewRows<'_>,
        expected_writes: usize,
        rewrite: Option<BlobRewriter<'_>>,
    ) -> Result<usize> {
        self.in_update(rewrite.is_some(), || {
            self.append_in_transaction(thread_id, ns, rows, expected_writes, rewrite)
        })
    }

    /// [`CheckpointStore::rewrite_thread`]: the checks of an append, then the scrub, in one
    /// transaction (a savepoint inside a batch) with `secure_delete` on.
    fn scrub_in_place(
        &self,
        thread_id: &str,
        expected_latest: &str,
        expected_writes: usize,
        rewrite: BlobRewriter<'_>,
    ) -> Result<usize> {
        self.in_update(true, || {
            self.check_unmoved(thread_id, "", expected_latest, expected_writes)?;
            self.scrub_thread(&self.conn, thread_id, rewrite)
        })
    }

    /// Runs `f` in a `BEGIN IMMEDIATE` transaction, or a savepoint inside a batch; with
    /// `secure`, freed pages are zeroed (`secure_delete`).
    fn in_update<T>(&self, secure: bool, f: impl FnOnce() -> Result<T>) -> Result<T> {
        if secure {
            self.conn
                .execute_batch("PRAGMA secure_delete = ON")
                .map_err(|e| self.sql_error(e))?;
        }
        // Inside a batch (see begin_batch) the update is a savepoint of the open transaction;
        // otherwise it is its own BEGIN IMMEDIATE transaction.
        let own = self.conn.is_autocommit();
        if own {
            self.conn
                .execute_batch("BEGIN IMMEDIATE")
                .map_err(|e| self.sql_error(e))?;
        } else {
            self.conn
                .execute_batch("SAVEPOINT memctl_update")
                .map_err(|e| self.sql_error(e))?;
        }
        match f() {
            Ok(n) => {
                let end = if own {
                    "COMMIT"
                } else {
                    "RELEASE memctl_update"
                };
                self.conn
                    .execute_batch(end)
                    .map_err(|e| self.sql_error(e))?;
                Ok(n)
            }
            Err(e) => {
                let undo = if own {
                    "ROLLBACK"
                } else {
                    "ROLLBACK TO memctl_update; RELEASE memctl_update"
                };
                let _ = self.conn.execute_batch(undo);
                Err(e)
            }
        }
    }

    /// [`crate::storage::Batches::begin_batch`]; the first batch starts the WAL checkpointer.
    fn begin(&self) -> Result<()> {
        let mut checkpointer = self
            .checkpointer
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if checkpointer.is_none() {
            *checkpointer = Some(self.wal_checkpointer()?);
        }
        drop(checkpointer);
        self.conn
            .execute_batch("BEGIN IMMEDIATE")
            .map_err(|e| self.sql_error(e))
    }

    /// [`crate::storage::Batches::commit_batch`]: commits, then nudges the WAL checkpointer.
    fn commit(&self) -> Result<()> {
        if self.conn.is_autocommit() {
            return Ok(());
        }
        self.conn
            .execute_batch("COMMIT")
            .map_err(|e| self.sql_error(e))?;
        let checkpointer = self
            .checkpointer
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(Some(c)) = checkpointer.as_ref() {
            c.nudge();
        }
        Ok(())
    }

    /// [`crate::storage::Batches::end_batches`]: the last WAL checkpoint, and SQLite's automatic
    /// checkpoints back.
    fn end(&self) -> Result<()> {
        let taken = self
            .checkpointer
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
        match taken {
            Some(Some(c)) => c.finish(self),
            _ => Ok(()),
        }
    }

    fn append_in_transaction(
        &self,
        thread_id: &str,
        ns: &str,
        update: &NewRows<'_>,
        expected_writes: usize,
        scrub: Option<BlobRewriter<'_>>,
    ) -> Result<usize> {
        let tx = &self.conn;
        self.check_unmoved(thread_id, ns, update.parent_id, expected_writes)?;
        for w in update.writes {
            let value = BlobParam::of(&w.value)?;
            let result = match self.generation {
                SchemaGeneration::V3 => tx.prepare_cached(
                    "INSERT OR IGNORE INTO writes (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, value) \
                     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                ).and_then(|mut st| st.execute(
                    rusqlite::params![thread_id, ns, update.parent_id, w.task_id, w.task_path, w.idx, w.channel, w.type_name, value],
                )),
                SchemaGeneration::V2 => tx.prepare_cached(
                    "INSERT OR IGNORE INTO writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, value) \
                     VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                ).and_then(|mut st| st.execute(
                    rusqlite::params![thread_id, ns, update.parent_id, w.task_id, w.idx, w.channel, w.type_name, value],
                )),
            };
            let inserted = result.map_err(|e| self.sql_error(e))?;
            if inserted > 0 {
                value.fill(tx, "writes", "value", &w.value)?;
            }
        }
        let checkpoint = BlobParam::of(update.checkpoint)?;
        // SQLite fills a zero blob in memory when a column after it holds data: with a
        // streamed checkpoint, the metadata after it is streamed too (`metadata` is a BLOB
        // column, which SqliteSaver writes as bytes).
        let metadata_pieces = Pieces::from(update.metadata.to_vec());
        let metadata = match checkpoint {
            BlobParam::Streamed(_) => BlobParam::streamed(&metadata_pieces)?,
            BlobParam::Bytes(_) => BlobParam::Bytes(update.metadata.to_vec()),
        };
        tx.prepare_cached(
            "INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata) \
             VALUES (?, ?, ?, ?, ?, ?, ?)",
        )
        .and_then(|mut st| st.execute(
            rusqlite::params![thread_id, ns, update.checkpoint_id, update.parent_id, update.checkpoint_type, checkpoint, metadata],
        ))
        .map_err(|e| self.sql_error(e))?;
        checkpoint.fill(tx, "checkpoints", "checkpoint", update.checkpoint)?;
        metadata.fill(tx, "checkpoints", "metadata", &metadata_pieces)?;
        let scrubbed = match scrub {
            Some(scrub) => self.scrub_thread(tx, thread_id, scrub)?,
            None => 0,
        };
        Ok(scrubbed)
    }

    /// Checks, inside an update's transaction, that `expected_latest` is still the latest
    /// checkpoint of the thread and namespace and still has `expected_writes` pending writes;
    /// otherwise a [`ThreadMoved`] error.
    fn check_unmoved(
        &self,
        thread_id: &str,
        ns: &str,
        expected_latest: &str,
        expected_writes: usize,
    ) -> Result<()> {
        // Cached statements: a batch runs these once per thread.
        let latest = self.latest_checkpoint_id(thread_id, ns)?;
        let writes: i64 = self
            .conn
            .prepare_cached(
                "SELECT COUNT(*) FROM writes WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?",
            )
            .and_then(|mut st| st.query_row([thread_id, ns, expected_latest], |r| r.get(0)))
            .map_err(|e| self.sql_error(e))?;
        ThreadMoved::check(thread_id, latest, expected_latest, writes, expected_writes)
    }

    /// Replaces the thread's blobs that `rewrite` changes (it is handed each with its type);
    /// returns how many rows.
    fn scrub_thread(
        &self,
        tx: &Connection,
        thread_id: &str,
        rewrite: BlobRewriter<'_>,
    ) -> Result<usize> {
        let mut changed = 0;
        let tables = [
            (
                "checkpoints",
                "checkpoint",
                BlobKind::Checkpoint,
                "checkpoint",
            ),
            ("writes", "value", BlobKind::Write, "a write on checkpoint"),
        ];
        for (table, column, kind, what) in tables {
            let rows: Vec<(i64, String, String, Vec<u8>)> = {
                let mut stmt = tx
                    .prepare(&format!(
                        "SELECT rowid, checkpoint_id, type, {column} FROM {table} WHERE thread_id = ?"
                    ))
                    .map_err(|e| self.sql_error(e))?;
                let rows = stmt
                    .query_map([thread_id], |r| {
                        Ok((
                            r.get(0)?,
                            text(r, 1)?,
                            text(r, 2)?,
                            blob(r, 3)?.unwrap_or_default(),
                        ))
                    })
                    .map_err(|e| self.sql_error(e))?;
                rows.collect::<rusqlite::Result<_>>()
                    .map_err(|e| self.sql_error(e))?
            };
            for (rowid, id, type_name, bytes) in rows {
                let new = rewrite(kind, &type_name, &bytes)
                    .with_context(|| format!("cannot rewrite {what} {id}"))?;
                if let Some(new) = new {
                    tx.execute(
                        &format!("UPDATE {table} SET {column} = ? WHERE rowid = ?"),
                        rusqlite::params![new, rowid],
                    )
                    .map_err(|e| self.sql_error(e))?;
                    changed += 1;
                }
            }
        }
        Ok(changed)
    }

    /// Where each of `texts` is still found after a purge of `thread_id`: rows of that
    /// thread, rows of other threads (up to five named per text; checkpoint blobs, metadata,
    /// pending writes), and the bytes of the file and its `-wal` outside any row (free pages,
    /// WAL frames). Texts found nowhere are left out.
    fn leftovers(&self, thread_id: &str, texts: &[String]) -> Result<Vec<Leftover>> {
        if texts.is_empty() {
            return Ok(vec![]);
        }
        let wal = PathBuf::from(format!("{}-wal", self.path.display()));
        // Each text as msgpack and the blobs hold it, then as the JSON metadata does (quotes,
        // backslashes and control characters escaped), when that differs.
        let forms: Vec<(usize, String)> = texts
            .iter()
            .enumerate()
            .flat_map(|(i, t)| {
                let escaped = crate::storage::json_escaped(t);
                let both = (escaped != *t).then_some((i, escaped));
                std::iter::once((i, t.clone())).chain(both)
            })
            .collect();
        let needles: Vec<String> = forms.iter().map(|(_, f)| f.clone()).collect();
        // Where the file holds no row (free pages, freed parts of pages), when that can be
        // told apart: a text found there is left over whether or not a live row holds it too
        // (a thread named `human` is in every message's type tag). Otherwise every byte.
        let free = self.free_space()?;
        self.searched_free_space.set(free.is_some());
        let hits = match &free {
            Some(ranges) => find_in_ranges(&self.path, ranges, &needles)?,
            None => find_in_files(&[self.path.clone(), wal], &needles)?,
        };
        let mut in_file = vec![Vec::<String>::new(); texts.len()];
        for ((i, _), files) in forms.iter().zip(hits) {
            for f in files {
                if !in_file[*i].contains(&f) {
                    in_file[*i].push(f);
                }
            }
        }
        let mut out = Vec::new();
        let holding = self.rows_holding(texts)?;
        for ((text, files), rows) in texts.iter().zip(in_file).zip(holding) {
            let (here, elsewhere): (Vec<_>, Vec<_>) =
                rows.into_iter().partition(|(t, _)| t == thread_id);
            let mut left = Leftover {
                text: text.clone(),
                in_thread: here.into_iter().map(|(_, place)| place).collect(),
                other_threads: elsewhere.into_iter().map(|(_, place)| place).collect(),
                raw: vec![],
            };
            if free.is_some() || (left.in_thread.is_empty() && left.other_threads.is_empty()) {
                left.raw = files;
            }
            if !(left.in_thread.is_empty() && left.other_threads.is_empty() && left.raw.is_empty())
            {
                out.push(left);
            }
        }
        Ok(out)
    }

    /// For each of `texts`, up to five rows whose blobs or metadata hold it: (thread, the row
    /// named for a person), checkpoints before writes. In the JSON metadata a text is searched
    /// as JSON writes it (see [`crate::storage::json_escaped`]). One pass over every row, every text at
    /// once (Aho-Corasick): a forget searches for thousands of strings. Rows are searched
    /// whole, so a text that the file splits across two overflow pages is found here too.
    fn rows_holding(&self, texts: &[String]) -> Result<Vec<Vec<(String, String)>>> {
        let mut holding = crate::storage::holding::Holding::new(texts, 5)?;
        let sql = |e| self.sql_error(e);
        let mut scan = |query: &str| -> Result<()> {
            let mut stmt = self.conn.prepare(query).map_err(sql)?;
            let mut rows = stmt.query([]).map_err(sql)?;
            while let Some(row) = rows.next().map_err(sql)? {
                let type_name = key(row, 4).map_err(sql)?;
                let type_name = String::from_utf8_lossy(&type_name);
                let (value, metadata) = (key(row, 2).map_err(sql)?, key(row, 3).map_err(sql)?);
                let values = [
                    (Some(value.as_ref()), type_name.as_ref()),
                    (Some(metadata.as_ref()), "json"),
                ];
                holding.row(&values, || {
                    Ok((text(row, 0).map_err(sql)?, text(row, 1).map_err(sql)?))
                })?;
            }
            Ok(())
        };
        scan(
            "SELECT thread_id, 'checkpoint ' || checkpoint_id || ' of thread ' || quote(thread_id), \
                    checkpoint, CAST(metadata AS BLOB), type FROM checkpoints",
        )?;
        scan(
            "SELECT thread_id, 'a pending write to ' || quote(channel) || ' on checkpoint ' \
                    || checkpoint_id || ' of thread ' || quote(thread_id), value, NULL, type FROM writes",
        )?;
        Ok(holding.finish())
    }
}

/// Blobs longer than this are streamed into their row (incremental blob I/O) instead of bound
/// as one buffer: SQLite would copy a bound blob, and a new checkpoint keeping a long thread's
/// messages exists only in pieces (see `codec::pieces`).
const STREAM_FROM: usize = 1 << 20;

/// A new blob as an INSERT binds it: its bytes, or a zero blob of its length filled in after
/// the insert ([`BlobParam::fill`]).
enum BlobParam {
    /// Small: bound as one buffer.
    Bytes(Vec<u8>),
    /// Large: `zeroblob(n)`, then written piece by piece.
    Streamed(rusqlite::blob::ZeroBlob),
}

impl BlobParam {
    fn of(pieces: &Pieces) -> Result<BlobParam> {
        if pieces.len() < STREAM_FROM {
            return Ok(BlobParam::Bytes(pieces.to_vec()));
        }
        BlobParam::streamed(pieces)
    }

    fn streamed(pieces: &Pieces) -> Result<BlobParam> {
        let n = i32::try_from(pieces.len()).map_err(|_| {
            anyhow!(
                "a new blob of {} bytes is over SQLite's limit",
                pieces.len()
            )
        })?;
        Ok(BlobParam::Streamed(rusqlite::blob::ZeroBlob(n)))
    }

    /// Writes a streamed blob's pieces into the row just inserted into `table`.
    fn fill(&self, tx: &Connection, table: &str, column: &str, pieces: &Pieces) -> Result<()> {
        use std::io::Write;
        if let BlobParam::Streamed(_) = self {
            let rowid = tx.last_insert_rowid();
            let mut blob = tx
                .blob_open(rusqlite::DatabaseName::Main, table, column, rowid, false)
                .with_context(|| format!("cannot open the new {table} row to write its blob"))?;
            for chunk in pieces.chunks() {
                blob.write_all(chunk)
                    .with_context(|| format!("cannot write the new {table} row's blob"))?;
            }
        }
        Ok(())
    }
}

impl rusqlite::ToSql for BlobParam {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        match self {
            BlobParam::Bytes(b) => b.to_sql(),
            BlobParam::Streamed(z) => z.to_sql(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_are_shared_whole_in_order_by_their_bytes() {
        let ranges = [(0, 10), (10, 10), (40, 30), (90, 5), (100, 5)];
        let two = share_ranges(&ranges, 2);
        assert_eq!(
            two,
            vec![vec![(0, 10), (10, 10), (40, 30)], vec![(90, 5), (100, 5)]]
        );
        for n in 1..=6 {
            assert_eq!(share_ranges(&ranges, n).concat(), ranges);
            assert!(share_ranges(&ranges, n).len() <= n);
        }
        assert_eq!(share_ranges(&[], 2), vec![Vec::<(u64, u64)>::new()]);
    }
}
