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

/// Runs `produce` on a second read-only handle on `store` in a thread of its own, its batches
/// handed to `take` here (at most two waiting between them); stops both when `take` returns
/// false or fails.
fn on_second_handle<T: Send>(
    store: &dyn CheckpointStore,
    produce: impl FnOnce(&dyn CheckpointStore, &mut dyn FnMut(Vec<T>) -> Result<bool>) -> Result<()>
        + Send,
    take: &mut dyn FnMut(Vec<T>) -> Result<bool>,
) -> Result<()> {
    let reader = store.reopen_read_only()?;
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
