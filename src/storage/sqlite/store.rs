//! `SqliteStore`'s tables (langgraph-checkpoint-sqlite): `store` (+ `store_migrations`, levels
//! 0–4) and, with an embedding index, `store_vectors`, in a SQLite file that usually holds a
//! `SqliteSaver`'s checkpoints too.
//!
//! Format facts (langgraph/store/sqlite/base.py): `value` is orjson's bytes (stored as a BLOB);
//! `created_at` / `updated_at` are `CURRENT_TIMESTAMP` text (`YYYY-MM-DD HH:MM:SS`, UTC);
//! `expires_at` has two text formats: `put` binds a Python datetime (`YYYY-MM-DD
//! HH:MM:SS.ffffff+00:00`), the refresh-on-read path writes `DATETIME(CURRENT_TIMESTAMP, …)`
//! (`YYYY-MM-DD HH:MM:SS`). `sweep_ttl` compares the text as it is: `expires_at <
//! CURRENT_TIMESTAMP`; memctl uses the same comparison. `store.delete` deletes the `store`
//! rows only: its connection leaves `PRAGMA foreign_keys` off, so the `ON DELETE CASCADE` of
//! `store_vectors` does not run and the item's vectors stay behind; memctl deletes them too.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result};
use rusqlite::{Connection, OpenFlags};

use super::namespaces;
use super::snapshot;
use super::{blob, check_file, explain, is_wal_mode, opt_text, sidecar, text, uri_path};
use crate::storage::store::{
    Backend, ItemStore, ItemVisitor, NamespaceSummary, NoStore, PartVisit, Removal, RemovedItem,
    StoreItem, StoreRow, StoreShape, VectorRow, SWEEP_BATCH,
};
use crate::storage::Access;

/// The highest `store_migrations` level memctl knows (langgraph-checkpoint-sqlite 3.1:
/// `idx_store_expires_at`).
pub const KNOWN_MIGRATION: i64 = 4;

/// `SqliteStore.setup()`'s `store_migrations` table (langgraph-checkpoint-sqlite 3.1.2,
/// langgraph/store/sqlite/base.py), byte for byte: SQLite keeps a table's statement as given.
const MIGRATIONS_TABLE: &str =
    "\n                CREATE TABLE IF NOT EXISTS store_migrations (\n                    v INTEGER PRIMARY KEY\n                )\n                ";

/// `SqliteStore`'s `MIGRATIONS`, level 0 on, byte for byte.
const MIGRATIONS: [&str; 5] = [
    "\nCREATE TABLE IF NOT EXISTS store (\n    -- 'prefix' represents the doc's 'namespace'\n    prefix text NOT NULL,\n    key text NOT NULL,\n    value text NOT NULL,\n    created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,\n    updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,\n    PRIMARY KEY (prefix, key)\n);\n",
    "\n-- For faster lookups by prefix\nCREATE INDEX IF NOT EXISTS store_prefix_idx ON store (prefix);\n",
    "\n-- Add expires_at column to store table\nALTER TABLE store\nADD COLUMN expires_at TIMESTAMP;\n",
    "\n-- Add ttl_minutes column to store table\nALTER TABLE store\nADD COLUMN ttl_minutes REAL;\n",
    "\n-- Add index for efficient TTL sweeping\nCREATE INDEX IF NOT EXISTS idx_store_expires_at ON store (expires_at)\nWHERE expires_at IS NOT NULL;\n",
];

/// `SqliteStore.setup()`'s `vector_migrations` table (with an embedding index), byte for byte.
const VECTOR_MIGRATIONS_TABLE: &str =
    "\n                    CREATE TABLE IF NOT EXISTS vector_migrations (\n                        v INTEGER PRIMARY KEY\n                    )\n                    ";

/// `SqliteStore`'s `VECTOR_MIGRATIONS`, byte for byte.
const VECTOR_MIGRATIONS: [&str; 1] = [
    "\nCREATE TABLE IF NOT EXISTS store_vectors (\n    prefix text NOT NULL,\n    key text NOT NULL,\n    field_name text NOT NULL,\n    embedding BLOB,\n    created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,\n    updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,\n    PRIMARY KEY (prefix, key, field_name),\n    FOREIGN KEY (prefix, key) REFERENCES store(prefix, key) ON DELETE CASCADE\n);\n",
];

/// Whether an item has expired, as `sweep_ttl` decides (`?1` is `CURRENT_TIMESTAMP`, read
/// once so that a report and its deletion agree).
const EXPIRED: &str = "(expires_at IS NOT NULL AND expires_at < ?1)";

/// The most parts `store namespaces` splits its scan into.
const NAMESPACE_PARTS: usize = 2;

/// `SqliteStore`'s tables in a SQLite file.
pub struct SqliteItemStore {
    conn: Connection,
    path: PathBuf,
    shown: String,
    migration: Option<i64>,
    /// `store` has `expires_at` (migration level 2 on).
    has_ttl: bool,
    /// `store` has `ttl_minutes` (migration level 3 on).
    has_ttl_minutes: bool,
    /// `store_vectors` exists.
    has_vectors: bool,
    /// How `conn` was opened (more connections for a split scan are opened the same way).
    opening: Opening,
    busy_timeout: Duration,
}

impl SqliteItemStore {
    /// Opens the file (never creating it; read-only as [`super::SqliteStore::open_read_only`]
    /// opens it) and finds the store's tables.
    pub fn open(path: &Path, access: Access, busy_timeout: Duration) -> Result<SqliteItemStore> {
        let shown = crate::storage::shown_path(path);
        let opening = Opening::of(path, access)?;
        let conn = connect_as(path, opening, busy_timeout)?;
        let tables: Vec<String> = {
            let mut st = conn
                .prepare(
                    "SELECT name FROM sqlite_master WHERE type = 'table' \
                     AND name IN ('store', 'store_migrations', 'store_vectors')",
                )
                .map_err(|e| explain(e, path))?;
            let rows = st
                .query_map([], |r| text(r, 0))
                .map_err(|e| explain(e, path))?;
            rows.collect::<rusqlite::Result<_>>()
                .map_err(|e| explain(e, path))?
        };
        if !tables.iter().any(|t| t == "store") {
            return Err(NoStore(shown).into());
        }
        let migration = if tables.iter().any(|t| t == "store_migrations") {
            conn.query_row("SELECT max(v) FROM store_migrations", [], |r| {
                r.get::<_, Option<i64>>(0)
            })
            .map_err(|e| explain(e, path))?
        } else {
            None
        };
        let has_column = |name: &str| {
            conn.prepare("SELECT 1 FROM pragma_table_info('store') WHERE name = ?1")
                .and_then(|mut s| s.exists([name]))
                .map_err(|e| explain(e, path))
        };
        let has_ttl = has_column("expires_at")?;
        let has_ttl_minutes = has_column("ttl_minutes")?;
        Ok(SqliteItemStore {
            conn,
            path: path.to_owned(),
            shown,
            migration,
            has_ttl,
            has_ttl_minutes,
            has_vectors: tables.iter().any(|t| t == "store_vectors"),
            opening,
            busy_timeout,
        })
    }

    fn err(&self, e: rusqlite::Error) -> anyhow::Error {
        explain(e, &self.path)
    }

    fn blame(&self, e: anyhow::Error) -> anyhow::Error {
        blame(e, &self.path)
    }

    /// `read` over the `store` table's rows split by rowid (`read` gets a connection, the
    /// part's number and its inclusive rowid range) across up to `most` (at most
    /// [`snapshot::MOST`]) connections, one thread each,
    /// all pinned to one state of the file ([`snapshot::pin`]); the parts' results in rowid
    /// order. Read on this store's connection alone, over every rowid, when the machine has
    /// one core, the table is small, or the connections could not be pinned.
    fn split_scan<T: Send>(
        &self,
        most: usize,
        read: impl Fn(&Connection, usize, (i64, i64)) -> Result<T> + Sync,
    ) -> Result<Vec<T>> {
        let parts = crate::par::cores().min(most).min(snapshot::MOST);
        let whole = (i64::MIN, i64::MAX);
        let worth = parts > 1
            && self.conn.is_autocommit()
            && snapshot::rowid_ranges(&self.conn, "store", parts)
                .map_err(|e| e.context(format!("'{}'", self.shown)))?
                .len()
                > 1;
        if !worth {
            return Ok(vec![read(&self.conn, 0, whole)?]);
        }
        let more = (1..parts)
            .map(|_| connect_as(&self.path, self.opening, self.busy_timeout))
            .collect::<Result<Vec<_>>>()?;
        let Some(mut pinned) = snapshot::pin(&self.conn, self.opening.locking(), more)
            .map_err(|e| e.context(format!("'{}'", self.shown)))?
        else {
            return Ok(vec![read(&self.conn, 0, whole)?]);
        };
        let ranges = snapshot::rowid_ranges(pinned.first(), "store", parts)
            .map_err(|e| e.context(format!("'{}'", self.shown)))?;
        if ranges.len() != parts {
            return Ok(vec![read(pinned.first(), 0, whole)?]);
        }
        let away: Vec<(Connection, usize, (i64, i64))> = std::mem::take(&mut pinned.more)
            .into_iter()
            .zip(ranges[1..].iter().copied())
            .enumerate()
            .map(|(i, (c, r))| (c, i + 1, r))
            .collect();
        crate::par::here_and_away(
            || read(pinned.first(), 0, ranges[0]),
            away,
            |(c, i, r)| read(&c, i, r),
        )
        .into_iter()
        .collect()
    }

    /// Brings the file's Store tables to [`KNOWN_MIGRATION`] as `SqliteStore.setup()` does
    /// (creating them when there are none: the same statements, one `store_migrations` row
    /// per level), with the vector tables too when `vectors`, in one transaction. A level newer
    /// than memctl knows is refused, nothing written. A file that does not exist is made with
    /// the Store's tables alone (no checkpoint table), as `SqliteStore.setup()` makes a new
    /// file; it is removed again if that fails.
    pub fn setup(path: &Path, vectors: bool, busy_timeout: Duration) -> Result<()> {
        if std::fs::symlink_metadata(path).is_err() {
            return Self::create_new(path, vectors, busy_timeout);
        }
        let mut conn = connect(path, Access::ReadWrite, busy_timeout)?;
        Self::setup_on(&mut conn, path, vectors)
    }

    /// [`SqliteItemStore::setup`] of a file that does not exist: made (never over another
    /// file: `create_new`), set up, removed again on failure.
    fn create_new(path: &Path, vectors: bool, busy_timeout: Duration) -> Result<()> {
        super::make_new_file(path, |conn| {
            conn.busy_timeout(busy_timeout)
                .context("cannot set the busy timeout")?;
            Self::setup_on(conn, path, vectors)
        })
    }

    /// [`SqliteItemStore::setup`] on an open connection: one transaction.
    fn setup_on(conn: &mut Connection, path: &Path, vectors: bool) -> Result<()> {
        let e = |e| explain(e, path);
        let tx = conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(e)?;
        let level = |tx: &rusqlite::Transaction<'_>, table: &str, ddl: &str| -> Result<i64> {
            tx.execute_batch(ddl).map_err(e)?;
            tx.query_row(
                &format!("SELECT v FROM {table} ORDER BY v DESC LIMIT 1"),
                [],
                |r| r.get::<_, i64>(0),
            )
            .map(Some)
            .or_else(|err| match err {
                rusqlite::Error::QueryReturnedNoRows => Ok(None),
                other => Err(other),
            })
            .map(|v| v.unwrap_or(-1))
            .map_err(e)
        };
        let have = level(&tx, "store_migrations", MIGRATIONS_TABLE)?;
        if have > KNOWN_MIGRATION {
            anyhow::bail!(
                "'{}': the store is at migration level {have} (store_migrations), newer than memctl knows (up to {KNOWN_MIGRATION}): writes are refused",
                path.display()
            );
        }
        for (v, sql) in MIGRATIONS.iter().enumerate().skip((have + 1) as usize) {
            tx.execute_batch(sql).map_err(e)?;
            tx.execute("INSERT INTO store_migrations (v) VALUES (?1)", [v as i64])
                .map_err(e)?;
        }
        if vectors {
            let have = level(&tx, "vector_migrations", VECTOR_MIGRATIONS_TABLE)?;
            for (v, sql) in VECTOR_MIGRATIONS
                .iter()
                .enumerate()
                .skip((have + 1) as usize)
            {
                tx.execute_batch(sql).map_err(e)?;
                tx.execute("INSERT INTO vector_migrations (v) VALUES (?1)", [v as i64])
                    .map_err(e)?;
            }
        }
        tx.commit().map_err(e)
    }

    /// The `SELECT` of [`StoreRow`]s (columns a lower migration level lacks read as NULL).
    fn row_sql(&self, filter: &str, tail: &str) -> String {
        let ttl = match (self.has_ttl, self.has_ttl_minutes) {
            (true, true) => "expires_at, ttl_minutes",
            (true, false) => "expires_at, NULL",
            _ => "NULL, NULL",
        };
        format!(
            "SELECT prefix, key, CAST(value AS BLOB), typeof(value) = 'text', created_at, updated_at, {ttl} \
             FROM store WHERE {filter} {tail}"
        )
    }

    fn read_rows(&self, sql: &str, params: &[&dyn rusqlite::ToSql]) -> Result<Vec<StoreRow>> {
        let mut st = self.conn.prepare(sql).map_err(|e| self.err(e))?;
        let rows = st
            .query_map(params, |r| {
                Ok(StoreRow {
                    prefix: text(r, 0)?,
                    key: text(r, 1)?,
                    value: blob(r, 2)?.unwrap_or_default(),
                    value_is_text: r.get::<_, Option<bool>>(3)?.unwrap_or(false),
                    created_at: opt_text(r, 4)?,
                    updated_at: opt_text(r, 5)?,
                    expires_at: opt_text(r, 6)?,
                    ttl_minutes: r.get::<_, Option<f64>>(7).unwrap_or(None),
                })
            })
            .map_err(|e| self.err(e))?;
        rows.collect::<rusqlite::Result<_>>()
            .map_err(|e| self.err(e))
    }

    /// `CURRENT_TIMESTAMP` as SQLite gives it now (what `sweep_ttl` compares with).
    fn now(&self) -> Result<String> {
        self.conn
            .query_row("SELECT CURRENT_TIMESTAMP", [], |r| text(r, 0))
            .map_err(|e| self.err(e))
    }

    fn expired_sql(&self) -> &'static str {
        if self.has_ttl {
            EXPIRED
        } else {
            "(0 AND ?1 IS NULL)"
        }
    }

    fn item_sql(&self, filter: &str) -> String {
        let ttl = match (self.has_ttl, self.has_ttl_minutes) {
            (true, true) => "expires_at, ttl_minutes",
            (true, false) => "expires_at, NULL",
            _ => "NULL, NULL",
        };
        format!(
            "SELECT prefix, key, value, created_at, updated_at, {ttl}, {} FROM store WHERE {filter} ORDER BY key",
            self.expired_sql()
        )
    }

    fn read_items(&self, sql: &str, params: &[&dyn rusqlite::ToSql]) -> Result<Vec<StoreItem>> {
        let mut st = self.conn.prepare(sql).map_err(|e| self.err(e))?;
        let rows = st
            .query_map(params, |r| {
                Ok(StoreItem {
                    prefix: text(r, 0)?,
                    key: text(r, 1)?,
                    value: blob(r, 2)?.unwrap_or_default(),
                    created_at: opt_text(r, 3)?.map(|t| rfc3339(&t)),
                    updated_at: opt_text(r, 4)?.map(|t| rfc3339(&t)),
                    expires_at: opt_text(r, 5)?.map(|t| rfc3339(&t)),
                    ttl_minutes: r.get::<_, Option<f64>>(6).unwrap_or(None),
                    expired: r.get::<_, Option<bool>>(7)?.unwrap_or(false),
                })
            })
            .map_err(|e| self.err(e))?;
        rows.collect::<rusqlite::Result<_>>()
            .map_err(|e| self.err(e))
    }

    /// Deletes the rows `filter` selects (or, with `dry_run`, lists them) and their vectors,
    /// in one `BEGIN IMMEDIATE` transaction: two statements (vectors first: rusqlite's SQLite
    /// enforces foreign keys, so deleting the items first would cascade to their vectors before
    /// they were counted), the items' own with `RETURNING`, as fast as the bare `DELETE`.
    fn remove(
        &mut self,
        filter: &str,
        params: &[&dyn rusqlite::ToSql],
        dry_run: bool,
    ) -> Result<Removal> {
        let items_sql = if dry_run {
            format!("SELECT prefix, key, length(CAST(value AS BLOB)) FROM store WHERE {filter}")
        } else {
            format!(
                "DELETE FROM store WHERE {filter} RETURNING prefix, key, length(CAST(value AS BLOB))"
            )
        };
        let vectors_sql = self.has_vectors.then(|| {
            let which = format!(
                "FROM store_vectors WHERE (prefix, key) IN (SELECT prefix, key FROM store WHERE {filter})"
            );
            if dry_run {
                format!("SELECT count(*) {which}")
            } else {
                format!("DELETE {which}")
            }
        });
        let run = |conn: &Connection| -> rusqlite::Result<Removal> {
            let vectors = match &vectors_sql {
                Some(sql) if dry_run => conn.query_row(sql, params, |r| r.get::<_, i64>(0))? as u64,
                Some(sql) => conn.execute(sql, params)? as u64,
                None => 0,
            };
            let mut st = conn.prepare(&items_sql)?;
            let rows = st.query_map(params, |r| {
                Ok(RemovedItem {
                    prefix: text(r, 0)?,
                    key: text(r, 1)?,
                    bytes: r.get::<_, Option<i64>>(2)?.unwrap_or(0).max(0) as u64,
                })
            })?;
            let mut removal = Removal {
                items: rows.collect::<rusqlite::Result<_>>()?,
                vectors,
            };
            removal.sort();
            Ok(removal)
        };
        if dry_run {
            return run(&self.conn).map_err(|e| self.err(e));
        }
        let path = self.path.clone();
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(|e| explain(e, &path))?;
        let removal = run(&tx).map_err(|e| explain(e, &path))?;
        tx.commit().map_err(|e| explain(e, &path))?;
        Ok(removal)
    }
}

/// Calls `f` with each item of the `store` table `conn` reads whose rowid is within
/// `from..=to`, in storage order; the namespace, key and value are borrowed from the row (no
/// copy per item). Text that is not UTF-8 is shown lossily; NULL is empty.
fn visit_items(conn: &Connection, (from, to): (i64, i64), f: ItemVisitor<'_>) -> Result<()> {
    let mut st = conn.prepare(
        "SELECT prefix, key, CAST(value AS BLOB) FROM store WHERE rowid BETWEEN ?1 AND ?2",
    )?;
    let mut rows = st.query([from, to])?;
    while let Some(r) = rows.next()? {
        let (prefix, key, value) = (super::key(r, 0)?, super::key(r, 1)?, super::key(r, 2)?);
        f(
            &String::from_utf8_lossy(&prefix),
            &String::from_utf8_lossy(&key),
            &value,
        )?;
    }
    Ok(())
}

/// `e` told as an error of the file at `path` when SQLite raised it (what to do about it
/// included: [`explain`]); any other error as it is.
fn blame(e: anyhow::Error, path: &Path) -> anyhow::Error {
    match e.downcast::<rusqlite::Error>() {
        Ok(e) => explain(e, path),
        Err(e) => e,
    }
}

/// Opens the file (never creating it) with `access`, the way the checkpoint reader opens it
/// read-only (see [`super::SqliteStore::open_read_only`]: no `-wal` / `-shm` made, none
/// removed on close).
fn connect(path: &Path, access: Access, busy_timeout: Duration) -> Result<Connection> {
    connect_as(path, Opening::of(path, access)?, busy_timeout)
}

/// How [`connect`] opens a file: decided once, so that more connections to read beside the
/// first ([`snapshot`]) are opened the same way, whatever side files appeared meanwhile.
#[derive(Debug, Clone, Copy)]
enum Opening {
    /// A WAL-mode file with no `-wal`: read as it is, no lock taken, no side file made.
    Immutable,
    /// A `-wal` without its `-shm` (a backup's copy): read as the checkpoint reader reads it
    /// (see `SqliteStore::open_read_only`), the WAL index in memory, no `-shm` made.
    WalInMemory,
    /// With SQLite's locks and side files.
    Locked(Access),
}

impl Opening {
    fn of(path: &Path, access: Access) -> Result<Opening> {
        check_file(path)?;
        Ok(match access {
            Access::ReadOnly if is_wal_mode(path) && !sidecar(path, "-wal").exists() => {
                Opening::Immutable
            }
            Access::ReadOnly
                if cfg!(unix) && is_wal_mode(path) && !sidecar(path, "-shm").exists() =>
            {
                Opening::WalInMemory
            }
            Access::ReadOnly => Opening::Locked(access),
            Access::ReadWrite => {
                super::check_writable(path)?;
                Opening::Locked(access)
            }
        })
    }

    fn locking(self) -> snapshot::Locking {
        match self {
            Opening::Locked(_) => snapshot::Locking::Locked,
            Opening::Immutable | Opening::WalInMemory => snapshot::Locking::None,
        }
    }
}

/// A connection opened as `opening` says.
fn connect_as(path: &Path, opening: Opening, busy_timeout: Duration) -> Result<Connection> {
    let flags = OpenFlags::SQLITE_OPEN_NO_MUTEX | OpenFlags::SQLITE_OPEN_URI;
    let read_only = flags | OpenFlags::SQLITE_OPEN_READ_ONLY;
    let conn = match opening {
        Opening::Immutable => {
            let uri = format!("file:{}?immutable=1", uri_path(path));
            Connection::open_with_flags(&uri, read_only)
        }
        Opening::WalInMemory => {
            let uri = format!("file:{}?vfs=unix-none", uri_path(path));
            Connection::open_with_flags(&uri, read_only).and_then(|c| {
                c.pragma_update(None, "locking_mode", "EXCLUSIVE")?;
                Ok(c)
            })
        }
        Opening::Locked(Access::ReadOnly) => Connection::open_with_flags(path, read_only),
        Opening::Locked(Access::ReadWrite) => {
            Connection::open_with_flags(path, flags | OpenFlags::SQLITE_OPEN_READ_WRITE)
        }
    }
    .map_err(|e| explain(e, path))
    .with_context(|| format!("cannot open '{}'", crate::storage::shown_path(path)))?;
    conn.busy_timeout(busy_timeout)
        .context("cannot set the busy timeout")?;
    if !matches!(opening, Opening::Locked(Access::ReadWrite)) {
        super::no_checkpoint_on_close(&conn, path)?;
    }
    Ok(conn)
}

/// The checkpoint tables of a file that holds a LangGraph store but no checkpoints (an app
/// using `SqliteStore` without a `SqliteSaver` in that file), as the saver's reader sees a
/// saver with no checkpoints: `SqliteSaver.setup()`'s `checkpoints` and `writes` as empty
/// TEMP tables of this connection only (never written to the file), so `forget`, `stats`
/// and `find` cover the store alone. `None` when the file is not that (no `store` table,
/// or a `checkpoints` or `writes` table of its own): the caller's first error stands.
pub fn saver_of_store_only(
    path: &Path,
    access: Access,
    busy_timeout: Duration,
) -> Result<Option<super::SqliteStore>> {
    // Checked before this connection could create a -wal file of its own.
    let shared = super::might_be_shared(path);
    let conn = connect(path, access, busy_timeout)?;
    let names: Vec<String> = {
        let mut st = conn
            .prepare(
                "SELECT name FROM main.sqlite_master WHERE type = 'table' \
                 AND name IN ('store', 'checkpoints', 'writes')",
            )
            .map_err(|e| explain(e, path))?;
        let rows = st
            .query_map([], |r| text(r, 0))
            .map_err(|e| explain(e, path))?;
        rows.collect::<rusqlite::Result<_>>()
            .map_err(|e| explain(e, path))?
    };
    if names.len() != 1 || names[0] != "store" {
        return Ok(None);
    }
    conn.execute_batch(
        "CREATE TEMP TABLE checkpoints (thread_id TEXT NOT NULL, \
             checkpoint_ns TEXT NOT NULL DEFAULT '', checkpoint_id TEXT NOT NULL, \
             parent_checkpoint_id TEXT, type TEXT, checkpoint BLOB, metadata BLOB, \
             PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id)); \
         CREATE TEMP TABLE writes (thread_id TEXT NOT NULL, \
             checkpoint_ns TEXT NOT NULL DEFAULT '', checkpoint_id TEXT NOT NULL, \
             task_id TEXT NOT NULL, task_path TEXT NOT NULL DEFAULT '', idx INTEGER NOT NULL, \
             channel TEXT NOT NULL, type TEXT, value BLOB, \
             PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx));",
    )
    .map_err(|e| explain(e, path))?;
    let generation = super::detect_schema(&conn, path)?;
    Ok(Some(super::SqliteStore {
        conn,
        path: path.to_owned(),
        generation,
        busy_timeout,
        shared,
        checkpointer: std::sync::Mutex::new(None),
        searched_free_space: std::cell::Cell::new(false),
    }))
}

impl ItemStore for SqliteItemStore {
    fn shown(&self) -> &str {
        &self.shown
    }

    fn migration(&self) -> Option<i64> {
        self.migration
    }

    fn known_migration(&self) -> i64 {
        KNOWN_MIGRATION
    }

    fn backend(&self) -> Backend {
        Backend::Sqlite
    }

    fn shape(&self) -> StoreShape {
        StoreShape {
            migration: self.migration,
            has_vectors: self.has_vectors,
        }
    }

    fn page(&self, after: Option<(&str, &str)>, limit: usize) -> Result<Vec<StoreRow>> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        match after {
            None => self.read_rows(
                &self.row_sql("1", "ORDER BY prefix, key LIMIT ?1"),
                &[&limit],
            ),
            Some((p, k)) => self.read_rows(
                &self.row_sql("(prefix, key) > (?2, ?3)", "ORDER BY prefix, key LIMIT ?1"),
                &[&limit, &p, &k],
            ),
        }
    }

    fn rows(&self, prefix: &str, keys: &[String]) -> Result<Vec<StoreRow>> {
        let list = serde_json::to_string(keys)?;
        self.read_rows(
            &self.row_sql(
                "prefix = ?1 AND key IN (SELECT value FROM json_each(?2))",
                "",
            ),
            &[&prefix, &list],
        )
    }

    fn write_rows(
        &mut self,
        rows: &[StoreRow],
        overwrite: bool,
        vectors: &[VectorRow],
    ) -> Result<Vec<(String, String)>> {
        let (cols, marks) = match (self.has_ttl, self.has_ttl_minutes) {
            (true, true) => (", expires_at, ttl_minutes", ", ?6, ?7"),
            (true, false) => (", expires_at", ", ?6"),
            _ => ("", ""),
        };
        let (has_ttl, has_ttl_minutes, has_vectors) =
            (self.has_ttl, self.has_ttl_minutes, self.has_vectors);
        if !vectors.is_empty() && !has_vectors {
            anyhow::bail!("'{}': the store has no store_vectors table", self.shown);
        }
        let path = self.path.clone();
        let e = |e| explain(e, &path);
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(e)?;
        let mut there = Vec::new();
        {
            let verb = if overwrite { "OR REPLACE" } else { "OR IGNORE" };
            let sql = format!(
                "INSERT {verb} INTO store (prefix, key, value, created_at, updated_at{cols}) \
                 VALUES (?1, ?2, ?3, ?4, ?5{marks})"
            );
            let mut put = tx.prepare(&sql).map_err(e)?;
            for r in rows {
                let value: rusqlite::types::Value = match r.value_is_text {
                    true => rusqlite::types::Value::Text(
                        String::from_utf8(r.value.clone()).map_err(|_| {
                            anyhow::anyhow!(
                                "store item '{}' / '{}': a TEXT value that is not UTF-8",
                                r.prefix,
                                r.key
                            )
                        })?,
                    ),
                    false => rusqlite::types::Value::Blob(r.value.clone()),
                };
                let mut params: Vec<&dyn rusqlite::ToSql> =
                    vec![&r.prefix, &r.key, &value, &r.created_at, &r.updated_at];
                if has_ttl {
                    params.push(&r.expires_at);
                }
                if has_ttl_minutes {
                    params.push(&r.ttl_minutes);
                }
                if put.execute(params.as_slice()).map_err(e)? == 0 {
                    // Written in the target meanwhile (by its app): left as it is.
                    there.push((r.prefix.clone(), r.key.clone()));
                } else if has_vectors {
                    // Vectors an earlier delete left behind (store.delete keeps them) or
                    // the replaced item's: the source's take their place.
                    tx.execute(
                        "DELETE FROM store_vectors WHERE prefix = ?1 AND key = ?2",
                        [&r.prefix, &r.key],
                    )
                    .map_err(e)?;
                }
            }
            if has_vectors {
                let mut vec = tx
                    .prepare(
                        "INSERT OR REPLACE INTO store_vectors \
                         (prefix, key, field_name, embedding, created_at, updated_at) \
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                    )
                    .map_err(e)?;
                for v in vectors {
                    if there.iter().any(|(p, k)| *p == v.prefix && *k == v.key) {
                        continue;
                    }
                    vec.execute(rusqlite::params![
                        v.prefix,
                        v.key,
                        v.field_name,
                        v.embedding,
                        v.created_at,
                        v.updated_at
                    ])
                    .map_err(e)?;
                }
            }
        }
        tx.commit().map_err(e)?;
        Ok(there)
    }

    fn namespaces(&self, prefix: Option<&str>) -> Result<Vec<NamespaceSummary>> {
        // One scan of the table in storage order, split across cores (`namespaces`).
        // `octet_length` reads a value's size from its row's header, not its bytes.
        let now = self.now()?;
        let sql = format!(
            "SELECT prefix, octet_length(value), {}, updated_at FROM store \
             WHERE rowid BETWEEN ?2 AND ?3",
            self.expired_sql()
        );
        let (path, shown) = (&self.path, &self.shown);
        // Two parts at most: each holds every namespace it meets (up to all of them), so
        // memory grows with the parts (100,000 namespaces: 57 MiB in two parts, 92 in four).
        let parts = self.split_scan(NAMESPACE_PARTS, |conn, _, (from, to)| {
            let mut groups = namespaces::Groups::new(prefix);
            namespaces::scan(conn, &sql, &[&now, &from, &to], &mut groups).map_err(|e| {
                if e.is::<rusqlite::Error>() {
                    blame(e, path)
                } else {
                    e.context(format!("'{shown}'"))
                }
            })?;
            Ok(groups)
        })?;
        let mut parts = parts.into_iter();
        let mut groups = parts
            .next()
            .unwrap_or_else(|| namespaces::Groups::new(prefix));
        for p in parts {
            groups.merge(p);
        }
        Ok(groups.finish(rfc3339))
    }

    fn items(&self, prefix: &str, limit: Option<usize>) -> Result<Vec<StoreItem>> {
        let now = self.now()?;
        let limit = limit.map_or(-1, |l| i64::try_from(l).unwrap_or(i64::MAX));
        let sql = format!("{} LIMIT ?3", self.item_sql("prefix = ?2"));
        self.read_items(&sql, &[&now, &prefix, &limit])
    }

    fn get(&self, prefix: &str, key: &str) -> Result<Option<StoreItem>> {
        let now = self.now()?;
        let sql = self.item_sql("prefix = ?2 AND key = ?3");
        Ok(self
            .read_items(&sql, &[&now, &prefix, &key])?
            .into_iter()
            .next())
    }

    fn delete_at_once(&mut self, prefix: &str, keys: &[String], dry_run: bool) -> Result<Removal> {
        if keys.is_empty() {
            return self.remove("prefix = ?1", &[&prefix], dry_run);
        }
        let marks: Vec<String> = (0..keys.len()).map(|i| format!("?{}", i + 2)).collect();
        let filter = format!("prefix = ?1 AND key IN ({})", marks.join(", "));
        let mut params: Vec<&dyn rusqlite::ToSql> = vec![&prefix];
        params.extend(keys.iter().map(|k| k as &dyn rusqlite::ToSql));
        self.remove(&filter, &params, dry_run)
    }

    fn for_each_item(&self, f: ItemVisitor<'_>) -> Result<()> {
        visit_items(&self.conn, (i64::MIN, i64::MAX), f).map_err(|e| self.blame(e))
    }

    fn for_each_item_in_parts(&self, part: &PartVisit<'_>) -> Result<()> {
        let path = &self.path;
        self.split_scan(snapshot::MOST, |conn, i, range| {
            part(i, &mut |visit| {
                visit_items(conn, range, visit).map_err(|e| blame(e, path))
            })
        })?;
        Ok(())
    }

    fn delete_unchanged_batch(
        &mut self,
        prefix: &str,
        items: &[(String, Vec<u8>)],
        dry_run: bool,
    ) -> Result<Removal> {
        let which: Vec<String> = (0..items.len())
            .map(|i| {
                format!(
                    "(key = ?{} AND CAST(value AS BLOB) = ?{})",
                    2 * i + 2,
                    2 * i + 3
                )
            })
            .collect();
        let filter = format!("prefix = ?1 AND ({})", which.join(" OR "));
        let mut params: Vec<&dyn rusqlite::ToSql> = vec![&prefix];
        for (key, value) in items {
            params.push(key);
            params.push(value);
        }
        self.remove(&filter, &params, dry_run)
    }

    fn sweep(&mut self, dry_run: bool) -> Result<Removal> {
        if !self.has_ttl {
            return Ok(Removal::default());
        }
        let now = self.now()?;
        if dry_run {
            return self.remove(EXPIRED, &[&now], true);
        }
        // The expired items' rowids, in namespace and key order (the order of the primary
        // key's and the prefix index's pages: each batch then rewrites a run of those pages,
        // not pages all over them again and again, which made 5,000-item batches 1.6-2x the
        // bare DELETE; measured in BENCHMARKS.md, "Store"). Then one transaction per batch
        // (the write lock is held for one batch, never for the whole sweep); each DELETE
        // checks the expiry again, so an item the app refreshed or rewrote meanwhile stays.
        let ids: Vec<i64> = {
            let mut st = self
                .conn
                .prepare(&format!(
                    "SELECT rowid FROM store WHERE {EXPIRED} ORDER BY prefix, key"
                ))
                .map_err(|e| self.err(e))?;
            let rows = st
                .query_map([&now], |r| r.get(0))
                .map_err(|e| self.err(e))?;
            rows.collect::<rusqlite::Result<_>>()
                .map_err(|e| self.err(e))?
        };
        let batch = format!("{EXPIRED} AND rowid IN (SELECT value FROM json_each(?2))");
        let mut all = Removal::default();
        for chunk in ids.chunks(SWEEP_BATCH) {
            let list = serde_json::to_string(chunk)?;
            all.absorb(self.remove(&batch, &[&now, &list], false)?);
        }
        all.sort();
        Ok(all)
    }

    fn vectors(&self) -> Option<&dyn crate::storage::store::Vectors> {
        Some(self)
    }

    fn vector_copy(&self) -> Option<&dyn crate::storage::store::VectorCopy> {
        Some(self)
    }

    fn secure_delete(&self) -> Option<&dyn crate::storage::store::SecureDelete> {
        Some(self)
    }
}

impl crate::storage::store::Vectors for SqliteItemStore {
    fn vectors_of(&self, items: &[(String, String)]) -> Result<u64> {
        if !self.has_vectors {
            return Ok(0);
        }
        let mut st = self
            .conn
            .prepare("SELECT count(*) FROM store_vectors WHERE prefix = ?1 AND key = ?2")
            .map_err(|e| self.err(e))?;
        let mut n = 0u64;
        for (prefix, key) in items {
            let c: i64 = st
                .query_row([prefix, key], |r| r.get(0))
                .map_err(|e| self.err(e))?;
            n += c.max(0) as u64;
        }
        Ok(n)
    }

    fn vector_space(&self) -> Result<(u64, u64)> {
        if !self.has_vectors {
            return Ok((0, 0));
        }
        self.conn
            .query_row(
                "SELECT count(*), total(length(embedding)) FROM store_vectors",
                [],
                |r| {
                    Ok((
                        r.get::<_, i64>(0)?.max(0) as u64,
                        r.get::<_, f64>(1)?.max(0.0) as u64,
                    ))
                },
            )
            .map_err(|e| self.err(e))
    }
}

impl crate::storage::store::VectorCopy for SqliteItemStore {
    fn vector_rows(&self, items: &[(String, String)]) -> Result<Vec<VectorRow>> {
        if !self.has_vectors {
            return Ok(vec![]);
        }
        let mut st = self
            .conn
            .prepare(
                "SELECT prefix, key, field_name, embedding, created_at, updated_at \
                 FROM store_vectors WHERE prefix = ?1 AND key = ?2 ORDER BY field_name",
            )
            .map_err(|e| self.err(e))?;
        let mut out = Vec::new();
        for (prefix, key) in items {
            let rows = st
                .query_map([prefix, key], |r| {
                    Ok(VectorRow {
                        prefix: text(r, 0)?,
                        key: text(r, 1)?,
                        field_name: text(r, 2)?,
                        embedding: blob(r, 3)?,
                        created_at: opt_text(r, 4)?,
                        updated_at: opt_text(r, 5)?,
                    })
                })
                .map_err(|e| self.err(e))?;
            for r in rows {
                out.push(r.map_err(|e| self.err(e))?);
            }
        }
        Ok(out)
    }
}

impl crate::storage::store::SecureDelete for SqliteItemStore {
    fn zero_deleted_content(&self) -> Result<()> {
        self.conn
            .execute_batch("PRAGMA secure_delete = ON")
            .map_err(|e| self.err(e))
    }
}

/// A timestamp as `SqliteStore` stores it (`YYYY-MM-DD HH:MM:SS[.ffffff][+00:00]`, always
/// UTC: `CURRENT_TIMESTAMP` or a UTC datetime) in RFC 3339 (`YYYY-MM-DDTHH:MM:SS[.ffffff]+00:00`);
/// any other text is returned as it is.
pub fn rfc3339(stored: &str) -> String {
    let b = stored.as_bytes();
    let shape = b.len() >= 19
        && b[4] == b'-'
        && b[7] == b'-'
        && (b[10] == b' ' || b[10] == b'T')
        && b[13] == b':'
        && b[16] == b':';
    if !shape {
        return stored.to_owned();
    }
    let (date, time) = (&stored[..10], &stored[11..]);
    let (time, zone) = match time.find(['+', 'Z']) {
        Some(i) if time[i..] == *"+00:00" || time[i..] == *"Z" => (&time[..i], "+00:00"),
        Some(_) => return stored.to_owned(),
        None => (time, "+00:00"),
    };
    format!("{date}T{time}{zone}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_expires_at_formats_become_rfc3339() {
        assert_eq!(
            rfc3339("2126-11-09 10:02:45.728976+00:00"),
            "2126-11-09T10:02:45.728976+00:00"
        );
        assert_eq!(rfc3339("2126-11-09 10:02:45"), "2126-11-09T10:02:45+00:00");
        assert_eq!(rfc3339("yesterday"), "yesterday");
        assert_eq!(
            rfc3339("2126-11-09 10:02:45+02:00"),
            "2126-11-09 10:02:45+02:00"
        );
    }

    /// A store of more items than one part of a split scan takes, every namespace in every
    /// part, written by `app` (left open: the file has its `-wal`).
    fn big_store(path: &Path) -> Connection {
        SqliteItemStore::setup(path, false, Duration::from_secs(5)).expect("setup");
        let app = Connection::open(path).expect("app");
        app.execute_batch("PRAGMA journal_mode=WAL; BEGIN")
            .expect("begin");
        for i in 0..(snapshot::SPLIT_FROM * 2) {
            let expires = match i % 7 {
                0 => Some("2000-01-01 00:00:00"),
                1 => Some("2999-01-01 00:00:00.000001+00:00"),
                _ => None,
            };
            app.execute(
                "INSERT INTO store (prefix, key, value, updated_at, expires_at) \
                 VALUES (?1, ?2, ?3, ?4, ?5)",
                rusqlite::params![
                    format!("users.u-{}.memories", i % 97),
                    format!("k-{i}"),
                    "x".repeat(usize::try_from(i % 13).expect("small")),
                    format!("2026-01-01 00:00:{:02}", i % 60),
                    expires
                ],
            )
            .expect("insert");
        }
        app.execute_batch("COMMIT").expect("commit");
        app
    }

    /// The parts a split read of this store makes on this machine.
    fn parts_here() -> usize {
        crate::par::cores().min(snapshot::MOST)
    }

    /// The namespaces a split scan finds are those one `GROUP BY` finds, whether the file is
    /// read with its locks (a `-wal` beside it: the connections pinned by `data_version`) or
    /// as it is (no `-wal`: `immutable`).
    #[test]
    fn split_scan_finds_what_one_query_finds() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("store.sqlite");
        let timeout = Duration::from_secs(5);
        let app = big_store(&path);
        let expected: Vec<(String, u64, u64, u64, String)> = {
            let mut st = app
                .prepare(
                    "SELECT prefix, count(*), sum(length(CAST(value AS BLOB))), \
                     sum(expires_at IS NOT NULL AND expires_at < CURRENT_TIMESTAMP), \
                     max(updated_at) FROM store GROUP BY prefix ORDER BY prefix",
                )
                .expect("prepare");
            st.query_map([], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
            })
            .expect("query")
            .collect::<rusqlite::Result<_>>()
            .expect("rows")
        };
        assert_eq!(expected.len(), 97);
        let found = || -> Vec<(String, u64, u64, u64, String)> {
            let store = SqliteItemStore::open(&path, Access::ReadOnly, timeout).expect("open");
            // Split, on a machine with more than one core.
            let parts = store
                .split_scan(snapshot::MOST, |_, _, range| Ok(range))
                .expect("ranges");
            assert_eq!(parts.len(), parts_here());
            store
                .namespaces(None)
                .expect("namespaces")
                .into_iter()
                .map(|n| {
                    let newest = n.newest_update.expect("updated");
                    (
                        n.prefix,
                        n.items,
                        n.bytes,
                        n.expired,
                        newest.replace('T', " ").replace("+00:00", ""),
                    )
                })
                .collect()
        };
        assert!(sidecar(&path, "-wal").exists());
        assert_eq!(found(), expected, "read with locks");
        drop(app);
        assert!(!sidecar(&path, "-wal").exists());
        assert_eq!(found(), expected, "read as it is");
    }

    /// Items visited in parts, the parts taken in order, are exactly those one visit sees, in
    /// its order.
    #[test]
    fn items_visited_in_parts_are_one_visit_split() {
        type Seen = Vec<(String, String, Vec<u8>)>;
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("store.sqlite");
        let app = big_store(&path);
        let check = || {
            let store = SqliteItemStore::open(&path, Access::ReadOnly, Duration::from_secs(5))
                .expect("open");
            let mut one: Seen = Vec::new();
            store
                .for_each_item(&mut |p, k, v| {
                    one.push((p.to_owned(), k.to_owned(), v.to_vec()));
                    Ok(())
                })
                .expect("one visit");
            let parts = crate::storage::store::visit_in_parts(
                &store,
                || Ok(Seen::new()),
                |seen, p, k, v| {
                    seen.push((p.to_owned(), k.to_owned(), v.to_vec()));
                    Ok(())
                },
            )
            .expect("in parts");
            assert_eq!(parts.len(), parts_here());
            assert_eq!(
                one.len(),
                usize::try_from(snapshot::SPLIT_FROM * 2).expect("fits")
            );
            assert_eq!(parts.concat(), one);
        };
        check();
        drop(app);
        check();
    }
}
