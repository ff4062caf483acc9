//! `PostgresSaver`'s tables (langgraph-checkpoint-postgres, migration levels 0–9): the same
//! [`CheckpointStore`] as the SQLite file, so every command works on a `postgresql://` URL.
//!
//! Reading assembles each checkpoint from its JSONB row and the blob rows it names
//! ([`mod@format`]). A read-only store runs everything in one `REPEATABLE READ READ ONLY`
//! transaction: one consistent snapshot, and the server refuses any write.
//!
//! Writing: every change is one transaction that first takes `SHARE ROW EXCLUSIVE` locks on
//! `checkpoint_blobs`, `checkpoints` and `checkpoint_writes` (in that order, the order
//! `PostgresSaver.put` writes them, so no deadlock). The lock waits for any `put` an app has in
//! flight and holds the app's next one back until memctl commits (readers are never blocked);
//! only then does memctl check that the thread has not moved. So the check and the change are
//! atomic even though the app's own writes run at READ COMMITTED, and a blob memctl deletes
//! can never be one that an app's checkpoint committing next would name. `lock_timeout` is
//! `--busy-timeout`; a lock request that has to wait steps out of the server's queue now and
//! then so that it does not hold the app's writes back ([`lock`]).

pub mod conn;
pub mod copy;
pub mod format;
pub mod lock;
pub mod newest;
pub mod order;
pub mod setup;
pub mod store;
mod values;

mod append;

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};
use postgres::fallible_iterator::FallibleIterator;
use postgres::types::ToSql;
use postgres::Client;
use serde_json::Value as Json;

use crate::codec::aes::{self, AesKey, Keyring};
use crate::storage::{
    Access, Batches, BlobKind, BlobRewriter, CheckpointInfo, CheckpointRewrite, CheckpointRow,
    CheckpointStore, Deleted, FileStats, Forensics, Gc, Leftover, Maintenance, MetadataRow,
    NewRows, Orphans, PageSize, RewriteValues, SchemaGeneration, ServerAccount, ServerSpace,
    Sharing, Space, StoredValue, TableSpace, ThreadMoved, ThreadSummary, ValueCursor, ValuePage,
    ValueRewriter, WriteRow,
};
use conn::Target;
use format::{self as pgformat, BlobRow};

/// The highest `checkpoint_migrations` level memctl knows (langgraph-checkpoint-postgres
/// 3.2.0: `checkpoint_writes.task_path`): the last of [`setup::MIGRATIONS`].
pub const KNOWN_MIGRATION: i32 = 9;

/// A `PostgresSaver` database.
pub struct PostgresStore {
    client: Mutex<Client>,
    url: String,
    /// The schema given apart from the URL (`--schema`), for [`CheckpointStore::reopen_read_only`].
    schema: Option<String>,
    /// The key of an app's `EncryptedSerializer`: the saver encrypts each blob row and write
    /// value on its own, so reading and writing them happens here.
    keys: Keyring,
    target: Target,
    access: Access,
    busy_timeout: Duration,
    /// `checkpoint_writes.task_path` is there ([`SchemaGeneration::V3`]); it appears when a
    /// set-up brings the tables to level 9 ([`PostgresStore::open_target`]).
    task_path: std::sync::atomic::AtomicBool,
    /// The set-up the saver's tables wait for (a target memctl makes them in), run before
    /// the first write; `None` for a database opened as it is.
    setup: Option<std::sync::Arc<Setup>>,
    /// A batch transaction is open (see [`Batches::begin_batch`]).
    in_batch: std::sync::atomic::AtomicBool,
    /// The statements run once per thread, prepared once per connection: a statement given
    /// as text is prepared anew each time, a round trip of its own.
    statements: Mutex<HashMap<&'static str, postgres::Statement>>,
    /// How the thread ids come in bytewise order on this server (asked once; see
    /// [`order`]).
    thread_ids: std::sync::OnceLock<order::ThreadOrder>,
}

type Params<'a> = [&'a (dyn ToSql + Sync)];

impl PostgresStore {
    /// Connects to `url` and checks the saver's tables and migration level. The tables are
    /// looked up in `schema` when given (it must agree with the URL's `schema=`, see
    /// [`Target::use_schema`]), else in the URL's `schema=`, else on the server's
    /// `search_path`. Read-only stores hold one `REPEATABLE READ READ ONLY` transaction for
    /// their whole life.
    pub fn open(
        url: &str,
        schema: Option<&str>,
        access: Access,
        busy_timeout: Duration,
        keys: Keyring,
    ) -> Result<PostgresStore> {
        Self::open_in(url, schema, access, busy_timeout, keys, None)
    }

    /// [`PostgresStore::open`]; a read-only store's transaction reads in `snapshot` (one that
    /// another session exported with `pg_export_snapshot()` and still holds) when given.
    fn open_in(
        url: &str,
        schema: Option<&str>,
        access: Access,
        busy_timeout: Duration,
        keys: Keyring,
        snapshot: Option<&str>,
    ) -> Result<PostgresStore> {
        let mut target = Target::parse(url, Duration::from_secs(10).max(busy_timeout))?;
        if let Some(s) = schema {
            target.use_schema(s)?;
        }
        let mut client = target.connect_session(busy_timeout)?;
        let store_err = |e: postgres::Error| target.error(&e);
        if access == Access::ReadOnly {
            client
                .batch_execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
                .map_err(store_err)?;
            if let Some(id) = snapshot {
                // The id is the server's own (`pg_export_snapshot()`), quoted all the same.
                let id = id.replace('\'', "''");
                client
                    .batch_execute(&format!("SET TRANSACTION SNAPSHOT '{id}'"))
                    .map_err(store_err)?;
            }
        }
        let generation = checked_schema(&mut client, &target)?;
        Ok(PostgresStore::with(
            client,
            url,
            schema,
            keys,
            target,
            access,
            busy_timeout,
            generation,
            None,
        ))
    }

    /// A store on `client`, its tables at `generation`, waiting for `setup` when given.
    #[allow(clippy::too_many_arguments)]
    fn with(
        client: Client,
        url: &str,
        schema: Option<&str>,
        keys: Keyring,
        target: Target,
        access: Access,
        busy_timeout: Duration,
        generation: SchemaGeneration,
        setup: Option<std::sync::Arc<Setup>>,
    ) -> PostgresStore {
        PostgresStore {
            client: Mutex::new(client),
            url: url.to_owned(),
            schema: schema.map(str::to_owned),
            keys,
            target,
            access,
            busy_timeout,
            task_path: std::sync::atomic::AtomicBool::new(generation == SchemaGeneration::V3),
            setup,
            in_batch: std::sync::atomic::AtomicBool::new(false),
            statements: Mutex::new(HashMap::new()),
            thread_ids: std::sync::OnceLock::new(),
        }
    }

    /// Opens the database a copy or a migration writes into (`copy --to`, `migrate --to`), as
    /// [`PostgresStore::open`] does, and says what its saver tables need first
    /// ([`setup::needed`]): none there, they are made as `PostgresSaver.setup()` makes them in
    /// the transaction of the first thread written (until then the store reads as an empty
    /// database); at a lower level, the missing migrations run as `setup()` runs them, right
    /// before the first write. Nothing is done when nothing is written (a read-only store: a
    /// dry run). The [`Setup`] tells afterwards whether it was done. Refused before anything
    /// is written: a level above memctl's, a set-up the role could not make.
    pub fn open_target(
        url: &str,
        schema: Option<&str>,
        access: Access,
        busy_timeout: Duration,
        keys: Keyring,
    ) -> Result<(PostgresStore, std::sync::Arc<Setup>)> {
        let mut target = Target::parse(url, Duration::from_secs(10).max(busy_timeout))?;
        if let Some(s) = schema {
            target.use_schema(s)?;
        }
        let mut client = target.connect_session(busy_timeout)?;
        if access == Access::ReadOnly {
            client
                .batch_execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
                .map_err(|e| target.error(&e))?;
        }
        let plan = setup::needed(&mut client, &target)?;
        let generation = match plan.needed {
            // Level 9 has `task_path`.
            setup::Needed::Create { .. } => SchemaGeneration::V3,
            _ => checked_schema(&mut client, &target)?,
        };
        let setup = std::sync::Arc::new(Setup {
            plan,
            done: std::sync::atomic::AtomicBool::new(false),
        });
        let store = PostgresStore::with(
            client,
            url,
            schema,
            keys,
            target,
            access,
            busy_timeout,
            generation,
            Some(setup.clone()),
        );
        Ok((store, setup))
    }

    /// The layout of `checkpoint_writes` now (`task_path` or not).
    fn layout(&self) -> SchemaGeneration {
        match self.task_path.load(std::sync::atomic::Ordering::SeqCst) {
            true => SchemaGeneration::V3,
            false => SchemaGeneration::V2,
        }
    }

    /// The set-up this store still waits for, if any.
    fn pending_setup(&self) -> Option<&Setup> {
        self.setup
            .as_deref()
            .filter(|s| s.plan.needed != setup::Needed::Nothing && !s.done())
    }

    /// True while the saver's tables are not made yet (see [`PostgresStore::open_target`]):
    /// the store reads as an empty database.
    fn tables_pending(&self) -> bool {
        self.pending_setup()
            .is_some_and(|s| s.plan.creates_tables())
    }

    /// Before a write transaction begins on `c`: a pending upgrade runs (each migration
    /// committed on its own, as `setup()` runs them); a pending creation is returned, as the
    /// statements the transaction must run first.
    fn before_write(&self, c: &mut Client) -> Result<Option<String>> {
        let Some(s) = self.pending_setup() else {
            return Ok(None);
        };
        match s.plan.needed {
            setup::Needed::Create { from } => Ok(Some(setup::create_sql(from))),
            setup::Needed::Upgrade { from } => {
                setup::upgrade(c, &self.target, from)?;
                // Statements prepared on the tables before they changed are prepared again.
                self.forget_statements();
                self.task_path
                    .store(true, std::sync::atomic::Ordering::SeqCst);
                s.done.store(true, std::sync::atomic::Ordering::SeqCst);
                Ok(None)
            }
            setup::Needed::Nothing => Ok(None),
        }
    }

    /// Drops the cache of prepared statements (after the tables they name changed, or a
    /// transaction that made them was rolled back).
    fn forget_statements(&self) {
        self.statements
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clear();
    }

    /// The id of this read-only store's snapshot, exported for other sessions to read in
    /// (`pg_export_snapshot()`, valid while this transaction lasts); `None` on a standby in
    /// recovery, whose connections then read in snapshots of their own. (Not inside a
    /// savepoint: the server exports no snapshot from a subtransaction. An error here is the
    /// command's: this store's transaction is then aborted.)
    fn export_snapshot(&self) -> Result<Option<String>> {
        let mut c = self.client();
        let e = |e| self.err(e);
        c.query_one(
            "SELECT CASE WHEN pg_is_in_recovery() THEN NULL ELSE pg_export_snapshot() END",
            &[],
        )
        .and_then(|row| row.try_get(0))
        .map_err(e)
        .context("cannot share this connection's snapshot with the others of --jobs (--jobs 1 reads on one)")
    }

    fn client(&self) -> MutexGuard<'_, Client> {
        self.client
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// `sql` prepared on this store's connection `c` (once; then from the cache).
    fn prepared(&self, c: &mut Client, sql: &'static str) -> Result<postgres::Statement> {
        let mut cache = self
            .statements
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(s) = cache.get(sql) {
            return Ok(s.clone());
        }
        let s = c.prepare(sql).map_err(|e| self.err(e))?;
        cache.insert(sql, s.clone());
        Ok(s)
    }

    /// A client error as one line the user can act on (password scrubbed).
    fn err(&self, e: postgres::Error) -> anyhow::Error {
        use postgres::error::SqlState;
        let text = conn::error_text(&e);
        let msg = match e.code() {
            Some(c) if *c == SqlState::LOCK_NOT_AVAILABLE => format!(
                "'{}': another session holds the checkpoint tables locked; try again later or raise --busy-timeout ({text})",
                self.target.shown
            ),
            Some(c) if *c == SqlState::READ_ONLY_SQL_TRANSACTION => format!(
                "'{}' refused a write: {text} (a read-only server or user?)",
                self.target.shown
            ),
            Some(c) if *c == SqlState::INSUFFICIENT_PRIVILEGE => format!(
                "'{}': {text} (memctl needs SELECT, and for rewrites INSERT, UPDATE and DELETE, on the saver's tables)",
                self.target.shown
            ),
            _ => format!("PostgreSQL error on '{}': {text}", self.target.shown),
        };
        let msg = self.target.scrub(&msg);
        // A data exception (class 22: a NUL in a text, an invalid value…) concerns the rows
        // sent, not the connection: a copy leaves that thread out and carries on.
        match e.code().is_some_and(|c| c.code().starts_with("22")) {
            true => crate::storage::Refused(msg).into(),
            false => anyhow!("{msg}"),
        }
    }

    fn query(&self, sql: &str, params: &Params<'_>) -> Result<Vec<postgres::Row>> {
        self.client().query(sql, params).map_err(|e| self.err(e))
    }

    /// Runs `f` in a write transaction holding the table locks (a savepoint inside a batch).
    fn write_tx<T>(&self, f: impl FnOnce(&mut Client) -> Result<T>) -> Result<T> {
        let mut c = self.client();
        let batch = self.in_batch.load(std::sync::atomic::Ordering::SeqCst);
        let mut creating = None;
        let (ok, undo) = if batch {
            c.batch_execute("SAVEPOINT memctl_update")
                .map_err(|e| self.err(e))?;
            (
                "RELEASE memctl_update",
                "ROLLBACK TO memctl_update; RELEASE memctl_update",
            )
        } else {
            creating = self.before_write(&mut c)?;
            lock::begin_locked(&mut c, self.busy_timeout, creating.as_deref())
                .map_err(|e| self.err(e))?;
            ("COMMIT", "ROLLBACK")
        };
        let done = match f(&mut c) {
            Ok(v) => c.batch_execute(ok).map_err(|e| self.err(e)).map(|()| v),
            Err(e) => {
                let _ = c.batch_execute(undo);
                Err(e)
            }
        };
        if creating.is_some() {
            match (&done, self.setup.as_deref()) {
                (Ok(_), Some(s)) => s.done.store(true, std::sync::atomic::Ordering::SeqCst),
                // Rolled back with the tables: the next write makes them again.
                _ => self.forget_statements(),
            }
        }
        done
    }

    /// Every checkpoint row of a thread and namespace assembled, newest first.
    fn assembled(&self, thread_id: &str, ns: &str) -> Result<Vec<CheckpointRow>> {
        let rows = self.query(
            "SELECT checkpoint_id, parent_checkpoint_id, checkpoint::text, metadata::text \
             FROM checkpoints WHERE thread_id = $1 AND checkpoint_ns = $2 \
             ORDER BY checkpoint_id COLLATE \"C\" DESC",
            &[&thread_id, &ns],
        )?;
        if rows.is_empty() {
            return Ok(vec![]);
        }
        // The blob rows the checkpoints name, fetched once (they are shared).
        let blob_rows = if rows.len() == 1 {
            self.query(
                "SELECT b.channel, b.version, b.type, b.blob FROM checkpoints c \
                 CROSS JOIN LATERAL jsonb_each_text(CASE jsonb_typeof(c.checkpoint -> 'channel_versions') \
                     WHEN 'object' THEN c.checkpoint -> 'channel_versions' ELSE '{}'::jsonb END) v \
                 JOIN checkpoint_blobs b ON b.thread_id = c.thread_id AND b.checkpoint_ns = c.checkpoint_ns \
                   AND b.channel = v.key AND b.version = v.value \
                 WHERE c.thread_id = $1 AND c.checkpoint_ns = $2 AND c.checkpoint_id = $3",
                &[&thread_id, &ns, &get_str(&rows[0], 0)?],
            )?
        } else {
            self.query(
                "SELECT channel, version, type, blob FROM checkpoint_blobs \
                 WHERE thread_id = $1 AND checkpoint_ns = $2",
                &[&thread_id, &ns],
            )?
        };
        // Each raw row is dropped once copied, and each blob once the last checkpoint naming
        // it is assembled: a long thread is held about once, not three times.
        let mut blobs: HashMap<(String, String), BlobRow> = HashMap::new();
        for r in blob_rows {
            let b = blob_row(&r)?;
            blobs.insert((b.channel.clone(), b.version.clone()), b);
        }
        let mut uses: HashMap<(String, String), usize> = HashMap::new();
        for r in &rows {
            for b in named_blobs(&get_str(r, 2)?, &blobs) {
                *uses
                    .entry((b.channel.clone(), b.version.clone()))
                    .or_default() += 1;
            }
        }
        rows.iter()
            .map(|r| {
                let checkpoint_id = get_str(r, 0)?;
                let json = get_str(r, 2)?;
                let named = named_blobs(&json, &blobs);
                let a = pgformat::assemble_with(&json, &named, &self.keys).with_context(|| {
                    format!("checkpoint {checkpoint_id} of thread '{thread_id}'")
                })?;
                let done: Vec<(String, String)> = named
                    .iter()
                    .map(|b| (b.channel.clone(), b.version.clone()))
                    .collect();
                for k in done {
                    if let Some(n) = uses.get_mut(&k) {
                        *n -= 1;
                        if *n == 0 {
                            blobs.remove(&k);
                        }
                    }
                }
                Ok(CheckpointRow {
                    thread_id: thread_id.to_owned(),
                    checkpoint_ns: ns.to_owned(),
                    checkpoint_id,
                    parent_checkpoint_id: r.try_get(1).map_err(|e| self.err(e))?,
                    type_name: a.type_name,
                    checkpoint: a.bytes,
                    metadata: r
                        .try_get::<_, Option<String>>(3)
                        .map_err(|e| self.err(e))?
                        .map(String::into_bytes),
                })
            })
            .collect()
    }

    /// Checks the thread has not moved since memctl read it: `expected_latest` is still its
    /// newest checkpoint (any namespace) and no write row names a newer checkpoint (a run
    /// whose writes committed before its checkpoint). Call with the locks held.
    fn unmoved(
        c: &mut Client,
        thread_id: &str,
        expected_latest: &str,
    ) -> Result<bool, postgres::Error> {
        let latest: Option<String> = c
            .query_one(
                "SELECT max(checkpoint_id COLLATE \"C\") FROM checkpoints WHERE thread_id = $1",
                &[&thread_id],
            )?
            .try_get(0)?;
        if latest.as_deref() != Some(expected_latest) {
            return Ok(false);
        }
        let newer = c.query_opt(
            "SELECT 1 FROM checkpoint_writes WHERE thread_id = $1 AND checkpoint_id COLLATE \"C\" > $2 LIMIT 1",
            &[&thread_id, &expected_latest],
        )?;
        Ok(newer.is_none())
    }

    /// Checks, with the locks held, that the thread has not moved since `rows.parent_id` was
    /// read (the latest checkpoint, `expected_writes` pending writes), and returns the
    /// parent's `channel_versions` (null when it has none): one query.
    fn check_parent(
        &self,
        c: &mut Client,
        thread_id: &str,
        ns: &str,
        rows: &NewRows<'_>,
        expected_writes: usize,
    ) -> Result<Json> {
        let e = |e| self.err(e);
        let check = self.prepared(
            c,
            "SELECT (SELECT max(checkpoint_id COLLATE \"C\") FROM checkpoints \
                     WHERE thread_id = $1 AND checkpoint_ns = $2), \
                    (SELECT count(*) FROM checkpoint_writes \
                     WHERE thread_id = $1 AND checkpoint_ns = $2 AND checkpoint_id = $3), \
                    (SELECT (checkpoint -> 'channel_versions')::text FROM checkpoints \
                     WHERE thread_id = $1 AND checkpoint_ns = $2 AND checkpoint_id = $3)",
        )?;
        let r = c
            .query_one(&check, &[&thread_id, &ns, &rows.parent_id])
            .map_err(e)?;
        let latest: Option<String> = r.try_get(0).map_err(e)?;
        let writes: i64 = r.try_get(1).map_err(e)?;
        let parent_versions: Option<String> = r.try_get(2).map_err(e)?;
        checked_parent(
            thread_id,
            rows,
            expected_writes,
            latest,
            writes,
            parent_versions,
        )
    }

    fn append_locked(
        &self,
        c: &mut Client,
        thread_id: &str,
        ns: &str,
        rows: &NewRows<'_>,
        expected_writes: usize,
        rewrite: Option<BlobRewriter<'_>>,
    ) -> Result<usize> {
        let e = |e| self.err(e);
        let parent_versions = self.check_parent(c, thread_id, ns, rows, expected_writes)?;
        let p = self.prepare_append(thread_id, rows, &parent_versions)?;
        let (b, w) = (&p.blobs, &p.writes);
        // One statement for the blob rows, the write rows and the checkpoint (`put` and
        // `put_writes`' rows; one round trip instead of one per row).
        let insert = self.prepared(c, append_sql(self.layout()))?;
        c.execute(
            &insert,
            &[
                &thread_id,
                &ns,
                &rows.checkpoint_id,
                &rows.parent_id,
                &postgres::types::Json(&p.checkpoint),
                &b.channels,
                &b.versions,
                &b.types,
                &b.blobs,
                &w.tasks,
                &w.paths,
                &w.idx,
                &w.channels,
                &w.types,
                &w.values,
                &postgres::types::Json(&p.metadata),
            ],
        )
        .map_err(e)?;
        match rewrite {
            Some(r) => self.scrub_thread(c, thread_id, r),
            None => Ok(0),
        }
    }

    /// Checks, with the locks held, that `expected_latest` is still the latest checkpoint of
    /// the thread and namespace and still has `expected_writes` pending writes; otherwise a
    /// [`ThreadMoved`] error.
    fn check_unmoved(
        &self,
        c: &mut Client,
        thread_id: &str,
        ns: &str,
        expected_latest: &str,
        expected_writes: usize,
    ) -> Result<()> {
        let e = |e| self.err(e);
        let latest: Option<String> = c
            .query_one(
                "SELECT max(checkpoint_id COLLATE \"C\") FROM checkpoints WHERE thread_id = $1 AND checkpoint_ns = $2",
                &[&thread_id, &ns],
            )
            .and_then(|r| r.try_get(0))
            .map_err(e)?;
        let writes: i64 = c
            .query_one(
                "SELECT count(*) FROM checkpoint_writes WHERE thread_id = $1 AND checkpoint_ns = $2 AND checkpoint_id = $3",
                &[&thread_id, &ns, &expected_latest],
            )
            .and_then(|r| r.try_get(0))
            .map_err(e)?;
        ThreadMoved::check(thread_id, latest, expected_latest, writes, expected_writes)
    }

    /// A DeltaChannel snapshot (inline `true`) is read from the blob row of the channel's
    /// version, and `put` stores blob rows only for versions that moved: the update that
    /// snapshots a channel without writing it moves its version (`ops::update`, as
    /// LangGraph's `create_checkpoint` does), and its blob row is written like any other. A
    /// snapshot under the parent's version would be read from an older blob row: an
    /// inconsistent checkpoint, never stored (the caller rolls back).
    fn check_snapshot_has_new_version(split: &pgformat::Split, channel: &str) -> Result<()> {
        let marker = split
            .checkpoint
            .get("channel_values")
            .and_then(|v| v.get(channel));
        if marker == Some(&Json::Bool(true)) {
            bail!(
                "the new checkpoint holds a snapshot of DeltaChannel '{channel}' under the parent's version of it, \
                 which PostgresSaver would read from an older blob row; nothing written"
            );
        }
        Ok(())
    }

    /// Replaces a checkpoint's JSONB document and metadata with `r`'s, split as
    /// `PostgresSaver.put` splits a checkpoint. Its blob values go to the rows of the channel
    /// versions it names: a row that is there (other checkpoints share it by version) is left
    /// as it is, unless it is an `empty` one, which LangGraph reads as no value.
    fn rewrite_in_place(
        &self,
        c: &mut Client,
        thread_id: &str,
        r: &CheckpointRewrite,
    ) -> Result<()> {
        let e = |e| self.err(e);
        let split = pgformat::split(&r.checkpoint)?;
        let versions = split
            .checkpoint
            .get("channel_versions")
            .and_then(Json::as_object)
            .ok_or_else(|| anyhow!("the rewritten checkpoint has no channel_versions"))?;
        for (channel, type_name, blob) in &split.blobs {
            let Some(version) = versions.get(channel).map(version_text) else {
                bail!("the rewritten checkpoint stores '{channel}' without a version of it");
            };
            c.execute(
                "INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob) \
                 VALUES ($1, $2, $3, $4, $5, $6) \
                 ON CONFLICT (thread_id, checkpoint_ns, channel, version) DO UPDATE \
                 SET type = EXCLUDED.type, blob = EXCLUDED.blob WHERE checkpoint_blobs.type = 'empty'",
                &[&thread_id, &r.ns, channel, &version, type_name, blob],
            )
            .map_err(e)?;
        }
        let metadata: Json =
            serde_json::from_slice(&r.metadata).context("the new metadata is not JSON")?;
        let n = c
            .execute(
                "UPDATE checkpoints SET checkpoint = $4, metadata = $5 \
                 WHERE thread_id = $1 AND checkpoint_ns = $2 AND checkpoint_id = $3",
                &[
                    &thread_id,
                    &r.ns,
                    &r.id,
                    &postgres::types::Json(&split.checkpoint),
                    &postgres::types::Json(&metadata),
                ],
            )
            .map_err(e)?;
        if n != 1 {
            bail!("checkpoint {} of thread '{thread_id}' is gone", r.id);
        }
        Ok(())
    }

    /// `--purge`: every blob row and write row of the thread (all namespaces, referenced or
    /// not) that `rewrite` changes is replaced in place. A blob row is shared by the
    /// checkpoints that name its version, so it is handed to `rewrite` as a checkpoint with
    /// that one channel: the same scrub as on a whole `SqliteSaver` checkpoint. Encrypted
    /// rows (`msgpack+aes`) are decrypted for the scrub and a changed value is encrypted again
    /// with a fresh nonce; without the key they fail the purge (nothing written).
    fn scrub_thread(
        &self,
        c: &mut Client,
        thread_id: &str,
        rewrite: BlobRewriter<'_>,
    ) -> Result<usize> {
        let e = |e| self.err(e);
        let mut changed = 0;
        let blobs = c
            .query(
                "SELECT checkpoint_ns, channel, version, type, blob FROM checkpoint_blobs \
                 WHERE thread_id = $1 AND (type = 'msgpack' OR type LIKE 'msgpack+%') AND blob IS NOT NULL",
                &[&thread_id],
            )
            .map_err(e)?;
        for r in &blobs {
            let ns: String = r.try_get(0).map_err(e)?;
            let channel: String = r.try_get(1).map_err(e)?;
            let version: String = r.try_get(2).map_err(e)?;
            let type_name: String = r.try_get(3).map_err(e)?;
            let stored: Vec<u8> = r.try_get(4).map_err(e)?;
            let what = format!("the '{channel}' value (version {version}) of thread '{thread_id}'");
            let (blob, key) = self.open_value(&type_name, &stored, &what)?;
            let new = rewrite_channel(rewrite, &channel, &blob).with_context(|| {
                format!("cannot rewrite the blob of channel '{channel}' version {version}")
            })?;
            let Some(value) = new else { continue };
            let bytes = seal_as(key.as_deref(), crate::codec::msgpack::encode(&value));
            c.execute(
                "UPDATE checkpoint_blobs SET blob = $1 WHERE thread_id = $2 AND checkpoint_ns = $3 AND channel = $4 AND version = $5",
                &[&bytes, &thread_id, &ns, &channel, &version],
            )
            .map_err(e)?;
            changed += 1;
        }
        // Values stored inline in the checkpoint JSON (strings, numbers: a summary channel),
        // handed to `rewrite` the same way, one channel at a time.
        let inline = c
            .query(
                "SELECT checkpoint_ns, checkpoint_id, checkpoint::text FROM checkpoints WHERE thread_id = $1",
                &[&thread_id],
            )
            .map_err(e)?;
        for r in &inline {
            let ns: String = r.try_get(0).map_err(e)?;
            let id: String = r.try_get(1).map_err(e)?;
            let text: String = r.try_get(2).map_err(e)?;
            let mut json: Json = serde_json::from_str(&text)
                .with_context(|| format!("checkpoint {id} is not JSON"))?;
            let mut row_changed = false;
            if let Some(Json::Object(values)) = json.get_mut("channel_values") {
                for (channel, value) in values.iter_mut() {
                    if !value.is_string() {
                        continue;
                    }
                    let packed =
                        crate::codec::msgpack::encode(&crate::codec::json::json_to_value(value));
                    let new = rewrite_channel(rewrite, channel, &packed).with_context(|| {
                        format!("cannot rewrite channel '{channel}' of checkpoint {id}")
                    })?;
                    let Some(v) = new else { continue };
                    *value = crate::codec::json::to_json(&v);
                    row_changed = true;
                }
            }
            if row_changed {
                c.execute(
                    "UPDATE checkpoints SET checkpoint = $1 WHERE thread_id = $2 AND checkpoint_ns = $3 AND checkpoint_id = $4",
                    &[&postgres::types::Json(&json), &thread_id, &ns, &id],
                )
                .map_err(e)?;
                changed += 1;
            }
        }
        let writes = c
            .query(
                "SELECT checkpoint_ns, checkpoint_id, task_id, idx, blob, type FROM checkpoint_writes \
                 WHERE thread_id = $1 AND (type = 'msgpack' OR type LIKE 'msgpack+%')",
                &[&thread_id],
            )
            .map_err(e)?;
        for r in &writes {
            let ns: String = r.try_get(0).map_err(e)?;
            let id: String = r.try_get(1).map_err(e)?;
            let task: String = r.try_get(2).map_err(e)?;
            let idx: i32 = r.try_get(3).map_err(e)?;
            let stored: Vec<u8> = r.try_get(4).map_err(e)?;
            let type_name: String = r.try_get(5).map_err(e)?;
            let what = format!("a write on checkpoint {id} of thread '{thread_id}'");
            let (blob, key) = self.open_value(&type_name, &stored, &what)?;
            let new = rewrite(BlobKind::Write, "msgpack", &blob)
                .with_context(|| format!("cannot rewrite a write on checkpoint {id}"))?;
            if let Some(new) = new {
                let new = seal_as(key.as_deref(), new);
                c.execute(
                    "UPDATE checkpoint_writes SET blob = $1 WHERE thread_id = $2 AND checkpoint_ns = $3 \
                     AND checkpoint_id = $4 AND task_id = $5 AND idx = $6",
                    &[&new, &thread_id, &ns, &id, &task, &idx],
                )
                .map_err(e)?;
                changed += 1;
            }
        }
        Ok(changed)
    }

    /// A stored msgpack value as plain bytes, and the key it was encrypted with (to seal its
    /// replacement with), when it was.
    fn open_value(
        &self,
        type_name: &str,
        stored: &[u8],
        what: &str,
    ) -> Result<(Vec<u8>, Option<std::sync::Arc<AesKey>>)> {
        let opened = self.keys.open(type_name, stored, what)?;
        let key = match opened.sealed {
            true => Some(self.keys.key(what)?.clone()),
            false => None,
        };
        Ok((opened.bytes.into_owned(), key))
    }

    /// For each of `texts`, up to fifteen rows holding it as text: (thread, the row named for
    /// a person). One pass over every row of the three tables, every text at once
    /// ([`crate::storage::holding`]): a forget searches for thousands of strings, and a scan
    /// per string took an hour on 1 GB (BENCHMARKS.md, "Postgres floors"). The rows come
    /// through a portal, a batch at a time; inside a batch transaction (no portal of its
    /// own) the server filters each text's rows instead, one query per text.
    fn rows_holding_all(&self, texts: &[String]) -> Result<Vec<Vec<(String, String)>>> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        if self.in_batch.load(std::sync::atomic::Ordering::SeqCst) {
            return texts.iter().map(|t| self.rows_holding(t)).collect();
        }
        let mut holding = crate::storage::holding::Holding::new(texts, 15)?;
        let e = |e| self.err(e);
        self.stream_rows(
            "SELECT thread_id, 'checkpoint ' || checkpoint_id || ' of thread ' || quote_literal(thread_id), \
                    'json', convert_to(checkpoint::text, 'UTF8'), convert_to(metadata::text, 'UTF8') \
               FROM checkpoints \
             UNION ALL \
             SELECT thread_id, 'the blob of channel ' || quote_literal(channel) || ' version ' || version \
                    || ' of thread ' || quote_literal(thread_id), type, blob, NULL \
               FROM checkpoint_blobs \
             UNION ALL \
             SELECT thread_id, 'a pending write to ' || quote_literal(channel) || ' on checkpoint ' \
                    || checkpoint_id || ' of thread ' || quote_literal(thread_id), type, blob, NULL \
               FROM checkpoint_writes",
            // Few rows a fetch: a thread's messages blob can be megabytes.
            8,
            &mut |rows| {
                for r in &rows {
                    let kind: Option<String> = r.try_get(2).map_err(e)?;
                    let value: Option<&[u8]> = r.try_get(3).map_err(e)?;
                    let metadata: Option<&[u8]> = r.try_get(4).map_err(e)?;
                    let values = [(value, kind.as_deref().unwrap_or_default()), (metadata, "json")];
                    holding.row(&values, || Ok((get_str(r, 0)?, get_str(r, 1)?)))?;
                }
                Ok(true)
            },
        )?;
        Ok(holding.finish())
    }

    /// Up to fifteen rows holding `needle` as text: (thread, the row named for a person). In the JSONB
    /// columns the text is searched as JSON writes it (`"`, `\` and control characters
    /// escaped), which is how `checkpoint::text` shows a string value.
    fn rows_holding(&self, needle: &str) -> Result<Vec<(String, String)>> {
        let in_json = crate::storage::json_escaped(needle);
        let mut c = self.client();
        let e = |e| self.err(e);
        // Every row whose stored value holds the bytes, streamed; kept when its decoded text
        // holds the needle (see `model::stored_text`: a type tag or key is not "found"; a row
        // that does not decode counts whole), up to five.
        let params: [&(dyn ToSql + Sync); 2] = [&needle, &in_json];
        let mut it = c
            .query_raw(
                "SELECT thread_id, 'checkpoint ' || checkpoint_id || ' of thread ' || quote_literal(thread_id), \
                        'json', convert_to(checkpoint::text, 'UTF8'), convert_to(metadata::text, 'UTF8') \
                   FROM checkpoints WHERE strpos(checkpoint::text, $2) > 0 OR strpos(metadata::text, $2) > 0 \
                 UNION ALL \
                 SELECT thread_id, 'the blob of channel ' || quote_literal(channel) || ' version ' || version \
                        || ' of thread ' || quote_literal(thread_id), type, blob, NULL \
                   FROM checkpoint_blobs WHERE position(convert_to($1, 'UTF8') in blob) > 0 \
                 UNION ALL \
                 SELECT thread_id, 'a pending write to ' || quote_literal(channel) || ' on checkpoint ' \
                        || checkpoint_id || ' of thread ' || quote_literal(thread_id), type, blob, NULL \
                   FROM checkpoint_writes WHERE position(convert_to($1, 'UTF8') in blob) > 0",
                params,
            )
            .map_err(e)?;
        let mut out = Vec::new();
        while let Some(r) = it.next().map_err(e)? {
            let type_name: Option<String> = r.try_get(2).map_err(e)?;
            let value: Option<Vec<u8>> = r.try_get(3).map_err(e)?;
            let metadata: Option<Vec<u8>> = r.try_get(4).map_err(e)?;
            let type_name = type_name.unwrap_or_default();
            let holds = |kind: &str, bytes: &Option<Vec<u8>>| {
                bytes.as_deref().is_some_and(|b| {
                    memchr::memmem::find(b, needle.as_bytes()).is_some()
                        || memchr::memmem::find(b, in_json.as_bytes()).is_some()
                }) && crate::model::stored_text::row_holds_text(
                    kind,
                    bytes.as_deref().unwrap_or_default(),
                    needle,
                )
            };
            // Read to the end (the stream must be drained); named up to fifteen.
            if out.len() < 15 && (holds(&type_name, &value) || holds("json", &metadata)) {
                out.push((get_str(&r, 0)?, get_str(&r, 1)?));
            }
        }
        Ok(out)
    }
}

impl PostgresStore {
    /// The aggregates of the threads `ids`, in thread-id order. Aggregates only
    /// (`pg_column_size` reads no value).
    fn summaries(&self, ids: &[String]) -> Result<Vec<ThreadSummary>> {
        let sql = summaries_sql(true, self.thread_ids()?);
        let rows = self.query(&sql, &[&ids])?;
        rows.iter().map(|r| self.summary_of(r)).collect()
    }

    /// The position among `n` asked threads of a row whose first column is the `ORDINALITY`
    /// of `unnest($1::text[])` (counted from 1).
    fn ordinal(&self, r: &postgres::Row, n: usize) -> Result<usize> {
        usize::try_from(r.try_get::<_, i64>(0).map_err(|e| self.err(e))?)
            .ok()
            .and_then(|i| i.checked_sub(1))
            .filter(|i| *i < n)
            .ok_or_else(|| anyhow!("the server numbered a thread out of range"))
    }

    /// A row of [`summaries_sql`] as a [`ThreadSummary`].
    fn summary_of(&self, r: &postgres::Row) -> Result<ThreadSummary> {
        let e = |e| self.err(e);
        Ok(ThreadSummary {
            thread_id: r.try_get(0).map_err(e)?,
            checkpoints: r.try_get::<_, i64>(1).map_err(e)?.max(0) as u64,
            namespaces: r.try_get::<_, i64>(2).map_err(e)?.max(0) as u64,
            latest_root_id: r.try_get(3).map_err(e)?,
            latest_id: r
                .try_get::<_, Option<String>>(4)
                .map_err(e)?
                .unwrap_or_default(),
            bytes: r
                .try_get::<_, Option<i64>>(5)
                .map_err(e)?
                .unwrap_or(0)
                .max(0) as u64,
        })
    }
}

/// The per-thread aggregates of every thread (`filtered`: of the threads in `$1`), in
/// thread-id order (bytewise, as SQLite orders them; `order`: [`PostgresStore::thread_ids`]).
fn summaries_sql(filtered: bool, order: order::ThreadOrder) -> String {
    let filter = if filtered {
        "WHERE thread_id = ANY($1)"
    } else {
        ""
    };
    let (key, suffix) = (order.group_key(), order.order_suffix());
    format!(
        "SELECT c.thread_id, c.n, c.namespaces, c.latest_root, c.latest, \
                c.bytes + COALESCE(w.bytes, 0) + COALESCE(b.bytes, 0) \
         FROM (SELECT {key} AS thread_id, count(*) AS n, count(DISTINCT checkpoint_ns) AS namespaces, \
                      max(checkpoint_id COLLATE \"C\") FILTER (WHERE checkpoint_ns = '') AS latest_root, \
                      max(checkpoint_id COLLATE \"C\") AS latest, \
                      sum(pg_column_size(checkpoint) + pg_column_size(metadata))::bigint AS bytes \
               FROM checkpoints {filter} GROUP BY 1) c \
         LEFT JOIN (SELECT {key} AS thread_id, sum(octet_length(blob))::bigint AS bytes FROM checkpoint_writes {filter} GROUP BY 1) w \
                ON w.thread_id = c.thread_id \
         LEFT JOIN (SELECT {key} AS thread_id, sum(COALESCE(octet_length(blob), 0))::bigint AS bytes FROM checkpoint_blobs {filter} GROUP BY 1) b \
                ON b.thread_id = c.thread_id \
         ORDER BY c.thread_id{suffix}"
    )
}

/// `(thread_id, latest root checkpoint id)` of every thread with a root checkpoint, in
/// thread-id order (bytewise; `order`: [`PostgresStore::thread_ids`]).
fn latest_root_ids_sql(order: order::ThreadOrder) -> String {
    let (key, suffix) = (order.group_key(), order.order_suffix());
    format!(
        "SELECT {key} AS thread_id, max(checkpoint_id COLLATE \"C\") FROM checkpoints \
         WHERE checkpoint_ns = '' GROUP BY 1 ORDER BY thread_id{suffix}"
    )
}

impl CheckpointStore for PostgresStore {
    fn generation(&self) -> SchemaGeneration {
        self.layout()
    }

    fn reopen_read_only(&self) -> Result<Box<dyn CheckpointStore>> {
        Ok(Box::new(PostgresStore::open(
            &self.url,
            self.schema.as_deref(),
            Access::ReadOnly,
            self.busy_timeout,
            self.keys.clone(),
        )?))
    }

    /// In this store's snapshot when it is read-only (its transaction exports it): the new
    /// handle reads exactly what this one reads. On a standby in recovery, in a snapshot of
    /// its own, as [`CheckpointStore::reopen_read_only`] opens it.
    fn reopen_beside(&self) -> Result<Box<dyn CheckpointStore>> {
        let snapshot = match self.access {
            Access::ReadOnly => self.export_snapshot()?,
            _ => None,
        };
        Ok(Box::new(PostgresStore::open_in(
            &self.url,
            self.schema.as_deref(),
            Access::ReadOnly,
            self.busy_timeout,
            self.keys.clone(),
            snapshot.as_deref(),
        )?))
    }

    fn for_each_thread(&self, f: &mut dyn FnMut(ThreadSummary) -> Result<()>) -> Result<()> {
        // Collected first so that `f` may use this store again; from the cursor a batch of
        // rows at a time, so that the rows and the summaries are never all held together.
        let mut all = Vec::new();
        self.stream_threads(1024, &mut |batch| {
            all.extend(batch);
            Ok(true)
        })?;
        all.into_iter().try_for_each(f)
    }

    fn stream_threads(
        &self,
        batch: usize,
        f: &mut dyn FnMut(Vec<ThreadSummary>) -> Result<bool>,
    ) -> Result<()> {
        if self.tables_pending() {
            return Ok(());
        }
        self.stream_rows(
            &summaries_sql(false, self.thread_ids()?),
            batch,
            &mut |rows| {
                let summaries = rows
                    .iter()
                    .map(|r| self.summary_of(r))
                    .collect::<Result<Vec<_>>>()?;
                f(summaries)
            },
        )
    }

    fn stream_latest_root_ids(
        &self,
        batch: usize,
        f: &mut dyn FnMut(Vec<(String, String)>) -> Result<bool>,
    ) -> Result<()> {
        self.stream_rows(
            &latest_root_ids_sql(self.thread_ids()?),
            batch,
            &mut |rows| {
                let ids = rows
                    .iter()
                    .map(|r| Ok((get_str(r, 0)?, get_str(r, 1)?)))
                    .collect::<Result<Vec<_>>>()?;
                f(ids)
            },
        )
    }

    fn for_each_latest_id(&self, f: &mut dyn FnMut(&str, &str) -> bool) -> Result<()> {
        let mut c = self.client();
        let e = |e| self.err(e);
        let params: [&(dyn ToSql + Sync); 0] = [];
        let mut it = c
            .query_raw(
                "SELECT thread_id, max(checkpoint_id COLLATE \"C\") FROM checkpoints GROUP BY thread_id",
                params,
            )
            .map_err(e)?;
        while let Some(r) = it.next().map_err(e)? {
            let thread: &str = r.try_get(0).map_err(e)?;
            let id: &str = r.try_get(1).map_err(e)?;
            if !f(thread, id) {
                break;
            }
        }
        Ok(())
    }

    fn summaries_of(&self, thread_ids: &[String]) -> Result<Vec<ThreadSummary>> {
        self.summaries(thread_ids)
    }

    fn newest_threads(&self, n: usize) -> Result<Option<Vec<String>>> {
        self.newest_by_index(n)
    }

    /// In this store's snapshot (a read-only run's, which its stream shares); a range of the
    /// primary key where the collation is bytewise (`order::ThreadOrder`).
    fn count_threads_after(&self, thread_id: &str) -> Result<u64> {
        let sql = format!(
            "SELECT count(*) FROM (SELECT DISTINCT thread_id FROM checkpoints WHERE {} > $1) t",
            self.thread_ids()?.bytewise_key()
        );
        let rows = self.query(&sql, &[&thread_id])?;
        match rows.first() {
            Some(r) => Ok(r.try_get::<_, i64>(0).map_err(|e| self.err(e))?.max(0) as u64),
            None => Ok(0),
        }
    }

    fn thread_exists(&self, thread_id: &str) -> Result<bool> {
        // A text column cannot hold a NUL character: no such thread here (and the server
        // would refuse the parameter). No table yet: no thread.
        if thread_id.contains('\0') || self.tables_pending() {
            return Ok(false);
        }
        Ok(!self
            .query(
                "SELECT 1 FROM checkpoints WHERE thread_id = $1 LIMIT 1",
                &[&thread_id],
            )?
            .is_empty())
    }

    fn namespaces(&self, thread_id: &str) -> Result<Vec<String>> {
        self.query(
            "SELECT DISTINCT checkpoint_ns COLLATE \"C\" FROM checkpoints WHERE thread_id = $1 ORDER BY 1",
            &[&thread_id],
        )?
        .iter()
        .map(|r| get_str(r, 0))
        .collect()
    }

    /// From the cursor a batch of rows at a time (the rows and the ids are never all held
    /// together).
    fn latest_root_ids(&self) -> Result<Vec<(String, String)>> {
        let mut all = Vec::new();
        self.stream_latest_root_ids(1024, &mut |ids| {
            all.extend(ids);
            Ok(true)
        })?;
        Ok(all)
    }

    fn latest_checkpoint_id(&self, thread_id: &str, ns: &str) -> Result<Option<String>> {
        let rows = self.query(
            "SELECT max(checkpoint_id COLLATE \"C\") FROM checkpoints WHERE thread_id = $1 AND checkpoint_ns = $2",
            &[&thread_id, &ns],
        )?;
        match rows.first() {
            Some(r) => r.try_get(0).map_err(|e| self.err(e)),
            None => Ok(None),
        }
    }

    fn checkpoints(&self, thread_id: &str, ns: &str) -> Result<Vec<CheckpointRow>> {
        self.assembled(thread_id, ns)
    }

    fn checkpoint(
        &self,
        thread_id: &str,
        ns: &str,
        id: Option<&str>,
    ) -> Result<Option<CheckpointRow>> {
        let id = match id {
            Some(id) => id.to_owned(),
            None => match self.latest_checkpoint_id(thread_id, ns)? {
                Some(id) => id,
                None => return Ok(None),
            },
        };
        self.checkpoints_at(&[(thread_id, ns, &id)])?
            .pop()
            .unwrap_or(Ok(None))
    }

    /// One query for all of them: each checkpoint row joined with the blob rows its
    /// `channel_versions` name, one result row per blob (a checkpoint without blobs: one row
    /// with none), in the order asked; streamed and assembled a checkpoint at a time. No
    /// aggregate: an `array_agg` of the blobs made the server copy each (a 2.5 MB messages
    /// blob) into an array before sending it (BENCHMARKS.md, browse at speed).
    fn checkpoints_at(
        &self,
        keys: &[(&str, &str, &str)],
    ) -> Result<Vec<Result<Option<CheckpointRow>>>> {
        if keys.is_empty() {
            return Ok(vec![]);
        }
        let (threads, nss, ids) = unzip3(keys);
        let mut c = self.client();
        let e = |e| self.err(e);
        let stmt = self.prepared(
            &mut c,
            "SELECT k.i, c.parent_checkpoint_id, c.checkpoint::text, c.metadata::text, \
                    b.channel, b.version, b.type, b.blob \
             FROM unnest($1::text[], $2::text[], $3::text[]) WITH ORDINALITY AS k(thread_id, ns, id, i) \
             JOIN checkpoints c ON c.thread_id = k.thread_id AND c.checkpoint_ns = k.ns AND c.checkpoint_id = k.id \
             LEFT JOIN LATERAL ( \
                 SELECT b.channel, b.version, b.type, b.blob \
                 FROM jsonb_each_text(CASE jsonb_typeof(c.checkpoint -> 'channel_versions') \
                     WHEN 'object' THEN c.checkpoint -> 'channel_versions' ELSE '{}'::jsonb END) v \
                 JOIN checkpoint_blobs b ON b.thread_id = c.thread_id AND b.checkpoint_ns = c.checkpoint_ns \
                   AND b.channel = v.key AND b.version = v.value) b ON true \
             ORDER BY k.i",
        )?;
        let mut out: Vec<Result<Option<CheckpointRow>>> = keys.iter().map(|_| Ok(None)).collect();
        let params: [&(dyn ToSql + Sync); 3] = [&threads, &nss, &ids];
        let mut it = c.query_raw(&stmt, params).map_err(e)?;
        // The checkpoint being read: its position, row columns, and blob rows so far.
        struct Open {
            i: usize,
            parent: Option<String>,
            json: String,
            metadata: Option<String>,
            blobs: Vec<BlobRow>,
        }
        let assemble = |o: Open| -> Result<Option<CheckpointRow>> {
            let (thread_id, ns, checkpoint_id) = keys[o.i];
            let named: Vec<&BlobRow> = o.blobs.iter().collect();
            let a = pgformat::assemble_with(&o.json, &named, &self.keys)
                .with_context(|| format!("checkpoint {checkpoint_id} of thread '{thread_id}'"))?;
            Ok(Some(CheckpointRow {
                thread_id: thread_id.to_owned(),
                checkpoint_ns: ns.to_owned(),
                checkpoint_id: checkpoint_id.to_owned(),
                parent_checkpoint_id: o.parent,
                type_name: a.type_name,
                checkpoint: a.bytes,
                metadata: o.metadata.map(String::into_bytes),
            }))
        };
        let mut open: Option<Open> = None;
        while let Some(r) = it.next().map_err(e)? {
            let i = usize::try_from(r.try_get::<_, i64>(0).map_err(e)?)
                .ok()
                .and_then(|i| i.checked_sub(1))
                .filter(|i| *i < keys.len())
                .ok_or_else(|| anyhow!("the server numbered a checkpoint out of range"))?;
            if open.as_ref().is_none_or(|o| o.i != i) {
                if let Some(done) = open.take() {
                    if done.i > i {
                        bail!("the server sent the checkpoints out of order");
                    }
                    let at = done.i;
                    out[at] = assemble(done);
                }
                open = Some(Open {
                    i,
                    parent: r.try_get(1).map_err(e)?,
                    json: r
                        .try_get::<_, Option<String>>(2)
                        .map_err(e)?
                        .unwrap_or_default(),
                    metadata: r.try_get(3).map_err(e)?,
                    blobs: Vec::new(),
                });
            }
            // A checkpoint without blobs comes as one row with none.
            if let (Some(o), Some(channel)) =
                (open.as_mut(), r.try_get::<_, Option<String>>(4).map_err(e)?)
            {
                o.blobs.push(BlobRow {
                    channel,
                    version: r
                        .try_get::<_, Option<String>>(5)
                        .map_err(e)?
                        .unwrap_or_default(),
                    type_name: r
                        .try_get::<_, Option<String>>(6)
                        .map_err(e)?
                        .unwrap_or_default(),
                    blob: r.try_get(7).map_err(e)?,
                });
            }
        }
        if let Some(done) = open.take() {
            let at = done.i;
            out[at] = assemble(done);
        }
        Ok(out)
    }

    fn writes_at(&self, keys: &[(&str, &str, &str)]) -> Result<Vec<Vec<WriteRow>>> {
        if keys.is_empty() {
            return Ok(vec![]);
        }
        let (threads, nss, ids) = unzip3(keys);
        let sql = match self.layout() {
            SchemaGeneration::V3 => {
                "SELECT k.i, w.task_id, w.task_path, w.idx, w.channel, w.type, w.blob \
                 FROM unnest($1::text[], $2::text[], $3::text[]) WITH ORDINALITY AS k(thread_id, ns, id, i) \
                 JOIN checkpoint_writes w ON w.thread_id = k.thread_id AND w.checkpoint_ns = k.ns AND w.checkpoint_id = k.id \
                 ORDER BY k.i, w.task_path COLLATE \"C\", w.task_id COLLATE \"C\", w.idx"
            }
            SchemaGeneration::V2 => {
                "SELECT k.i, w.task_id, ''::text, w.idx, w.channel, w.type, w.blob \
                 FROM unnest($1::text[], $2::text[], $3::text[]) WITH ORDINALITY AS k(thread_id, ns, id, i) \
                 JOIN checkpoint_writes w ON w.thread_id = k.thread_id AND w.checkpoint_ns = k.ns AND w.checkpoint_id = k.id \
                 ORDER BY k.i, w.task_id COLLATE \"C\", w.idx"
            }
        };
        let mut c = self.client();
        let stmt = self.prepared(&mut c, sql)?;
        let e = |e| self.err(e);
        let mut out: Vec<Vec<WriteRow>> = keys.iter().map(|_| Vec::new()).collect();
        for r in c.query(&stmt, &[&threads, &nss, &ids]).map_err(e)? {
            let i = usize::try_from(r.try_get::<_, i64>(0).map_err(e)?)
                .ok()
                .and_then(|i| i.checked_sub(1))
                .filter(|i| *i < keys.len())
                .ok_or_else(|| anyhow!("the server numbered a write out of range"))?;
            out[i].push(WriteRow {
                task_id: r.try_get(1).map_err(e)?,
                task_path: r.try_get(2).map_err(e)?,
                idx: i64::from(r.try_get::<_, i32>(3).map_err(e)?),
                channel: r.try_get(4).map_err(e)?,
                type_name: r
                    .try_get::<_, Option<String>>(5)
                    .map_err(e)?
                    .unwrap_or_default(),
                value: r.try_get(6).map_err(e)?,
            });
        }
        Ok(out)
    }

    fn latest_checkpoint_ids(&self, threads: &[&str], ns: &str) -> Result<Vec<Option<String>>> {
        if threads.is_empty() {
            return Ok(vec![]);
        }
        let mut c = self.client();
        let stmt = self.prepared(
            &mut c,
            "SELECT (SELECT max(c.checkpoint_id COLLATE \"C\") FROM checkpoints c \
                     WHERE c.thread_id = k.thread_id AND c.checkpoint_ns = $2) \
             FROM unnest($1::text[]) WITH ORDINALITY AS k(thread_id, i) ORDER BY k.i",
        )?;
        let e = |e| self.err(e);
        c.query(&stmt, &[&threads, &ns])
            .map_err(e)?
            .iter()
            .map(|r| r.try_get(0).map_err(e))
            .collect()
    }

    fn write_counts(&self, thread_id: &str, ns: &str) -> Result<HashMap<String, usize>> {
        self.query(
            "SELECT checkpoint_id, count(*) FROM checkpoint_writes WHERE thread_id = $1 AND checkpoint_ns = $2 GROUP BY checkpoint_id",
            &[&thread_id, &ns],
        )?
        .iter()
        .map(|r| {
            Ok((
                get_str(r, 0)?,
                r.try_get::<_, i64>(1).map_err(|e| self.err(e))?.max(0) as usize,
            ))
        })
        .collect()
    }

    fn metadata(&self, thread_id: &str, ns: &str) -> Result<Vec<(String, Option<Vec<u8>>)>> {
        self.query(
            "SELECT checkpoint_id, metadata::text FROM checkpoints WHERE thread_id = $1 AND checkpoint_ns = $2 \
             ORDER BY checkpoint_id COLLATE \"C\" DESC",
            &[&thread_id, &ns],
        )?
        .iter()
        .map(|r| {
            let m: Option<String> = r.try_get(1).map_err(|e| self.err(e))?;
            Ok((get_str(r, 0)?, m.map(String::into_bytes)))
        })
        .collect()
    }

    /// One query for all the threads, ordered as `metadata` and `checkpoint` order them
    /// (`COLLATE "C"`: byte order).
    fn metadata_of(&self, threads: &[&str]) -> Result<Vec<Vec<MetadataRow>>> {
        let mut out: Vec<Vec<MetadataRow>> = threads.iter().map(|_| Vec::new()).collect();
        if threads.is_empty() {
            return Ok(out);
        }
        let e = |e| self.err(e);
        let mut c = self.client();
        let stmt = self.prepared(
            &mut c,
            "SELECT k.i, c.checkpoint_ns, c.checkpoint_id, c.metadata::text \
             FROM unnest($1::text[]) WITH ORDINALITY AS k(thread_id, i) \
             JOIN checkpoints c ON c.thread_id = k.thread_id \
             ORDER BY k.i, c.checkpoint_ns COLLATE \"C\", c.checkpoint_id COLLATE \"C\" DESC",
        )?;
        for r in c.query(&stmt, &[&threads]).map_err(e)? {
            let i = self.ordinal(&r, threads.len())?;
            let metadata: Option<String> = r.try_get(3).map_err(e)?;
            out[i].push(MetadataRow {
                checkpoint_ns: get_str(&r, 1)?,
                checkpoint_id: get_str(&r, 2)?,
                metadata: metadata.map(String::into_bytes),
            });
        }
        Ok(out)
    }

    fn writes(&self, thread_id: &str, ns: &str, checkpoint_id: &str) -> Result<Vec<WriteRow>> {
        Ok(self
            .writes_at(&[(thread_id, ns, checkpoint_id)])?
            .pop()
            .unwrap_or_default())
    }

    fn checkpoint_infos(&self, thread_id: &str) -> Result<Vec<CheckpointInfo>> {
        Ok(self
            .checkpoint_infos_of(&[thread_id])?
            .pop()
            .unwrap_or_default())
    }

    /// One query for all the threads (their checkpoints, and their writes counted per
    /// checkpoint).
    fn checkpoint_infos_of(&self, threads: &[&str]) -> Result<Vec<Vec<CheckpointInfo>>> {
        let e = |e| self.err(e);
        let mut c = self.client();
        let stmt = self.prepared(
            &mut c,
            "SELECT k.i, c.checkpoint_ns, c.checkpoint_id, c.parent_checkpoint_id, c.metadata::text, \
                    (pg_column_size(c.checkpoint) + pg_column_size(c.metadata))::bigint, \
                    COALESCE(w.n, 0), COALESCE(w.bytes, 0) \
             FROM unnest($1::text[]) WITH ORDINALITY AS k(thread_id, i) \
             JOIN checkpoints c ON c.thread_id = k.thread_id \
             LEFT JOIN ( \
                 SELECT thread_id, checkpoint_ns, checkpoint_id, count(*) AS n, sum(octet_length(blob))::bigint AS bytes \
                 FROM checkpoint_writes WHERE thread_id = ANY($1::text[]) GROUP BY thread_id, checkpoint_ns, checkpoint_id \
             ) w ON w.thread_id = c.thread_id AND w.checkpoint_ns = c.checkpoint_ns AND w.checkpoint_id = c.checkpoint_id",
        )?;
        let mut out: Vec<Vec<CheckpointInfo>> = threads.iter().map(|_| Vec::new()).collect();
        for r in c.query(&stmt, &[&threads]).map_err(e)? {
            let i = self.ordinal(&r, threads.len())?;
            let metadata: Option<String> = r.try_get(4).map_err(e)?;
            let root_parent = metadata
                .as_deref()
                .and_then(|m| serde_json::from_str::<Json>(m).ok())
                .and_then(|j| j.get("parents")?.get("")?.as_str().map(str::to_owned));
            let n =
                |i: usize| -> Result<u64> { Ok(r.try_get::<_, i64>(i).map_err(e)?.max(0) as u64) };
            out[i].push(CheckpointInfo {
                ns: r.try_get(1).map_err(e)?,
                id: r.try_get(2).map_err(e)?,
                parent: r.try_get(3).map_err(e)?,
                root_parent,
                metadata: metadata.map(String::into_bytes),
                bytes: n(5)?,
                writes: n(6)?,
                write_bytes: n(7)?,
            });
        }
        Ok(out)
    }

    fn row_counts(&self) -> Result<(u64, u64)> {
        let rows = self.query(
            "SELECT (SELECT count(*) FROM checkpoints), (SELECT count(*) FROM checkpoint_writes)",
            &[],
        )?;
        let r = rows.first().ok_or_else(|| anyhow!("no counts"))?;
        let e = |e| self.err(e);
        Ok((
            r.try_get::<_, i64>(0).map_err(e)?.max(0) as u64,
            r.try_get::<_, i64>(1).map_err(e)?.max(0) as u64,
        ))
    }

    fn an_encrypted_value(&self) -> Result<Option<(String, Vec<u8>)>> {
        let e = |e| self.err(e);
        for table in ["checkpoint_blobs", "checkpoint_writes"] {
            let rows = self.query(
                &format!(
                    "SELECT type, blob FROM {table} WHERE type LIKE '%+%' AND blob IS NOT NULL LIMIT 1"
                ),
                &[],
            )?;
            if let Some(r) = rows.first() {
                return Ok(Some((
                    r.try_get::<_, String>(0).map_err(e)?,
                    r.try_get::<_, Vec<u8>>(1).map_err(e)?,
                )));
            }
        }
        Ok(None)
    }

    fn append_update(
        &self,
        thread_id: &str,
        ns: &str,
        rows: &NewRows<'_>,
        expected_writes: usize,
        rewrite: Option<BlobRewriter<'_>>,
    ) -> Result<usize> {
        self.write_tx(|c| self.append_locked(c, thread_id, ns, rows, expected_writes, rewrite))
    }

    fn append_updates(&self, items: &[crate::storage::UpdateItem<'_>]) -> Vec<Result<usize>> {
        self.append_many(items)
    }

    fn rewrite_thread(
        &self,
        thread_id: &str,
        expected_latest: &str,
        expected_writes: usize,
        rewrite: BlobRewriter<'_>,
    ) -> Result<usize> {
        self.write_tx(|c| {
            self.check_unmoved(c, thread_id, "", expected_latest, expected_writes)?;
            self.scrub_thread(c, thread_id, rewrite)
        })
    }

    fn delete_threads(&self, threads: &[(String, String)]) -> Result<(Deleted, Vec<String>)> {
        // Set-based, with the locks held: one statement finds the threads that moved (as
        // `unmoved` decides it, for all of them at once), then one DELETE per table takes the
        // rest. A handful of round trips per batch instead of five per thread: the locks an
        // app's `put` waits on are held for that much shorter.
        let (ids, latest): (Vec<&str>, Vec<&str>) = threads
            .iter()
            .map(|(t, l)| (t.as_str(), l.as_str()))
            .unzip();
        self.write_tx(|c| {
            let e = |e| self.err(e);
            let moved: Vec<String> = c
                .query(
                    "SELECT w.thread_id FROM unnest($1::text[], $2::text[]) AS w(thread_id, latest) \
                     WHERE (SELECT max(c.checkpoint_id COLLATE \"C\") FROM checkpoints c \
                            WHERE c.thread_id = w.thread_id) IS DISTINCT FROM w.latest \
                        OR EXISTS (SELECT 1 FROM checkpoint_writes x WHERE x.thread_id = w.thread_id \
                                   AND x.checkpoint_id COLLATE \"C\" > w.latest)",
                    &[&ids, &latest],
                )
                .map_err(e)?
                .iter()
                .map(|r| r.try_get(0))
                .collect::<Result<_, _>>()
                .map_err(e)?;
            let go: Vec<&str> = ids
                .iter()
                .copied()
                .filter(|t| !moved.iter().any(|m| m == t))
                .collect();
            let mut deleted = Deleted::default();
            if go.is_empty() {
                return Ok((deleted, moved));
            }
            let count = |c: &mut Client, sql: &str| -> Result<(u64, u64)> {
                let r = c.query_one(sql, &[&go]).map_err(e)?;
                Ok((
                    r.try_get::<_, i64>(0).map_err(e)?.max(0) as u64,
                    r.try_get::<_, Option<i64>>(1).map_err(e)?.unwrap_or(0).max(0) as u64,
                ))
            };
            let (cps, cp_bytes) = count(
                c,
                "WITH d AS (DELETE FROM checkpoints WHERE thread_id = ANY($1) \
                   RETURNING pg_column_size(checkpoint) + pg_column_size(metadata) AS n) \
                 SELECT count(*), sum(n)::bigint FROM d",
            )?;
            let (wrs, wr_bytes) = count(
                c,
                "WITH d AS (DELETE FROM checkpoint_writes WHERE thread_id = ANY($1) RETURNING octet_length(blob) AS n) \
                 SELECT count(*), sum(n)::bigint FROM d",
            )?;
            let (_, blob_bytes) = count(
                c,
                "WITH d AS (DELETE FROM checkpoint_blobs WHERE thread_id = ANY($1) RETURNING COALESCE(octet_length(blob), 0) AS n) \
                 SELECT count(*), sum(n)::bigint FROM d",
            )?;
            deleted.add(Deleted {
                threads: go.len() as u64,
                checkpoints: cps,
                writes: wrs,
                bytes: cp_bytes + wr_bytes + blob_bytes,
            });
            Ok((deleted, moved))
        })
    }

    fn backend(&self) -> &'static str {
        "postgres"
    }

    fn searched(&self) -> Vec<String> {
        vec![
            "every row of checkpoints, checkpoint_blobs and checkpoint_writes (the server's files are out of reach)".into(),
        ]
    }

    fn out_of_reach(&self) -> Vec<String> {
        vec![OUT_OF_REACH.into()]
    }

    fn visit_thread(
        &self,
        thread_id: &str,
        f: &mut dyn FnMut(crate::storage::ThreadRow) -> Result<()>,
    ) -> Result<()> {
        if self.tables_pending() {
            return Ok(());
        }
        self.visit_whole_thread(thread_id, f)
    }

    fn visit_values(
        &self,
        thread_id: &str,
        f: &mut dyn FnMut(crate::storage::ThreadValue<'_>) -> Result<()>,
    ) -> Result<()> {
        self.visit_stored_values(thread_id, f)
    }

    fn write_thread_from(
        &self,
        thread_id: &str,
        replace: bool,
        feed: crate::storage::RowFeed<'_>,
    ) -> Result<crate::storage::WrittenThread> {
        self.write_thread_rows(thread_id, replace, feed)
    }

    fn can_hold(&self, thread_id: &str, row: crate::storage::RowRef<'_>) -> Result<()> {
        self.check_row(thread_id, row)
    }

    fn space(&self) -> Option<&dyn crate::storage::Space> {
        Some(self)
    }

    fn server_account(&self) -> Option<&dyn crate::storage::ServerAccount> {
        Some(self)
    }

    fn maintenance(&self) -> Option<&dyn crate::storage::Maintenance> {
        Some(self)
    }

    fn forensics(&self) -> Option<&dyn crate::storage::Forensics> {
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

impl Space for PostgresStore {
    /// The saver's tables with their indexes and TOAST (`pg_total_relation_size`): what they
    /// take on the server. `free_pages` estimates the dead tuples (`pg_stat_user_tables`) a
    /// `VACUUM` makes reusable; `wal_bytes` is 0 (the server's WAL is not the saver's).
    fn file_stats(&self) -> Result<FileStats> {
        let rows = self.query(
            "SELECT COALESCE(sum(pg_total_relation_size(c.oid)), 0)::bigint, \
                    current_setting('block_size')::bigint, \
                    COALESCE(sum(CASE WHEN s.n_live_tup + s.n_dead_tup > 0 \
                        THEN pg_relation_size(c.oid) * s.n_dead_tup / (s.n_live_tup + s.n_dead_tup) END), 0)::bigint \
             FROM pg_class c LEFT JOIN pg_stat_all_tables s ON s.relid = c.oid \
             WHERE c.oid IN (to_regclass('checkpoints'), to_regclass('checkpoint_blobs'), \
                             to_regclass('checkpoint_writes'), to_regclass('checkpoint_migrations'))",
            &[],
        )?;
        let r = rows.first().ok_or_else(|| anyhow!("no table sizes"))?;
        let e = |e| self.err(e);
        let total = r.try_get::<_, i64>(0).map_err(e)?.max(0) as u64;
        let page = r.try_get::<_, i64>(1).map_err(e)?.max(1) as u64;
        let dead = r.try_get::<_, i64>(2).map_err(e)?.max(0) as u64;
        Ok(FileStats {
            file_bytes: total,
            wal_bytes: 0,
            page_size: page,
            page_count: total / page,
            free_pages: dead / page,
        })
    }

    fn write_bytes_by_channel(&self) -> Result<Vec<(String, u64, u64)>> {
        let e = |e| self.err(e);
        self.query(
            "SELECT channel, count(*), COALESCE(sum(octet_length(blob)), 0)::bigint FROM checkpoint_writes \
             GROUP BY channel ORDER BY 3 DESC, 1",
            &[],
        )?
        .iter()
        .map(|r| {
            Ok((
                r.try_get(0).map_err(e)?,
                r.try_get::<_, i64>(1).map_err(e)?.max(0) as u64,
                r.try_get::<_, i64>(2).map_err(e)?.max(0) as u64,
            ))
        })
        .collect()
    }

    /// What is stored, not what is read: blob rows are shared between checkpoints, so each
    /// blob row is given once, as a checkpoint holding that one channel, and each checkpoint
    /// row once with its inline values. Summed per channel, that is the space each channel
    /// takes. Streamed from the server.
    fn for_each_checkpoint_blob(&self, f: &mut dyn FnMut(&[u8]) -> Result<()>) -> Result<()> {
        let mut c = self.client();
        let params: [&(dyn ToSql + Sync); 0] = [];
        let mut it = c
            .query_raw(
                "SELECT channel, type, blob FROM checkpoint_blobs WHERE blob IS NOT NULL",
                params,
            )
            .map_err(|e| self.err(e))?;
        while let Some(r) = it.next().map_err(|e| self.err(e))? {
            let channel: String = r.try_get(0).map_err(|e| self.err(e))?;
            let type_name: String = r.try_get(1).map_err(|e| self.err(e))?;
            let blob: Vec<u8> = r.try_get(2).map_err(|e| self.err(e))?;
            if type_name == "msgpack" {
                f(&wrap_channel(&channel, &blob))?;
            }
        }
        drop(it);
        let mut it = c
            .query_raw("SELECT checkpoint::text FROM checkpoints", params)
            .map_err(|e| self.err(e))?;
        while let Some(r) = it.next().map_err(|e| self.err(e))? {
            let json: String = r.try_get(0).map_err(|e| self.err(e))?;
            let a = pgformat::assemble(&json, &[])?;
            f(&a.bytes)?;
        }
        Ok(())
    }

    fn orphans(&self) -> Result<Orphans> {
        let rows = self.query(
            "SELECT \
               (SELECT count(*) FROM checkpoint_writes w WHERE NOT EXISTS (SELECT 1 FROM checkpoints c \
                  WHERE c.thread_id = w.thread_id AND c.checkpoint_ns = w.checkpoint_ns AND c.checkpoint_id = w.checkpoint_id)), \
               (SELECT count(*) FROM checkpoints c WHERE c.parent_checkpoint_id IS NOT NULL AND NOT EXISTS ( \
                  SELECT 1 FROM checkpoints p WHERE p.thread_id = c.thread_id AND p.checkpoint_ns = c.checkpoint_ns \
                  AND p.checkpoint_id = c.parent_checkpoint_id)), \
               (SELECT count(*) FROM (SELECT thread_id FROM checkpoints GROUP BY thread_id \
                  HAVING count(*) FILTER (WHERE checkpoint_ns = '') = 0) t)",
            &[],
        )?;
        let r = rows.first().ok_or_else(|| anyhow!("no orphan counts"))?;
        let n = |i: usize| -> Result<u64> {
            Ok(r.try_get::<_, i64>(i).map_err(|e| self.err(e))?.max(0) as u64)
        };
        Ok(Orphans {
            writes_without_checkpoint: n(0)?,
            checkpoints_without_parent: n(1)?,
            namespaces_without_root: n(2)?,
        })
    }
}

impl ServerAccount for PostgresStore {
    /// Sizes and dead rows from the server's catalogs and statistics (the statistics are
    /// the server's estimates, updated as sessions end their transactions); blob bytes per
    /// channel and orphaned blobs from the rows.
    fn server_space(&self) -> Result<ServerSpace> {
        let e = |e| self.err(e);
        let n = |r: &postgres::Row, i: usize| -> Result<u64> {
            Ok(r.try_get::<_, Option<i64>>(i)
                .map_err(e)?
                .unwrap_or(0)
                .max(0) as u64)
        };
        let mut space = ServerSpace::default();
        for r in self.query(
            "SELECT t.name, pg_total_relation_size(c.oid), pg_indexes_size(c.oid), \
                    s.n_live_tup, s.n_dead_tup, \
                    (current_setting('autovacuum_vacuum_threshold')::float8 \
                     + current_setting('autovacuum_vacuum_scale_factor')::float8 * GREATEST(c.reltuples, 0))::bigint, \
                    GREATEST(s.last_vacuum, s.last_autovacuum)::text \
             FROM unnest(ARRAY['checkpoints', 'checkpoint_blobs', 'checkpoint_writes']) WITH ORDINALITY t(name, i) \
             JOIN pg_class c ON c.oid = to_regclass(t.name) \
             LEFT JOIN pg_stat_user_tables s ON s.relid = c.oid \
             ORDER BY t.i",
            &[],
        )? {
            space.tables.push(TableSpace {
                table: get_str(&r, 0)?,
                total_bytes: n(&r, 1)?,
                index_bytes: n(&r, 2)?,
                live_rows: n(&r, 3)?,
                dead_rows: n(&r, 4)?,
                autovacuum_at: n(&r, 5)?,
                last_vacuum: r.try_get(6).map_err(e)?,
            });
        }
        for r in self.query(
            "SELECT channel, count(*), sum(COALESCE(octet_length(blob), 0))::bigint \
             FROM checkpoint_blobs GROUP BY channel ORDER BY 3 DESC, 1",
            &[],
        )? {
            space
                .blob_bytes_by_channel
                .push((get_str(&r, 0)?, n(&r, 1)?, n(&r, 2)?));
        }
        // An anti-join against every (thread, ns, channel, version) some checkpoint names
        // (a hash join: one pass over each table).
        let rows = self.query(
            "WITH named AS (SELECT DISTINCT c.thread_id, c.checkpoint_ns, v.key AS channel, v.value AS version \
                            FROM checkpoints c \
                            CROSS JOIN LATERAL jsonb_each_text(c.checkpoint -> 'channel_versions') v) \
             SELECT count(*), sum(COALESCE(octet_length(b.blob), 0))::bigint FROM checkpoint_blobs b \
             WHERE NOT EXISTS (SELECT 1 FROM named n WHERE n.thread_id = b.thread_id \
                 AND n.checkpoint_ns = b.checkpoint_ns AND n.channel = b.channel AND n.version = b.version)",
            &[],
        )?;
        let r = rows
            .first()
            .ok_or_else(|| anyhow!("no orphan blob counts"))?;
        space.orphaned_blobs = n(r, 0)?;
        space.orphaned_blob_bytes = n(r, 1)?;
        space.index_advice = self.index_advice()?;
        space.thread_index_advice = self.thread_index_advice()?;
        Ok(space)
    }
}

impl Maintenance for PostgresStore {
    /// `VACUUM (ANALYZE)` on the saver's tables: dead rows become reusable space and the
    /// planner's statistics are fresh. It does not give the space back to the operating
    /// system (that takes `VACUUM FULL`, which locks the tables out for the app), and it does
    /// not overwrite freed bytes: deleted values can stay in free space of the table files,
    /// in the server's WAL and archives, and in backups until those are recycled; memctl
    /// cannot reach them.
    fn vacuum(&self) -> Result<()> {
        if self.access == Access::ReadOnly {
            bail!("vacuum needs a read-write connection");
        }
        self.client()
            .batch_execute("VACUUM (ANALYZE) checkpoints, checkpoint_blobs, checkpoint_writes")
            .map_err(|e| self.err(e))
    }
}

impl Forensics for PostgresStore {
    /// Rows only: every checkpoint JSONB and metadata, blob row and write row is searched on
    /// the server. The server's files (free space in the table files, WAL, backups) are out
    /// of memctl's reach, so `raw` stays empty.
    fn find_leftovers(&self, thread_id: &str, texts: &[String]) -> Result<Vec<Leftover>> {
        let mut out = Vec::new();
        let holding = self.rows_holding_all(texts)?;
        for (text, rows) in texts.iter().zip(holding) {
            let (here, elsewhere): (Vec<_>, Vec<_>) =
                rows.into_iter().partition(|(t, _)| t == thread_id);
            if here.is_empty() && elsewhere.is_empty() {
                continue;
            }
            out.push(Leftover {
                text: text.clone(),
                in_thread: here.into_iter().map(|(_, p)| p).collect(),
                other_threads: elsewhere.into_iter().map(|(_, p)| p).collect(),
                raw: vec![],
            });
        }
        Ok(out)
    }
}

impl Batches for PostgresStore {
    fn begin_batch(&self) -> Result<()> {
        let mut c = self.client();
        if self.before_write(&mut c)?.is_some() {
            bail!(
                "the saver's tables of '{}' are not made yet: a batch cannot make them",
                self.target.shown
            );
        }
        lock::begin_locked(&mut c, self.busy_timeout, None).map_err(|e| self.err(e))?;
        self.in_batch
            .store(true, std::sync::atomic::Ordering::SeqCst);
        Ok(())
    }

    fn commit_batch(&self) -> Result<()> {
        if !self
            .in_batch
            .swap(false, std::sync::atomic::Ordering::SeqCst)
        {
            return Ok(());
        }
        self.client()
            .batch_execute("COMMIT")
            .map_err(|e| self.err(e))
    }

    fn end_batches(&self) -> Result<()> {
        self.commit_batch()
    }
}

impl Gc for PostgresStore {
    fn apply_gc(
        &self,
        thread_id: &str,
        delete: &[(String, String)],
        orphaned: &[(String, String)],
        rewrites: &[CheckpointRewrite],
        expected_latest: &str,
    ) -> Result<Option<Deleted>> {
        self.write_tx(|c| {
            let e = |e| self.err(e);
            // One statement (one round trip) for the whole thread, run with the locks held:
            // the check that the thread has not moved (`unmoved`: its newest checkpoint is
            // still the expected one and no write names a newer one), and only if so the
            // deletions: the writes and checkpoints of `delete`, the parents of `orphaned`,
            // and the blob rows a deleted checkpoint named that no kept checkpoint of its
            // namespace names (what `PostgresSaver.prune` does). All parts read the snapshot
            // taken after the locks, so "kept" is every checkpoint of the namespace but the
            // deleted ones; nothing an app writes can come between (its `put` waits).
            let (nss, ids): (Vec<&str>, Vec<&str>) =
                delete.iter().map(|(n, i)| (n.as_str(), i.as_str())).unzip();
            let (onss, oids): (Vec<&str>, Vec<&str>) =
                orphaned.iter().map(|(n, i)| (n.as_str(), i.as_str())).unzip();
            // DeltaChannel snapshots written into kept checkpoints go first, after the same
            // check (the statement below checks again, under the same locks: it holds), so
            // that the statement's "kept" versions are the rewritten checkpoints' own.
            if !rewrites.is_empty() {
                if !Self::unmoved(c, thread_id, expected_latest).map_err(e)? {
                    return Ok(None);
                }
                for r in rewrites {
                    self.rewrite_in_place(c, thread_id, r)?;
                }
            }
            let stmt = self.prepared(
                c,
                "WITH ok AS ( \
                   SELECT COALESCE((SELECT max(checkpoint_id COLLATE \"C\") FROM checkpoints WHERE thread_id = $1) = $2 \
                     AND NOT EXISTS (SELECT 1 FROM checkpoint_writes WHERE thread_id = $1 AND checkpoint_id COLLATE \"C\" > $2), \
                     false) AS ok), \
                 del AS (SELECT k.ns, k.id FROM unnest($3::text[], $4::text[]) AS k(ns, id) WHERE (SELECT ok FROM ok)), \
                 dw AS (DELETE FROM checkpoint_writes w USING del \
                   WHERE w.thread_id = $1 AND w.checkpoint_ns = del.ns AND w.checkpoint_id = del.id \
                   RETURNING octet_length(w.blob) AS n), \
                 dc AS (DELETE FROM checkpoints c USING del \
                   WHERE c.thread_id = $1 AND c.checkpoint_ns = del.ns AND c.checkpoint_id = del.id \
                   RETURNING c.checkpoint_ns AS ns, (pg_column_size(c.checkpoint) + pg_column_size(c.metadata))::bigint AS n, \
                             c.checkpoint -> 'channel_versions' AS versions), \
                 up AS (UPDATE checkpoints c SET parent_checkpoint_id = NULL FROM unnest($5::text[], $6::text[]) AS k(ns, id) \
                   WHERE (SELECT ok FROM ok) AND c.thread_id = $1 AND c.checkpoint_ns = k.ns AND c.checkpoint_id = k.id \
                   RETURNING 1), \
                 freed AS (SELECT DISTINCT dc.ns, v.key AS channel, v.value AS version \
                   FROM dc CROSS JOIN LATERAL jsonb_each_text(dc.versions) v), \
                 kept AS (SELECT DISTINCT c.checkpoint_ns AS ns, v.key AS channel, v.value AS version \
                   FROM checkpoints c CROSS JOIN LATERAL jsonb_each_text(c.checkpoint -> 'channel_versions') v \
                   WHERE c.thread_id = $1 AND c.checkpoint_ns IN (SELECT ns FROM freed) \
                     AND NOT EXISTS (SELECT 1 FROM del WHERE del.ns = c.checkpoint_ns AND del.id = c.checkpoint_id)), \
                 garbage AS (SELECT ns, channel, version FROM freed EXCEPT SELECT ns, channel, version FROM kept), \
                 db AS (DELETE FROM checkpoint_blobs b USING garbage g \
                   WHERE b.thread_id = $1 AND b.checkpoint_ns = g.ns AND b.channel = g.channel AND b.version = g.version \
                   RETURNING COALESCE(octet_length(b.blob), 0) AS n) \
                 SELECT (SELECT ok FROM ok), \
                        (SELECT count(*) FROM dc), (SELECT COALESCE(sum(n), 0)::bigint FROM dc), \
                        (SELECT count(*) FROM dw), (SELECT COALESCE(sum(n), 0)::bigint FROM dw), \
                        (SELECT COALESCE(sum(n), 0)::bigint FROM db), (SELECT count(*) FROM up)",
            )?;
            let r = c
                .query_one(
                    &stmt,
                    &[&thread_id, &expected_latest, &nss, &ids, &onss, &oids],
                )
                .map_err(e)?;
            if !r.try_get::<_, bool>(0).map_err(e)? {
                return Ok(None);
            }
            let n = |i: usize| -> Result<u64> { Ok(r.try_get::<_, i64>(i).map_err(e)?.max(0) as u64) };
            Ok(Some(Deleted {
                threads: 0,
                checkpoints: n(1)?,
                bytes: n(2)? + n(4)? + n(5)?,
                writes: n(3)?,
            }))
        })
    }

    /// One transaction for all of them, each thread a savepoint (see
    /// [`Batches::begin_batch`]): the table locks are taken once. Taking them once per
    /// thread made gc wait a second (`deadlock_timeout`) each time autovacuum had started on
    /// one of the tables after gc's own deletions, until the server cancelled it.
    fn apply_gc_many(&self, items: &[crate::storage::GcItem<'_>]) -> Result<Vec<Option<Deleted>>> {
        if items.len() <= 1 {
            return items.iter().map(|i| i.apply_on(self)).collect();
        }
        self.begin_batch()?;
        let mut out = Vec::with_capacity(items.len());
        for i in items {
            match i.apply_on(self) {
                Ok(d) => out.push(d),
                Err(e) => {
                    // The threads before it are kept (their savepoints were released).
                    self.commit_batch()?;
                    return Err(crate::storage::GcStopped::after(out, e));
                }
            }
        }
        self.commit_batch()?;
        Ok(out)
    }
}

impl Sharing for PostgresStore {
    /// `max_parallel_workers_per_gather` + 1 (read with `missing_ok`: a server without the
    /// setting gives none, and this store's transaction stays usable).
    fn query_parallelism(&self) -> Result<Option<usize>> {
        let mut c = self.client();
        let e = |e| self.err(e);
        let shown: Option<String> = c
            .query_one(
                "SELECT current_setting('max_parallel_workers_per_gather', true)",
                &[],
            )
            .map_err(e)?
            .try_get(0)
            .map_err(e)?;
        Ok(shown
            .and_then(|s| s.trim().parse::<usize>().ok())
            .map(|n| n.saturating_add(1)))
    }

    /// Always true: a server is there to be shared.
    fn might_be_shared(&self) -> bool {
        true
    }

    /// True: the server queues lock requests; an app's `put` waiting on memctl's table locks
    /// goes first when memctl commits.
    fn queues_waiting_writers(&self) -> bool {
        true
    }

    /// False: a reader's snapshot (MVCC) blocks no writer.
    fn second_reader_stalls_writes(&self) -> bool {
        false
    }
}

impl RewriteValues for PostgresStore {
    /// A page of the pass over every stored value: the `checkpoint_blobs` rows (each one
    /// channel's value; `empty` rows hold none), then the `checkpoint_writes` rows, each in
    /// primary-key order from the key the last page ended on. Rows an app adds behind the
    /// cursor during the pass are not visited (the app writes them with its current key). A
    /// write page is one transaction holding the write locks, as every change memctl makes.
    fn rewrite_values(
        &self,
        from: ValueCursor,
        size: PageSize,
        write: bool,
        rewrite: ValueRewriter<'_>,
    ) -> Result<ValuePage> {
        if write && self.access == Access::ReadOnly {
            bail!("the database was opened read-only: cannot rewrite values");
        }
        let kind = from.kind.unwrap_or(BlobKind::Checkpoint);
        if write {
            self.write_tx(|c| self.value_page(c, kind, &from.key, size, true, rewrite))
        } else {
            let mut c = self.client();
            self.value_page(&mut c, kind, &from.key, size, false, rewrite)
        }
    }
}

impl PostgresStore {
    /// [`RewriteValues::rewrite_values`] on the connection `c`: the rows of `kind` after
    /// the primary key `after` (all of them when empty).
    fn value_page(
        &self,
        c: &mut Client,
        kind: BlobKind,
        after: &[String],
        size: PageSize,
        write: bool,
        rewrite: ValueRewriter<'_>,
    ) -> Result<ValuePage> {
        let e = |e| self.err(e);
        let limit = i64::try_from(size.rows.max(1)).unwrap_or(i64::MAX);
        const BLOBS: &str =
            "SELECT thread_id, checkpoint_ns, version, channel, type, blob FROM checkpoint_blobs \
             WHERE blob IS NOT NULL AND type <> 'empty'";
        const BLOB_ORDER: &str = " ORDER BY thread_id, checkpoint_ns, channel, version LIMIT $1";
        const WRITES: &str =
            "SELECT thread_id, checkpoint_ns, checkpoint_id, channel, type, blob, task_id, idx \
             FROM checkpoint_writes";
        const WRITE_ORDER: &str =
            " ORDER BY thread_id, checkpoint_ns, checkpoint_id, task_id, idx LIMIT $1";
        let rows = match (kind, after) {
            (BlobKind::Checkpoint, []) => c.query(&format!("{BLOBS}{BLOB_ORDER}"), &[&limit]),
            (BlobKind::Checkpoint, [t, ns, ch, v]) => c.query(
                &format!(
                    "{BLOBS} AND (thread_id, checkpoint_ns, channel, version) > ($2, $3, $4, $5){BLOB_ORDER}"
                ),
                &[&limit, t, ns, ch, v],
            ),
            (BlobKind::Write, []) => c.query(&format!("{WRITES}{WRITE_ORDER}"), &[&limit]),
            (BlobKind::Write, [t, ns, id, task, idx]) => {
                let idx: i32 = idx.parse().context("a bad position in the pass")?;
                c.query(
                    &format!(
                        "{WRITES} WHERE (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) > ($2, $3, $4, $5, $6){WRITE_ORDER}"
                    ),
                    &[&limit, t, ns, id, task, &idx],
                )
            }
            _ => bail!("a bad position in the pass over the values"),
        }
        .map_err(e)?;
        let mut page = ValuePage::default();
        let mut last = Vec::new();
        for r in &rows {
            let (thread, ns, id, channel) = (
                get_str(r, 0)?,
                get_str(r, 1)?,
                get_str(r, 2)?,
                get_str(r, 3)?,
            );
            let type_name = get_str(r, 4)?;
            let bytes: Vec<u8> = r
                .try_get::<_, Option<Vec<u8>>>(5)
                .map_err(e)?
                .unwrap_or_default();
            let (task, idx) = match kind {
                BlobKind::Write => (get_str(r, 6)?, r.try_get::<_, i32>(7).map_err(e)?),
                BlobKind::Checkpoint => (String::new(), 0),
            };
            page.values += 1;
            page.bytes += bytes.len() as u64;
            let value = StoredValue {
                kind,
                thread_id: &thread,
                checkpoint_ns: &ns,
                checkpoint_id: &id,
                channel: Some(&channel),
                type_name: &type_name,
                bytes: &bytes,
            };
            if let Some((new_type, new_bytes)) = rewrite(&value)? {
                if !write {
                    bail!("a read pass over the values cannot change them");
                }
                match kind {
                    BlobKind::Checkpoint => c.execute(
                        "UPDATE checkpoint_blobs SET type = $1, blob = $2 \
                         WHERE thread_id = $3 AND checkpoint_ns = $4 AND channel = $5 AND version = $6",
                        &[&new_type, &new_bytes, &thread, &ns, &channel, &id],
                    ),
                    BlobKind::Write => c.execute(
                        "UPDATE checkpoint_writes SET type = $1, blob = $2 \
                         WHERE thread_id = $3 AND checkpoint_ns = $4 AND checkpoint_id = $5 AND task_id = $6 AND idx = $7",
                        &[&new_type, &new_bytes, &thread, &ns, &id, &task, &idx],
                    ),
                }
                .map_err(e)?;
                page.changed += 1;
            }
            last = match kind {
                BlobKind::Checkpoint => vec![thread, ns, channel, id],
                BlobKind::Write => vec![thread, ns, id, task, idx.to_string()],
            };
            if page.bytes >= size.bytes {
                break;
            }
        }
        // A short page (fewer rows than asked for, not cut by the byte budget) ends its table.
        let cut = page.values as usize >= size.rows.max(1) || page.bytes >= size.bytes;
        page.next = match (last.is_empty(), cut, kind) {
            (false, true, _) => Some(ValueCursor {
                kind: Some(kind),
                after: 0,
                key: last,
            }),
            (_, _, BlobKind::Checkpoint) => Some(ValueCursor {
                kind: Some(BlobKind::Write),
                after: 0,
                key: vec![],
            }),
            (_, _, BlobKind::Write) => None,
        };
        Ok(page)
    }
}

/// [`detect_schema`], its errors as they are shown (password scrubbed).
fn checked_schema(c: &mut Client, target: &Target) -> Result<SchemaGeneration> {
    detect_schema(c, target).map_err(|e| match e.downcast::<NoSaverTable>() {
        Ok(missing) => missing.into(),
        Err(e) => anyhow!("{}", target.scrub(&format!("{e:#}"))),
    })
}

/// The set-up of a target's saver tables ([`PostgresStore::open_target`]): what it needs, and
/// whether memctl has done it.
#[derive(Debug)]
pub struct Setup {
    /// What the tables need, and where.
    pub plan: setup::Plan,
    done: std::sync::atomic::AtomicBool,
}

impl Setup {
    /// True once the set-up is committed (the tables made with the first thread written, or
    /// the missing migrations run).
    pub fn done(&self) -> bool {
        self.done.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// True when the tables need something (done or not).
    pub fn needed(&self) -> bool {
        self.plan.needed != setup::Needed::Nothing
    }
}

/// A database without one of `PostgresSaver`'s tables (the first missing one named): not a
/// saver's database (a caller may find a LangGraph store alone there, see
/// [`StoreOnly::find`]).
#[derive(Debug, thiserror::Error)]
#[error("'{shown}' has no '{table}' table in {where_}: not a PostgresSaver database (name the saver's schema with --schema NAME or ?schema=NAME in the URL if it uses another one)")]
pub struct NoSaverTable {
    /// The database as messages show it (password masked).
    shown: String,
    /// The first table missing.
    table: &'static str,
    /// Where it was looked for.
    where_: String,
}

/// `PostgresSaver.setup()`'s tables, in the order its error names the first one missing.
pub(crate) const SAVER_TABLES: [&str; 4] = [
    "checkpoints",
    "checkpoint_blobs",
    "checkpoint_writes",
    "checkpoint_migrations",
];

/// Whether each of `tables` is found where the session looks (the schema on the
/// `search_path`, see [`Target::connect_session`]), in the order given.
pub(crate) fn tables_found(c: &mut Client, tables: &[&str]) -> Result<Vec<bool>, postgres::Error> {
    let names: Vec<&str> = tables.to_vec();
    c.query(
        "SELECT to_regclass(t.name) IS NOT NULL FROM unnest($1::text[]) WITH ORDINALITY t(name, i) \
         ORDER BY t.i",
        &[&names],
    )?
    .iter()
    .map(|r| r.try_get(0))
    .collect()
}

/// A Postgres database that holds `PostgresStore`'s `store` table and none of
/// `PostgresSaver`'s tables (an app using the store alone): the Postgres backend knowing it
/// has no checkpoint tables. It answers the core queries as a saver with no thread does
/// (no thread, no namespace, no row; nothing searched) and refuses every write of checkpoint
/// rows with one line, so no checkpoint table is ever made in it as a side effect; of the
/// capabilities it has only [`ServerAccount`] (the server accounts nothing to a saver there).
/// `forget`, `stats`, `find` and `migrate` thus cover its store alone (read and changed
/// through [`store::PgItemStore`]). Nothing here touches the database after the catalog look
/// of [`StoreOnly::find`]. (A SQLite file in the same case is read through a `SqliteStore`
/// of its own, see [`crate::storage::sqlite::store::saver_of_store_only`]: its file-level work,
/// free pages zeroed and every byte searched after a `forget`, needs the file's connection.)
#[derive(Debug, Clone)]
pub struct StoreOnly {
    /// The database as messages show it (password masked).
    shown: String,
}

impl StoreOnly {
    /// When the database `url` names (its tables looked up in `schema`, else the URL's
    /// `schema=`, else the `search_path`, as [`PostgresStore::open`] looks them up) holds
    /// `PostgresStore`'s `store` table and none of `PostgresSaver`'s tables: that database.
    /// `None` otherwise (no store, or some of the saver's tables: the caller's first error
    /// stands). Reads the catalog only.
    pub fn find(url: &str, schema: Option<&str>, busy_timeout: Duration) -> Result<Option<Self>> {
        let mut target = Target::parse(url, Duration::from_secs(10).max(busy_timeout))?;
        if let Some(s) = schema {
            target.use_schema(s)?;
        }
        let mut client = target.connect_session(busy_timeout)?;
        let mut tables = vec!["store"];
        tables.extend(SAVER_TABLES);
        let found = tables_found(&mut client, &tables).map_err(|e| target.error(&e))?;
        let store_only = found.first() == Some(&true) && !found[1..].contains(&true);
        Ok(store_only.then(|| StoreOnly {
            shown: target.shown.clone(),
        }))
    }

    /// The one line a write of checkpoint rows gets.
    fn refuse<T>(&self) -> Result<T> {
        bail!(
            "'{}' has no checkpoint tables (a LangGraph store only): memctl writes no checkpoint there and does not create the saver's tables",
            self.shown
        )
    }
}

impl CheckpointStore for StoreOnly {
    /// The current layout's (no table says otherwise).
    fn generation(&self) -> SchemaGeneration {
        SchemaGeneration::V3
    }

    fn backend(&self) -> &'static str {
        "postgres"
    }

    fn reopen_read_only(&self) -> Result<Box<dyn CheckpointStore>> {
        Ok(Box::new(self.clone()))
    }

    fn server_account(&self) -> Option<&dyn ServerAccount> {
        Some(self)
    }

    /// No thread: there is no checkpoint table.
    fn for_each_thread(&self, _: &mut dyn FnMut(ThreadSummary) -> Result<()>) -> Result<()> {
        Ok(())
    }

    fn summaries_of(&self, _: &[String]) -> Result<Vec<ThreadSummary>> {
        Ok(vec![])
    }

    fn namespaces(&self, _: &str) -> Result<Vec<String>> {
        Ok(vec![])
    }

    fn checkpoints(&self, _: &str, _: &str) -> Result<Vec<CheckpointRow>> {
        Ok(vec![])
    }

    fn checkpoint(&self, _: &str, _: &str, _: Option<&str>) -> Result<Option<CheckpointRow>> {
        Ok(None)
    }

    fn write_counts(&self, _: &str, _: &str) -> Result<HashMap<String, usize>> {
        Ok(HashMap::new())
    }

    fn metadata(&self, _: &str, _: &str) -> Result<Vec<(String, Option<Vec<u8>>)>> {
        Ok(vec![])
    }

    fn writes(&self, _: &str, _: &str, _: &str) -> Result<Vec<WriteRow>> {
        Ok(vec![])
    }

    fn checkpoint_infos(&self, _: &str) -> Result<Vec<CheckpointInfo>> {
        Ok(vec![])
    }

    fn row_counts(&self) -> Result<(u64, u64)> {
        Ok((0, 0))
    }

    fn an_encrypted_value(&self) -> Result<Option<(String, Vec<u8>)>> {
        Ok(None)
    }

    /// No checkpoint row to search (the store's rows are searched by the caller).
    fn searched(&self) -> Vec<String> {
        vec![]
    }

    fn out_of_reach(&self) -> Vec<String> {
        vec![OUT_OF_REACH.into()]
    }

    fn append_update(
        &self,
        _: &str,
        _: &str,
        _: &NewRows<'_>,
        _: usize,
        _: Option<BlobRewriter<'_>>,
    ) -> Result<usize> {
        self.refuse()
    }

    fn rewrite_thread(&self, _: &str, _: &str, _: usize, _: BlobRewriter<'_>) -> Result<usize> {
        self.refuse()
    }

    /// Nothing to delete: no thread is here (any thread named is refused).
    fn delete_threads(&self, threads: &[(String, String)]) -> Result<(Deleted, Vec<String>)> {
        match threads.is_empty() {
            true => Ok((Deleted::default(), vec![])),
            false => self.refuse(),
        }
    }

    fn visit_thread(
        &self,
        _: &str,
        _: &mut dyn FnMut(crate::storage::ThreadRow) -> Result<()>,
    ) -> Result<()> {
        Ok(())
    }

    fn write_thread_from(
        &self,
        _: &str,
        _: bool,
        _: crate::storage::RowFeed<'_>,
    ) -> Result<crate::storage::WrittenThread> {
        self.refuse()
    }
}

impl ServerAccount for StoreOnly {
    /// None of the saver's tables is there: the server accounts nothing to it (an empty
    /// account, which `stats` shows as a server's, not a file's).
    fn server_space(&self) -> Result<ServerSpace> {
        Ok(ServerSpace::default())
    }
}

/// What keeps a Postgres database's deleted bytes beyond memctl's reach (forget's receipt).
pub(crate) const OUT_OF_REACH: &str = "PostgreSQL: VACUUM makes deleted rows' space reusable but does not overwrite it; old row versions stay in the table files until reused, in the server's WAL segments and WAL archive until recycled, on replicas, and in backups and snapshots";

/// Checks the saver's tables and migration level; returns the generation (`task_path` at 9).
fn detect_schema(c: &mut Client, target: &Target) -> Result<SchemaGeneration> {
    let shown = &target.shown;
    let where_ = match &target.schema {
        Some(s) => format!("schema '{s}'"),
        None => "the search_path (normally schema 'public')".to_owned(),
    };
    let err =
        |e: postgres::Error| anyhow!("PostgreSQL error on '{shown}': {}", conn::error_text(&e));
    let found = tables_found(c, &SAVER_TABLES).map_err(err)?;
    if let Some((table, _)) = SAVER_TABLES.iter().zip(found).find(|(_, found)| !found) {
        return Err(NoSaverTable {
            shown: target.scrub(shown),
            table,
            where_,
        }
        .into());
    }
    // Privileges first: information_schema hides the columns of a table the role may not
    // read, which looked like ShallowPostgresSaver's tables (no checkpoint_id) before.
    let denied: Vec<String> = c
        .query(
            "SELECT t.name FROM unnest($1::text[]) WITH ORDINALITY t(name, i) \
             WHERE NOT has_table_privilege(to_regclass(t.name), 'SELECT') ORDER BY t.i",
            &[&SAVER_TABLES.to_vec()],
        )
        .map_err(err)?
        .iter()
        .map(|r| r.try_get(0))
        .collect::<Result<_, postgres::Error>>()
        .map_err(err)?;
    if !denied.is_empty() {
        let role: String = c
            .query_one("SELECT current_user::text", &[])
            .and_then(|r| r.try_get(0))
            .map_err(err)?;
        return Err(anyhow!(
            "'{shown}': permission denied for table {} (role '{role}' has no SELECT on {}); memctl needs SELECT on {} to read, and INSERT, UPDATE and DELETE on checkpoints, checkpoint_blobs and checkpoint_writes for rewrites (as the tables' owner: GRANT SELECT ON {} TO \"{role}\")",
            denied.join(", "),
            if denied.len() == 1 { "it" } else { "them" },
            SAVER_TABLES.join(", "),
            denied.join(", "),
        ));
    }
    // From the catalog, which every role may read: the columns of the tables found above.
    let columns: Vec<(String, String)> = c
        .query(
            "SELECT c.relname::text, a.attname::text FROM pg_attribute a \
             JOIN pg_class c ON c.oid = a.attrelid \
             WHERE a.attrelid = ANY(ARRAY[to_regclass('checkpoints'), \
                   to_regclass('checkpoint_writes')]::oid[]) \
               AND a.attnum > 0 AND NOT a.attisdropped",
            &[],
        )
        .map_err(err)?
        .iter()
        .map(|r| Ok((r.try_get(0)?, r.try_get(1)?)))
        .collect::<Result<_, postgres::Error>>()
        .map_err(err)?;
    let has = |t: &str, col: &str| columns.iter().any(|(a, b)| a == t && b == col);
    if !has("checkpoints", "checkpoint_id") {
        bail!(
            "'{shown}' has the tables of ShallowPostgresSaver (no checkpoint_id column), which keeps one checkpoint per thread; memctl reads PostgresSaver's tables only"
        );
    }
    let level: Option<i32> = c
        .query_one("SELECT max(v) FROM checkpoint_migrations", &[])
        .and_then(|r| r.try_get(0))
        .map_err(err)?;
    match level {
        None => bail!(
            "'{shown}' has empty checkpoint_migrations: PostgresSaver.setup() has not run there"
        ),
        Some(v) if v > KNOWN_MIGRATION => bail!(
            "'{shown}' is at PostgresSaver migration level {v}; memctl knows levels up to {KNOWN_MIGRATION} (langgraph-checkpoint-postgres 3.2.0): upgrade memctl before touching it"
        ),
        Some(v) if v < 3 => bail!(
            "'{shown}' is at PostgresSaver migration level {v}: its tables are incomplete (run PostgresSaver.setup())"
        ),
        Some(_) => {}
    }
    Ok(if has("checkpoint_writes", "task_path") {
        SchemaGeneration::V3
    } else {
        SchemaGeneration::V2
    })
}

/// `bytes` (msgpack) sealed with `key` as EncryptedSerializer stores a value, or as they are.
fn seal_as(key: Option<&AesKey>, bytes: Vec<u8>) -> Vec<u8> {
    match key {
        Some(key) => aes::seal(key, "msgpack", &bytes).1,
        None => bytes,
    }
}

/// `(thread, ns, id)` keys as three text arrays (query parameters).
fn unzip3<'a>(keys: &[(&'a str, &'a str, &'a str)]) -> (Vec<&'a str>, Vec<&'a str>, Vec<&'a str>) {
    let mut out = (
        Vec::with_capacity(keys.len()),
        Vec::with_capacity(keys.len()),
        Vec::with_capacity(keys.len()),
    );
    for (t, n, i) in keys {
        out.0.push(*t);
        out.1.push(*n);
        out.2.push(*i);
    }
    out
}

/// A double-quoted SQL identifier.
fn quote_ident(s: &str) -> String {
    format!("\"{}\"", s.replace('"', "\"\""))
}

fn get_str(r: &postgres::Row, i: usize) -> Result<String> {
    r.try_get::<_, Option<String>>(i)
        .map(Option::unwrap_or_default)
        .map_err(|e| anyhow!("unexpected column type: {e}"))
}

fn blob_row(r: &postgres::Row) -> Result<BlobRow> {
    Ok(BlobRow {
        channel: get_str(r, 0)?,
        version: get_str(r, 1)?,
        type_name: get_str(r, 2)?,
        blob: r
            .try_get(3)
            .map_err(|e| anyhow!("unexpected column type: {e}"))?,
    })
}

/// A version as the text `jsonb_each_text` gives (versions are strings; old ones numbers).
fn version_text(v: &Json) -> String {
    match v {
        Json::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The blob rows a checkpoint's `channel_versions` name.
fn named_blobs<'a>(json: &str, blobs: &'a HashMap<(String, String), BlobRow>) -> Vec<&'a BlobRow> {
    named_versions(json)
        .iter()
        .filter_map(|k| blobs.get(k))
        .collect()
}

/// The `(channel, version)` keys of the blob rows a checkpoint's `channel_versions` name, in
/// their order there (a checkpoint JSONB that does not parse names none).
fn named_versions(json: &str) -> Vec<(String, String)> {
    let Ok(Json::Object(root)) = serde_json::from_str::<Json>(json) else {
        return vec![];
    };
    let Some(Json::Object(versions)) = root.get("channel_versions") else {
        return vec![];
    };
    versions
        .iter()
        .map(|(k, v)| (k.clone(), version_text(v)))
        .collect()
}

/// What [`PostgresStore::check_parent`] read of a thread (its latest checkpoint in the
/// namespace, the parent's pending writes and its `channel_versions` text), checked: a
/// [`ThreadMoved`] error when the thread moved, else the parent's `channel_versions` (null
/// when it has none).
fn checked_parent(
    thread_id: &str,
    rows: &NewRows<'_>,
    expected_writes: usize,
    latest: Option<String>,
    writes: i64,
    parent_versions: Option<String>,
) -> Result<Json> {
    ThreadMoved::check(thread_id, latest, rows.parent_id, writes, expected_writes)?;
    Ok(match parent_versions {
        Some(t) => serde_json::from_str(&t).context("the parent's channel_versions")?,
        None => Json::Null,
    })
}

/// A msgpack checkpoint `{"channel_values": {channel: <blob>}}` around one stored value.
/// The blob rows `put` stores for a new checkpoint, as columns (one array parameter each):
/// only the channels whose version changed from the parent's, sealed with `key` when the
/// checkpoint was encrypted.
struct BlobColumns {
    channels: Vec<String>,
    versions: Vec<String>,
    types: Vec<String>,
    blobs: Vec<Vec<u8>>,
}

impl BlobColumns {
    fn new(split: &pgformat::Split, parent_versions: &Json, key: Option<&AesKey>) -> Result<Self> {
        let versions = split.checkpoint.get("channel_versions");
        let mut out = BlobColumns {
            channels: Vec::new(),
            versions: Vec::new(),
            types: Vec::new(),
            blobs: Vec::new(),
        };
        for (channel, type_name, blob) in &split.blobs {
            let version = versions
                .and_then(|v| v.get(channel))
                .map(version_text)
                .ok_or_else(|| anyhow!("channel '{channel}' has a value but no version"))?;
            let before = parent_versions.get(channel).map(version_text);
            if before.as_deref() == Some(version.as_str()) {
                PostgresStore::check_snapshot_has_new_version(split, channel)?;
                continue;
            }
            let (type_name, blob) = match key {
                Some(key) => aes::seal(key, type_name, blob),
                None => ((*type_name).to_owned(), blob.clone()),
            };
            out.channels.push(channel.clone());
            out.versions.push(version);
            out.types.push(type_name);
            out.blobs.push(blob);
        }
        Ok(out)
    }
}

/// The write rows of an update, as columns (one array parameter each).
struct WriteColumns<'a> {
    tasks: Vec<&'a str>,
    paths: Vec<&'a str>,
    idx: Vec<i32>,
    channels: Vec<&'a str>,
    types: Vec<&'a str>,
    values: Vec<Vec<u8>>,
}

impl<'a> WriteColumns<'a> {
    fn new(writes: &'a [crate::storage::NewWrite]) -> Result<Self> {
        let mut out = WriteColumns {
            tasks: Vec::new(),
            paths: Vec::new(),
            idx: Vec::new(),
            channels: Vec::new(),
            types: Vec::new(),
            values: Vec::new(),
        };
        for w in writes {
            out.tasks.push(w.task_id.as_str());
            out.paths.push(w.task_path.as_str());
            out.idx.push(
                i32::try_from(w.idx).map_err(|_| anyhow!("write index {} out of range", w.idx))?,
            );
            out.channels.push(w.channel.as_str());
            out.types.push(w.type_name.as_str());
            out.values.push(w.value.to_vec());
        }
        Ok(out)
    }
}

/// The one statement that appends an update: its blob rows, its write rows (with
/// `task_path` on the 3.x schema) and the checkpoint.
fn append_sql(generation: SchemaGeneration) -> &'static str {
    match generation {
        SchemaGeneration::V3 => {
            "WITH b AS (INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob) \
               SELECT $1, $2, k.channel, k.version, k.type, k.blob \
               FROM unnest($6::text[], $7::text[], $8::text[], $9::bytea[]) AS k(channel, version, type, blob) \
               ON CONFLICT (thread_id, checkpoint_ns, channel, version) DO NOTHING), \
             w AS (INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob) \
               SELECT $1, $2, $4, k.task_id, k.task_path, k.idx, k.channel, k.type, k.blob \
               FROM unnest($10::text[], $11::text[], $12::int4[], $13::text[], $14::text[], $15::bytea[]) \
                 AS k(task_id, task_path, idx, channel, type, blob) \
               ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) DO NOTHING) \
             INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata) \
             VALUES ($1, $2, $3, $4, $5, $16)"
        }
        SchemaGeneration::V2 => {
            "WITH b AS (INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob) \
               SELECT $1, $2, k.channel, k.version, k.type, k.blob \
               FROM unnest($6::text[], $7::text[], $8::text[], $9::bytea[]) AS k(channel, version, type, blob) \
               ON CONFLICT (thread_id, checkpoint_ns, channel, version) DO NOTHING), \
             w AS (INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob) \
               SELECT $1, $2, $4, k.task_id, k.idx, k.channel, k.type, k.blob \
               FROM unnest($10::text[], $11::text[], $12::int4[], $13::text[], $14::text[], $15::bytea[]) \
                 AS k(task_id, task_path, idx, channel, type, blob) \
               ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) DO NOTHING) \
             INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata) \
             VALUES ($1, $2, $3, $4, $5, $16)"
        }
    }
}

/// Hands one channel's value (msgpack) to `rewrite` as a checkpoint holding that channel
/// alone, the scrub of a whole `SqliteSaver` checkpoint; the channel's rewritten value when
/// `rewrite` changed it.
fn rewrite_channel(
    rewrite: BlobRewriter<'_>,
    channel: &str,
    packed: &[u8],
) -> Result<Option<crate::codec::msgpack::Value>> {
    let Some(new) = rewrite(
        BlobKind::Checkpoint,
        "msgpack",
        &wrap_channel(channel, packed),
    )?
    else {
        return Ok(None);
    };
    let root = crate::codec::msgpack::decode(&new)?;
    let value = root
        .get("channel_values")
        .and_then(|v| v.get(channel))
        .ok_or_else(|| anyhow!("the rewritten channel '{channel}' has no value"))?;
    Ok(Some(value.clone()))
}

fn wrap_channel(channel: &str, blob: &[u8]) -> Vec<u8> {
    use crate::codec::msgpack::{encode_into, Value};
    let mut out = vec![0x81];
    encode_into(&mut out, &Value::str("channel_values"));
    out.push(0x81);
    encode_into(&mut out, &Value::str(channel));
    out.extend_from_slice(blob);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::msgpack::{self, Value};

    /// A Postgres database without the saver's tables answers the core with no thread,
    /// refuses writes with one line, and has the server's (empty) account and no other
    /// capability: a caller needing one is told it is not there.
    #[test]
    fn a_store_only_database_has_no_thread_and_no_saver_capability() {
        let db = StoreOnly {
            shown: "postgresql://app@db/app".into(),
        };
        assert!(db.latest_root_ids().expect("reads").is_empty());
        assert!(!db.thread_exists("t-1").expect("reads"));
        assert_eq!(db.count_threads_after("").expect("reads"), 0);
        assert!(db.metadata_of(&["t-1"]).expect("reads").concat().is_empty());
        let refused = db
            .delete_threads(&[("t-1".into(), "1".into())])
            .expect_err("an error");
        assert!(
            refused.to_string().contains("has no checkpoint tables"),
            "{refused}"
        );
        assert!(db.maintenance().is_none() && db.space().is_none() && db.gc().is_none());
        assert!(db.batches().is_none() && db.forensics().is_none() && db.raw_bytes().is_none());
        assert!(db.sharing().is_none() && db.rewriter().is_none());
        let account = db.server_account().expect("a server's account");
        assert!(account.server_space().expect("reads").tables.is_empty());
        let e = db
            .maintenance()
            .map(|_| ())
            .ok_or_else(|| db.lacks("vacuum"));
        assert_eq!(
            e.expect_err("an error").to_string(),
            "`vacuum` is not a postgres operation"
        );
    }

    fn split_of(messages: Value) -> pgformat::Split {
        let cp = Value::map(vec![
            (Value::str("v"), Value::int(4)),
            (
                Value::str("channel_values"),
                Value::map(vec![(Value::str("messages"), messages)]),
            ),
            (
                Value::str("channel_versions"),
                Value::map(vec![(Value::str("messages"), Value::str("1"))]),
            ),
        ]);
        pgformat::split(&msgpack::encode(&cp)).expect("splits")
    }

    #[test]
    fn a_snapshot_under_an_unchanged_version_is_never_stored() {
        let snapshot = split_of(Value::ext(
            crate::codec::ext::DELTA_SNAPSHOT,
            Value::array(vec![]),
        ));
        let e = PostgresStore::check_snapshot_has_new_version(&snapshot, "messages")
            .expect_err("refused");
        assert!(e.to_string().contains("nothing written"), "{e}");
        let plain = split_of(Value::array(vec![]));
        assert!(PostgresStore::check_snapshot_has_new_version(&plain, "messages").is_ok());
    }
}
