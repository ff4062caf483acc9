//! Whole threads in and out of `PostgresSaver`'s tables (`copy`, `export`, `migrate`), a row
//! at a time.
//!
//! Reading assembles every checkpoint as the other commands read them ([`super::format`]),
//! one at a time: the blob rows come in the order the checkpoints first name them, and each
//! goes once the last checkpoint naming it is handed over. Writing splits each checkpoint
//! again with [`pgformat::split`], the way `PostgresSaver.put` stores a checkpoint: primitives
//! inline in the JSONB, one blob row per `(channel, version)` (shared, so a version already
//! stored is not stored again), and the write rows as `put_writes` stores them (`task_path` on
//! migration level 9); the rows go in by `COPY` every few MiB.

use std::collections::HashMap;

use anyhow::{anyhow, bail, Context, Result};
use postgres::binary_copy::BinaryCopyInWriter;
use postgres::fallible_iterator::FallibleIterator;
use postgres::types::{ToSql, Type};
use postgres::Client;
use serde_json::Value as Json;

use super::format::{self as pgformat, BlobRow};
use super::{blob_row, get_str, named_versions, version_text, PostgresStore};
use crate::codec::aes;
use crate::storage::{
    Access, CheckpointRow, Refused, RowFeed, RowRef, SchemaGeneration, TargetExists, ThreadRow,
    ThreadWrite, Unreadable, WriteRow, WrittenThread,
};

/// A checkpoint row without its blob values: the JSONB as text (primitives inline, the
/// channel versions), small beside the values.
struct Head {
    ns: String,
    id: String,
    parent: Option<String>,
    json: String,
    metadata: Option<String>,
}

/// The blob rows a namespace's checkpoints name, each once, in the order they are first
/// named (`$3`, `$4`: channels and versions; `ord` says which one a row is).
const BLOBS_SQL: &str = "SELECT b.channel, b.version, b.type, b.blob, k.ord \
     FROM unnest($3::text[], $4::text[]) WITH ORDINALITY AS k(channel, version, ord) \
     JOIN checkpoint_blobs b ON b.thread_id = $1 AND b.checkpoint_ns = $2 \
       AND b.channel = k.channel AND b.version = k.version \
     ORDER BY k.ord";

/// The bytes of blob and write values a writer holds before it sends what it holds (a
/// `COPY` per table).
const FLUSH_BYTES: usize = 4 << 20;
/// The checkpoint rows a writer holds before it sends what it holds (each a few KiB: the
/// checkpoint JSONB without its blob values, and the metadata).
const FLUSH_CHECKPOINTS: usize = 256;

impl PostgresStore {
    /// [`crate::storage::CheckpointStore::visit_thread`]: a read-only store reads in its one
    /// snapshot; a writable one opens a `REPEATABLE READ` transaction for the reads.
    pub(super) fn visit_whole_thread(
        &self,
        thread_id: &str,
        f: &mut dyn FnMut(ThreadRow) -> Result<()>,
    ) -> Result<()> {
        self.in_read_snapshot(|| self.visit_rows(thread_id, f))
    }

    /// Runs `read` in one snapshot: a read-only store reads in its own; a writable one
    /// outside a batch opens a `REPEATABLE READ` transaction for it.
    pub(super) fn in_read_snapshot<T>(&self, read: impl FnOnce() -> Result<T>) -> Result<T> {
        let batch = self.in_batch.load(std::sync::atomic::Ordering::SeqCst);
        let own = self.access == Access::ReadWrite && !batch;
        if own {
            self.client()
                .batch_execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
                .map_err(|e| self.err(e))?;
        }
        let out = read();
        if own {
            let _ = self.client().batch_execute("COMMIT");
        }
        out
    }

    fn visit_rows(
        &self,
        thread_id: &str,
        f: &mut dyn FnMut(ThreadRow) -> Result<()>,
    ) -> Result<()> {
        let e = |e| self.err(e);
        let heads = self
            .query(
                "SELECT checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint::text, metadata::text \
                 FROM checkpoints WHERE thread_id = $1 \
                 ORDER BY checkpoint_ns COLLATE \"C\", checkpoint_id COLLATE \"C\"",
                &[&thread_id],
            )?
            .iter()
            .map(|r| {
                Ok(Head {
                    ns: get_str(r, 0)?,
                    id: get_str(r, 1)?,
                    parent: r.try_get(2).map_err(e)?,
                    json: get_str(r, 3)?,
                    metadata: r.try_get(4).map_err(e)?,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        for namespace in heads.chunk_by(|a, b| a.ns == b.ns) {
            self.visit_namespace(thread_id, namespace, f)?;
        }
        drop(heads);
        let sql = match self.layout() {
            SchemaGeneration::V3 => {
                "SELECT checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob \
                 FROM checkpoint_writes WHERE thread_id = $1 \
                 ORDER BY checkpoint_ns COLLATE \"C\", checkpoint_id COLLATE \"C\", task_path COLLATE \"C\", task_id COLLATE \"C\", idx"
            }
            SchemaGeneration::V2 => {
                "SELECT checkpoint_ns, checkpoint_id, task_id, ''::text, idx, channel, type, blob \
                 FROM checkpoint_writes WHERE thread_id = $1 \
                 ORDER BY checkpoint_ns COLLATE \"C\", checkpoint_id COLLATE \"C\", task_id COLLATE \"C\", idx"
            }
        };
        let mut c = self.client();
        let params: [&(dyn ToSql + Sync); 1] = [&thread_id];
        let mut it = c.query_raw(sql, params).map_err(e)?;
        while let Some(r) = it.next().map_err(e)? {
            f(ThreadRow::Write(ThreadWrite {
                checkpoint_ns: get_str(&r, 0)?,
                checkpoint_id: get_str(&r, 1)?,
                row: WriteRow {
                    task_id: get_str(&r, 2)?,
                    task_path: get_str(&r, 3)?,
                    idx: i64::from(r.try_get::<_, i32>(4).map_err(e)?),
                    channel: get_str(&r, 5)?,
                    type_name: get_str(&r, 6)?,
                    value: r
                        .try_get::<_, Option<Vec<u8>>>(7)
                        .map_err(e)?
                        .unwrap_or_default(),
                },
            }))?;
        }
        Ok(())
    }

    /// The checkpoints of one namespace (`heads`, oldest first), each assembled and handed to
    /// `f` in turn. The blob rows they name come in one query, in the order they are first
    /// named, each read when the checkpoint naming it first is assembled and dropped once the
    /// last one naming it is: what is held is what the checkpoints still to come share.
    fn visit_namespace(
        &self,
        thread_id: &str,
        heads: &[Head],
        f: &mut dyn FnMut(ThreadRow) -> Result<()>,
    ) -> Result<()> {
        let e = |e| self.err(e);
        let Some(ns) = heads.first().map(|h| h.ns.as_str()) else {
            return Ok(());
        };
        // Each (channel, version) named: the checkpoint naming it first, and last.
        let named: Vec<Vec<(String, String)>> =
            heads.iter().map(|h| named_versions(&h.json)).collect();
        let mut first: Vec<usize> = Vec::new();
        let (mut channels, mut versions) = (Vec::new(), Vec::new());
        let mut last: HashMap<&(String, String), usize> = HashMap::new();
        for (i, keys) in named.iter().enumerate() {
            for k in keys {
                if last.insert(k, i).is_none() {
                    first.push(i);
                    channels.push(k.0.as_str());
                    versions.push(k.1.as_str());
                }
            }
        }
        let mut c = self.client();
        let stmt = self.prepared(&mut c, BLOBS_SQL)?;
        let params: [&(dyn ToSql + Sync); 4] = [&thread_id, &ns, &channels, &versions];
        let mut it = c.query_raw(&stmt, params).map_err(e)?;
        let mut ahead: Option<(usize, BlobRow)> = None;
        // The rows have all come (a finished result is not asked for more: its connection
        // says "closed").
        let mut ended = false;
        let mut blobs: HashMap<(String, String), BlobRow> = HashMap::new();
        for (i, h) in heads.iter().enumerate() {
            loop {
                if ahead.is_none() && !ended {
                    ahead = match it.next().map_err(e)? {
                        Some(r) => {
                            let ord = usize::try_from(r.try_get::<_, i64>(4).map_err(e)? - 1)
                                .map_err(|_| anyhow!("unexpected blob position"))?;
                            let named_first = *first
                                .get(ord)
                                .ok_or_else(|| anyhow!("unexpected blob position"))?;
                            Some((named_first, blob_row(&r)?))
                        }
                        None => {
                            ended = true;
                            None
                        }
                    };
                }
                match ahead.take() {
                    Some((at, b)) if at <= i => {
                        blobs.insert((b.channel.clone(), b.version.clone()), b);
                    }
                    other => {
                        ahead = other;
                        break;
                    }
                }
            }
            let these: Vec<&BlobRow> = named[i].iter().filter_map(|k| blobs.get(k)).collect();
            let row = self.assembled_row(thread_id, h, &these)?;
            for k in &named[i] {
                if last.get(k) == Some(&i) {
                    blobs.remove(k);
                }
            }
            f(ThreadRow::Checkpoint(row))?;
        }
        Ok(())
    }

    /// One checkpoint assembled from its head and the blob rows it names, as `SqliteSaver`
    /// stores it (the metadata as the `json.dumps` text of the dict `PostgresSaver` loads).
    fn assembled_row(
        &self,
        thread_id: &str,
        h: &Head,
        blobs: &[&BlobRow],
    ) -> Result<CheckpointRow> {
        let what = || format!("checkpoint {} of thread '{thread_id}'", h.id);
        // A blob that does not decode: LangGraph could not read this checkpoint either.
        let a = pgformat::assemble_with(&h.json, blobs, &self.keys)
            .with_context(what)
            .map_err(|e| match e.is::<aes::KeyError>() {
                true => e,
                false => Unreadable(format!("{e:#}")).into(),
            })?;
        // Without the key an encrypted value is left out of the assembled checkpoint (its type
        // says so): such a checkpoint cannot be written anywhere whole.
        if a.type_name != "msgpack"
            && (self.keys.is_unset() || !a.type_name.starts_with("msgpack+"))
        {
            bail!(
                "{} holds a '{}' value: memctl copies encrypted Postgres values only with their key (--key-env)",
                what(),
                a.type_name.escape_debug()
            );
        }
        let metadata = match &h.metadata {
            Some(m) => {
                let json: Json = serde_json::from_str(m).context("stored metadata")?;
                Some(crate::codec::pyjson::dumps(&json).into_bytes())
            }
            None => None,
        };
        Ok(CheckpointRow {
            thread_id: thread_id.to_owned(),
            checkpoint_ns: h.ns.clone(),
            checkpoint_id: h.id.clone(),
            parent_checkpoint_id: h.parent.clone(),
            type_name: a.type_name,
            checkpoint: a.bytes,
            metadata,
        })
    }

    /// [`crate::storage::CheckpointStore::write_thread_from`]: one transaction holding the
    /// table locks (a savepoint inside a batch).
    pub(super) fn write_thread_rows(
        &self,
        thread_id: &str,
        replace: bool,
        feed: RowFeed<'_>,
    ) -> Result<WrittenThread> {
        check_thread_id(thread_id)?;
        self.write_tx(|c| {
            let e = |e| self.err(e);
            let exists: bool = c
                .query_one(
                    "SELECT EXISTS (SELECT 1 FROM checkpoints WHERE thread_id = $1) \
                         OR EXISTS (SELECT 1 FROM checkpoint_writes WHERE thread_id = $1) \
                         OR EXISTS (SELECT 1 FROM checkpoint_blobs WHERE thread_id = $1)",
                    &[&thread_id],
                )
                .and_then(|r| r.try_get(0))
                .map_err(e)?;
            if exists && !replace {
                return Err(TargetExists(thread_id.to_owned()).into());
            }
            if exists {
                for table in ["checkpoint_writes", "checkpoints", "checkpoint_blobs"] {
                    c.execute(
                        &format!("DELETE FROM {table} WHERE thread_id = $1"),
                        &[&thread_id],
                    )
                    .map_err(e)?;
                }
            }
            let mut out = ThreadCopy::new(self, thread_id);
            feed(&mut |row| out.take(c, row))?;
            out.flush(c)?;
            if out.checkpoints_seen == 0 {
                bail!("nothing to write: the thread has no checkpoint");
            }
            Ok(WrittenThread {
                replaced: exists,
                shared_versions: out.shared_versions,
            })
        })
    }
}

impl PostgresStore {
    /// [`crate::storage::CheckpointStore::can_hold`]: what [`ThreadCopy`] checks of a row
    /// before it sends it, without sending it.
    pub(super) fn check_row(&self, thread_id: &str, row: RowRef<'_>) -> Result<()> {
        check_thread_id(thread_id)?;
        match row {
            RowRef::Checkpoint(c) => prepare(&self.keys, thread_id, c).map(drop),
            RowRef::Write(w) => check_write(thread_id, w),
        }
    }
}

/// A checkpoint as `PostgresSaver.put` stores it: the JSONB documents of its row (the
/// checkpoint without its blob values, and the metadata) and its blob values (channel,
/// version, type, plain bytes), to be sealed with `key` when the checkpoint was encrypted.
struct Prepared {
    checkpoint: Json,
    metadata: Json,
    blobs: Vec<(String, String, &'static str, Vec<u8>)>,
    key: Option<std::sync::Arc<aes::AesKey>>,
}

/// Checkpoint `row` of thread `thread_id` split as `put` splits it ([`pgformat::split`]). What
/// the tables cannot hold is a [`Refused`] error (a checkpoint that is not msgpack, a value
/// JSONB cannot hold, a NUL character in a text or JSONB value); a key that is missing or
/// wrong stays a key error.
fn prepare(keys: &aes::Keyring, thread_id: &str, row: &CheckpointRow) -> Result<Prepared> {
    let what = format!("checkpoint {} of thread '{thread_id}'", row.checkpoint_id);
    let prepared = (|| {
        for (part, text) in [
            ("namespace", Some(&row.checkpoint_ns)),
            ("id", Some(&row.checkpoint_id)),
            ("parent id", row.parent_checkpoint_id.as_ref()),
        ] {
            text_without_nul(&what, part, text.map_or("", String::as_str))?;
        }
        let opened = keys.open(&row.type_name, &row.checkpoint, &what)?;
        if opened.type_name != "msgpack" {
            bail!(
                "{what} is of type '{}': PostgresSaver's tables hold msgpack checkpoints",
                opened.type_name.escape_debug()
            );
        }
        let key = match opened.sealed {
            true => Some(keys.key(&what)?.clone()),
            false => None,
        };
        let split = pgformat::split(&opened.bytes).with_context(|| what.clone())?;
        json_without_nul(&what, "checkpoint", &split.checkpoint)?;
        let versions = split.checkpoint.get("channel_versions");
        let mut blobs = Vec::with_capacity(split.blobs.len());
        for (channel, type_name, blob) in split.blobs {
            let version = versions
                .and_then(|v| v.get(&channel))
                .map(version_text)
                .ok_or_else(|| anyhow!("{what}: channel '{channel}' has a value but no version"))?;
            blobs.push((channel, version, type_name, blob));
        }
        let metadata: Json = match &row.metadata {
            Some(m) => serde_json::from_slice(m)
                .with_context(|| format!("{what}: its metadata is not JSON"))?,
            None => Json::Object(Default::default()),
        };
        json_without_nul(&what, "metadata", &metadata)?;
        Ok(Prepared {
            checkpoint: split.checkpoint,
            metadata,
            blobs,
            key,
        })
    })();
    prepared.map_err(refused)
}

/// A pending write of thread `thread_id` as `put_writes` stores it: its text columns must
/// hold no NUL character (its value goes in a bytea column as it is).
fn check_write(thread_id: &str, w: &ThreadWrite) -> Result<()> {
    let what = format!(
        "the '{}' write of task {} on checkpoint {} of thread '{thread_id}'",
        w.row.channel, w.row.task_id, w.checkpoint_id
    );
    for (part, text) in [
        ("namespace", &w.checkpoint_ns),
        ("checkpoint id", &w.checkpoint_id),
        ("task id", &w.row.task_id),
        ("task path", &w.row.task_path),
        ("channel", &w.row.channel),
        ("type", &w.row.type_name),
    ] {
        text_without_nul(&what, part, text)?;
    }
    Ok(())
}

/// A thread id a text column can hold (no NUL character).
fn check_thread_id(thread_id: &str) -> Result<()> {
    text_without_nul(&format!("thread '{thread_id}'"), "id", thread_id)
}

/// A [`Refused`] error when `text` (the `part` of `what`) holds a NUL character: PostgreSQL's
/// text columns cannot store one (the server refuses it; PostgresSaver could not have stored
/// it either).
fn text_without_nul(what: &str, part: &str, text: &str) -> Result<()> {
    match text.contains('\0') {
        true => Err(Refused(format!(
            "{what}: its {part} holds a NUL character (U+0000), which a PostgreSQL text column cannot store"
        ))
        .into()),
        false => Ok(()),
    }
}

/// A [`Refused`] error when a string or key of `j` (the `part` of `what`) holds a NUL
/// character, which PostgreSQL's JSONB cannot store (`\u0000`).
fn json_without_nul(what: &str, part: &str, j: &Json) -> Result<()> {
    fn has_nul(j: &Json) -> bool {
        match j {
            Json::String(s) => s.contains('\0'),
            Json::Array(a) => a.iter().any(has_nul),
            Json::Object(o) => o.iter().any(|(k, v)| k.contains('\0') || has_nul(v)),
            _ => false,
        }
    }
    match has_nul(j) {
        true => Err(Refused(format!(
            "{what}: its {part} holds a NUL character (\\u0000), which PostgreSQL's JSONB cannot store"
        ))
        .into()),
        false => Ok(()),
    }
}

/// `e` as a [`Refused`] error (the rows cannot go into the tables), but for a key error (a key
/// missing or wrong is the run's problem, not the thread's) and an error already marked.
fn refused(e: anyhow::Error) -> anyhow::Error {
    if e.is::<aes::KeyError>() || e.is::<Refused>() {
        return e;
    }
    Refused(format!("{e:#}")).into()
}

/// A thread's rows on their way into the tables, inside the write transaction: each
/// checkpoint split as `put` splits it, and the rows held until they are sent by
/// `COPY ... FROM STDIN (FORMAT binary)`, one statement per table every few MiB
/// ([`FLUSH_BYTES`]). The same rows `put` / `put_writes` insert, without a round trip per row:
/// the thread's rows are absent (checked, or deleted, under the table locks), and a
/// (ns, channel, version) is sent once (`stored`), so no row can conflict: nothing for `put`'s
/// ON CONFLICT to do.
struct ThreadCopy<'s> {
    store: &'s PostgresStore,
    thread_id: &'s str,
    /// The value stored under each (ns, channel, version), as its length and hash (not the
    /// bytes: a long thread is not held): `put` stores a version once.
    stored: HashMap<(String, String, String), (usize, u64)>,
    /// See [`WrittenThread::shared_versions`].
    shared_versions: Vec<(String, String)>,
    /// Blob rows to send: ns, channel, version, type, value.
    blobs: Vec<(String, String, String, String, Vec<u8>)>,
    /// Checkpoint rows to send: ns, id, parent, and the two JSONB documents (the checkpoint
    /// without its blob values, the metadata).
    checkpoints: Vec<(String, String, Option<String>, Json, Json)>,
    /// Write rows to send.
    writes: Vec<ThreadWrite>,
    /// Bytes of the blob and write values held.
    held: usize,
    checkpoints_seen: usize,
}

impl<'s> ThreadCopy<'s> {
    fn new(store: &'s PostgresStore, thread_id: &'s str) -> ThreadCopy<'s> {
        ThreadCopy {
            store,
            thread_id,
            stored: HashMap::new(),
            shared_versions: Vec::new(),
            blobs: Vec::new(),
            checkpoints: Vec::new(),
            writes: Vec::new(),
            held: 0,
            checkpoints_seen: 0,
        }
    }

    /// Takes one row; sends what is held when it has grown past the limits.
    fn take(&mut self, c: &mut Client, row: RowRef<'_>) -> Result<()> {
        match row {
            RowRef::Checkpoint(row) => self.checkpoint(row)?,
            RowRef::Write(w) => {
                check_write(self.thread_id, w)?;
                self.held += w.row.value.len();
                self.writes.push(w.clone());
            }
        }
        if self.held >= FLUSH_BYTES || self.checkpoints.len() >= FLUSH_CHECKPOINTS {
            self.flush(c)?;
        }
        Ok(())
    }

    /// A checkpoint split: the blob rows of the versions not stored yet, and its row.
    fn checkpoint(&mut self, row: &CheckpointRow) -> Result<()> {
        self.checkpoints_seen += 1;
        let split = prepare(&self.store.keys, self.thread_id, row)?;
        for (channel, version, type_name, blob) in split.blobs {
            let k = (row.checkpoint_ns.clone(), channel, version);
            if let Some(first) = self.stored.get(&k) {
                if *first != digest(&blob) {
                    self.shared_versions
                        .push((row.checkpoint_id.clone(), k.1.clone()));
                }
                continue;
            }
            self.stored.insert(k.clone(), digest(&blob));
            let (type_name, value) = match &split.key {
                Some(key) => aes::seal(key, type_name, &blob),
                None => (type_name.to_owned(), blob),
            };
            self.held += value.len();
            let (ns, channel, version) = k;
            self.blobs.push((ns, channel, version, type_name, value));
        }
        self.checkpoints.push((
            row.checkpoint_ns.clone(),
            row.checkpoint_id.clone(),
            row.parent_checkpoint_id.clone(),
            split.checkpoint,
            split.metadata,
        ));
        Ok(())
    }

    /// Sends what is held: a `COPY` per table that has rows waiting.
    fn flush(&mut self, c: &mut Client) -> Result<()> {
        let store = self.store;
        let e = |e| store.err(e);
        let thread_id = self.thread_id;
        if !self.blobs.is_empty() {
            let mut copy = self.copy_in(
                c,
                "COPY checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob) \
                 FROM STDIN (FORMAT binary)",
                &[
                    Type::TEXT,
                    Type::TEXT,
                    Type::TEXT,
                    Type::TEXT,
                    Type::TEXT,
                    Type::BYTEA,
                ],
            )?;
            for (ns, channel, version, type_name, value) in self.blobs.drain(..) {
                copy.write(&[&thread_id, &ns, &channel, &version, &type_name, &value])
                    .map_err(e)?;
            }
            copy.finish().map_err(e)?;
        }
        if !self.checkpoints.is_empty() {
            let mut copy = self.copy_in(
                c,
                "COPY checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata) \
                 FROM STDIN (FORMAT binary)",
                &[Type::TEXT, Type::TEXT, Type::TEXT, Type::TEXT, Type::JSONB, Type::JSONB],
            )?;
            for (ns, id, parent, checkpoint, metadata) in self.checkpoints.drain(..) {
                copy.write(&[
                    &thread_id,
                    &ns,
                    &id,
                    &parent,
                    &postgres::types::Json(checkpoint),
                    &postgres::types::Json(metadata),
                ])
                .map_err(e)?;
            }
            copy.finish().map_err(e)?;
        }
        if !self.writes.is_empty() {
            let v3 = store.layout() == SchemaGeneration::V3;
            let (sql, types): (&'static str, &[Type]) = match v3 {
                true => (
                    "COPY checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob) \
                     FROM STDIN (FORMAT binary)",
                    &[Type::TEXT, Type::TEXT, Type::TEXT, Type::TEXT, Type::TEXT, Type::INT4, Type::TEXT, Type::TEXT, Type::BYTEA],
                ),
                false => (
                    "COPY checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob) \
                     FROM STDIN (FORMAT binary)",
                    &[Type::TEXT, Type::TEXT, Type::TEXT, Type::TEXT, Type::INT4, Type::TEXT, Type::TEXT, Type::BYTEA],
                ),
            };
            let mut copy = self.copy_in(c, sql, types)?;
            for w in self.writes.drain(..) {
                let idx = i32::try_from(w.row.idx)
                    .map_err(|_| anyhow!("write index {} out of range", w.row.idx))?;
                let mut params: Vec<&(dyn ToSql + Sync)> = vec![
                    &thread_id,
                    &w.checkpoint_ns,
                    &w.checkpoint_id,
                    &w.row.task_id,
                ];
                if v3 {
                    params.push(&w.row.task_path);
                }
                params.extend([
                    &idx as &(dyn ToSql + Sync),
                    &w.row.channel,
                    &w.row.type_name,
                    &w.row.value,
                ]);
                copy.write(&params).map_err(e)?;
            }
            copy.finish().map_err(e)?;
        }
        self.held = 0;
        Ok(())
    }

    /// A `COPY ... FROM STDIN (FORMAT binary)` started on `c` (its statement prepared once
    /// per connection).
    fn copy_in<'c>(
        &self,
        c: &'c mut Client,
        sql: &'static str,
        types: &[Type],
    ) -> Result<BinaryCopyInWriter<'c>> {
        let stmt = self.store.prepared(c, sql)?;
        let writer = c.copy_in(&stmt).map_err(|e| self.store.err(e))?;
        Ok(BinaryCopyInWriter::new(writer, types))
    }
}

/// A value's length and hash: what [`ThreadCopy`] keeps of a stored blob.
fn digest(b: &[u8]) -> (usize, u64) {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    b.hash(&mut h);
    (b.len(), h.finish())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::json::json_to_value;
    use crate::codec::msgpack::encode;

    fn checkpoint(values: serde_json::Value, metadata: &str) -> CheckpointRow {
        let cp = serde_json::json!({
            "v": 4, "ts": "t", "id": "1",
            "channel_values": values,
            "channel_versions": {"messages": "1", "topic": "1"},
            "versions_seen": {}
        });
        CheckpointRow {
            thread_id: "t".into(),
            checkpoint_ns: String::new(),
            checkpoint_id: "1".into(),
            parent_checkpoint_id: None,
            type_name: "msgpack".into(),
            checkpoint: encode(&json_to_value(&cp)),
            metadata: Some(metadata.as_bytes().to_vec()),
        }
    }

    #[test]
    fn what_the_tables_cannot_hold_is_refused_before_it_is_sent() {
        let keys = aes::Keyring::none();
        let ok = checkpoint(
            serde_json::json!({"messages": ["a\u{0}b"], "topic": "x"}),
            "{}",
        );
        let p = prepare(&keys, "t", &ok).expect("a NUL inside a blob value is fine (bytea)");
        assert_eq!(p.blobs.len(), 1);
        let refused = [
            checkpoint(serde_json::json!({"topic": "a\u{0}b"}), "{}"),
            checkpoint(serde_json::json!({"topic": "x"}), r#"{"note": "a\u0000b"}"#),
            CheckpointRow {
                checkpoint: vec![0xde, 0xad, 0xbe, 0xef],
                ..ok.clone()
            },
            CheckpointRow {
                type_name: "json".into(),
                ..ok.clone()
            },
            CheckpointRow {
                checkpoint_ns: "sub\u{0}".into(),
                ..ok.clone()
            },
        ];
        for row in refused {
            let e = prepare(&keys, "t", &row).err().expect("refused");
            assert!(e.is::<Refused>(), "{e:#}");
            assert!(
                e.to_string().contains("checkpoint 1 of thread 't'"),
                "{e:#}"
            );
        }
        let e = check_thread_id("a\u{0}b").expect_err("refused");
        assert!(e.is::<Refused>() && e.to_string().contains("NUL"), "{e:#}");
        let w = ThreadWrite {
            checkpoint_ns: String::new(),
            checkpoint_id: "1".into(),
            row: WriteRow {
                task_id: "task".into(),
                task_path: String::new(),
                idx: 0,
                channel: "messages\u{0}".into(),
                type_name: "msgpack".into(),
                value: vec![0xa1, 0x00],
            },
        };
        assert!(check_write("t", &w).expect_err("refused").is::<Refused>());
        let w = ThreadWrite {
            row: WriteRow {
                channel: "messages".into(),
                ..w.row
            },
            ..w
        };
        assert!(
            check_write("t", &w).is_ok(),
            "a NUL in the value (bytea) is fine"
        );
    }
}
