//! Passes over every stored value, rewriting values in place (`rekey`): one short
//! transaction per page, so that a live app waits for memctl at most a page at a time.

use anyhow::{bail, Result};
use rusqlite::DatabaseName;

use super::{blob, text, SqliteStore};
use crate::storage::{BlobKind, PageSize, StoredValue, ValueCursor, ValuePage, ValueRewriter};

/// One stored value read for a page: rowid, thread, namespace, checkpoint, channel, type,
/// bytes.
type PageRow = (i64, String, String, String, Option<String>, String, Vec<u8>);

impl SqliteStore {
    /// [`crate::storage::RewriteValues::rewrite_values`]: the page is the next rows by rowid (the
    /// table's storage order: one sequential read), `checkpoints` first, then `writes`. A
    /// write page is a `BEGIN IMMEDIATE` transaction with `secure_delete` on; a read page a
    /// deferred one.
    pub(super) fn value_page(
        &self,
        from: ValueCursor,
        size: PageSize,
        write: bool,
        rewrite: ValueRewriter<'_>,
    ) -> Result<ValuePage> {
        let conn = self.connection();
        let read_only = conn
            .is_readonly(DatabaseName::Main)
            .map_err(|e| self.sql_error(e))?;
        if write && read_only {
            bail!("the database was opened read-only: cannot rewrite values");
        }
        if write {
            conn.execute_batch("PRAGMA secure_delete = ON")
                .map_err(|e| self.sql_error(e))?;
        }
        let begin = if write { "BEGIN IMMEDIATE" } else { "BEGIN" };
        conn.execute_batch(begin).map_err(|e| self.sql_error(e))?;
        match self.page_in_transaction(from, size, write, rewrite) {
            Ok(page) => {
                conn.execute_batch("COMMIT")
                    .map_err(|e| self.sql_error(e))?;
                Ok(page)
            }
            Err(e) => {
                let _ = conn.execute_batch("ROLLBACK");
                Err(e)
            }
        }
    }

    fn page_in_transaction(
        &self,
        from: ValueCursor,
        size: PageSize,
        write: bool,
        rewrite: ValueRewriter<'_>,
    ) -> Result<ValuePage> {
        let (kind, after) = match from.kind {
            Some(kind) => (kind, from.after),
            None => (BlobKind::Checkpoint, i64::MIN),
        };
        let rows = self.page_rows(kind, after, size)?;
        let mut page = ValuePage::default();
        for (rowid, thread, ns, id, channel, type_name, bytes) in &rows {
            page.values += 1;
            page.bytes += bytes.len() as u64;
            let value = StoredValue {
                kind,
                thread_id: thread,
                checkpoint_ns: ns,
                checkpoint_id: id,
                channel: channel.as_deref(),
                type_name,
                bytes,
            };
            let Some((new_type, new_bytes)) = rewrite(&value)? else {
                continue;
            };
            if !write {
                bail!("a read pass over the values cannot change them");
            }
            let sql = match kind {
                BlobKind::Checkpoint => {
                    "UPDATE checkpoints SET type = ?, checkpoint = ? WHERE rowid = ?"
                }
                BlobKind::Write => "UPDATE writes SET type = ?, value = ? WHERE rowid = ?",
            };
            self.connection()
                .prepare_cached(sql)
                .and_then(|mut st| st.execute(rusqlite::params![new_type, new_bytes, rowid]))
                .map_err(|e| self.sql_error(e))?;
            page.changed += 1;
        }
        let last = rows.last().map(|r| r.0);
        // A short page (fewer rows than asked for, and not cut by the byte budget) is the end
        // of its table.
        let cut = page.values as usize >= size.rows.max(1) || page.bytes >= size.bytes;
        page.next = match (last, cut, kind) {
            (Some(after), true, _) => Some(ValueCursor {
                kind: Some(kind),
                after,
                key: vec![],
            }),
            (_, _, BlobKind::Checkpoint) => Some(ValueCursor {
                kind: Some(BlobKind::Write),
                after: i64::MIN,
                key: vec![],
            }),
            (_, _, BlobKind::Write) => None,
        };
        Ok(page)
    }

    /// The rows of a page: after `after` by rowid, at most `size.rows`, ending with the row
    /// that brings the page to `size.bytes`.
    fn page_rows(&self, kind: BlobKind, after: i64, size: PageSize) -> Result<Vec<PageRow>> {
        let sql = match kind {
            BlobKind::Checkpoint => {
                "SELECT rowid, thread_id, checkpoint_ns, checkpoint_id, NULL, type, checkpoint \
                 FROM checkpoints WHERE rowid > ? ORDER BY rowid LIMIT ?"
            }
            BlobKind::Write => {
                "SELECT rowid, thread_id, checkpoint_ns, checkpoint_id, channel, type, value \
                 FROM writes WHERE rowid > ? ORDER BY rowid LIMIT ?"
            }
        };
        let sql_err = |e| self.sql_error(e);
        let mut stmt = self.connection().prepare_cached(sql).map_err(sql_err)?;
        let limit = i64::try_from(size.rows.max(1)).unwrap_or(i64::MAX);
        let mut rows = stmt
            .query(rusqlite::params![after, limit])
            .map_err(sql_err)?;
        let mut out: Vec<PageRow> = Vec::new();
        let mut bytes = 0u64;
        while let Some(r) = rows.next().map_err(sql_err)? {
            let value = blob(r, 6).map_err(sql_err)?.unwrap_or_default();
            bytes += value.len() as u64;
            let channel = match kind {
                BlobKind::Write => Some(text(r, 4).map_err(sql_err)?),
                BlobKind::Checkpoint => None,
            };
            out.push((
                r.get(0).map_err(sql_err)?,
                text(r, 1).map_err(sql_err)?,
                text(r, 2).map_err(sql_err)?,
                text(r, 3).map_err(sql_err)?,
                channel,
                text(r, 5).map_err(sql_err)?,
                value,
            ));
            if bytes >= size.bytes {
                break;
            }
        }
        Ok(out)
    }
}
