//! The LangGraph Store (`BaseStore`, an app's long-term memory): the [`ItemStore`] interface
//! over the `store` table that `SqliteStore` (langgraph-checkpoint-sqlite) and `PostgresStore`
//! (langgraph-checkpoint-postgres) write, usually beside the checkpoint tables. Backends:
//! [`super::sqlite::store`] and [`super::postgres::store`].
//!
//! A namespace is stored as its labels joined with `.` (column `prefix`; LangGraph refuses a
//! label that contains `.`), so storage takes and returns that text. Reads never refresh a TTL
//! (LangGraph's own `get` / `search` do by default). What is expired is decided the way each
//! backend's `sweep_ttl` decides it, in SQL, so `sweep` deletes exactly what `sweep_ttl` would.
//! `migrate` reads a store in pages of [`StoreRow`]s as stored and writes them into another
//! one ([`super::setup_store`] makes its tables as `setup()` does) with their own timestamps.

use anyhow::Result;

/// The message for a database that has no `store` table.
pub const NO_STORE: &str = "no LangGraph store in this database";

/// A database without a `store` table (its message is `'<db>': ` [`NO_STORE`]), told apart
/// from other errors by commands that cover the store only when there is one (`forget`,
/// `find`, `stats`).
#[derive(Debug, thiserror::Error)]
#[error("'{0}': {NO_STORE}")]
pub struct NoStore(pub String);

/// One namespace of the store, as `store namespaces` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamespaceSummary {
    /// The namespace as stored: labels joined with `.`.
    pub prefix: String,
    /// How many items it holds.
    pub items: u64,
    /// Bytes of their values (the JSON text).
    pub bytes: u64,
    /// How many of them have expired (what `sweep_ttl` would delete now).
    pub expired: u64,
    /// The newest `updated_at` (RFC 3339, UTC), if any.
    pub newest_update: Option<String>,
}

/// One item, read without refreshing its TTL.
#[derive(Debug, Clone, PartialEq)]
pub struct StoreItem {
    /// Its namespace as stored (labels joined with `.`).
    pub prefix: String,
    /// Its key.
    pub key: String,
    /// The stored value's bytes: JSON text (SQLite's `value` column, which `SqliteStore`
    /// writes as a BLOB of orjson's bytes; Postgres's JSONB as text). Not checked here: a
    /// value that is not JSON is the caller's to report.
    pub value: Vec<u8>,
    /// When it was first written (RFC 3339, UTC).
    pub created_at: Option<String>,
    /// When it was last written (RFC 3339, UTC).
    pub updated_at: Option<String>,
    /// When it expires (RFC 3339, UTC); `None` when it never does.
    pub expires_at: Option<String>,
    /// Its TTL in minutes, if it has one.
    pub ttl_minutes: Option<f64>,
    /// It has expired: `sweep_ttl` would delete it now.
    pub expired: bool,
}

/// An item that a deletion took (or, in a dry run, would take).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemovedItem {
    /// Its namespace as stored.
    pub prefix: String,
    /// Its key.
    pub key: String,
    /// Bytes of its value.
    pub bytes: u64,
}

/// What a deletion did (or would do).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Removal {
    /// The items, in namespace and key order.
    pub items: Vec<RemovedItem>,
    /// Rows of `store_vectors` (the items' embeddings) that went with them.
    pub vectors: u64,
}

impl Removal {
    /// Adds what another batch of the same deletion took.
    pub fn absorb(&mut self, batch: Removal) {
        self.items.extend(batch.items);
        self.vectors += batch.vectors;
    }

    /// Puts the items in namespace and key order (byte-wise, as both backends sort).
    pub fn sort(&mut self) {
        self.items.sort_by(|a, b| {
            (a.prefix.as_bytes(), a.key.as_bytes()).cmp(&(b.prefix.as_bytes(), b.key.as_bytes()))
        });
    }
}

/// Items per transaction when a deletion runs beside an app (`sweep`, a whole namespace,
/// `forget`): the app waits for one batch at most.
pub const BATCH: usize = 500;

/// Items per transaction of a sweep (one DELETE statement each): larger than [`BATCH`], as
/// each commit costs a WAL checkpoint's share on SQLite; still well under an app's busy
/// timeout (measured in BENCHMARKS.md, "Store").
pub const SWEEP_BATCH: usize = 5000;

/// Runs `batch` (one deletion of at most [`BATCH`] or [`SWEEP_BATCH`] items, its own transaction) until it takes
/// nothing, and adds up what it took, in namespace and key order.
pub fn in_batches(mut batch: impl FnMut() -> Result<Removal>) -> Result<Removal> {
    let mut all = Removal::default();
    loop {
        let r = batch()?;
        if r.items.is_empty() {
            break;
        }
        all.absorb(r);
    }
    all.sort();
    Ok(all)
}

/// Which backend a store is on (what a migration converts between).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// `SqliteStore`: `value` is orjson's bytes, timestamps are text.
    Sqlite,
    /// `PostgresStore`: `value` is JSONB, timestamps are `timestamptz`.
    Postgres,
}

/// One row of `store` as its backend holds it, for a migration (`migrate`): nothing is
/// refreshed, nothing normalized.
#[derive(Debug, Clone, PartialEq)]
pub struct StoreRow {
    /// Its namespace as stored (labels joined with `.`).
    pub prefix: String,
    /// Its key.
    pub key: String,
    /// The value's JSON text: SQLite's bytes as they are; Postgres's `value::text`.
    pub value: Vec<u8>,
    /// SQLite only: the value is stored as TEXT, not as the BLOB `SqliteStore.put` writes.
    pub value_is_text: bool,
    /// `created_at`: SQLite's text as stored; Postgres's as RFC 3339 with microseconds, UTC.
    pub created_at: Option<String>,
    /// `updated_at`, in the same form as `created_at`.
    pub updated_at: Option<String>,
    /// `expires_at`, in the same form as `created_at`; `None` when it never expires.
    pub expires_at: Option<String>,
    /// `ttl_minutes`.
    pub ttl_minutes: Option<f64>,
}

/// One row of `store_vectors` (SQLite's, with sqlite-vec: the embedding is a BLOB), as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct VectorRow {
    /// The item's namespace as stored.
    pub prefix: String,
    /// The item's key.
    pub key: String,
    /// The embedded field (`$` for the whole value).
    pub field_name: String,
    /// The embedding's bytes.
    pub embedding: Option<Vec<u8>>,
    /// `created_at` as stored.
    pub created_at: Option<String>,
    /// `updated_at` as stored.
    pub updated_at: Option<String>,
}

/// How the Store's tables stand in a database, before a migration writes into it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StoreShape {
    /// The `store_migrations` level (`None`: no such table, or it is empty).
    pub migration: Option<i64>,
    /// `store_vectors` exists (an embedding index was set up).
    pub has_vectors: bool,
}

/// What [`ItemStore::for_each_item`] calls with each item: its namespace as stored, its key
/// and its value's bytes.
pub type ItemVisitor<'a> = &'a mut dyn FnMut(&str, &str, &[u8]) -> Result<()>;

/// One part of a split visit of the items ([`ItemStore::for_each_item_in_parts`]): called
/// once per part, on that part's thread, with the part's number (parts are numbered in
/// storage order) and a `scan` that calls its visitor with every item of the part, in storage
/// order.
pub type PartVisit<'a> =
    dyn Fn(usize, &mut dyn FnMut(ItemVisitor<'_>) -> Result<()>) -> Result<()> + Sync + 'a;

/// Every item of `store` visited by `visit`, the items split into parts read at once
/// ([`ItemStore::for_each_item_in_parts`]), each part with a state of its own made by `init`:
/// the parts' states in storage order, so that taking them in turn sees the items in the order
/// one visit would have.
pub fn visit_in_parts<T: Send>(
    store: &dyn ItemStore,
    init: impl Fn() -> Result<T> + Sync,
    visit: impl Fn(&mut T, &str, &str, &[u8]) -> Result<()> + Sync,
) -> Result<Vec<T>> {
    let done: std::sync::Mutex<Vec<(usize, T)>> = Default::default();
    store.for_each_item_in_parts(&|part, scan| {
        let mut state = init()?;
        scan(&mut |prefix, key, value| visit(&mut state, prefix, key, value))?;
        done.lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push((part, state));
        Ok(())
    })?;
    let mut done = done
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    done.sort_by_key(|(part, _)| *part);
    Ok(done.into_iter().map(|(_, state)| state).collect())
}

/// The Store's tables, read and written the way LangGraph reads and writes them: the core
/// every backend gives (namespaces, items, one item, deletions, the TTL sweep, a visit of every
/// item, the pages and rows a migration moves), and the capabilities only some have, reached
/// through the accessors here (`None` by default): [`Vectors`] and [`VectorCopy`] (an
/// embedding index's `store_vectors` table), [`Maintenance`] (a server's `VACUUM`),
/// [`SecureDelete`] (a file's freed pages zeroed). A caller that cannot do without one turns
/// `None` into [`ItemStore::lacks`]' one line.
pub trait ItemStore {
    /// The error for `op` when this backend lacks the capability it belongs to (see
    /// [`crate::storage::NotAnOperation`]).
    fn lacks(&self, op: &'static str) -> anyhow::Error {
        crate::storage::NotAnOperation {
            op,
            backend: match self.backend() {
                Backend::Sqlite => "sqlite",
                Backend::Postgres => "postgres",
            },
        }
        .into()
    }

    /// The embedding index's vectors, counted.
    fn vectors(&self) -> Option<&dyn Vectors> {
        None
    }

    /// The embedding index's vectors, read as stored for a migration.
    fn vector_copy(&self) -> Option<&dyn VectorCopy> {
        None
    }

    /// Giving the space of deleted items back (a server's `VACUUM`).
    fn maintenance(&self) -> Option<&dyn Maintenance> {
        None
    }

    /// Deleted items' bytes overwritten in the pages they free.
    fn secure_delete(&self) -> Option<&dyn SecureDelete> {
        None
    }

    /// The database as it may be shown (a path, or a URL with its password redacted).
    fn shown(&self) -> &str;

    /// The `store_migrations` level (`None`: no such table, or it is empty).
    fn migration(&self) -> Option<i64>;

    /// The highest `store_migrations` level memctl knows for this backend.
    fn known_migration(&self) -> i64;

    /// Every namespace with its counts, in namespace order; only those equal to `prefix` or
    /// under it (label-wise) when given.
    fn namespaces(&self, prefix: Option<&str>) -> Result<Vec<NamespaceSummary>>;

    /// The items of exactly namespace `prefix`, in key order, at most `limit`.
    fn items(&self, prefix: &str, limit: Option<usize>) -> Result<Vec<StoreItem>>;

    /// One item, or `None`.
    fn get(&self, prefix: &str, key: &str) -> Result<Option<StoreItem>>;

    /// Deletes the items `keys` of namespace `prefix` (every item of it when `keys` is
    /// empty) and their vectors, in one transaction, as `store.delete` does per key. With
    /// `dry_run` nothing is written: the report says what would go.
    fn delete_at_once(&mut self, prefix: &str, keys: &[String], dry_run: bool) -> Result<Removal>;

    /// Deletes the items `keys` of namespace `prefix` and their vectors, as `store.delete`
    /// does per key: named keys in one transaction; a whole namespace (`keys` empty) as it
    /// was read, in batches ([`ItemStore::delete_unchanged`]: one transaction per 500 items,
    /// so an app writing beside it waits for one batch at most), leaving an item the app
    /// rewrote or added meanwhile. With `dry_run` nothing is written.
    fn delete(&mut self, prefix: &str, keys: &[String], dry_run: bool) -> Result<Removal> {
        if !keys.is_empty() || dry_run {
            return self.delete_at_once(prefix, keys, dry_run);
        }
        let read: Vec<(String, Vec<u8>)> = self
            .items(prefix, None)?
            .into_iter()
            .map(|i| (i.key, i.value))
            .collect();
        self.delete_unchanged(prefix, &read, false)
    }

    /// [`ItemStore::delete_unchanged`] of at most [`BATCH`] items, in one transaction.
    fn delete_unchanged_batch(
        &mut self,
        prefix: &str,
        items: &[(String, Vec<u8>)],
        dry_run: bool,
    ) -> Result<Removal>;

    /// Deletes those of the items `items` (keys of namespace `prefix`, each with the value's
    /// bytes as [`ItemStore::for_each_item`] read them) whose value is still that value, and
    /// their vectors, as `store.delete` does: an item the app rewrote (or deleted) since it was
    /// read is left alone. One transaction per [`BATCH`] items. With `dry_run` nothing is
    /// written.
    fn delete_unchanged(
        &mut self,
        prefix: &str,
        items: &[(String, Vec<u8>)],
        dry_run: bool,
    ) -> Result<Removal> {
        let mut all = Removal::default();
        for chunk in items.chunks(BATCH) {
            all.absorb(self.delete_unchanged_batch(prefix, chunk, dry_run)?);
        }
        all.sort();
        Ok(all)
    }

    /// Deletes every expired item (exactly what `sweep_ttl` deletes) and their vectors, one
    /// transaction per [`SWEEP_BATCH`] items, each DELETE checking the expiry again (an item the app
    /// refreshed meanwhile stays). With `dry_run` nothing is written.
    fn sweep(&mut self, dry_run: bool) -> Result<Removal>;

    /// Calls `f` with every item, in storage order: its namespace as stored, its key and its
    /// value's bytes (JSON text), read without refreshing a TTL.
    fn for_each_item(&self, f: ItemVisitor<'_>) -> Result<()>;

    /// [`Self::for_each_item`] split into parts read at once, each on a thread and a
    /// connection of its own, all reading one state of the database (the SQLite backend, on a
    /// machine of more than one core, for a table of many rows; one part, this connection's,
    /// otherwise). Use it through [`visit_in_parts`].
    fn for_each_item_in_parts(&self, part: &PartVisit<'_>) -> Result<()> {
        part(0, &mut |visit| self.for_each_item(visit))
    }

    /// The backend.
    fn backend(&self) -> Backend;

    /// Where the store's tables stand (migration level, vectors).
    fn shape(&self) -> StoreShape;

    /// At most `limit` rows after `after` (namespace as stored, key), in the order of the
    /// primary key: a whole store is read in pages, so a store of any size is never held whole.
    fn page(&self, after: Option<(&str, &str)>, limit: usize) -> Result<Vec<StoreRow>>;

    /// The rows of namespace `prefix` with those keys (any order; absent ones left out).
    fn rows(&self, prefix: &str, keys: &[String]) -> Result<Vec<StoreRow>>;

    /// Writes the rows (each keeps its own timestamps and TTL) and, replacing any there, the
    /// vectors of those items, in one transaction. An item already there is overwritten with
    /// `overwrite`, else left as it is (the target's app wrote it since it was read) and
    /// returned (namespace as stored, key). The rows are in this backend's form
    /// ([`crate::ops::migrate_store::to_backend`]).
    fn write_rows(
        &mut self,
        rows: &[StoreRow],
        overwrite: bool,
        vectors: &[VectorRow],
    ) -> Result<Vec<(String, String)>>;

    /// Fails with one line unless memctl may write to this store: its migration level must be
    /// one memctl knows.
    fn check_writable(&self) -> Result<()> {
        match self.migration() {
            Some(v) if v <= self.known_migration() => Ok(()),
            Some(v) => anyhow::bail!(
                "'{}': the store is at migration level {v} (store_migrations), newer than memctl knows (up to {}): reads work, writes are refused",
                self.shown(),
                self.known_migration()
            ),
            None => anyhow::bail!(
                "'{}': the store has no store_migrations level: writes are refused",
                self.shown()
            ),
        }
    }
}

/// Capability: an embedding index's `store_vectors` rows, counted (SQLite and Postgres, 0
/// where the store has no such table).
pub trait Vectors {
    /// How many rows of `store_vectors` belong to the items `items` (namespace as stored,
    /// key); 0 without that table.
    fn vectors_of(&self, items: &[(String, String)]) -> Result<u64>;

    /// The rows of `store_vectors` and the bytes of their embeddings (`(0, 0)` without that
    /// table).
    fn vector_space(&self) -> Result<(u64, u64)>;
}

/// Capability: the `store_vectors` rows read as stored, for a migration to write them
/// elsewhere (SQLite, with sqlite-vec: pgvector's embeddings are another format, not read).
pub trait VectorCopy {
    /// The `store_vectors` rows of the items `items` (namespace as stored, key); none
    /// without that table.
    fn vector_rows(&self, items: &[(String, String)]) -> Result<Vec<VectorRow>>;
}

/// Capability: the space of deleted items given back (Postgres: `VACUUM`; a SQLite file is
/// reclaimed whole with the checkpoints).
pub trait Maintenance {
    /// After a deletion: `VACUUM (ANALYZE)` on the store's tables, as the checkpoint tables
    /// get it.
    fn vacuum(&self) -> Result<()>;
}

/// Capability: deleted items leave zeros in the pages they free (SQLite's `secure_delete`;
/// a server's files are out of memctl's reach).
pub trait SecureDelete {
    /// From now on, a deletion leaves zeros, not the deleted values, in the pages it frees
    /// (`PRAGMA secure_delete` on this connection).
    fn zero_deleted_content(&self) -> Result<()>;
}

/// True when namespace `prefix` is `under` or below it, label-wise (`a.b` is under `a`, `ab`
/// is not).
pub fn is_under(prefix: &str, under: &str) -> bool {
    prefix == under
        || (prefix.len() > under.len()
            && prefix.starts_with(under)
            && prefix.as_bytes()[under.len()] == b'.')
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A SQLite store has the file's capabilities and not a server's; one it lacks is one
    /// line naming the operation and the backend.
    #[test]
    fn a_sqlite_store_has_the_files_capabilities() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/store.sqlite");
        let store = crate::storage::sqlite::store::SqliteItemStore::open(
            &path,
            crate::storage::Access::ReadOnly,
            std::time::Duration::from_secs(5),
        )
        .expect("fixture opens");
        assert!(store.vectors().is_some() && store.vector_copy().is_some());
        assert!(store.secure_delete().is_some() && store.maintenance().is_none());
        let (n, _) = store
            .vectors()
            .map_or(Ok((0, 0)), |v| v.vector_space())
            .expect("reads");
        assert_eq!(n, 0, "fixtures/store.sqlite has no embedding index");
        let e = store
            .maintenance()
            .map(|_| ())
            .ok_or_else(|| store.lacks("vacuum"))
            .expect_err("no vacuum");
        assert_eq!(e.to_string(), "`vacuum` is not a sqlite operation");
    }

    #[test]
    fn under_is_label_wise() {
        assert!(is_under("a.b", "a"));
        assert!(is_under("a", "a"));
        assert!(is_under("a.b.c", "a.b"));
        assert!(!is_under("ab", "a"));
        assert!(!is_under("a", "a.b"));
        assert!(!is_under("a.bc", "a.b"));
    }
}
