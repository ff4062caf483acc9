//! `threads list --sort updated --limit N` from an index on `checkpoint_id` (issue #30).
//!
//! `PostgresSaver` indexes `checkpoints` by its primary key `(thread_id, checkpoint_ns,
//! checkpoint_id)` and by `thread_id`: which threads the app wrote last, only a scan of the
//! whole primary key tells (every thread's largest id, 2.5 s at 3,000,000 rows). With an
//! index whose first column is `checkpoint_id` in bytewise order (the one `stats` recommends:
//! `INDEX_ADVICE`), the newest rows come first and a few hundred of them name the newest threads
//! ([`crate::ids::newest_of_rows`]). LangGraph never reads by this index; an extra
//! index only costs its upkeep on each `put`.

use anyhow::Result;

use crate::ids::{newest_of_rows, sorts_by_time, NewestRows};

use super::PostgresStore;

/// The index memctl recommends when `checkpoints` is large, as an operator would create it
/// (`CONCURRENTLY`: the app's writes go on while it is built), in the table's schema (`%I`).
const INDEX_ADVICE: &str = "CREATE INDEX CONCURRENTLY IF NOT EXISTS checkpoints_checkpoint_id_c_idx ON %I.checkpoints (checkpoint_id COLLATE \"C\")";

/// Checkpoint rows from which `stats` recommends the index when there is none: at 3,000,000
/// rows the scan of the primary key takes 2.5 s.
pub const INDEX_ADVICE_ROWS: u64 = 500_000;

/// Rows the index check plans for (about what a list of 50 threads reads).
const PLANNED_ROWS: i64 = 264;

/// The newest checkpoint rows, largest id first (bytewise, as the savers compare ids).
const NEWEST_ROWS: &str = "SELECT thread_id, checkpoint_id FROM checkpoints \
                           ORDER BY checkpoint_id COLLATE \"C\" DESC LIMIT $1";

/// The smallest checkpoint id (bytewise).
const SMALLEST_ID: &str = "SELECT min(checkpoint_id COLLATE \"C\") FROM checkpoints";

/// The most rows read before giving up on the index (threads with very many recent
/// checkpoints each): then every thread's latest id is read, as without the index.
const MOST_ROWS: i64 = 1 << 20;

impl PostgresStore {
    /// True when the server would read the newest checkpoint rows (`limit` of them) from an
    /// index instead of sorting the table: an index whose first column is `checkpoint_id`
    /// in the bytewise (`"C"`) order.
    pub(super) fn has_newest_index(&self, limit: i64) -> Result<bool> {
        let plan = self.query(
            &format!(
                "EXPLAIN (COSTS OFF) {}",
                NEWEST_ROWS.replace("$1", &limit.to_string())
            ),
            &[],
        )?;
        let mut lines = Vec::with_capacity(plan.len());
        for r in &plan {
            lines.push(super::get_str(r, 0)?);
        }
        Ok(lines.iter().any(|l| l.contains("Index")) && !lines.iter().any(|l| l.contains("Sort")))
    }

    /// The statement that creates the recommended index on this store's `checkpoints`, or
    /// `None` when an index already gives the newest rows.
    pub(super) fn index_advice(&self) -> Result<Option<String>> {
        if self.has_newest_index(PLANNED_ROWS)? {
            return Ok(None);
        }
        self.advice_in_schema(INDEX_ADVICE)
    }

    /// `advice` (a statement on `%I.checkpoints`) in the schema of this store's `checkpoints`.
    pub(super) fn advice_in_schema(&self, advice: &str) -> Result<Option<String>> {
        let rows = self.query(
            "SELECT format($1::text, n.nspname) FROM pg_class c \
             JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = 'checkpoints'::regclass",
            &[&advice],
        )?;
        match rows.first() {
            Some(r) => Ok(Some(super::get_str(r, 0)?)),
            None => Ok(None),
        }
    }

    /// [`crate::storage::CheckpointStore::newest_threads`]: the newest rows read from the
    /// index, more each time until they settle which threads are the `n` newest; `None`
    /// without such an index, when an id is not a lowercase uuid6 (their byte order may not
    /// be their time order), or past [`MOST_ROWS`].
    pub(super) fn newest_by_index(&self, n: usize) -> Result<Option<Vec<String>>> {
        let mut limit = i64::try_from(n)
            .unwrap_or(i64::MAX)
            .saturating_mul(4)
            .saturating_add(64);
        if limit > MOST_ROWS || !self.has_newest_index(limit)? {
            return Ok(None);
        }
        // A thread whose ids all sort below the rows read is taken as older than they are:
        // true when every id is a uuid6 (checked for the rows read and the smallest id).
        let smallest = self.query(SMALLEST_ID, &[])?;
        let smallest: Option<String> = match smallest.first() {
            Some(r) => r.try_get(0).map_err(|e| self.err(e))?,
            None => None,
        };
        if smallest.is_some_and(|id| !sorts_by_time(&id)) {
            return Ok(None);
        }
        loop {
            let rows = self.query(NEWEST_ROWS, &[&limit])?;
            let mut got = Vec::with_capacity(rows.len());
            for r in &rows {
                got.push((super::get_str(r, 0)?, super::get_str(r, 1)?));
            }
            let exhausted = (got.len() as i64) < limit;
            match newest_of_rows(n, &got, exhausted) {
                NewestRows::Threads(threads) => return Ok(Some(threads)),
                NewestRows::Unordered => return Ok(None),
                NewestRows::More if limit >= MOST_ROWS => return Ok(None),
                NewestRows::More => limit = limit.saturating_mul(8).min(MOST_ROWS),
            }
        }
    }
}
