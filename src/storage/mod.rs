//! Where checkpoints live: the [`CheckpointStore`] interface every command reads and writes
//! through, and its backends (SQLite, `SqliteSaver`'s file, is the embedded default;
//! PostgreSQL, `PostgresSaver`'s tables, for a `postgresql://` URL).
//! Storage takes and returns plain rows and bytes: it knows nothing of messages, edits, exit
//! codes or the command line.
//!
//! A backend gives the core ([`CheckpointStore`]'s required methods: its threads, their
//! namespaces, checkpoints, metadata and pending writes, an update appended, a thread written,
//! rewritten or deleted, one consistent read of a thread, its name) and opts into the
//! capabilities that make sense for it, each a trait reached through an accessor of the core
//! that answers `None` by default:
//!
//! | capability        | what                                              | SQLite | Postgres |
//! |-------------------|---------------------------------------------------|--------|----------|
//! | [`Space`]         | sizes, writes by channel, blobs, orphans (`stats`) | yes    | yes      |
//! | [`ServerAccount`] | what the server accounts to the saver's tables    |        | yes      |
//! | [`Maintenance`]   | `vacuum`, `erase_freed`, `shrink`                 | yes    | yes      |
//! | [`Forensics`]     | `find_leftovers` after a purge                    | yes    | yes      |
//! | [`RawBytes`]      | the file's own bytes, free space, `secure_delete` | yes    |          |
//! | [`Batches`]       | many updates in one transaction                   | yes    | yes      |
//! | [`Gc`]            | `apply_gc`, `apply_gc_many`                       | yes    | yes      |
//! | [`Sharing`]       | shared with an app? lock queue, parallel readers  | yes    | yes      |
//! | [`RewriteValues`] | every stored value rewritten in place (`rekey`)   | yes    | yes      |
//!
//! A Postgres database with the Store's tables and none of the saver's is
//! [`postgres::StoreOnly`]: the core answered with no thread, writes refused, and
//! [`ServerAccount`] alone. A caller that cannot do without a capability turns `None` into
//! [`CheckpointStore::lacks`]' one line (`` `vacuum` is not a redis operation ``); one that
//! can says what it does instead (no [`Batches`]: each update commits on its own).
//!
//! A third backend (Redis: no SQL, no pages, no `VACUUM`, native TTLs) implements the core,
//! and [`Sharing`] (a server: shared, queued writers, readers stall no writer), [`Forensics`]
//! (its keys searched for what a purge removed), [`Batches`] (`MULTI`/`EXEC`), [`Gc`] and
//! [`RewriteValues`] where its layout allows them, and [`Space`] from its own counts; never
//! [`RawBytes`] nor [`Maintenance`] (nothing to vacuum). For the Store it implements
//! [`store::ItemStore`]'s core; TTLs are its own. Backends are chosen in one place,
//! [`open`] / [`open_store`] (and [`setup_store`]) here, from [`locate`]'s reading of `--db`.

pub mod holding;
pub mod postgres;
pub mod sqlite;
pub mod store;

use anyhow::Result;

/// `--schema` and the URL's `schema=` name different schemas (commands catch it by this name,
/// not by the backend's module).
pub use postgres::conn::SchemaConflict;
pub use sqlite::SqliteStore;

use crate::codec::pieces::Pieces;

use std::path::Path;
use std::time::Duration;

/// One row of the `checkpoints` table.
#[derive(Debug, Clone)]
pub struct CheckpointRow {
    /// The conversation thread.
    pub thread_id: String,
    /// The namespace (`''` for the root graph, `node:task` for subgraphs).
    pub checkpoint_ns: String,
    /// The checkpoint id (a uuid6; the largest string is the latest).
    pub checkpoint_id: String,
    /// The checkpoint this one was made from.
    pub parent_checkpoint_id: Option<String>,
    /// The serialization type of `checkpoint` (`msgpack`, …).
    pub type_name: String,
    /// The serialized checkpoint.
    pub checkpoint: Vec<u8>,
    /// The JSON metadata.
    pub metadata: Option<Vec<u8>>,
}

/// One checkpoint's metadata, without its blob, as [`CheckpointStore::metadata_of`] gives it.
#[derive(Debug, Clone)]
pub struct MetadataRow {
    /// The namespace (`''` for the root graph).
    pub checkpoint_ns: String,
    /// The checkpoint id.
    pub checkpoint_id: String,
    /// The JSON metadata.
    pub metadata: Option<Vec<u8>>,
}

/// One row of the `writes` table (pending writes of a checkpoint).
#[derive(Debug, Clone)]
pub struct WriteRow {
    /// The task that wrote it.
    pub task_id: String,
    /// The task's path; `''` in the 2.x schema, which has no such column.
    pub task_path: String,
    /// Position in the task's writes (negative for special channels).
    pub idx: i64,
    /// The channel written.
    pub channel: String,
    /// The serialization type of `value`.
    pub type_name: String,
    /// The serialized value.
    pub value: Vec<u8>,
}

/// A pending write of a whole thread (see [`ThreadRows`]): the checkpoint it is recorded on,
/// and the row.
#[derive(Debug, Clone)]
pub struct ThreadWrite {
    /// The namespace of the checkpoint.
    pub checkpoint_ns: String,
    /// The checkpoint the write is recorded on.
    pub checkpoint_id: String,
    /// The write row.
    pub row: WriteRow,
}

/// A whole thread as its database stores it, every namespace (`copy`, `export`, `migrate`):
/// checkpoints in namespace order, oldest first within a namespace, and their pending writes.
/// A checkpoint is what `SqliteSaver` stores (a Postgres checkpoint is assembled, and its
/// metadata is the `json.dumps` text of the loaded dict); an encrypted one is sealed whole.
#[derive(Debug, Clone, Default)]
pub struct ThreadRows {
    /// Every checkpoint row.
    pub checkpoints: Vec<CheckpointRow>,
    /// Every write row.
    pub writes: Vec<ThreadWrite>,
}

/// One stored value of a thread, as [`CheckpointStore::visit_values`] gives it.
#[derive(Debug, Clone, Copy)]
pub struct ThreadValue<'a> {
    /// Where it is, for a person (no thread id).
    pub place: &'a str,
    /// What it is part of.
    pub kind: ValueOf,
    /// Its serialization type (`msgpack`, `json`, an encrypted type…).
    pub type_name: &'a str,
    /// Its bytes as stored.
    pub bytes: &'a [u8],
}

/// What a [`ThreadValue`] is part of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueOf {
    /// A checkpoint (on Postgres its JSON or one of its blobs).
    Checkpoint,
    /// A checkpoint's metadata.
    Metadata,
    /// A pending write.
    Write,
}

/// One row of a thread as [`CheckpointStore::visit_thread`] gives it.
#[derive(Debug, Clone)]
pub enum ThreadRow {
    /// A checkpoint row (assembled, on Postgres).
    Checkpoint(CheckpointRow),
    /// A pending-write row.
    Write(ThreadWrite),
}

impl ThreadRow {
    /// The row, borrowed, as a writer's sink takes it.
    pub fn as_ref(&self) -> RowRef<'_> {
        match self {
            ThreadRow::Checkpoint(c) => RowRef::Checkpoint(c),
            ThreadRow::Write(w) => RowRef::Write(w),
        }
    }
}

/// One row of a thread handed to [`CheckpointStore::write_thread_from`]'s sink.
#[derive(Debug, Clone, Copy)]
pub enum RowRef<'a> {
    /// A checkpoint row, as `SqliteSaver` stores it (see [`ThreadRows`]).
    Checkpoint(&'a CheckpointRow),
    /// A pending-write row.
    Write(&'a ThreadWrite),
}

/// What feeds [`CheckpointStore::write_thread_from`]: called once with the writer's sink, it
/// hands the sink every row of the thread.
pub type RowFeed<'a> = &'a mut dyn FnMut(&mut dyn FnMut(RowRef<'_>) -> Result<()>) -> Result<()>;

/// What [`CheckpointStore::write_thread`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WrittenThread {
    /// A thread of that id was there and was replaced.
    pub replaced: bool,
    /// `(checkpoint_id, channel)` of the checkpoints whose value of a channel differs from
    /// the value an earlier checkpoint stored under the same channel version. A file keeps
    /// both; `PostgresSaver` keeps one blob row per `(channel, version)`, the first one `put`
    /// stored, so these checkpoints read that earlier value (as they would had the app
    /// written them to Postgres: an app that changes a value in place without a new version).
    pub shared_versions: Vec<(String, String)>,
}

/// A copy's target thread exists (and `--replace` was not given): nothing was written.
#[derive(Debug, thiserror::Error)]
#[error(
    "thread '{0}' already exists in the target database; nothing written (--replace overwrites it)"
)]
pub struct TargetExists(pub String);

/// A thread (or Store item) memctl read but cannot decode: a row of it LangGraph could not
/// read either (a corrupt blob or value, metadata that is not a JSON object, a checkpoint
/// without `channel_versions`). The text says which row and why. A move (`copy`, `migrate`,
/// `import`, `export`) writes nothing of such a thread and carries on with the others.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Unreadable(pub String);

/// Rows the target database cannot hold (a NUL character in a PostgreSQL text or JSONB
/// value, a LangGraph.js checkpoint for PostgresSaver's tables…): refused by the server (a
/// PostgreSQL data exception, SQLSTATE class 22) or by memctl before it sends them. The text
/// says which row and why. It concerns that thread or item, not the connection: a move writes
/// nothing of it and carries on with the others.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Refused(pub String);

/// Why a move leaves one thread or Store item out because of `e`: `("unreadable", why)` for
/// an [`Unreadable`], `("refused", why)` for a [`Refused`]; `None` for any other error, which
/// concerns the run, not the one thread or item.
pub fn left_out_reason(e: &anyhow::Error) -> Option<(&'static str, String)> {
    match (e.downcast_ref::<Unreadable>(), e.downcast_ref::<Refused>()) {
        (Some(u), _) => Some(("unreadable", u.0.clone())),
        (None, Some(r)) => Some(("refused", r.0.clone())),
        (None, None) => None,
    }
}

/// The rows one update appends to a thread: a checkpoint, and write rows recorded on its
/// parent. Plain row values: storage does not know what they mean.
#[derive(Debug, Clone, Copy)]
pub struct NewRows<'a> {
    /// The new checkpoint id.
    pub checkpoint_id: &'a str,
    /// Its parent: the thread's latest checkpoint when the rows were made.
    pub parent_id: &'a str,
    /// The serialization type of `checkpoint` (`msgpack`, or `msgpack+aes` when encrypted).
    pub checkpoint_type: &'a str,
    /// The serialized checkpoint, in pieces (see `codec::pieces`).
    pub checkpoint: &'a Pieces,
    /// The metadata JSON.
    pub metadata: &'a [u8],
    /// Write rows on the parent.
    pub writes: &'a [NewWrite],
}

/// One thread's part of [`CheckpointStore::append_updates`]: the arguments of
/// [`CheckpointStore::append_update`] without a rewrite.
#[derive(Debug, Clone, Copy)]
pub struct UpdateItem<'a> {
    /// The thread.
    pub thread_id: &'a str,
    /// The namespace.
    pub ns: &'a str,
    /// The rows to append.
    pub rows: NewRows<'a>,
    /// The pending writes `rows.parent_id` must still have.
    pub expected_writes: usize,
}

/// A write row an update records on its parent checkpoint.
#[derive(Debug, Clone)]
pub struct NewWrite {
    /// The task that wrote it.
    pub task_id: String,
    /// The task's path (3.x schema only).
    pub task_path: String,
    /// Position in the task's writes.
    pub idx: i64,
    /// The channel written.
    pub channel: String,
    /// The serialization type of `value` (`msgpack`, or `msgpack+aes` when encrypted).
    pub type_name: String,
    /// The serialized value, in pieces.
    pub value: Pieces,
}

/// Which kind of stored blob a [`BlobRewriter`] is given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlobKind {
    /// A `checkpoints.checkpoint` blob.
    Checkpoint,
    /// A `writes.value` blob.
    Write,
}

/// Given a stored blob and its serialization type, its replacement (of the same type), or
/// `None` to leave it as it is (used by `--purge` to scrub a thread's history; storage only
/// reads and writes the rows).
pub type BlobRewriter<'a> = &'a dyn Fn(BlobKind, &str, &[u8]) -> Result<Option<Vec<u8>>>;

/// A stored value (a checkpoint blob or a write value) and where it is, handed to a
/// [`ValueRewriter`] by a pass over every value of the database (`rekey`).
#[derive(Debug, Clone, Copy)]
pub struct StoredValue<'a> {
    /// A checkpoint blob or a write value.
    pub kind: BlobKind,
    /// The thread.
    pub thread_id: &'a str,
    /// The namespace.
    pub checkpoint_ns: &'a str,
    /// The checkpoint (for a write: the checkpoint it is recorded on; for a Postgres blob
    /// row, which checkpoints share: the channel version it holds).
    pub checkpoint_id: &'a str,
    /// The channel written (writes; and a Postgres blob row's channel).
    pub channel: Option<&'a str>,
    /// The serialization type (`type` column).
    pub type_name: &'a str,
    /// The stored bytes.
    pub bytes: &'a [u8],
}

/// Given a stored value, its replacement `(type, bytes)`, or `None` to leave it as it is.
pub type ValueRewriter<'a> =
    &'a mut dyn FnMut(&StoredValue<'_>) -> Result<Option<(String, Vec<u8>)>>;

/// Where a pass over every stored value stands: the start, or just after a row. Opaque to
/// callers: each backend keeps its own position in it (SQLite: table and rowid; Postgres:
/// table and primary key).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ValueCursor {
    pub(crate) kind: Option<BlobKind>,
    pub(crate) after: i64,
    pub(crate) key: Vec<String>,
}

/// How much one page of a pass over the stored values holds: at most `rows` values, and it
/// ends after the value that brings it to `bytes` (a page always holds at least one).
#[derive(Debug, Clone, Copy)]
pub struct PageSize {
    /// Values per page.
    pub rows: usize,
    /// Stored bytes per page.
    pub bytes: u64,
}

/// What one page of a pass did.
#[derive(Debug, Clone, Default)]
pub struct ValuePage {
    /// Where the next page starts; `None` when every value was visited.
    pub next: Option<ValueCursor>,
    /// Values visited.
    pub values: u64,
    /// Their stored bytes.
    pub bytes: u64,
    /// Values replaced.
    pub changed: u64,
}

/// What gc needs to know of one checkpoint (no blob).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckpointInfo {
    /// Namespace (`''` = root).
    pub ns: String,
    /// The checkpoint id.
    pub id: String,
    /// `parent_checkpoint_id`.
    pub parent: Option<String>,
    /// `metadata.parents[""]`: the root checkpoint a subgraph checkpoint ran under.
    pub root_parent: Option<String>,
    /// The stored metadata JSON.
    pub metadata: Option<Vec<u8>>,
    /// Stored bytes of the row (checkpoint + metadata).
    pub bytes: u64,
    /// Its pending writes (they go with it).
    pub writes: u64,
    /// Stored bytes of those writes.
    pub write_bytes: u64,
}

/// A checkpoint gc rewrites in place (same id and `ts`): its new blob and metadata. Plain
/// row values: storage does not know what changed (gc writes DeltaChannel snapshots into
/// the oldest checkpoint it keeps, so that the older ones can go).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckpointRewrite {
    /// Namespace.
    pub ns: String,
    /// The checkpoint id.
    pub id: String,
    /// The new serialized checkpoint (type `msgpack`, unencrypted).
    pub checkpoint: Vec<u8>,
    /// The new metadata JSON.
    pub metadata: Vec<u8>,
}

/// [`Gc::apply_gc_many`] stopped by `error` after the first `done.len()` threads
/// were applied (committed): what each of those did, so that the report can say it.
#[derive(Debug, thiserror::Error)]
#[error("{error:#}")]
pub struct GcStopped {
    /// The outcome of each thread applied before the error, in order.
    pub done: Vec<Option<Deleted>>,
    /// The error.
    pub error: anyhow::Error,
}

impl GcStopped {
    /// `error`, carrying `done` when some threads were applied before it.
    pub fn after(done: Vec<Option<Deleted>>, error: anyhow::Error) -> anyhow::Error {
        if done.is_empty() {
            error
        } else {
            GcStopped { done, error }.into()
        }
    }
}

/// One thread's part of [`Gc::apply_gc_many`]: the arguments of
/// [`Gc::apply_gc`].
#[derive(Debug, Clone, Copy)]
pub struct GcItem<'a> {
    /// The thread.
    pub thread_id: &'a str,
    /// `(ns, id)` of the checkpoints to delete (with their writes).
    pub delete: &'a [(String, String)],
    /// `(ns, id)` of kept checkpoints whose parent goes.
    pub orphaned: &'a [(String, String)],
    /// Kept checkpoints rewritten in place (DeltaChannel snapshots).
    pub rewrites: &'a [CheckpointRewrite],
    /// The thread's newest checkpoint when it was planned.
    pub expected_latest: &'a str,
}

impl GcItem<'_> {
    /// [`Gc::apply_gc`] of this item on `store`.
    pub fn apply_on<S: Gc + ?Sized>(&self, store: &S) -> Result<Option<Deleted>> {
        store.apply_gc(
            self.thread_id,
            self.delete,
            self.orphaned,
            self.rewrites,
            self.expected_latest,
        )
    }
}

/// Per-thread aggregates, computed in SQL without decoding blobs.
#[derive(Debug, Clone)]
pub struct ThreadSummary {
    /// The thread id.
    pub thread_id: String,
    /// Checkpoints in all namespaces.
    pub checkpoints: u64,
    /// Stored bytes of the thread's checkpoints, metadata and writes.
    pub bytes: u64,
    /// How many namespaces the thread has.
    pub namespaces: u64,
    /// The latest root-namespace checkpoint id, if the root namespace has one.
    pub latest_root_id: Option<String>,
    /// The largest checkpoint id of the thread in any namespace (uuid6: also its time).
    pub latest_id: String,
}

/// Which generation of `langgraph-checkpoint-sqlite` wrote the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SchemaGeneration {
    /// 2.x: `writes` has no `task_path` column.
    V2,
    /// 3.x: `writes.task_path` exists.
    V3,
}

/// The file and its pages.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct FileStats {
    /// Size of the database file.
    pub file_bytes: u64,
    /// Size of the `-wal` file (0 when absent).
    pub wal_bytes: u64,
    /// SQLite page size.
    pub page_size: u64,
    /// Pages in the database.
    pub page_count: u64,
    /// Free pages: what `VACUUM` gives back.
    pub free_pages: u64,
}

/// Rows that point at nothing.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Orphans {
    /// Writes whose checkpoint is gone.
    pub writes_without_checkpoint: u64,
    /// Checkpoints whose parent is missing.
    pub checkpoints_without_parent: u64,
    /// Threads with subgraph namespaces but no root namespace.
    pub namespaces_without_root: u64,
}

/// What takes the space on a PostgreSQL server (stats on a `PostgresSaver` database).
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct ServerSpace {
    /// `checkpoints`, `checkpoint_blobs`, `checkpoint_writes`, in that order.
    pub tables: Vec<TableSpace>,
    /// `(channel, rows, bytes)` of the `checkpoint_blobs` rows, largest first.
    pub blob_bytes_by_channel: Vec<(String, u64, u64)>,
    /// Blob rows that no checkpoint of their thread and namespace names in its
    /// `channel_versions` (nothing reads them: what gc would have collected).
    pub orphaned_blobs: u64,
    /// Their stored bytes.
    pub orphaned_blob_bytes: u64,
    /// The statement that creates an index on `checkpoints (checkpoint_id COLLATE "C")`, so
    /// that the newest threads are read from the newest rows alone; `None` when an index
    /// already serves (see [`crate::storage::postgres::newest`]).
    pub index_advice: Option<String>,
    /// The statements that create indexes on `thread_id COLLATE "C"` of the saver's three
    /// tables, where the column's collation is not bytewise and whole-database reads would
    /// sort every thread first (see [`crate::storage::postgres::order`]); empty otherwise.
    pub thread_index_advice: Vec<String>,
}

/// One of the saver's tables as the server accounts for it.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct TableSpace {
    /// The table.
    pub table: String,
    /// `pg_total_relation_size`: rows, TOAST and indexes.
    pub total_bytes: u64,
    /// `pg_indexes_size`.
    pub index_bytes: u64,
    /// Live rows (`pg_stat_user_tables.n_live_tup`, the server's estimate).
    pub live_rows: u64,
    /// Dead rows (`n_dead_tup`): space a `VACUUM` makes reusable.
    pub dead_rows: u64,
    /// Dead rows at which autovacuum starts on this table by the server's settings
    /// (`autovacuum_vacuum_threshold + autovacuum_vacuum_scale_factor * rows`).
    pub autovacuum_at: u64,
    /// When it was last vacuumed (by hand or by autovacuum), as the server prints it.
    pub last_vacuum: Option<String>,
}

impl ServerSpace {
    /// Dead rows in all three tables.
    pub fn dead_rows(&self) -> u64 {
        self.tables.iter().map(|t| t.dead_rows).sum()
    }
}

/// What a deletion removed.
#[derive(Debug, Clone, Copy, Default, serde::Serialize)]
pub struct Deleted {
    /// Whole threads.
    pub threads: u64,
    /// Checkpoint rows.
    pub checkpoints: u64,
    /// Write rows.
    pub writes: u64,
    /// Stored bytes of those rows.
    pub bytes: u64,
}

impl Deleted {
    /// Adds another deletion's counts.
    pub fn add(&mut self, o: Deleted) {
        self.threads += o.threads;
        self.checkpoints += o.checkpoints;
        self.writes += o.writes;
        self.bytes += o.bytes;
    }
}

/// A string a purge removed that is still in the database, and where.
#[derive(Debug, Clone)]
pub struct Leftover {
    /// The string.
    pub text: String,
    /// Rows of the purged thread that hold it (the purge missed them: a failure).
    pub in_thread: Vec<String>,
    /// Rows of other threads that hold it (their own conversations: not part of the purge).
    pub other_threads: Vec<String>,
    /// Files whose bytes hold it outside any row (free pages, WAL frames: a failure).
    pub raw: Vec<String>,
}

/// The thread got a new checkpoint (or pending writes) while memctl was working on it.
#[derive(Debug, thiserror::Error)]
#[error("thread '{thread_id}' changed while memctl was working on it ({what}); nothing written")]
pub struct ThreadMoved {
    /// The thread.
    pub thread_id: String,
    /// What changed.
    pub what: String,
}

impl ThreadMoved {
    /// Ok when a thread is where an update expects it: its latest checkpoint (`latest`) is
    /// still `expected_latest` and that checkpoint still has `expected_writes` pending writes
    /// (`writes`); otherwise the error saying what changed.
    pub fn check(
        thread_id: &str,
        latest: Option<String>,
        expected_latest: &str,
        writes: i64,
        expected_writes: usize,
    ) -> Result<()> {
        if latest.as_deref() != Some(expected_latest) {
            return Err(ThreadMoved {
                thread_id: thread_id.into(),
                what: format!(
                    "its latest checkpoint is now {}",
                    latest.unwrap_or_default()
                ),
            }
            .into());
        }
        if writes as usize != expected_writes {
            return Err(ThreadMoved {
                thread_id: thread_id.into(),
                what: "a run started on it".into(),
            }
            .into());
        }
        Ok(())
    }
}

/// What [`Maintenance::erase_freed`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Erased {
    /// Free pages overwritten with zeros (SQLite; `None`: a backend that does not).
    pub pages_zeroed: Option<u64>,
    /// A `VACUUM` ran (a server backend's way).
    pub vacuumed: bool,
}

/// A vacuum that could not get exclusive access (an app keeps the database busy): the
/// deletions before it are committed; the caller decides what that means for its exit code.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct VacuumBusy(pub String);

/// The database cannot be written by this user (a read-only file, or a directory where
/// SQLite cannot create its journal): no thread of a batch can be written, so a batch stops
/// at the first such error with this one line instead of failing every thread.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct NotWritable(pub String);

impl NotWritable {
    /// Whether `e` (or what it wraps) is a [`NotWritable`].
    pub fn is_in(e: &anyhow::Error) -> bool {
        e.chain().any(|c| c.is::<NotWritable>())
    }
}

/// How a command opens the database.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Reads only: never creates or changes anything.
    ReadOnly,
    /// Reads and writes (rewrites and maintenance). Never creates the database.
    ReadWrite,
}

/// Opens the database `db` names (a path to a `SqliteSaver` file, or a `postgresql://` /
/// `postgres://` URL of a `PostgresSaver` database) with `access`, waiting up to
/// `busy_timeout` for a lock. `schema` is the PostgreSQL schema of the saver's tables (see
/// [`postgres::PostgresStore::open`]); a SQLite file has none, so it is refused there.
/// `keys` opens the encrypted values of a Postgres saver, which keeps each channel value
/// apart (see [`postgres::format::assemble_with`]); a SQLite file's encrypted checkpoints are opened
/// whole by the commands.
pub fn open(
    db: &Path,
    schema: Option<&str>,
    access: Access,
    busy_timeout: Duration,
    keys: &crate::codec::aes::Keyring,
) -> Result<Box<dyn CheckpointStore>> {
    if let Location::Postgres(url) = locate(db)? {
        return Ok(Box::new(postgres::PostgresStore::open(
            url,
            schema,
            access,
            busy_timeout,
            keys.clone(),
        )?));
    }
    if let Some(s) = schema {
        anyhow::bail!(
            "schema '{s}' was given, but '{}' is a SQLite file, which has no schemas",
            shown_path(db)
        );
    }
    Ok(Box::new(match access {
        Access::ReadOnly => SqliteStore::open_read_only(db, busy_timeout)?,
        Access::ReadWrite => SqliteStore::open_read_write(db, busy_timeout)?,
    }))
}

/// Opens the Store's tables in the database `db` names (a SQLite file, or a `postgresql://` /
/// `postgres://` URL, as [`open`] takes), with `access`. A database without a `store`
/// table fails with [`store::NoStore`].
pub fn open_store(
    db: &Path,
    schema: Option<&str>,
    access: Access,
    busy_timeout: Duration,
) -> Result<Box<dyn store::ItemStore>> {
    if let Location::Postgres(url) = locate(db)? {
        return Ok(Box::new(postgres::store::PgItemStore::open(
            url,
            schema,
            access,
            busy_timeout,
        )?));
    }
    if let Some(s) = schema {
        anyhow::bail!(
            "schema '{s}' was given, but '{}' is a SQLite file, which has no schemas",
            shown_path(db)
        );
    }
    Ok(Box::new(sqlite::store::SqliteItemStore::open(
        db,
        access,
        busy_timeout,
    )?))
}

/// How the Store's tables stand in the database `db` names: `None` when it has no `store`
/// table (or, for a file, when the file does not exist).
pub fn store_shape(db: &Path, busy_timeout: Duration) -> Result<Option<store::StoreShape>> {
    if locate(db)? == Location::File && !db.exists() {
        return Ok(None);
    }
    match open_store(db, None, Access::ReadOnly, busy_timeout) {
        Ok(s) => Ok(Some(s.shape())),
        Err(e) if e.is::<store::NoStore>() => Ok(None),
        Err(e) => Err(e),
    }
}

/// Creates the Store's tables in the database `db` names as `SqliteStore.setup()` /
/// `PostgresStore.setup()` does (the same statements, the same `store_migrations` rows; a
/// store at a lower level gets the missing migrations, as `setup()` gives it), with the
/// vector tables as a `SqliteStore` with an embedding index makes them when `vectors`, and
/// opens it for writing. A level newer than memctl knows is refused before anything is
/// written. A SQLite file that does not exist yet is made, with the Store's tables alone.
pub fn setup_store(
    db: &Path,
    vectors: bool,
    busy_timeout: Duration,
) -> Result<Box<dyn store::ItemStore>> {
    if let Location::Postgres(url) = locate(db)? {
        if vectors {
            anyhow::bail!(
                "'{}': memctl cannot create a Postgres store's vector table (pgvector)",
                shown_path(db)
            );
        }
        postgres::store::PgItemStore::setup(url, busy_timeout)?;
    } else {
        sqlite::store::SqliteItemStore::setup(db, vectors, busy_timeout)?;
    }
    open_store(db, None, Access::ReadWrite, busy_timeout)
}

/// Where a database given as `--db` is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Location<'a> {
    /// A PostgreSQL server: a URL or libpq's keyword/value connection string.
    Postgres(&'a str),
    /// A SQLite file (which may not exist: opening it says so).
    File,
}

/// Tells a PostgreSQL connection string from a SQLite file, for every surface (checkpoints
/// and the Store) and every flag that names a database (`--db`, `--to`, `-o`, an import
/// file): a `postgresql://` / `postgres://` / `postgresql+psycopg[2]://` URL is a server, and
/// so is libpq's keyword/value form (`host=… dbname=…`), even where a file of that name
/// exists (write `./NAME` for such a file); any other existing file is a file (whatever its
/// name); anything else that looks like a connection string (a JDBC URL, a misspelt scheme,
/// `key=value` pairs, a `password=`) is refused with
/// [`postgres::conn::NotAConnectionString`], every password masked; the rest is a file name.
/// A string that parses as a connection string is thus never opened, nor created, as a file.
pub fn locate(
    db: &Path,
) -> std::result::Result<Location<'_>, postgres::conn::NotAConnectionString> {
    locate_as(db, "--db")
}

/// [`locate`] for the value of `flag` (`--to`, `-o`, …): a refusal names that flag.
pub fn locate_as<'a>(
    db: &'a Path,
    flag: &str,
) -> std::result::Result<Location<'a>, postgres::conn::NotAConnectionString> {
    if let Some(conn) = db
        .to_str()
        .filter(|t| postgres::conn::is_connection_string(t))
    {
        return Ok(Location::Postgres(conn));
    }
    if std::fs::symlink_metadata(db).is_ok() {
        return Ok(Location::File);
    }
    let lossy = db.to_string_lossy();
    if postgres::conn::looks_like_connection_string(&lossy) {
        let unknown = postgres::conn::unknown_keywords(&lossy);
        let why = match unknown.as_slice() {
            [] if postgres::conn::bad_keyword_syntax(&lossy) => {
                " (libpq's keyword form is key=value pairs separated by spaces; a value with spaces goes in single quotes)".to_owned()
            }
            [] => String::new(),
            [one] => format!(" (unknown keyword '{}')", postgres::conn::mask_secrets(one)),
            many => format!(
                " (unknown keywords '{}')",
                postgres::conn::mask_secrets(&many.join("', '"))
            ),
        };
        return Err(postgres::conn::NotAConnectionString {
            flag: flag.to_owned(),
            shown: postgres::conn::redact(&lossy),
            why,
        });
    }
    Ok(Location::File)
}

/// A database path as messages show it: any password it may hold (a mistyped connection
/// string) masked (see [`postgres::conn::redact`]).
pub fn shown_path(db: &Path) -> String {
    postgres::conn::redact(&db.display().to_string())
}

/// `op` asked of a backend that does not have it (a capability it does not implement, see
/// [`CheckpointStore`]): one plain line naming the operation and the backend.
#[derive(Debug, thiserror::Error)]
#[error("`{op}` is not a {backend} operation")]
pub struct NotAnOperation {
    /// The operation asked (`vacuum`, `apply_gc`, …).
    pub op: &'static str,
    /// The backend's name ([`CheckpointStore::backend`]).
    pub backend: &'static str,
}

/// A checkpoint saver's storage, read and written the way LangGraph reads and writes it: the
/// core every saver layout gives (its threads, their namespaces, checkpoints, metadata and
/// pending writes, an update appended, a whole thread written or deleted, one consistent read
/// of a thread). What only some backends have is a capability trait the backend opts into,
/// reached through the accessor of the same name here (`None` when it does not have it):
/// [`Space`], [`ServerAccount`], [`Maintenance`], [`Forensics`], [`RawBytes`], [`Batches`],
/// [`Gc`], [`Sharing`] and [`RewriteValues`]. A caller that needs one turns `None` into
/// [`CheckpointStore::lacks`]' error (`store.maintenance().ok_or_else(|| store.lacks("vacuum"))?`);
/// one that can do without says what it does instead.
pub trait CheckpointStore: Send {
    // ---- where, and how it was opened -------------------------------------------------------

    /// The schema generation detected when the store was opened.
    fn generation(&self) -> SchemaGeneration;

    /// The backend's name as reports give it: `sqlite` or `postgres`.
    fn backend(&self) -> &'static str;

    /// A second read-only handle on the same database, for work on another core.
    fn reopen_read_only(&self) -> Result<Box<dyn CheckpointStore>>;

    /// A read-only handle for reading beside this one (`--jobs`): on a server, in this
    /// handle's snapshot where it can be shared, so that both read the same rows; else as
    /// [`Self::reopen_read_only`].
    fn reopen_beside(&self) -> Result<Box<dyn CheckpointStore>> {
        self.reopen_read_only()
    }

    /// The error for `op` when this backend lacks the capability it belongs to.
    fn lacks(&self, op: &'static str) -> anyhow::Error {
        NotAnOperation {
            op,
            backend: self.backend(),
        }
        .into()
    }

    // ---- capabilities (None: the backend does not have it) ----------------------------------

    /// The space its rows take, for `stats`.
    fn space(&self) -> Option<&dyn Space> {
        None
    }

    /// What a database server accounts to the saver's tables.
    fn server_account(&self) -> Option<&dyn ServerAccount> {
        None
    }

    /// Giving deleted space back (`VACUUM`).
    fn maintenance(&self) -> Option<&dyn Maintenance> {
        None
    }

    /// Searching the stored rows for what a purge removed.
    fn forensics(&self) -> Option<&dyn Forensics> {
        None
    }

    /// The database's own bytes (files memctl reads outside the rows).
    fn raw_bytes(&self) -> Option<&dyn RawBytes> {
        None
    }

    /// Many updates in one transaction.
    fn batches(&self) -> Option<&dyn Batches> {
        None
    }

    /// Deleting and rewriting checkpoints inside a thread (gc).
    fn gc(&self) -> Option<&dyn Gc> {
        None
    }

    /// How the database is shared with an app and other readers.
    fn sharing(&self) -> Option<&dyn Sharing> {
        None
    }

    /// Rewriting every stored value in place (rekey).
    fn rewriter(&self) -> Option<&dyn RewriteValues> {
        None
    }

    // ---- reading ----------------------------------------------------------------------------

    /// Calls `f` for every thread's aggregates, in thread-id order.
    fn for_each_thread(&self, f: &mut dyn FnMut(ThreadSummary) -> Result<()>) -> Result<()>;

    /// Calls `f` with every thread's aggregates (as [`Self::for_each_thread`] gives them) a
    /// batch of at most `batch` threads at a time, in thread-id order, streamed from the
    /// primary key: memory flat in the number of threads. Stops when `f` returns false. `f`
    /// must not use this store (on Postgres the stream holds its connection): read with
    /// another handle ([`Self::reopen_read_only`]). The default collects
    /// [`Self::for_each_thread`] first.
    fn stream_threads(
        &self,
        batch: usize,
        f: &mut dyn FnMut(Vec<ThreadSummary>) -> Result<bool>,
    ) -> Result<()> {
        self.page_threads(batch, f)
    }

    /// Calls `f` with `(thread_id, latest root checkpoint id)` of every thread that has a root
    /// checkpoint (as [`Self::latest_root_ids`] gives them) a batch of at most `batch` at a
    /// time, in thread-id order, streamed: memory flat in the number of threads. Stops when
    /// `f` returns false; `f` must not use this store (see [`Self::stream_threads`]). The
    /// default collects [`Self::latest_root_ids`] first.
    fn stream_latest_root_ids(
        &self,
        batch: usize,
        f: &mut dyn FnMut(Vec<(String, String)>) -> Result<bool>,
    ) -> Result<()> {
        self.page_latest_root_ids(batch, f)
    }

    /// [`Self::stream_threads`] read on this handle a page at a time, each page a short query
    /// of its own (keyset on the primary key: the threads after the last one handed out), so
    /// that nothing is held open while `f` runs: `f` may use, and write through, this store.
    /// A thread created after its place was passed is not seen. The default collects
    /// [`Self::for_each_thread`] first (memory grows with the threads; a backend whose
    /// [`Sharing::second_reader_stalls_writes`] is true pages instead).
    fn page_threads(
        &self,
        batch: usize,
        f: &mut dyn FnMut(Vec<ThreadSummary>) -> Result<bool>,
    ) -> Result<()> {
        let mut all = Vec::new();
        self.for_each_thread(&mut |t| {
            all.push(t);
            Ok(())
        })?;
        let mut all = all.into_iter().peekable();
        while all.peek().is_some() {
            if !f(all.by_ref().take(batch.max(1)).collect())? {
                break;
            }
        }
        Ok(())
    }

    /// [`Self::stream_latest_root_ids`] read on this handle a page at a time, as
    /// [`Self::page_threads`] reads the threads (the default collects
    /// [`Self::latest_root_ids`] first).
    fn page_latest_root_ids(
        &self,
        batch: usize,
        f: &mut dyn FnMut(Vec<(String, String)>) -> Result<bool>,
    ) -> Result<()> {
        let mut all = self.latest_root_ids()?.into_iter().peekable();
        while all.peek().is_some() {
            if !f(all.by_ref().take(batch.max(1)).collect())? {
                break;
            }
        }
        Ok(())
    }

    /// Calls `f(thread_id, largest checkpoint id in any namespace)` for every thread, in no
    /// particular order, streamed (what the app's last activity is read from,
    /// [`crate::ops::activity`]; the primary key alone answers it); stops when `f` returns
    /// false. The default reads [`Self::for_each_thread`].
    fn for_each_latest_id(&self, f: &mut dyn FnMut(&str, &str) -> bool) -> Result<()> {
        let mut going = true;
        self.for_each_thread(&mut |t| {
            if going {
                going = f(&t.thread_id, &t.latest_id);
            }
            Ok(())
        })
    }

    /// The threads that a list sorted by the app's last activity, newest first, and cut to
    /// `n` rows can hold (the ones [`crate::ops::activity::Newest`] gathers from
    /// [`Self::for_each_latest_id`]), when an index answers it from the newest rows alone;
    /// `None` when there is no such index (or it cannot tell): the caller then reads every
    /// thread's latest id.
    fn newest_threads(&self, n: usize) -> Result<Option<Vec<String>>> {
        let _ = n;
        Ok(None)
    }

    /// The aggregates of the given threads, as [`Self::for_each_thread`] gives them, in
    /// thread-id order; a thread without checkpoints is left out.
    fn summaries_of(&self, thread_ids: &[String]) -> Result<Vec<ThreadSummary>>;

    /// How many threads (with a checkpoint in any namespace) sort after `thread_id` in
    /// thread-id order (bytewise, as the lists go): what a run stopped by Ctrl-C reports as
    /// not processed without reading the rest of its list. The default counts
    /// [`Self::for_each_thread`].
    fn count_threads_after(&self, thread_id: &str) -> Result<u64> {
        let mut n = 0;
        self.for_each_thread(&mut |t| {
            n += u64::from(t.thread_id.as_bytes() > thread_id.as_bytes());
            Ok(())
        })?;
        Ok(n)
    }

    /// True when the thread has at least one checkpoint (any namespace).
    fn thread_exists(&self, thread_id: &str) -> Result<bool> {
        Ok(!self.namespaces(thread_id)?.is_empty())
    }

    /// The namespaces of a thread, sorted.
    fn namespaces(&self, thread_id: &str) -> Result<Vec<String>>;

    /// `(thread_id, latest root checkpoint id)` of every thread that has a root checkpoint,
    /// in thread-id order. The default reads [`Self::for_each_thread`].
    fn latest_root_ids(&self) -> Result<Vec<(String, String)>> {
        let mut ids = Vec::new();
        self.for_each_thread(&mut |t| {
            if let Some(id) = t.latest_root_id {
                ids.push((t.thread_id, id));
            }
            Ok(())
        })?;
        Ok(ids)
    }

    /// The latest checkpoint id of a thread and namespace.
    fn latest_checkpoint_id(&self, thread_id: &str, ns: &str) -> Result<Option<String>> {
        Ok(self
            .checkpoint(thread_id, ns, None)?
            .map(|c| c.checkpoint_id))
    }

    /// All checkpoints of a thread and namespace, newest first.
    fn checkpoints(&self, thread_id: &str, ns: &str) -> Result<Vec<CheckpointRow>>;

    /// One checkpoint: by id, or the latest when `id` is `None`.
    fn checkpoint(
        &self,
        thread_id: &str,
        ns: &str,
        id: Option<&str>,
    ) -> Result<Option<CheckpointRow>>;

    /// Several checkpoints at once, each named `(thread, ns, id)`: in the order asked, `None`
    /// where there is no such checkpoint, and an error of its own where one does not
    /// assemble. The outer error is the database's. A server backend reads them all in one
    /// round trip instead of one query each.
    #[allow(clippy::type_complexity)]
    fn checkpoints_at(
        &self,
        keys: &[(&str, &str, &str)],
    ) -> Result<Vec<Result<Option<CheckpointRow>>>> {
        keys.iter()
            .map(|(thread, ns, id)| Ok(self.checkpoint(thread, ns, Some(id))))
            .collect()
    }

    /// The pending writes of several checkpoints at once, each named `(thread, ns, id)`, in
    /// the order asked (each list in the order LangGraph reads them).
    fn writes_at(&self, keys: &[(&str, &str, &str)]) -> Result<Vec<Vec<WriteRow>>> {
        keys.iter()
            .map(|(thread, ns, id)| self.writes(thread, ns, id))
            .collect()
    }

    /// The latest checkpoint id in namespace `ns` of each of `threads`, in the order asked.
    fn latest_checkpoint_ids(&self, threads: &[&str], ns: &str) -> Result<Vec<Option<String>>> {
        threads
            .iter()
            .map(|t| self.latest_checkpoint_id(t, ns))
            .collect()
    }

    /// How many pending writes each checkpoint of a thread and namespace has.
    fn write_counts(
        &self,
        thread_id: &str,
        ns: &str,
    ) -> Result<std::collections::HashMap<String, usize>>;

    /// `(checkpoint_id, metadata)` of every checkpoint of a thread and namespace (no blobs).
    fn metadata(&self, thread_id: &str, ns: &str) -> Result<Vec<(String, Option<Vec<u8>>)>>;

    /// The metadata of every checkpoint, in every namespace, of each of `threads` (no blobs),
    /// in the order asked: each thread's rows ordered by namespace, then newest checkpoint
    /// first, as the database orders them (the first root row is the one
    /// [`Self::checkpoint`]`(thread, "", None)` reads). A server backend reads them all in
    /// one round trip; a thread without checkpoints has none. The default reads
    /// [`Self::namespaces`] and [`Self::metadata`] of each thread.
    fn metadata_of(&self, threads: &[&str]) -> Result<Vec<Vec<MetadataRow>>> {
        threads
            .iter()
            .map(|thread| {
                let mut rows = Vec::new();
                for ns in self.namespaces(thread)? {
                    for (id, metadata) in self.metadata(thread, &ns)? {
                        rows.push(MetadataRow {
                            checkpoint_ns: ns.clone(),
                            checkpoint_id: id,
                            metadata,
                        });
                    }
                }
                Ok(rows)
            })
            .collect()
    }

    /// The pending writes of a checkpoint, in the order LangGraph reads them.
    fn writes(&self, thread_id: &str, ns: &str, checkpoint_id: &str) -> Result<Vec<WriteRow>>;

    /// The pending writes of a checkpoint to `channels` only, in the order LangGraph reads
    /// them (what a DeltaChannel replay needs: the other channels' values are never read).
    fn channel_writes(
        &self,
        thread_id: &str,
        ns: &str,
        checkpoint_id: &str,
        channels: &[String],
    ) -> Result<Vec<WriteRow>> {
        let mut rows = self.writes(thread_id, ns, checkpoint_id)?;
        rows.retain(|w| channels.contains(&w.channel));
        Ok(rows)
    }

    /// Every checkpoint of a thread, without blobs, with its pending writes counted (gc).
    fn checkpoint_infos(&self, thread_id: &str) -> Result<Vec<CheckpointInfo>>;

    /// [`CheckpointStore::checkpoint_infos`] of several threads at once, in the order asked.
    fn checkpoint_infos_of(&self, threads: &[&str]) -> Result<Vec<Vec<CheckpointInfo>>> {
        threads.iter().map(|t| self.checkpoint_infos(t)).collect()
    }

    /// Row counts of checkpoints and writes.
    fn row_counts(&self) -> Result<(u64, u64)>;

    /// One encrypted value of the database (a checkpoint, blob or write whose type tag names
    /// a cipher, `msgpack+aes`), as `(type, bytes)`, or `None` when every row is plain. An
    /// app that encrypts has such rows: memctl's new rows must then be encrypted too, with
    /// a key that opens this one.
    fn an_encrypted_value(&self) -> Result<Option<(String, Vec<u8>)>>;

    /// What a search of what the database holds covers (see [`Forensics`] and
    /// [`RawBytes::raw_places_matching`]), one line per place, for a person (SQLite: every
    /// byte of the file and its `-wal`; a server: every row of the saver's tables; nothing
    /// where there is no row to search).
    fn searched(&self) -> Vec<String>;

    /// What keeps deleted bytes beyond memctl's reach (copies, backups, a server's own
    /// files), one line per kind, for a person (forget's receipt states it).
    fn out_of_reach(&self) -> Vec<String>;

    // ---- writing ----------------------------------------------------------------------------

    /// Appends an update (one checkpoint, write rows on its parent) atomically, after checking
    /// that `rows.parent_id` is still the latest checkpoint of the thread and namespace and
    /// still has `expected_writes` pending writes; otherwise a [`ThreadMoved`] error and
    /// nothing written. With `rewrite`, the same transaction also replaces every stored blob
    /// of the thread that `rewrite` changes, so freed space holds none of the old bytes; the
    /// count of rewritten rows is returned.
    fn append_update(
        &self,
        thread_id: &str,
        ns: &str,
        rows: &NewRows<'_>,
        expected_writes: usize,
        rewrite: Option<BlobRewriter<'_>>,
    ) -> Result<usize>;

    /// [`CheckpointStore::append_update`] (without a rewrite) of several threads, each on its
    /// own terms: in the order asked, each thread's outcome (a [`ThreadMoved`] error for one
    /// that moved, an error of its own for one that cannot be written; nothing of such a
    /// thread is written, the others are). Inside a batch (see [`Batches::begin_batch`]) a
    /// server backend checks and writes them all in a few statements instead of four round
    /// trips per thread; an error it cannot pin on one thread makes it write them one at a
    /// time instead, as this default does.
    fn append_updates(&self, items: &[UpdateItem<'_>]) -> Vec<Result<usize>> {
        items
            .iter()
            .map(|i| self.append_update(i.thread_id, i.ns, &i.rows, i.expected_writes, None))
            .collect()
    }

    /// Scrubs a thread's history in place (`forget`, when its latest state keeps every
    /// message): every stored blob of the thread (all namespaces) that `rewrite` changes is
    /// replaced, in one transaction (a savepoint inside a batch), after checking that
    /// `expected_latest` is still the latest root checkpoint and still has `expected_writes`
    /// pending writes; otherwise a [`ThreadMoved`] error and nothing written. Freed space
    /// holds none of the old bytes. Returns the count of rewritten rows.
    fn rewrite_thread(
        &self,
        thread_id: &str,
        expected_latest: &str,
        expected_writes: usize,
        rewrite: BlobRewriter<'_>,
    ) -> Result<usize>;

    /// Deletes whole threads (`(thread, expected latest id)`), all namespaces, checkpoints and
    /// writes, in one transaction. A thread whose newest checkpoint is no longer the expected
    /// one is left alone and returned in the second list.
    fn delete_threads(&self, threads: &[(String, String)]) -> Result<(Deleted, Vec<String>)>;

    // ---- whole threads (copy, export, migrate) -----------------------------------------------

    /// Every checkpoint and pending write of a thread (all namespaces), read in one
    /// consistent snapshot. A thread with no checkpoint gives empty rows.
    fn read_thread(&self, thread_id: &str) -> Result<ThreadRows> {
        let mut rows = ThreadRows::default();
        self.visit_thread(thread_id, &mut |row| {
            match row {
                ThreadRow::Checkpoint(c) => rows.checkpoints.push(c),
                ThreadRow::Write(w) => rows.writes.push(w),
            }
            Ok(())
        })?;
        Ok(rows)
    }
    /// [`CheckpointStore::read_thread`] a row at a time: `f` is given the rows in that order
    /// (the checkpoints, namespace by namespace, oldest first, then the writes), all read in
    /// one consistent snapshot, and only the rows not yet given plus what assembling the
    /// next checkpoint needs are held (a whole thread never is). An error from `f` stops the
    /// reading and is returned. `f` must not use this store (a server connection is busy
    /// with the reading until it ends).
    fn visit_thread(
        &self,
        thread_id: &str,
        f: &mut dyn FnMut(ThreadRow) -> Result<()>,
    ) -> Result<()>;

    /// Every value thread `thread_id` stores, each once and as stored (not decrypted): each
    /// checkpoint's metadata and value, and each pending write. Where the checkpoint's value
    /// is split over rows (Postgres: its JSON and a blob per channel version, one blob shared
    /// by every checkpoint that names it) each row is given once, not assembled. `forget`
    /// collects a deleted thread's strings this way. `f` must not use this store.
    fn visit_values(
        &self,
        thread_id: &str,
        f: &mut dyn FnMut(ThreadValue<'_>) -> Result<()>,
    ) -> Result<()> {
        self.visit_thread(thread_id, &mut |row| match row {
            ThreadRow::Checkpoint(c) => {
                let place = format!("checkpoint {}", c.checkpoint_id);
                if let Some(m) = &c.metadata {
                    f(ThreadValue {
                        place: &format!("the metadata of {place}"),
                        kind: ValueOf::Metadata,
                        type_name: "json",
                        bytes: m,
                    })?;
                }
                f(ThreadValue {
                    place: &place,
                    kind: ValueOf::Checkpoint,
                    type_name: &c.type_name,
                    bytes: &c.checkpoint,
                })
            }
            ThreadRow::Write(w) => f(ThreadValue {
                place: &format!(
                    "a pending write to '{}' on checkpoint {}",
                    w.row.channel, w.checkpoint_id
                ),
                kind: ValueOf::Write,
                type_name: &w.row.type_name,
                bytes: &w.row.value,
            }),
        })
    }

    /// Writes `rows` as thread `thread_id` (each row's own thread id is ignored), in one
    /// transaction, in this database's own layout, as its saver's `put` / `put_writes` would
    /// have written them. A thread that exists already is a [`TargetExists`] error and nothing
    /// is written, unless `replace`: then its rows are deleted in the same transaction.
    fn write_thread(
        &self,
        thread_id: &str,
        rows: &ThreadRows,
        replace: bool,
    ) -> Result<WrittenThread> {
        self.write_thread_from(thread_id, replace, &mut |sink| {
            rows.checkpoints
                .iter()
                .try_for_each(|c| sink(RowRef::Checkpoint(c)))?;
            rows.writes.iter().try_for_each(|w| sink(RowRef::Write(w)))
        })
    }

    /// [`CheckpointStore::write_thread`] fed a row at a time: inside the thread's one
    /// transaction, `feed` is called once with a sink and hands it every row of the thread
    /// (in [`ThreadRows`]' order); what the sink was given is written as it comes (a server
    /// gets it in bulk statements of a few MiB), so the whole thread is never held. An error
    /// from `feed` (or a feed that gave no checkpoint) rolls the transaction back: nothing of
    /// the thread is written.
    fn write_thread_from(
        &self,
        thread_id: &str,
        replace: bool,
        feed: RowFeed<'_>,
    ) -> Result<WrittenThread>;

    /// Checks, writing nothing, that this database can hold `row` as a row of thread
    /// `thread_id` ([`CheckpointStore::write_thread_from`] checks the same before it sends a
    /// row): a [`Refused`] error saying why when it cannot. What a dry run asks. A SQLite file
    /// holds any row.
    fn can_hold(&self, thread_id: &str, row: RowRef<'_>) -> Result<()> {
        let _ = (thread_id, row);
        Ok(())
    }
}

/// Capability: the space a saver's rows take, as `stats` reports it (both SQL backends).
pub trait Space {
    /// The database's size and free space (a server: what the saver's tables take).
    fn file_stats(&self) -> Result<FileStats>;

    /// `(channel, rows, bytes)` of the pending writes.
    fn write_bytes_by_channel(&self) -> Result<Vec<(String, u64, u64)>>;

    /// Calls `f` with every msgpack checkpoint blob (streamed, one at a time).
    fn for_each_checkpoint_blob(&self, f: &mut dyn FnMut(&[u8]) -> Result<()>) -> Result<()>;

    /// Rows that point at nothing.
    fn orphans(&self) -> Result<Orphans>;
}

/// Capability: what a database server accounts to the saver's tables (Postgres; a file's
/// space is all in [`Space::file_stats`]).
pub trait ServerAccount {
    /// The tables' sizes, dead rows, blob bytes by channel and index advice.
    fn server_space(&self) -> Result<ServerSpace>;
}

/// Capability: giving deleted space back so deleted bytes are gone (SQLite and Postgres).
pub trait Maintenance: Space {
    /// Gives deleted space back so deleted bytes are gone (SQLite: WAL checkpoint, `VACUUM`,
    /// WAL truncated; Postgres: `VACUUM (ANALYZE)` of the saver's tables). A database an app
    /// keeps busy is a [`VacuumBusy`] error, and so is a SQLite file another process has open
    /// that is too large to rebuild without locking the app out for seconds (see
    /// [`sqlite::freed::VACUUM_BESIDE_APP_MAX_BYTES`]).
    fn vacuum(&self) -> Result<()>;

    /// Erases the bytes of deleted rows without locking an app out (SQLite: the free pages
    /// zeroed in short transactions, then the WAL truncated, see [`sqlite::freed`]; a server:
    /// `VACUUM`, which does not block writers). The caller searches the bytes afterwards and
    /// falls back to [`Maintenance::vacuum`] when a removed text is still found outside
    /// every row. A reader keeping the WAL is a [`VacuumBusy`] error.
    fn erase_freed(&self) -> Result<Erased> {
        self.vacuum()?;
        Ok(Erased {
            pages_zeroed: None,
            vacuumed: true,
        })
    }

    /// The database size before and after an optional vacuum, and the vacuum's outcome (kept
    /// apart so a busy database still gets its report printed).
    fn shrink(&self, vacuum: bool) -> Result<(u64, u64, Option<Result<()>>)> {
        let before = self.file_stats()?.file_bytes;
        let outcome = vacuum.then(|| self.vacuum());
        Ok((before, self.file_stats()?.file_bytes, outcome))
    }
}

/// Capability: where the texts a purge removed are still found in the stored rows (SQLite:
/// every byte of the file too; Postgres: every row of the saver's tables).
pub trait Forensics {
    /// Where each of `texts` is still found after a purge of `thread_id`: rows of that thread,
    /// rows of other threads, and stored bytes outside any row. Texts found nowhere are left
    /// out.
    fn find_leftovers(&self, thread_id: &str, texts: &[String]) -> Result<Vec<Leftover>>;
}

/// Capability: the database's own bytes, read outside its rows (SQLite: the file and its
/// `-wal`; a server's files are out of memctl's reach).
pub trait RawBytes {
    /// The files that hold the database's bytes.
    fn files(&self) -> Vec<std::path::PathBuf>;

    /// The byte ranges of the database file (the first of [`RawBytes::files`]) that hold no
    /// live row, when memctl can tell (SQLite with an empty `-wal`); `None` otherwise.
    fn free_space(&self) -> Result<Option<Vec<(u64, u64)>>>;

    /// The places whose stored bytes `matches` accepts, by name: the bytes outside every row
    /// when the backend can tell (the free ranges of [`RawBytes::free_space`]), else every
    /// byte of [`RawBytes::files`]; read in pieces that overlap by 64 KiB (a match longer
    /// than that across two pieces is not seen).
    fn raw_places_matching(&self, matches: &mut dyn FnMut(&[u8]) -> bool) -> Result<Vec<String>>;

    /// Whether the last [`Forensics::find_leftovers`] searched only the bytes outside every
    /// row ([`RawBytes::free_space`]), not every byte: then a text found there is left over
    /// even when a live row holds it too.
    fn searched_free_space(&self) -> bool;

    /// From now on, content this connection deletes is overwritten with zeros (SQLite's
    /// `secure_delete`), so a purge leaves no freed cell behind.
    fn zero_deleted_content(&self) -> Result<()>;
}

/// Capability: many updates sharing one transaction (fewer syncs for `--all`), each still
/// atomic on its own (SQLite and Postgres).
pub trait Batches {
    /// Starts a batch: the following updates share one transaction. End it with
    /// [`Batches::commit_batch`].
    fn begin_batch(&self) -> Result<()>;

    /// Commits a batch started with [`Batches::begin_batch`] (no-op outside one).
    fn commit_batch(&self) -> Result<()>;

    /// After the last batch: waits for the housekeeping batches started (e.g. SQLite's WAL
    /// checkpoints) and restores the defaults.
    fn end_batches(&self) -> Result<()>;
}

/// Capability: deleting and rewriting checkpoints inside a thread (gc; SQLite and Postgres).
pub trait Gc {
    /// Deletes the checkpoints `delete` (`(ns, id)`, with their writes) of one thread, clears
    /// the parent of `orphaned` ones and replaces the blob and metadata of `rewrites` (on
    /// Postgres: the JSONB document, and blob rows of the channel versions it names that have
    /// none, or an `empty` one), in one transaction, if the thread's newest checkpoint is
    /// still `expected_latest` (else returns `None` and changes nothing).
    fn apply_gc(
        &self,
        thread_id: &str,
        delete: &[(String, String)],
        orphaned: &[(String, String)],
        rewrites: &[CheckpointRewrite],
        expected_latest: &str,
    ) -> Result<Option<Deleted>>;

    /// [`Gc::apply_gc`] of several threads, in order, each on its own terms (checked, and
    /// left alone when it moved). A server backend runs them in one transaction, each thread
    /// a savepoint, taking the table locks once instead of once per thread. On an error the
    /// threads before it stay applied.
    /// An error after some threads were applied is a [`GcStopped`] holding what those did.
    fn apply_gc_many(&self, items: &[GcItem<'_>]) -> Result<Vec<Option<Deleted>>> {
        let mut done = Vec::with_capacity(items.len());
        for i in items {
            match i.apply_on(self) {
                Ok(d) => done.push(d),
                Err(error) => return Err(GcStopped::after(done, error)),
            }
        }
        Ok(done)
    }
}

/// Capability: how the database is shared with a live app and with other readers (SQLite and
/// Postgres). Without it a caller assumes what it cannot tell: shared, no queue, no stall.
pub trait Sharing {
    /// False when no other process had the database open when memctl opened it (then no app
    /// commit can be queued behind memctl's); true when memctl cannot tell.
    fn might_be_shared(&self) -> bool;

    /// True when an app that waits for memctl's write lock is queued and takes it as soon as
    /// memctl commits (a server's lock queue), false when it polls for it (SQLite's busy
    /// handler), so that memctl must leave gaps between its transactions
    /// ([`crate::ops::batch::pause_after`]).
    fn queues_waiting_writers(&self) -> bool;

    /// True when a read held open on a second handle stalls this handle's writes (SQLite: a
    /// long read transaction blocks WAL checkpoints, and in rollback-journal mode the writer
    /// itself). A whole-database write run then lists its threads with
    /// [`CheckpointStore::page_threads`] / [`CheckpointStore::page_latest_root_ids`] on this
    /// handle, between its write transactions, instead of streaming them beside
    /// ([`crate::read::stream`]).
    fn second_reader_stalls_writes(&self) -> bool;

    /// How many processes the database lets one query use by its own configuration, for
    /// reads on several connections (`--jobs`): on PostgreSQL its
    /// `max_parallel_workers_per_gather` plus the leader; `None` for a file, which has no
    /// such setting.
    fn query_parallelism(&self) -> Result<Option<usize>>;
}

/// Capability: rewriting every stored value in place, a page at a time (rekey; SQLite and
/// Postgres).
pub trait RewriteValues {
    /// One page of a pass over every stored value (checkpoint blobs, then write values, of
    /// every thread; rows a live app adds during the pass are visited too), from `from`, in one
    /// short transaction: `rewrite` sees each value, and with `write` the values it changes are
    /// replaced in place (type and bytes; freed space keeps none of the old bytes) before the
    /// page commits. Without `write` (a read pass; the only kind a read-only store can make)
    /// no write lock is taken and `rewrite` must change nothing. An error from `rewrite` rolls
    /// the page back.
    fn rewrite_values(
        &self,
        from: ValueCursor,
        size: PageSize,
        write: bool,
        rewrite: ValueRewriter<'_>,
    ) -> Result<ValuePage>;
}

/// `text` as it stands inside a JSON string (without the quotes): how a text is searched in
/// metadata and other JSON columns. `jsonb::text` (Postgres) and SqliteSaver's
/// `json.dumps(…, ensure_ascii=False)` both escape `"`, `\` and control characters and keep
/// every other character as it is, as serde_json does.
pub(crate) fn json_escaped(text: &str) -> String {
    let quoted = serde_json::to_string(text).unwrap_or_default();
    quoted
        .strip_prefix('"')
        .and_then(|q| q.strip_suffix('"'))
        .unwrap_or(text)
        .to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A backend that gives the core only, each required method answered by a SQLite file:
    /// what the core's default methods make of it, against the file's own answers.
    struct CoreOnly(SqliteStore);

    impl CheckpointStore for CoreOnly {
        fn generation(&self) -> SchemaGeneration {
            self.0.generation()
        }
        fn backend(&self) -> &'static str {
            "core-only"
        }
        fn reopen_read_only(&self) -> Result<Box<dyn CheckpointStore>> {
            self.0.reopen_read_only()
        }
        fn for_each_thread(&self, f: &mut dyn FnMut(ThreadSummary) -> Result<()>) -> Result<()> {
            self.0.for_each_thread(f)
        }
        fn summaries_of(&self, ids: &[String]) -> Result<Vec<ThreadSummary>> {
            self.0.summaries_of(ids)
        }
        fn namespaces(&self, thread_id: &str) -> Result<Vec<String>> {
            self.0.namespaces(thread_id)
        }
        fn checkpoints(&self, thread_id: &str, ns: &str) -> Result<Vec<CheckpointRow>> {
            self.0.checkpoints(thread_id, ns)
        }
        fn checkpoint(
            &self,
            thread_id: &str,
            ns: &str,
            id: Option<&str>,
        ) -> Result<Option<CheckpointRow>> {
            self.0.checkpoint(thread_id, ns, id)
        }
        fn write_counts(
            &self,
            thread_id: &str,
            ns: &str,
        ) -> Result<std::collections::HashMap<String, usize>> {
            self.0.write_counts(thread_id, ns)
        }
        fn metadata(&self, thread_id: &str, ns: &str) -> Result<Vec<(String, Option<Vec<u8>>)>> {
            self.0.metadata(thread_id, ns)
        }
        fn writes(&self, thread_id: &str, ns: &str, id: &str) -> Result<Vec<WriteRow>> {
            self.0.writes(thread_id, ns, id)
        }
        fn checkpoint_infos(&self, thread_id: &str) -> Result<Vec<CheckpointInfo>> {
            self.0.checkpoint_infos(thread_id)
        }
        fn row_counts(&self) -> Result<(u64, u64)> {
            self.0.row_counts()
        }
        fn an_encrypted_value(&self) -> Result<Option<(String, Vec<u8>)>> {
            self.0.an_encrypted_value()
        }
        fn searched(&self) -> Vec<String> {
            self.0.searched()
        }
        fn out_of_reach(&self) -> Vec<String> {
            self.0.out_of_reach()
        }
        fn append_update(
            &self,
            thread_id: &str,
            ns: &str,
            rows: &NewRows<'_>,
            expected_writes: usize,
            rewrite: Option<BlobRewriter<'_>>,
        ) -> Result<usize> {
            self.0
                .append_update(thread_id, ns, rows, expected_writes, rewrite)
        }
        fn rewrite_thread(
            &self,
            thread_id: &str,
            expected_latest: &str,
            expected_writes: usize,
            rewrite: BlobRewriter<'_>,
        ) -> Result<usize> {
            self.0
                .rewrite_thread(thread_id, expected_latest, expected_writes, rewrite)
        }
        fn delete_threads(&self, threads: &[(String, String)]) -> Result<(Deleted, Vec<String>)> {
            self.0.delete_threads(threads)
        }
        fn visit_thread(
            &self,
            thread_id: &str,
            f: &mut dyn FnMut(ThreadRow) -> Result<()>,
        ) -> Result<()> {
            self.0.visit_thread(thread_id, f)
        }
        fn write_thread_from(
            &self,
            thread_id: &str,
            replace: bool,
            feed: RowFeed<'_>,
        ) -> Result<WrittenThread> {
            self.0.write_thread_from(thread_id, replace, feed)
        }
    }

    fn fixture(name: &str) -> SqliteStore {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures")
            .join(name);
        SqliteStore::open_read_only(&path, Duration::from_secs(5)).expect("fixture opens")
    }

    /// The core's default reads (built from the required ones) give what the SQLite
    /// backend's own queries give, on fixtures with subgraph namespaces.
    #[test]
    fn the_cores_defaults_read_what_a_backend_reads() {
        for name in ["delta-subgraph.sqlite", "store.sqlite", "deep.sqlite"] {
            let own = fixture(name);
            let core = CoreOnly(fixture(name));
            let mut ids = Vec::new();
            own.for_each_thread(&mut |t| {
                ids.push(t.thread_id);
                Ok(())
            })
            .expect("threads");
            assert!(!ids.is_empty(), "{name}");
            ids.push("no-such-thread".into());
            assert_eq!(
                core.latest_root_ids().expect("reads"),
                own.latest_root_ids().expect("reads")
            );
            let mut latest = std::collections::BTreeMap::new();
            own.for_each_latest_id(&mut |t, id| {
                latest.insert(t.to_owned(), id.to_owned());
                true
            })
            .expect("reads");
            let mut by_default = std::collections::BTreeMap::new();
            core.for_each_latest_id(&mut |t, id| {
                by_default.insert(t.to_owned(), id.to_owned());
                true
            })
            .expect("reads");
            assert_eq!(by_default, latest, "{name}");
            let asked: Vec<&str> = ids.iter().map(String::as_str).collect();
            let show = |rows: Vec<Vec<MetadataRow>>| format!("{rows:?}");
            assert_eq!(
                show(core.metadata_of(&asked).expect("reads")),
                show(own.metadata_of(&asked).expect("reads")),
                "{name}"
            );
            for id in &ids {
                assert_eq!(
                    core.thread_exists(id).expect("reads"),
                    own.thread_exists(id).expect("reads")
                );
                assert_eq!(
                    core.count_threads_after(id).expect("reads"),
                    own.count_threads_after(id).expect("reads"),
                    "{name} {id}"
                );
                for ns in own
                    .namespaces(id)
                    .expect("reads")
                    .into_iter()
                    .chain([String::new()])
                {
                    assert_eq!(
                        core.latest_checkpoint_id(id, &ns).expect("reads"),
                        own.latest_checkpoint_id(id, &ns).expect("reads")
                    );
                }
            }
            for batch in [1, 2, 1000] {
                let (mut a, mut b) = (Vec::new(), Vec::new());
                core.stream_threads(batch, &mut |t| {
                    assert!(t.len() <= batch);
                    a.extend(t.into_iter().map(|t| format!("{t:?}")));
                    Ok(true)
                })
                .expect("reads");
                own.stream_threads(batch, &mut |t| {
                    b.extend(t.into_iter().map(|t| format!("{t:?}")));
                    Ok(true)
                })
                .expect("reads");
                assert_eq!(a, b, "{name}");
                let (mut a, mut b) = (Vec::new(), Vec::new());
                core.stream_latest_root_ids(batch, &mut |t| {
                    a.extend(t);
                    Ok(true)
                })
                .expect("reads");
                own.stream_latest_root_ids(batch, &mut |t| {
                    b.extend(t);
                    Ok(true)
                })
                .expect("reads");
                assert_eq!(a, b, "{name}");
            }
        }
    }

    /// A backend has no capability it does not opt into, and a caller that needs one gets one
    /// line naming the operation and the backend.
    #[test]
    fn a_missing_capability_is_one_line_naming_the_backend() {
        let core = CoreOnly(fixture("delta-subgraph.sqlite"));
        assert!(core.maintenance().is_none() && core.space().is_none());
        assert!(core.batches().is_none() && core.gc().is_none() && core.sharing().is_none());
        assert!(core.forensics().is_none() && core.raw_bytes().is_none());
        assert!(core.server_account().is_none() && core.rewriter().is_none());
        let e = core
            .maintenance()
            .map(|_| ())
            .ok_or_else(|| core.lacks("vacuum"));
        assert_eq!(
            e.expect_err("an error").to_string(),
            "`vacuum` is not a core-only operation"
        );
        let own = fixture("delta-subgraph.sqlite");
        assert!(own.maintenance().is_some() && own.raw_bytes().is_some());
        assert!(own.server_account().is_none());
    }

    /// The forms `jsonb::text` (Postgres' escape_json) and Python's `json.dumps(…,
    /// ensure_ascii=False)` give a string value: quotes, backslashes and control characters
    /// escaped, everything else as it is (the expected text is Python's output).
    #[test]
    fn needles_are_searched_as_json_shows_them() {
        assert_eq!(json_escaped("Alice"), "Alice");
        assert_eq!(
            json_escaped("He said \"hi\"\n\tC:\\x \u{1f} é😀/\u{8}\u{c}\u{7f}"),
            "He said \\\"hi\\\"\\n\\tC:\\\\x \\u001f é😀/\\b\\f\u{7f}"
        );
    }
}
