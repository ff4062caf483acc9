//! The read connections of a whole-database read (`--jobs`): the command's own store and, for
//! a read large enough to split, more read-only handles on the same database, each read on a
//! thread of its own ([`crate::par::in_batches`]). On PostgreSQL the extra handles read in
//! the first one's snapshot ([`CheckpointStore::reopen_beside`]): whatever the number of
//! connections, the same rows are read, and merged in the same order.

use std::cell::{Cell, RefCell};

use anyhow::{Context, Result};

use crate::storage::{CheckpointRow, CheckpointStore};

/// The most connections `--jobs` opens.
pub const MAX_JOBS: usize = 64;

/// The fewest batches of [`crate::par::BATCH`] threads a connection of a split read gets: a
/// new connection (about 15 ms with TLS on a local server, before its first batch) pays for
/// itself only over several batches.
pub const MIN_BATCHES_PER_READER: usize = 3;

/// The handles a whole-database read reads on: `store`, and up to `jobs - 1` more, opened the
/// first time a read is large enough to split (and kept for the next reads).
pub struct Readers<'a> {
    store: &'a dyn CheckpointStore,
    /// `--jobs`, or `None`: the default ([`default_jobs`]), found when first needed.
    jobs: Cell<Option<usize>>,
    more: RefCell<Vec<Box<dyn CheckpointStore>>>,
}

impl<'a> Readers<'a> {
    /// Reads on `store` and `jobs - 1` more handles (1 to [`MAX_JOBS`] in all); `None`: as
    /// many as [`default_jobs`] says for this store and machine.
    pub fn new(store: &'a dyn CheckpointStore, jobs: Option<usize>) -> Readers<'a> {
        Readers {
            store,
            jobs: Cell::new(jobs.map(|j| j.clamp(1, MAX_JOBS))),
            more: RefCell::new(Vec::new()),
        }
    }

    /// Reads on `store` alone.
    pub fn one(store: &'a dyn CheckpointStore) -> Readers<'a> {
        Readers::new(store, Some(1))
    }

    /// The command's own store (what reads that are not split use).
    pub fn store(&self) -> &'a dyn CheckpointStore {
        self.store
    }

    /// How many handles a read of `batches` batches is split across (1: not split): the
    /// jobs, and no more than gives each [`MIN_BATCHES_PER_READER`] batches.
    pub fn split_across(&self, batches: usize) -> Result<usize> {
        let most = batches / MIN_BATCHES_PER_READER;
        if most < 2 {
            return Ok(1);
        }
        let jobs = match self.jobs.get() {
            Some(j) => j,
            None => {
                let j = default_jobs(
                    match self.store.sharing() {
                        Some(s) => s.query_parallelism()?,
                        None => None,
                    },
                    crate::par::cores(),
                );
                self.jobs.set(Some(j));
                j
            }
        };
        Ok(jobs.min(most).max(1))
    }

    /// Calls `read` on this thread with the command's store and `n - 1` other handles (opened
    /// when fewer are open), each lent whole to whoever reads on it.
    pub fn with_handles<T>(
        &self,
        n: usize,
        read: impl FnOnce(&'a dyn CheckpointStore, &mut [Box<dyn CheckpointStore>]) -> Result<T>,
    ) -> Result<T> {
        let mut more = self.more.borrow_mut();
        while more.len() + 1 < n {
            let which = more.len() + 2;
            let opened = self.store.reopen_beside().with_context(|| {
                format!("cannot open read connection {which} of {n} (--jobs 1 reads on one)")
            })?;
            more.push(opened);
        }
        let others = n.saturating_sub(1);
        read(self.store, &mut more[..others])
    }
}

/// The read connections a whole-database read uses unless `--jobs` says otherwise: on a
/// server, the processes it lets one query use (`parallelism`, see
/// [`crate::storage::Sharing::query_parallelism`]: PostgreSQL's `max_parallel_workers_per_gather`
/// plus one, 3 by default), but no more than this machine's `cores`, which decode what
/// they read; on a file (`None`), one: its reads already run beside the decoding
/// ([`crate::par::pipeline`]), and more did not measure faster.
pub fn default_jobs(parallelism: Option<usize>, cores: usize) -> usize {
    match parallelism {
        Some(p) => p.min(cores).clamp(1, MAX_JOBS),
        None => 1,
    }
}

/// [`super::latest::map_latest`], where `f` is handed each `(thread, checkpoint id)` of `ids` with its row as
/// read: `None` when there is no such checkpoint (any more), or the row's own error.
pub fn map_at<R: Send>(
    readers: &Readers<'_>,
    ids: &[(String, String)],
    f: impl Fn(&(String, String), Result<Option<CheckpointRow>>) -> Result<R> + Sync,
) -> Result<Vec<Result<R>>> {
    let n = readers.split_across(ids.len().div_ceil(crate::par::BATCH))?;
    if n > 1 {
        return readers.with_handles(n, |here, others| {
            let f = &f;
            let mut read_here = |batch: &[(String, String)]| -> Result<Vec<Result<R>>> {
                Ok(rows_at(here, batch)?
                    .into_iter()
                    .zip(batch)
                    .map(|(row, id)| f(id, row))
                    .collect())
            };
            let away: Vec<crate::par::SentReader<'_, (String, String), Result<R>>> = others
                .iter_mut()
                .map(|store| {
                    Box::new(
                        move |batch: &[(String, String)]| -> Result<Vec<Result<R>>> {
                            Ok(rows_at(&**store, batch)?
                                .into_iter()
                                .zip(batch)
                                .map(|(row, id)| f(id, row))
                                .collect())
                        },
                    ) as crate::par::SentReader<'_, _, _>
                })
                .collect();
            crate::par::in_batches(ids, crate::par::BATCH, &mut read_here, away)
        });
    }
    let store = readers.store();
    let mut out = Vec::with_capacity(ids.len());
    // The ids by reference, so that each read row goes to the workers with its id.
    let ids: Vec<&(String, String)> = ids.iter().collect();
    crate::par::pipeline_batches(
        &ids,
        crate::par::cores(),
        |batch| Ok(batch.iter().copied().zip(rows_at(store, batch)?).collect()),
        |(id, row)| f(id, row),
        |results| {
            out.extend(results);
            Ok(())
        },
    )?;
    Ok(out)
}

/// The root checkpoints `batch` names, read in one call ([`CheckpointStore::checkpoints_at`]):
/// each its own outcome (`None`: no such checkpoint); the outer error is the database's.
fn rows_at<K: std::borrow::Borrow<(String, String)>>(
    store: &dyn CheckpointStore,
    batch: &[K],
) -> Result<Vec<Result<Option<CheckpointRow>>>> {
    let keys: Vec<(&str, &str, &str)> = batch
        .iter()
        .map(|k| {
            let (thread, id) = k.borrow();
            (thread.as_str(), "", id.as_str())
        })
        .collect();
    let rows = store.checkpoints_at(&keys)?;
    anyhow::ensure!(rows.len() == batch.len(), "a batch read lost checkpoints");
    Ok(rows)
}

#[cfg(test)]
mod tests {
    #[test]
    fn defaults() {
        use super::default_jobs;
        assert_eq!(default_jobs(Some(3), 2), 2);
        assert_eq!(default_jobs(Some(3), 16), 3);
        assert_eq!(default_jobs(Some(1), 16), 1);
        assert_eq!(default_jobs(Some(3), 0), 1);
        assert_eq!(default_jobs(Some(1000), 1000), super::MAX_JOBS);
        assert_eq!(default_jobs(None, 16), 1);
    }
}
