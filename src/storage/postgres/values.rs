//! A thread's stored values, each row once and not assembled (`forget` collecting the
//! strings of a thread it deletes): the checkpoints' JSON and metadata, every blob row, every
//! write row, each streamed from its table. Assembling every checkpoint instead decodes a
//! `messages` blob once per checkpoint that names it, which on a long thread is its history
//! squared (at 10 GB most of `forget`'s two minutes of CPU).

use anyhow::Result;
use postgres::fallible_iterator::FallibleIterator;
use postgres::types::ToSql;

use super::{get_str, PostgresStore};
use crate::storage::{ThreadValue, ValueOf};

impl PostgresStore {
    /// [`crate::storage::CheckpointStore::visit_values`], in one snapshot (a writable store
    /// opens a `REPEATABLE READ` transaction for the reads, as `visit_thread` does).
    pub(super) fn visit_stored_values(
        &self,
        thread_id: &str,
        f: &mut dyn FnMut(ThreadValue<'_>) -> Result<()>,
    ) -> Result<()> {
        self.in_read_snapshot(|| self.stream_values(thread_id, f))
    }

    fn stream_values(
        &self,
        thread_id: &str,
        f: &mut dyn FnMut(ThreadValue<'_>) -> Result<()>,
    ) -> Result<()> {
        let e = |e| self.err(e);
        let mut c = self.client();
        let params: [&(dyn ToSql + Sync); 1] = [&thread_id];
        let mut it = c
            .query_raw(
                "SELECT checkpoint_id, checkpoint::text, metadata::text \
                 FROM checkpoints WHERE thread_id = $1",
                params,
            )
            .map_err(e)?;
        while let Some(r) = it.next().map_err(e)? {
            let place = format!("checkpoint {}", get_str(&r, 0)?);
            if let Some(m) = r.try_get::<_, Option<&str>>(2).map_err(e)? {
                f(ThreadValue {
                    place: &format!("the metadata of {place}"),
                    kind: ValueOf::Metadata,
                    type_name: "json",
                    bytes: m.as_bytes(),
                })?;
            }
            f(ThreadValue {
                place: &place,
                kind: ValueOf::Checkpoint,
                type_name: "json",
                bytes: get_str(&r, 1)?.as_bytes(),
            })?;
        }
        drop(it);
        let blobs = "SELECT 'the value of channel ' || quote_literal(channel) || ' at version ' || version, \
                     type, blob FROM checkpoint_blobs WHERE thread_id = $1";
        let writes = "SELECT 'a pending write to ' || quote_literal(channel) || ' on checkpoint ' || checkpoint_id, \
                      type, blob FROM checkpoint_writes WHERE thread_id = $1";
        for (sql, kind) in [(blobs, ValueOf::Checkpoint), (writes, ValueOf::Write)] {
            let mut it = c.query_raw(sql, params).map_err(e)?;
            while let Some(r) = it.next().map_err(e)? {
                f(ThreadValue {
                    place: &get_str(&r, 0)?,
                    kind,
                    type_name: &get_str(&r, 1)?,
                    bytes: r
                        .try_get::<_, Option<&[u8]>>(2)
                        .map_err(e)?
                        .unwrap_or_default(),
                })?;
            }
        }
        Ok(())
    }
}
