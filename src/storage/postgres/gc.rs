//! gc's deletions of a whole chunk of threads in one statement
//! ([`CheckpointStore::apply_gc_many`]) instead of three round trips per thread (a savepoint,
//! the thread's statement, the release).
//!
//! The statement is the one-thread statement of [`CheckpointStore::apply_gc`] with every part
//! keyed by thread as well: each thread is checked on its own (its newest checkpoint is still
//! the expected one and no write names a newer one), and only the threads that pass lose
//! their deleted checkpoints, those checkpoints' writes, and the blob rows no kept checkpoint
//! of their namespace names; the parents of their orphaned checkpoints are cleared. Threads
//! do not share rows, so one thread's part changes nothing another's reads. It runs in a
//! savepoint of the batch's transaction: a statement that fails (which no one thread can be
//! blamed for) is rolled back, and the threads are applied one at a time instead, so the
//! outcome is the per-thread one, a failing thread stopping the pass where it did.

use std::collections::HashSet;

use anyhow::{anyhow, Result};

use super::PostgresStore;
use crate::storage::{Deleted, GcItem};

impl PostgresStore {
    /// `items` (none with rewrites, no thread twice) applied in one statement, in a savepoint
    /// of the open batch; `None` when they are not such items, or the statement failed (then
    /// it was rolled back: nothing applied). An error when the savepoint cannot be ended
    /// (what was applied is then unknown: the pass stops).
    pub(super) fn gc_together(&self, items: &[GcItem<'_>]) -> Result<Option<Vec<Option<Deleted>>>> {
        let mut seen = HashSet::new();
        let plain = items
            .iter()
            .all(|i| i.rewrites.is_empty() && seen.insert(i.thread_id));
        if !plain || items.len() < 2 {
            return Ok(None);
        }
        let mut c = self.client();
        if c.batch_execute("SAVEPOINT memctl_gc").is_err() {
            return Ok(None);
        }
        let (end, done) = match self.gc_statement(&mut c, items) {
            Ok(done) => ("RELEASE memctl_gc", Some(done)),
            Err(_) => ("ROLLBACK TO memctl_gc; RELEASE memctl_gc", None),
        };
        c.batch_execute(end).map_err(|e| self.err(e))?;
        Ok(done)
    }

    fn gc_statement(
        &self,
        c: &mut postgres::Client,
        items: &[GcItem<'_>],
    ) -> Result<Vec<Option<Deleted>>> {
        let e = |e| self.err(e);
        let threads: Vec<&str> = items.iter().map(|i| i.thread_id).collect();
        let latest: Vec<&str> = items.iter().map(|i| i.expected_latest).collect();
        let (dt, dns, dids) = keyed(items, |i| i.delete);
        let (ot, ons, oids) = keyed(items, |i| i.orphaned);
        let stmt = self.prepared(c, GC_MANY_SQL)?;
        let rows = c
            .query(
                &stmt,
                &[&threads, &latest, &dt, &dns, &dids, &ot, &ons, &oids],
            )
            .map_err(e)?;
        if rows.len() != items.len() {
            return Err(anyhow!(
                "the server answered for {} of {} threads",
                rows.len(),
                items.len()
            ));
        }
        rows.iter()
            .map(|r| {
                if !r.try_get::<_, bool>(0).map_err(e)? {
                    return Ok(None);
                }
                let n = |i: usize| -> Result<u64> {
                    Ok(r.try_get::<_, i64>(i).map_err(e)?.max(0) as u64)
                };
                Ok(Some(Deleted {
                    threads: 0,
                    checkpoints: n(1)?,
                    bytes: n(2)? + n(4)? + n(5)?,
                    writes: n(3)?,
                }))
            })
            .collect()
    }
}

/// The `(ns, id)` pairs `pick` gives of each item, as three columns with the item's thread.
#[allow(clippy::type_complexity)]
fn keyed<'a>(
    items: &[GcItem<'a>],
    pick: impl Fn(&GcItem<'a>) -> &'a [(String, String)],
) -> (Vec<&'a str>, Vec<&'a str>, Vec<&'a str>) {
    let mut cols: (Vec<&str>, Vec<&str>, Vec<&str>) = Default::default();
    for i in items {
        for (ns, id) in pick(i) {
            cols.0.push(i.thread_id);
            cols.1.push(ns.as_str());
            cols.2.push(id.as_str());
        }
    }
    cols
}

/// [`CheckpointStore::apply_gc`]'s statement for many threads: `$1`/`$2` each thread and its
/// expected newest checkpoint, `$3..$5` the `(thread, ns, id)` to delete, `$6..$8` the
/// orphaned ones. One row per thread, in the order given: whether it was unmoved (and so
/// collected), checkpoints deleted and their bytes, writes deleted and their bytes, blob
/// bytes deleted.
const GC_MANY_SQL: &str = "\
WITH t AS (SELECT k.thread_id, k.latest, k.i \
    FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS k(thread_id, latest, i)), \
  ok AS (SELECT t.thread_id FROM t WHERE COALESCE( \
      (SELECT max(c.checkpoint_id COLLATE \"C\") FROM checkpoints c WHERE c.thread_id = t.thread_id) = t.latest \
      AND NOT EXISTS (SELECT 1 FROM checkpoint_writes w \
                      WHERE w.thread_id = t.thread_id AND w.checkpoint_id COLLATE \"C\" > t.latest), \
      false)), \
  del AS (SELECT k.thread_id, k.ns, k.id FROM unnest($3::text[], $4::text[], $5::text[]) AS k(thread_id, ns, id) \
    WHERE k.thread_id IN (SELECT thread_id FROM ok)), \
  dw AS (DELETE FROM checkpoint_writes w USING del \
    WHERE w.thread_id = ANY($1::text[]) AND w.thread_id = del.thread_id AND w.checkpoint_ns = del.ns AND w.checkpoint_id = del.id \
    RETURNING w.thread_id, octet_length(w.blob) AS n), \
  dc AS (DELETE FROM checkpoints c USING del \
    WHERE c.thread_id = ANY($1::text[]) AND c.thread_id = del.thread_id AND c.checkpoint_ns = del.ns AND c.checkpoint_id = del.id \
    RETURNING c.thread_id, c.checkpoint_ns AS ns, \
              (pg_column_size(c.checkpoint) + pg_column_size(c.metadata))::bigint AS n, \
              c.checkpoint -> 'channel_versions' AS versions), \
  up AS (UPDATE checkpoints c SET parent_checkpoint_id = NULL \
    FROM unnest($6::text[], $7::text[], $8::text[]) AS k(thread_id, ns, id) \
    WHERE k.thread_id IN (SELECT thread_id FROM ok) \
      AND c.thread_id = k.thread_id AND c.checkpoint_ns = k.ns AND c.checkpoint_id = k.id \
    RETURNING 1), \
  freed AS (SELECT DISTINCT dc.thread_id, dc.ns, v.key AS channel, v.value AS version \
    FROM dc CROSS JOIN LATERAL jsonb_each_text(dc.versions) v), \
  kept AS (SELECT DISTINCT c.thread_id, c.checkpoint_ns AS ns, v.key AS channel, v.value AS version \
    FROM checkpoints c CROSS JOIN LATERAL jsonb_each_text(c.checkpoint -> 'channel_versions') v \
    WHERE c.thread_id = ANY($1::text[]) \
      AND (c.thread_id, c.checkpoint_ns) IN (SELECT thread_id, ns FROM freed) \
      AND NOT EXISTS (SELECT 1 FROM del \
                      WHERE del.thread_id = c.thread_id AND del.ns = c.checkpoint_ns AND del.id = c.checkpoint_id)), \
  garbage AS (SELECT thread_id, ns, channel, version FROM freed \
    EXCEPT SELECT thread_id, ns, channel, version FROM kept), \
  db AS (DELETE FROM checkpoint_blobs b USING garbage g \
    WHERE b.thread_id = ANY($1::text[]) AND b.thread_id = g.thread_id AND b.checkpoint_ns = g.ns AND b.channel = g.channel AND b.version = g.version \
    RETURNING b.thread_id, COALESCE(octet_length(b.blob), 0) AS n), \
  cs AS (SELECT thread_id, count(*) AS n, sum(n)::bigint AS bytes FROM dc GROUP BY thread_id), \
  ws AS (SELECT thread_id, count(*) AS n, sum(n)::bigint AS bytes FROM dw GROUP BY thread_id), \
  bs AS (SELECT thread_id, sum(n)::bigint AS bytes FROM db GROUP BY thread_id) \
SELECT t.thread_id IN (SELECT thread_id FROM ok), \
       COALESCE(cs.n, 0), COALESCE(cs.bytes, 0), COALESCE(ws.n, 0), COALESCE(ws.bytes, 0), \
       COALESCE(bs.bytes, 0), (SELECT count(*) FROM up) \
FROM t LEFT JOIN cs ON cs.thread_id = t.thread_id LEFT JOIN ws ON ws.thread_id = t.thread_id \
  LEFT JOIN bs ON bs.thread_id = t.thread_id \
ORDER BY t.i";
