//! Appending updates (`trim`, `rm`, `summarize`): one thread's rows made ready for
//! `PostgresSaver`'s layout, and the updates of a whole batch of threads checked and written
//! in a few statements ([`CheckpointStore::append_updates`]) instead of four round trips per
//! thread (a savepoint, the check, the insert, the release).
//!
//! The batch runs in the batch's transaction, with the table locks held: one statement reads
//! every thread's latest checkpoint, its parent's pending writes and `channel_versions` (what
//! each thread's own check reads), each thread is checked and made ready on its own (a thread
//! that moved or cannot be written gets its own error, as alone), and one statement inserts
//! the rows of all the others. All of it inside a savepoint: a statement that fails (which no
//! single thread can be blamed for) is rolled back and every thread is written on its own
//! instead, so the outcome is the one-thread-at-a-time outcome in every case.

use std::collections::HashSet;

use anyhow::{anyhow, bail, Context, Result};
use postgres::Client;
use serde_json::Value as Json;

use super::{checked_parent, format as pgformat, BlobColumns, PostgresStore, WriteColumns};
use crate::storage::{CheckpointStore, NewRows, SchemaGeneration, UpdateItem};

/// One update's rows as `put` and `put_writes` store them.
pub(super) struct Prepared<'r> {
    /// The checkpoint's JSONB document (its channel values out in blob rows).
    pub(super) checkpoint: Json,
    /// The blob rows of the channels whose version moved.
    pub(super) blobs: BlobColumns,
    /// The write rows on the parent.
    pub(super) writes: WriteColumns<'r>,
    /// The metadata.
    pub(super) metadata: Json,
}

/// Stored bytes of updates written by one statement, at most (one update alone may be more).
const STATEMENT_BYTES: usize = 32 << 20;

impl PostgresStore {
    /// `rows` made ready to insert, given the parent's `channel_versions` (the blob rows are
    /// those of the channels whose version moved). Postgres takes each value whole (a bytea
    /// parameter): the pieces are joined here. An encrypted checkpoint (sealed whole, as a
    /// SqliteSaver row) is opened, split, and each blob value sealed on its own with the same
    /// key, as EncryptedSerializer stores them; the write rows come sealed already.
    pub(super) fn prepare_append<'r>(
        &self,
        thread_id: &str,
        rows: &NewRows<'r>,
        parent_versions: &Json,
    ) -> Result<Prepared<'r>> {
        let joined = rows.checkpoint.to_vec();
        let what = format!("the new checkpoint of thread '{thread_id}'");
        let opened = self.keys.open(rows.checkpoint_type, &joined, &what)?;
        if opened.type_name != "msgpack" {
            bail!(
                "memctl writes msgpack checkpoints only, not '{}'",
                opened.type_name
            );
        }
        let key = match opened.sealed {
            true => Some(self.keys.key(&what)?.clone()),
            false => None,
        };
        let split = pgformat::split(&opened.bytes)?;
        let blobs = BlobColumns::new(&split, parent_versions, key.as_deref())?;
        let writes = WriteColumns::new(rows.writes)?;
        let metadata: Json =
            serde_json::from_slice(rows.metadata).context("the new metadata is not JSON")?;
        Ok(Prepared {
            checkpoint: split.checkpoint,
            blobs,
            writes,
            metadata,
        })
    }

    /// [`CheckpointStore::append_updates`]: inside a batch, a few statements for all of
    /// `items`; outside one (or for one thread, or a thread named twice) each on its own.
    pub(super) fn append_many(&self, items: &[UpdateItem<'_>]) -> Vec<Result<usize>> {
        let in_batch = self.in_batch.load(std::sync::atomic::Ordering::SeqCst);
        let mut seen = HashSet::new();
        let distinct = items.iter().all(|i| seen.insert((i.thread_id, i.ns)));
        if in_batch && items.len() > 1 && distinct {
            if let Ok(out) = self.append_together(items) {
                return out;
            }
            // Rolled back to before the batch: each thread on its own, as alone.
        }
        items
            .iter()
            .map(|i| self.append_update(i.thread_id, i.ns, &i.rows, i.expected_writes, None))
            .collect()
    }

    /// The batch in a savepoint: each thread's outcome, or the error of a statement (then
    /// nothing of it was written).
    fn append_together(&self, items: &[UpdateItem<'_>]) -> Result<Vec<Result<usize>>> {
        let mut c = self.client();
        c.batch_execute("SAVEPOINT memctl_updates")
            .map_err(|e| self.err(e))?;
        match self.check_and_insert(&mut c, items) {
            Ok(out) => {
                c.batch_execute("RELEASE memctl_updates")
                    .map_err(|e| self.err(e))?;
                Ok(out)
            }
            Err(e) => {
                c.batch_execute("ROLLBACK TO memctl_updates; RELEASE memctl_updates")
                    .map_err(|e| self.err(e))?;
                Err(e)
            }
        }
    }

    /// Checks every thread (one statement), makes the unmoved ones ready, and inserts them
    /// (one statement per [`STATEMENT_BYTES`]).
    fn check_and_insert(
        &self,
        c: &mut Client,
        items: &[UpdateItem<'_>],
    ) -> Result<Vec<Result<usize>>> {
        let read = self.read_parents(c, items)?;
        let mut out: Vec<Result<usize>> = Vec::with_capacity(items.len());
        let mut ready: Vec<(&UpdateItem<'_>, Prepared<'_>)> = Vec::new();
        for (i, (latest, writes, versions)) in items.iter().zip(read) {
            let prepared = checked_parent(
                i.thread_id,
                &i.rows,
                i.expected_writes,
                latest,
                writes,
                versions,
            )
            .and_then(|parent| self.prepare_append(i.thread_id, &i.rows, &parent));
            match prepared {
                Ok(p) => {
                    ready.push((i, p));
                    out.push(Ok(0));
                }
                Err(e) => out.push(Err(e)),
            }
        }
        let sizes: Vec<usize> = ready.iter().map(|(_, p)| size_of(p)).collect();
        let mut start = 0;
        while start < ready.len() {
            let mut end = start + 1;
            let mut bytes = sizes[start];
            while end < ready.len() && bytes + sizes[end] <= STATEMENT_BYTES {
                bytes += sizes[end];
                end += 1;
            }
            self.insert_all(c, &ready[start..end])?;
            start = end;
        }
        Ok(out)
    }

    /// Per item, what [`PostgresStore::check_parent`] reads: the thread's latest checkpoint
    /// in the namespace, the parent's pending writes, the parent's `channel_versions` text.
    #[allow(clippy::type_complexity)]
    fn read_parents(
        &self,
        c: &mut Client,
        items: &[UpdateItem<'_>],
    ) -> Result<Vec<(Option<String>, i64, Option<String>)>> {
        let e = |e| self.err(e);
        let threads: Vec<&str> = items.iter().map(|i| i.thread_id).collect();
        let nss: Vec<&str> = items.iter().map(|i| i.ns).collect();
        let parents: Vec<&str> = items.iter().map(|i| i.rows.parent_id).collect();
        let stmt = self.prepared(
            c,
            "SELECT (SELECT max(c.checkpoint_id COLLATE \"C\") FROM checkpoints c \
                     WHERE c.thread_id = k.thread_id AND c.checkpoint_ns = k.ns), \
                    (SELECT count(*) FROM checkpoint_writes w \
                     WHERE w.thread_id = k.thread_id AND w.checkpoint_ns = k.ns AND w.checkpoint_id = k.parent), \
                    (SELECT (c.checkpoint -> 'channel_versions')::text FROM checkpoints c \
                     WHERE c.thread_id = k.thread_id AND c.checkpoint_ns = k.ns AND c.checkpoint_id = k.parent) \
             FROM unnest($1::text[], $2::text[], $3::text[]) WITH ORDINALITY AS k(thread_id, ns, parent, i) \
             ORDER BY k.i",
        )?;
        let rows = c.query(&stmt, &[&threads, &nss, &parents]).map_err(e)?;
        if rows.len() != items.len() {
            return Err(anyhow!(
                "the server answered for {} of {} threads",
                rows.len(),
                items.len()
            ));
        }
        rows.iter()
            .map(|r| {
                Ok((
                    r.try_get(0).map_err(e)?,
                    r.try_get(1).map_err(e)?,
                    r.try_get(2).map_err(e)?,
                ))
            })
            .collect()
    }

    /// One statement inserting the blob rows, write rows and checkpoints of `ready`.
    fn insert_all(&self, c: &mut Client, ready: &[(&UpdateItem<'_>, Prepared<'_>)]) -> Result<()> {
        let mut b = Columns::default();
        for (i, p) in ready {
            let n = p.blobs.channels.len();
            b.threads.extend(std::iter::repeat_n(i.thread_id, n));
            b.nss.extend(std::iter::repeat_n(i.ns, n));
            b.texts[0].extend(p.blobs.channels.iter().map(String::as_str));
            b.texts[1].extend(p.blobs.versions.iter().map(String::as_str));
            b.texts[2].extend(p.blobs.types.iter().map(String::as_str));
            b.bytes.extend(p.blobs.blobs.iter().map(Vec::as_slice));
        }
        let mut w = Columns::default();
        let mut idx: Vec<i32> = Vec::new();
        for (i, p) in ready {
            let n = p.writes.tasks.len();
            w.threads.extend(std::iter::repeat_n(i.thread_id, n));
            w.nss.extend(std::iter::repeat_n(i.ns, n));
            // Write rows are recorded on the parent.
            w.texts[0].extend(std::iter::repeat_n(i.rows.parent_id, n));
            w.texts[1].extend(p.writes.tasks.iter().copied());
            w.texts[2].extend(p.writes.paths.iter().copied());
            w.texts[3].extend(p.writes.channels.iter().copied());
            w.texts[4].extend(p.writes.types.iter().copied());
            w.bytes.extend(p.writes.values.iter().map(Vec::as_slice));
            idx.extend(p.writes.idx.iter().copied());
        }
        let threads: Vec<&str> = ready.iter().map(|(i, _)| i.thread_id).collect();
        let nss: Vec<&str> = ready.iter().map(|(i, _)| i.ns).collect();
        let ids: Vec<&str> = ready.iter().map(|(i, _)| i.rows.checkpoint_id).collect();
        let parents: Vec<&str> = ready.iter().map(|(i, _)| i.rows.parent_id).collect();
        let checkpoints: Vec<postgres::types::Json<&Json>> = ready
            .iter()
            .map(|(_, p)| postgres::types::Json(&p.checkpoint))
            .collect();
        let metadata: Vec<postgres::types::Json<&Json>> = ready
            .iter()
            .map(|(_, p)| postgres::types::Json(&p.metadata))
            .collect();
        let stmt = self.prepared(c, append_many_sql(self.layout()))?;
        c.execute(
            &stmt,
            &[
                &b.threads,
                &b.nss,
                &b.texts[0],
                &b.texts[1],
                &b.texts[2],
                &b.bytes,
                &w.threads,
                &w.nss,
                &w.texts[0],
                &w.texts[1],
                &w.texts[2],
                &idx,
                &w.texts[3],
                &w.texts[4],
                &w.bytes,
                &threads,
                &nss,
                &ids,
                &parents,
                &checkpoints,
                &metadata,
            ],
        )
        .map_err(|e| self.err(e))?;
        Ok(())
    }
}

/// Rows of one table as columns (one array parameter each): thread, namespace, text columns,
/// and the value.
#[derive(Default)]
struct Columns<'a> {
    threads: Vec<&'a str>,
    nss: Vec<&'a str>,
    texts: [Vec<&'a str>; 5],
    bytes: Vec<&'a [u8]>,
}

/// Bytes of a prepared update's values (what bounds a statement; its JSONB document, without
/// the channel values, is small beside them).
fn size_of(p: &Prepared<'_>) -> usize {
    let blobs: usize = p.blobs.blobs.iter().map(Vec::len).sum();
    let writes: usize = p.writes.values.iter().map(Vec::len).sum();
    blobs + writes
}

/// The statement that appends the updates of several threads: their blob rows, their write
/// rows (with `task_path` on the 3.x schema) and their checkpoints, as the one-thread
/// statement (`append_sql`) does for one.
fn append_many_sql(generation: SchemaGeneration) -> &'static str {
    /// The statement, around the write rows' columns (`task_path` only in the 3.x schema).
    macro_rules! append_many {
        ($write_columns:literal, $write_values:literal) => {
            concat!(
                "WITH b AS (INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob) \
                   SELECT k.thread_id, k.ns, k.channel, k.version, k.type, k.blob \
                   FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bytea[]) \
                     AS k(thread_id, ns, channel, version, type, blob) \
                   ON CONFLICT (thread_id, checkpoint_ns, channel, version) DO NOTHING), \
                 w AS (INSERT INTO checkpoint_writes (",
                $write_columns,
                ") SELECT ",
                $write_values,
                " FROM unnest($7::text[], $8::text[], $9::text[], $10::text[], $11::text[], $12::int4[], $13::text[], $14::text[], $15::bytea[]) \
                     AS k(thread_id, ns, checkpoint_id, task_id, task_path, idx, channel, type, blob) \
                   ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) DO NOTHING) \
                 INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata) \
                 SELECT k.thread_id, k.ns, k.id, k.parent, k.checkpoint, k.metadata \
                 FROM unnest($16::text[], $17::text[], $18::text[], $19::text[], $20::jsonb[], $21::jsonb[]) \
                   AS k(thread_id, ns, id, parent, checkpoint, metadata)"
            )
        };
    }
    match generation {
        SchemaGeneration::V3 => append_many!(
            "thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob",
            "k.thread_id, k.ns, k.checkpoint_id, k.task_id, k.task_path, k.idx, k.channel, k.type, k.blob"
        ),
        SchemaGeneration::V2 => append_many!(
            "thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob",
            "k.thread_id, k.ns, k.checkpoint_id, k.task_id, k.idx, k.channel, k.type, k.blob"
        ),
    }
}
