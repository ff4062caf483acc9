//! Whole threads in and out of a `SqliteSaver` file (`copy`, `export`, `migrate`), and a new
//! file in the saver's own layout.

use std::path::Path;
use std::time::Duration;

use anyhow::{bail, Result};

use super::{blob, explain, opt_text, text, SqliteStore};
use crate::storage::{
    RowFeed, RowRef, SchemaGeneration, TargetExists, ThreadRow, ThreadWrite, WrittenThread,
};

/// The tables `SqliteSaver.setup()` creates (langgraph-checkpoint-sqlite 3.x), and the WAL
/// mode it sets.
const SETUP_SQL: &str = "PRAGMA journal_mode=WAL;
CREATE TABLE IF NOT EXISTS checkpoints (
                thread_id TEXT NOT NULL,
                checkpoint_ns TEXT NOT NULL DEFAULT '',
                checkpoint_id TEXT NOT NULL,
                parent_checkpoint_id TEXT,
                type TEXT,
                checkpoint BLOB,
                metadata BLOB,
                PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id)
            );
CREATE TABLE IF NOT EXISTS writes (
                thread_id TEXT NOT NULL,
                checkpoint_ns TEXT NOT NULL DEFAULT '',
                checkpoint_id TEXT NOT NULL,
                task_id TEXT NOT NULL,
                task_path TEXT NOT NULL DEFAULT '',
                idx INTEGER NOT NULL,
                channel TEXT NOT NULL,
                type TEXT,
                value BLOB,
                PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx)
            );";

impl SqliteStore {
    /// Creates a new `SqliteSaver` file at `path` (3.x tables, WAL mode, as
    /// `SqliteSaver.setup()` makes them) and opens it for writing. A path that exists is an
    /// error: nothing is overwritten.
    pub fn create_new(path: &Path, busy_timeout: Duration) -> Result<SqliteStore> {
        super::make_new_file(path, |conn| {
            conn.execute_batch(SETUP_SQL).map_err(|e| explain(e, path))
        })?;
        SqliteStore::open_read_write(path, busy_timeout)
    }

    /// [`crate::storage::CheckpointStore::visit_thread`]: one read transaction, each row
    /// handed over as SQLite steps to it.
    pub(super) fn visit_whole_thread(
        &self,
        thread_id: &str,
        f: &mut dyn FnMut(ThreadRow) -> Result<()>,
    ) -> Result<()> {
        let own = self.conn.is_autocommit();
        if own {
            self.conn
                .execute_batch("BEGIN")
                .map_err(|e| self.sql_error(e))?;
        }
        let read = self.visit_rows(thread_id, f);
        if own {
            let _ = self.conn.execute_batch("COMMIT");
        }
        read
    }

    fn visit_rows(
        &self,
        thread_id: &str,
        f: &mut dyn FnMut(ThreadRow) -> Result<()>,
    ) -> Result<()> {
        let e = |e| self.sql_error(e);
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata \
                 FROM checkpoints WHERE thread_id = ? ORDER BY checkpoint_ns, checkpoint_id",
            )
            .map_err(e)?;
        let mut rows = stmt.query([thread_id]).map_err(e)?;
        while let Some(r) = rows.next().map_err(e)? {
            f(ThreadRow::Checkpoint(
                SqliteStore::checkpoint_row(r).map_err(e)?,
            ))?;
        }
        let task_path = match self.generation {
            SchemaGeneration::V3 => "task_path",
            SchemaGeneration::V2 => "''",
        };
        let mut stmt = self
            .conn
            .prepare_cached(&format!(
                "SELECT checkpoint_ns, checkpoint_id, task_id, {task_path}, idx, channel, type, value \
                 FROM writes WHERE thread_id = ? ORDER BY checkpoint_ns, checkpoint_id, {task_path}, task_id, idx"
            ))
            .map_err(e)?;
        let mut rows = stmt.query([thread_id]).map_err(e)?;
        while let Some(r) = rows.next().map_err(e)? {
            let write = (|| {
                Ok(ThreadWrite {
                    checkpoint_ns: text(r, 0)?,
                    checkpoint_id: text(r, 1)?,
                    row: crate::storage::WriteRow {
                        task_id: text(r, 2)?,
                        task_path: opt_text(r, 3)?.unwrap_or_default(),
                        idx: r.get(4)?,
                        channel: text(r, 5)?,
                        type_name: opt_text(r, 6)?.unwrap_or_default(),
                        value: blob(r, 7)?.unwrap_or_default(),
                    },
                })
            })()
            .map_err(e)?;
            f(ThreadRow::Write(write))?;
        }
        Ok(())
    }

    /// [`crate::storage::CheckpointStore::write_thread_from`]: one `BEGIN IMMEDIATE`
    /// transaction (a savepoint inside a batch), each row inserted as it comes, as
    /// `SqliteSaver.put` / `put_writes` insert them; a 2.x file has no `task_path` column,
    /// and its writes get none.
    pub(super) fn write_thread_rows(
        &self,
        thread_id: &str,
        replace: bool,
        feed: RowFeed<'_>,
    ) -> Result<WrittenThread> {
        self.in_update(replace, || {
            let e = |e| self.sql_error(e);
            let tx = &self.conn;
            let exists = tx
                .query_row(
                    "SELECT EXISTS (SELECT 1 FROM checkpoints WHERE thread_id = ?1) \
                         OR EXISTS (SELECT 1 FROM writes WHERE thread_id = ?1)",
                    [thread_id],
                    |r| r.get::<_, bool>(0),
                )
                .map_err(e)?;
            if exists && !replace {
                return Err(TargetExists(thread_id.to_owned()).into());
            }
            if exists {
                tx.execute("DELETE FROM writes WHERE thread_id = ?", [thread_id])
                    .map_err(e)?;
                tx.execute("DELETE FROM checkpoints WHERE thread_id = ?", [thread_id])
                    .map_err(e)?;
            }
            let write_sql = match self.generation {
                SchemaGeneration::V3 => {
                    "INSERT INTO writes (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, value) \
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)"
                }
                SchemaGeneration::V2 => {
                    "INSERT INTO writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, value) \
                     VALUES (?1, ?2, ?3, ?4, ?6, ?7, ?8, ?9)"
                }
            };
            let mut checkpoints = 0usize;
            feed(&mut |row| {
                match row {
                    RowRef::Checkpoint(c) => {
                        checkpoints += 1;
                        tx.prepare_cached(
                            "INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata) \
                             VALUES (?, ?, ?, ?, ?, ?, ?)",
                        )
                        .and_then(|mut insert| {
                            insert.execute(rusqlite::params![
                                thread_id,
                                c.checkpoint_ns,
                                c.checkpoint_id,
                                c.parent_checkpoint_id,
                                c.type_name,
                                c.checkpoint,
                                c.metadata
                            ])
                        })
                        .map_err(e)?;
                    }
                    RowRef::Write(w) => {
                        tx.prepare_cached(write_sql)
                            .and_then(|mut insert| {
                                insert.execute(rusqlite::params![
                                    thread_id,
                                    w.checkpoint_ns,
                                    w.checkpoint_id,
                                    w.row.task_id,
                                    w.row.task_path,
                                    w.row.idx,
                                    w.row.channel,
                                    w.row.type_name,
                                    w.row.value
                                ])
                            })
                            .map_err(e)?;
                    }
                }
                Ok(())
            })?;
            if checkpoints == 0 {
                bail!("nothing to write: the thread has no checkpoint");
            }
            Ok(WrittenThread {
                replaced: exists,
                shared_versions: vec![],
            })
        })
    }
}
