//! Whole threads in and out of `PostgresSaver`'s tables (`copy`, `export`, `migrate`).
//!
//! Reading assembles every checkpoint as the other commands read them ([`super::format`]).
//! Writing splits each one again with [`pgformat::split`], the way `PostgresSaver.put` stores a
//! checkpoint: primitives inline in the JSONB, one blob row per `(channel, version)` (shared,
//! so a version already stored is not stored again), and the write rows as `put_writes` stores
//! them (`task_path` on migration level 9).

use anyhow::{anyhow, bail, Context, Result};
use postgres::binary_copy::BinaryCopyInWriter;
use postgres::types::Type;
use serde_json::Value as Json;

use super::format as pgformat;
use super::{get_str, version_text, PostgresStore};
use crate::codec::aes;
use crate::storage::{
    Access, SchemaGeneration, TargetExists, ThreadRows, ThreadWrite, WriteRow, WrittenThread,
};

impl PostgresStore {
    /// [`crate::storage::CheckpointStore::read_thread`]: a read-only store reads in its one
    /// snapshot; a writable one opens a `REPEATABLE READ` transaction for the reads.
    pub(super) fn read_whole_thread(&self, thread_id: &str) -> Result<ThreadRows> {
        let batch = self.in_batch.load(std::sync::atomic::Ordering::SeqCst);
        let own = self.access == Access::ReadWrite && !batch;
        if own {
            self.client()
                .batch_execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
                .map_err(|e| self.err(e))?;
        }
        let read = self.read_rows(thread_id);
        if own {
            let _ = self.client().batch_execute("COMMIT");
        }
        read
    }

    fn read_rows(&self, thread_id: &str) -> Result<ThreadRows> {
        let mut checkpoints = Vec::new();
        for ns in crate::storage::CheckpointStore::namespaces(self, thread_id)? {
            let mut rows = self.assembled(thread_id, &ns)?;
            rows.reverse();
            for row in &mut rows {
                // Without the key an encrypted value is left out of the assembled checkpoint
                // (its type says so): such a checkpoint cannot be written anywhere whole.
                if row.type_name != "msgpack"
                    && (self.keys.is_unset() || !row.type_name.starts_with("msgpack+"))
                {
                    bail!(
                        "checkpoint {} of thread '{thread_id}' holds a '{}' value: memctl copies encrypted Postgres values only with their key (--key-env)",
                        row.checkpoint_id,
                        row.type_name.escape_debug()
                    );
                }
                // As SqliteSaver stores it: json.dumps of the dict PostgresSaver loads.
                if let Some(m) = row.metadata.take() {
                    let json: Json = serde_json::from_slice(&m).context("stored metadata")?;
                    row.metadata = Some(crate::codec::pyjson::dumps(&json).into_bytes());
                }
            }
            checkpoints.extend(rows);
        }
        let sql = match self.generation {
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
        let e = |e| self.err(e);
        let writes = self
            .query(sql, &[&thread_id])?
            .iter()
            .map(|r| {
                Ok(ThreadWrite {
                    checkpoint_ns: get_str(r, 0)?,
                    checkpoint_id: get_str(r, 1)?,
                    row: WriteRow {
                        task_id: get_str(r, 2)?,
                        task_path: get_str(r, 3)?,
                        idx: i64::from(r.try_get::<_, i32>(4).map_err(e)?),
                        channel: get_str(r, 5)?,
                        type_name: get_str(r, 6)?,
                        value: r
                            .try_get::<_, Option<Vec<u8>>>(7)
                            .map_err(e)?
                            .unwrap_or_default(),
                    },
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(ThreadRows {
            checkpoints,
            writes,
        })
    }

    /// [`crate::storage::CheckpointStore::write_thread`]: one transaction holding the table
    /// locks (a savepoint inside a batch).
    pub(super) fn write_whole_thread(
        &self,
        thread_id: &str,
        rows: &ThreadRows,
        replace: bool,
    ) -> Result<WrittenThread> {
        if rows.checkpoints.is_empty() {
            bail!("nothing to write: the thread has no checkpoint");
        }
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
            // The rows go in by `COPY ... FROM STDIN (FORMAT binary)`, one per table, inside
            // this transaction: the same rows `put` / `put_writes` insert, without a round trip
            // per row. The thread's rows are absent here (checked, or deleted just above, under
            // the table locks), and a (ns, channel, version) is sent once (`stored`), so no row
            // can conflict: nothing for `put`'s ON CONFLICT to do.
            let mut blobs = BinaryCopyInWriter::new(
                c.copy_in(
                    "COPY checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob) \
                     FROM STDIN (FORMAT binary)",
                )
                .map_err(e)?,
                &[Type::TEXT, Type::TEXT, Type::TEXT, Type::TEXT, Type::TEXT, Type::BYTEA],
            );
            // The value stored under each (ns, channel, version), as its length and hash (not
            // the bytes: a long thread is not held twice): `put` stores a version once.
            let mut stored: std::collections::HashMap<(&str, String, String), (usize, u64)> =
                std::collections::HashMap::new();
            let digest = |b: &[u8]| {
                use std::hash::{Hash, Hasher};
                let mut h = std::collections::hash_map::DefaultHasher::new();
                b.hash(&mut h);
                (b.len(), h.finish())
            };
            let mut shared_versions = Vec::new();
            let mut checkpoints = Vec::with_capacity(rows.checkpoints.len());
            for row in &rows.checkpoints {
                let what = format!(
                    "checkpoint {} of thread '{}'",
                    row.checkpoint_id, row.thread_id
                );
                let opened = self.keys.open(&row.type_name, &row.checkpoint, &what)?;
                if opened.type_name != "msgpack" {
                    bail!(
                        "{what} is of type '{}': PostgresSaver's tables hold msgpack checkpoints",
                        opened.type_name.escape_debug()
                    );
                }
                let key = match opened.sealed {
                    true => Some(self.keys.key(&what)?.clone()),
                    false => None,
                };
                let split = pgformat::split(&opened.bytes).with_context(|| what.clone())?;
                let versions = split.checkpoint.get("channel_versions");
                for (channel, type_name, blob) in split.blobs {
                    let version = versions
                        .and_then(|v| v.get(&channel))
                        .map(version_text)
                        .ok_or_else(|| {
                            anyhow!("{what}: channel '{channel}' has a value but no version")
                        })?;
                    match stored.entry((row.checkpoint_ns.as_str(), channel, version)) {
                        std::collections::hash_map::Entry::Occupied(first) => {
                            if *first.get() != digest(&blob) {
                                shared_versions
                                    .push((row.checkpoint_id.clone(), first.key().1.clone()));
                            }
                        }
                        std::collections::hash_map::Entry::Vacant(v) => {
                            let (ns, channel, version) = v.key();
                            let sealed = key.as_ref().map(|key| aes::seal(key, type_name, &blob));
                            let (type_name, value) = match &sealed {
                                Some((t, b)) => (t.as_str(), b),
                                None => (type_name, &blob),
                            };
                            blobs
                                .write(&[&thread_id, ns, channel, version, &type_name, value])
                                .map_err(e)?;
                            v.insert(digest(&blob));
                        }
                    }
                }
                let metadata: Json = match &row.metadata {
                    Some(m) => serde_json::from_slice(m)
                        .with_context(|| format!("{what}: its metadata is not JSON"))?,
                    None => Json::Object(Default::default()),
                };
                checkpoints.push((row, split.checkpoint, metadata));
            }
            blobs.finish().map_err(e)?;
            let mut copy = BinaryCopyInWriter::new(
                c.copy_in(
                    "COPY checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata) \
                     FROM STDIN (FORMAT binary)",
                )
                .map_err(e)?,
                &[Type::TEXT, Type::TEXT, Type::TEXT, Type::TEXT, Type::JSONB, Type::JSONB],
            );
            for (row, checkpoint, metadata) in &checkpoints {
                copy.write(&[
                    &thread_id,
                    &row.checkpoint_ns,
                    &row.checkpoint_id,
                    &row.parent_checkpoint_id,
                    &postgres::types::Json(checkpoint),
                    &postgres::types::Json(metadata),
                ])
                .map_err(e)?;
            }
            copy.finish().map_err(e)?;
            if !rows.writes.is_empty() {
                let (sql, types): (&str, &[Type]) = match self.generation {
                    SchemaGeneration::V3 => (
                        "COPY checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob) \
                         FROM STDIN (FORMAT binary)",
                        &[Type::TEXT, Type::TEXT, Type::TEXT, Type::TEXT, Type::TEXT, Type::INT4, Type::TEXT, Type::TEXT, Type::BYTEA],
                    ),
                    SchemaGeneration::V2 => (
                        "COPY checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob) \
                         FROM STDIN (FORMAT binary)",
                        &[Type::TEXT, Type::TEXT, Type::TEXT, Type::TEXT, Type::INT4, Type::TEXT, Type::TEXT, Type::BYTEA],
                    ),
                };
                let mut copy = BinaryCopyInWriter::new(c.copy_in(sql).map_err(e)?, types);
                for w in &rows.writes {
                    let idx = i32::try_from(w.row.idx)
                        .map_err(|_| anyhow!("write index {} out of range", w.row.idx))?;
                    let mut params: Vec<&(dyn postgres::types::ToSql + Sync)> =
                        vec![&thread_id, &w.checkpoint_ns, &w.checkpoint_id, &w.row.task_id];
                    if self.generation == SchemaGeneration::V3 {
                        params.push(&w.row.task_path);
                    }
                    params.extend([
                        &idx as &(dyn postgres::types::ToSql + Sync),
                        &w.row.channel,
                        &w.row.type_name,
                        &w.row.value,
                    ]);
                    copy.write(&params).map_err(e)?;
                }
                copy.finish().map_err(e)?;
            }
            Ok(WrittenThread {
                replaced: exists,
                shared_versions,
            })
        })
    }
}
