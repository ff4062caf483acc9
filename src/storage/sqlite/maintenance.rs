//! Space accounting and deletion for `stats`, `prune` and `gc`: short `BEGIN IMMEDIATE`
//! transactions, each re-checking that a thread did not move before touching it.

use anyhow::{Context, Result};
use rusqlite::{params, OptionalExtension, Transaction, TransactionBehavior};
use serde_json::Value as Json;

use super::{opt_text, text, SqliteStore};
use crate::storage::{CheckpointInfo, CheckpointRewrite, Deleted, FileStats, Orphans, VacuumBusy};

impl SqliteStore {
    pub(super) fn pragma_u64(&self, name: &str) -> Result<u64> {
        self.connection()
            .query_row(&format!("PRAGMA {name}"), [], |r| r.get::<_, i64>(0))
            .map(|v| v.max(0) as u64)
            .with_context(|| format!("PRAGMA {name}"))
    }

    /// File size, WAL size and free pages.
    pub(super) fn stats_of_file(&self) -> Result<FileStats> {
        let wal = std::path::PathBuf::from(format!("{}-wal", self.path().display()));
        Ok(FileStats {
            file_bytes: std::fs::metadata(self.path()).map(|m| m.len()).unwrap_or(0),
            wal_bytes: std::fs::metadata(wal).map(|m| m.len()).unwrap_or(0),
            page_size: self.pragma_u64("page_size")?,
            page_count: self.pragma_u64("page_count")?,
            free_pages: self.pragma_u64("freelist_count")?,
        })
    }

    /// Row counts of `checkpoints` and `writes`.
    pub(super) fn counts(&self) -> Result<(u64, u64)> {
        let count = |t: &str| -> Result<u64> {
            self.connection()
                .query_row(&format!("SELECT COUNT(*) FROM {t}"), [], |r| {
                    r.get::<_, i64>(0)
                })
                .map(|v| v.max(0) as u64)
                .with_context(|| format!("counting {t}"))
        };
        Ok((count("checkpoints")?, count("writes")?))
    }

    /// One encrypted value (`type`, bytes) of the checkpoints or writes table, if any (see
    /// [`super::CheckpointStore::an_encrypted_value`]).
    pub(super) fn encrypted_value(&self) -> Result<Option<(String, Vec<u8>)>> {
        for (table, column) in [("checkpoints", "checkpoint"), ("writes", "value")] {
            let found = self
                .connection()
                .query_row(
                    &format!("SELECT type, {column} FROM {table} WHERE type LIKE '%+%' LIMIT 1"),
                    [],
                    |r| Ok((text(r, 0)?, r.get::<_, Vec<u8>>(1)?)),
                )
                .optional()
                .with_context(|| format!("looking for encrypted rows in {table}"))?;
            if found.is_some() {
                return Ok(found);
            }
        }
        Ok(None)
    }

    /// `(channel, rows, bytes)` of the writes table.
    pub(super) fn bytes_by_channel(&self) -> Result<Vec<(String, u64, u64)>> {
        let mut stmt = self.connection().prepare(
            // The lengths are taken first (LIMIT -1 keeps SQLite from flattening the subquery):
            // grouped directly, SQLite's sorter copies every blob (225 MB for one thread of
            // 100,000 messages).
            "SELECT channel, COUNT(*), SUM(n) FROM (SELECT channel, LENGTH(value) AS n FROM writes LIMIT -1) \
             GROUP BY channel ORDER BY 3 DESC",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok((
                text(r, 0)?,
                r.get::<_, i64>(1)?.max(0) as u64,
                r.get::<_, Option<i64>>(2)?.unwrap_or(0).max(0) as u64,
            ))
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Calls `f` with every msgpack checkpoint blob (streamed, one at a time).
    pub(super) fn each_checkpoint_blob(
        &self,
        f: &mut dyn FnMut(&[u8]) -> Result<()>,
    ) -> Result<()> {
        let mut stmt = self
            .connection()
            .prepare("SELECT checkpoint FROM checkpoints WHERE type = 'msgpack'")?;
        let mut rows = stmt.query([])?;
        while let Some(row) = rows.next()? {
            if let rusqlite::types::ValueRef::Blob(b) = row.get_ref(0)? {
                f(b)?;
            }
        }
        Ok(())
    }

    /// Rows that point at nothing.
    pub(super) fn orphan_rows(&self) -> Result<Orphans> {
        let q = |sql: &str| -> Result<u64> {
            self.connection()
                .query_row(sql, [], |r| r.get::<_, i64>(0))
                .map(|v| v.max(0) as u64)
                .context("orphan query")
        };
        Ok(Orphans {
            writes_without_checkpoint: q("SELECT COUNT(*) FROM writes w WHERE NOT EXISTS (SELECT 1 FROM checkpoints c \
                 WHERE c.thread_id = w.thread_id AND c.checkpoint_ns = w.checkpoint_ns AND c.checkpoint_id = w.checkpoint_id)")?,
            checkpoints_without_parent: q("SELECT COUNT(*) FROM checkpoints c WHERE c.parent_checkpoint_id IS NOT NULL \
                 AND NOT EXISTS (SELECT 1 FROM checkpoints p WHERE p.thread_id = c.thread_id \
                 AND p.checkpoint_ns = c.checkpoint_ns AND p.checkpoint_id = c.parent_checkpoint_id)")?,
            namespaces_without_root: q("SELECT COUNT(*) FROM (SELECT thread_id FROM checkpoints GROUP BY thread_id \
                 HAVING SUM(checkpoint_ns = '') = 0)")?,
        })
    }

    /// Every checkpoint of a thread, without blobs, with its pending writes counted (for gc).
    pub(super) fn infos(&self, thread_id: &str) -> Result<Vec<CheckpointInfo>> {
        let mut stmt = self.connection().prepare_cached(
            "SELECT c.checkpoint_ns, c.checkpoint_id, c.parent_checkpoint_id, c.metadata, \
                    LENGTH(c.checkpoint) + COALESCE(LENGTH(c.metadata), 0), \
                    COALESCE(w.n, 0), COALESCE(w.bytes, 0) \
             FROM checkpoints c LEFT JOIN ( \
                 SELECT checkpoint_ns, checkpoint_id, COUNT(*) AS n, SUM(LENGTH(value)) AS bytes \
                 FROM writes WHERE thread_id = ?1 GROUP BY checkpoint_ns, checkpoint_id \
             ) w ON w.checkpoint_ns = c.checkpoint_ns AND w.checkpoint_id = c.checkpoint_id \
             WHERE c.thread_id = ?1",
        )?;
        let rows = stmt.query_map([thread_id], |r| {
            let metadata: Option<Vec<u8>> = r.get(3).ok();
            let root_parent = metadata
                .as_deref()
                .and_then(|b| serde_json::from_slice::<Json>(b).ok())
                .and_then(|j| {
                    j.get("parents")
                        .and_then(|p| p.get(""))
                        .and_then(Json::as_str)
                        .map(str::to_owned)
                });
            let n = |i: usize| -> rusqlite::Result<u64> {
                Ok(r.get::<_, Option<i64>>(i)?.unwrap_or(0).max(0) as u64)
            };
            Ok(CheckpointInfo {
                ns: text(r, 0)?,
                id: text(r, 1)?,
                parent: opt_text(r, 2)?,
                root_parent,
                metadata,
                bytes: n(4)?,
                writes: n(5)?,
                write_bytes: n(6)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    fn latest_id(tx: &Transaction<'_>, thread_id: &str) -> rusqlite::Result<Option<String>> {
        tx.query_row(
            "SELECT MAX(checkpoint_id) FROM checkpoints WHERE thread_id = ?",
            [thread_id],
            |r| opt_text(r, 0),
        )
    }

    /// Deletes whole threads (all namespaces, checkpoints and writes) in one transaction.
    /// A thread whose newest checkpoint is no longer `expected_latest` is left alone and
    /// returned in the second list.
    pub(super) fn delete_whole_threads(
        &self,
        threads: &[(String, String)],
    ) -> Result<(Deleted, Vec<String>)> {
        let run = || -> rusqlite::Result<(Deleted, Vec<String>)> {
            let tx = Transaction::new_unchecked(self.connection(), TransactionBehavior::Immediate)?;
            let mut deleted = Deleted::default();
            let mut moved = Vec::new();
            for (thread, expected) in threads {
                if SqliteStore::latest_id(&tx, thread)?.as_deref() != Some(expected.as_str()) {
                    moved.push(thread.clone());
                    continue;
                }
                let (cps, cp_bytes): (i64, Option<i64>) = tx.query_row(
                    "SELECT COUNT(*), SUM(LENGTH(checkpoint) + COALESCE(LENGTH(metadata), 0)) FROM checkpoints WHERE thread_id = ?",
                    [thread],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )?;
                let (wrs, wr_bytes): (i64, Option<i64>) = tx.query_row(
                    "SELECT COUNT(*), SUM(LENGTH(value)) FROM writes WHERE thread_id = ?",
                    [thread],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )?;
                tx.execute("DELETE FROM writes WHERE thread_id = ?", [thread])?;
                tx.execute("DELETE FROM checkpoints WHERE thread_id = ?", [thread])?;
                deleted.add(Deleted {
                    threads: 1,
                    checkpoints: cps.max(0) as u64,
                    writes: wrs.max(0) as u64,
                    bytes: (cp_bytes.unwrap_or(0) + wr_bytes.unwrap_or(0)).max(0) as u64,
                });
            }
            tx.commit()?;
            Ok((deleted, moved))
        };
        run().map_err(|e| super::explain(e, self.path()))
    }

    /// Deletes the checkpoints `delete` (`(ns, id)`, with their writes) of one thread and
    /// clears the parent of `orphaned` ones, in one transaction, if the thread's newest
    /// checkpoint is still `expected_latest` (else returns `None` and changes nothing).
    pub(super) fn delete_checkpoints(
        &self,
        thread_id: &str,
        delete: &[(String, String)],
        orphaned: &[(String, String)],
        rewrites: &[CheckpointRewrite],
        expected_latest: &str,
    ) -> Result<Option<Deleted>> {
        let run = || -> rusqlite::Result<Option<Deleted>> {
            let tx = Transaction::new_unchecked(self.connection(), TransactionBehavior::Immediate)?;
            if SqliteStore::latest_id(&tx, thread_id)?.as_deref() != Some(expected_latest) {
                return Ok(None);
            }
            let mut deleted = Deleted::default();
            for (ns, id) in delete {
                let (n, bytes): (i64, Option<i64>) = tx.query_row(
                    "SELECT COUNT(*), SUM(LENGTH(value)) FROM writes WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?",
                    params![thread_id, ns, id],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )?;
                let cp_bytes: Option<i64> = tx
                    .query_row(
                        "SELECT LENGTH(checkpoint) + COALESCE(LENGTH(metadata), 0) FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?",
                        params![thread_id, ns, id],
                        |r| r.get(0),
                    )
                    .optional()?
                    .flatten();
                tx.execute(
                    "DELETE FROM writes WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?",
                    params![thread_id, ns, id],
                )?;
                deleted.checkpoints += tx.execute(
                    "DELETE FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?",
                    params![thread_id, ns, id],
                )? as u64;
                deleted.writes += n.max(0) as u64;
                deleted.bytes += (bytes.unwrap_or(0) + cp_bytes.unwrap_or(0)).max(0) as u64;
            }
            for (ns, id) in orphaned {
                tx.execute(
                    "UPDATE checkpoints SET parent_checkpoint_id = NULL WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?",
                    params![thread_id, ns, id],
                )?;
            }
            for r in rewrites {
                tx.execute(
                    "UPDATE checkpoints SET type = 'msgpack', checkpoint = ?, metadata = ? \
                     WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?",
                    params![r.checkpoint, r.metadata, thread_id, r.ns, r.id],
                )?;
            }
            tx.commit()?;
            Ok(Some(deleted))
        };
        run().map_err(|e| super::explain(e, self.path()))
    }

    /// `VACUUM` plus WAL truncation so the file really shrinks. A database another process
    /// keeps busy is a [`VacuumBusy`] error: nothing is lost, try again later.
    pub(super) fn vacuum_or_busy(&self) -> Result<()> {
        let busy = || {
            VacuumBusy(format!(
                "vacuum could not get exclusive access to '{}' within the busy timeout (an app is using it); \
                 the deletions are committed, run with --vacuum again later",
                crate::storage::shown_path(self.path())
            ))
        };
        let checkpoint = || self.truncate_wal();
        let is_busy = |e: &rusqlite::Error| {
            matches!(
                e.sqlite_error_code(),
                Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
            )
        };
        checkpoint()?;
        match self.connection().execute_batch("VACUUM") {
            Ok(()) => {}
            Err(e) if is_busy(&e) => return Err(busy().into()),
            Err(e) => return Err(super::explain(e, self.path())).context("vacuum failed"),
        }
        if !checkpoint()? {
            return Err(busy().into());
        }
        Ok(())
    }
}
