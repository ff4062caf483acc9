//! Every thread of a database, a batch at a time in thread-id order, read on a second handle
//! while the caller works on the first: what whole-database lists (`threads list`,
//! `tokens --all`) read, with memory flat in the number of threads.

use anyhow::Result;

use crate::storage::{CheckpointStore, ThreadSummary};

/// Threads per batch handed to the caller.
pub const BATCH: usize = 1024;

/// Hands `take` every thread's aggregates ([`CheckpointStore::stream_threads`]) a batch at a
/// time, in thread-id order, until `take` returns false. They are read on a second read-only
/// handle (on another core), one batch ahead: `take` may use `store`.
pub fn threads(
    store: &dyn CheckpointStore,
    take: &mut dyn FnMut(Vec<ThreadSummary>) -> Result<bool>,
) -> Result<()> {
    on_second_handle(store, |s, f| s.stream_threads(BATCH, f), take)
}

/// Hands `take` every `(thread, latest root checkpoint id)`
/// ([`CheckpointStore::stream_latest_root_ids`]) a batch at a time, in thread-id order, as
/// [`threads`] does.
pub fn latest_root_ids(
    store: &dyn CheckpointStore,
    take: &mut dyn FnMut(Vec<(String, String)>) -> Result<bool>,
) -> Result<()> {
    on_second_handle(store, |s, f| s.stream_latest_root_ids(BATCH, f), take)
}

/// Hands `take` every thread's aggregates a batch at a time, in thread-id order, for a run
/// that works on each batch through `store` and, when `writing`, writes through it between
/// batches. Where a read held open beside the writes would stall them (SQLite:
/// [`crate::storage::Sharing::second_reader_stalls_writes`]), a write run pages on `store` itself
/// ([`CheckpointStore::page_threads`]); otherwise they stream from a second handle, in
/// `store`'s snapshot where it can share it ([`CheckpointStore::reopen_beside`]).
pub fn threads_for_run(
    store: &dyn CheckpointStore,
    writing: bool,
    take: &mut dyn FnMut(Vec<ThreadSummary>) -> Result<bool>,
) -> Result<()> {
    if writing
        && store
            .sharing()
            .is_some_and(|s| s.second_reader_stalls_writes())
    {
        return store.page_threads(BATCH, take);
    }
    beside(store, |s, f| s.stream_threads(BATCH, f), take)
}

/// `(thread, latest root checkpoint id)` of every thread a batch at a time, in thread-id
/// order, for a run that works (and, when `writing`, writes) through `store`, as
/// [`threads_for_run`] hands out the threads.
pub fn latest_root_ids_for_run(
    store: &dyn CheckpointStore,
    writing: bool,
    take: &mut dyn FnMut(Vec<(String, String)>) -> Result<bool>,
) -> Result<()> {
    if writing
        && store
            .sharing()
            .is_some_and(|s| s.second_reader_stalls_writes())
    {
        return store.page_latest_root_ids(BATCH, take);
    }
    beside(store, |s, f| s.stream_latest_root_ids(BATCH, f), take)
}

/// [`on_second_handle`] on a handle from [`CheckpointStore::reopen_beside`].
fn beside<T: Send>(
    store: &dyn CheckpointStore,
    produce: impl FnOnce(&dyn CheckpointStore, &mut dyn FnMut(Vec<T>) -> Result<bool>) -> Result<()>
        + Send,
    take: &mut dyn FnMut(Vec<T>) -> Result<bool>,
) -> Result<()> {
    run_beside(store.reopen_beside()?, produce, take)
}

/// Runs `produce` on a second read-only handle on `store` in a thread of its own, its batches
/// handed to `take` here (at most two waiting between them); stops both when `take` returns
/// false or fails.
fn on_second_handle<T: Send>(
    store: &dyn CheckpointStore,
    produce: impl FnOnce(&dyn CheckpointStore, &mut dyn FnMut(Vec<T>) -> Result<bool>) -> Result<()>
        + Send,
    take: &mut dyn FnMut(Vec<T>) -> Result<bool>,
) -> Result<()> {
    run_beside(store.reopen_read_only()?, produce, take)
}

/// [`on_second_handle`] on `reader`.
fn run_beside<T: Send>(
    reader: Box<dyn CheckpointStore>,
    produce: impl FnOnce(&dyn CheckpointStore, &mut dyn FnMut(Vec<T>) -> Result<bool>) -> Result<()>
        + Send,
    take: &mut dyn FnMut(Vec<T>) -> Result<bool>,
) -> Result<()> {
    let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<T>>(2);
    std::thread::scope(|s| {
        let producer = s.spawn(move || produce(&*reader, &mut |batch| Ok(tx.send(batch).is_ok())));
        let mut taken = Ok(());
        for batch in rx.iter() {
            match take(batch) {
                Ok(true) => {}
                Ok(false) => break,
                Err(e) => {
                    taken = Err(e);
                    break;
                }
            }
        }
        // The producer's next send fails: it stops.
        drop(rx);
        let produced = match producer.join() {
            Ok(r) => r,
            Err(panic) => std::panic::resume_unwind(panic),
        };
        taken.and(produced)
    })
}
