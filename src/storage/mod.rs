//! Where checkpoints live. SQLite (`SqliteSaver`'s file) is the one backend today; commands
//! talk to the [`CheckpointStore`] trait so other savers can join later.

pub mod maintenance;
pub mod sqlite;
pub mod wal;

use anyhow::Result;

pub use sqlite::SqliteStore;

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

/// The rows one update appends to a thread (all `type = 'msgpack'`): a checkpoint, and
/// write rows recorded on its parent. Plain row values: storage does not know what they mean.
#[derive(Debug, Clone, Copy)]
pub struct NewRows<'a> {
    /// The new checkpoint id.
    pub checkpoint_id: &'a str,
    /// Its parent: the thread's latest checkpoint when the rows were made.
    pub parent_id: &'a str,
    /// The serialized checkpoint.
    pub checkpoint: &'a [u8],
    /// The metadata JSON.
    pub metadata: &'a [u8],
    /// Write rows on the parent.
    pub writes: &'a [NewWrite],
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
    /// The serialized value (`type = 'msgpack'`).
    pub value: Vec<u8>,
}

/// Which kind of stored blob a [`BlobRewriter`] is given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlobKind {
    /// A `checkpoints.checkpoint` blob.
    Checkpoint,
    /// A `writes.value` blob.
    Write,
}

/// Given a stored msgpack blob, its replacement, or `None` to leave it as it is (used by
/// `--purge` to scrub a thread's history; storage only reads and writes the rows).
pub type BlobRewriter<'a> = &'a dyn Fn(BlobKind, &[u8]) -> Result<Option<Vec<u8>>>;

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
    /// Stored bytes of the row (checkpoint + metadata).
    pub bytes: u64,
    /// Its pending writes (they go with it).
    pub writes: u64,
    /// Stored bytes of those writes.
    pub write_bytes: u64,
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

/// Read access to a checkpoint store.
pub trait CheckpointStore {
    /// The schema generation detected when the store was opened.
    fn generation(&self) -> SchemaGeneration;

    /// Calls `f` for every thread's aggregates, in thread-id order.
    fn for_each_thread(&self, f: &mut dyn FnMut(ThreadSummary) -> Result<()>) -> Result<()>;

    /// True when the thread has at least one checkpoint (any namespace).
    fn thread_exists(&self, thread_id: &str) -> Result<bool>;

    /// The namespaces of a thread, sorted.
    fn namespaces(&self, thread_id: &str) -> Result<Vec<String>>;

    /// All checkpoints of a thread and namespace, newest first.
    fn checkpoints(&self, thread_id: &str, ns: &str) -> Result<Vec<CheckpointRow>>;

    /// One checkpoint: by id, or the latest when `id` is `None`.
    fn checkpoint(
        &self,
        thread_id: &str,
        ns: &str,
        id: Option<&str>,
    ) -> Result<Option<CheckpointRow>>;

    /// How many pending writes each checkpoint of a thread and namespace has.
    fn write_counts(
        &self,
        thread_id: &str,
        ns: &str,
    ) -> Result<std::collections::HashMap<String, usize>>;

    /// `(checkpoint_id, metadata)` of every checkpoint of a thread and namespace (no blobs).
    fn metadata(&self, thread_id: &str, ns: &str) -> Result<Vec<(String, Option<Vec<u8>>)>>;

    /// The pending writes of a checkpoint, in the order LangGraph reads them.
    fn writes(&self, thread_id: &str, ns: &str, checkpoint_id: &str) -> Result<Vec<WriteRow>>;
}
