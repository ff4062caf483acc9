//! What gc keeps must be readable: the kept checkpoints of a thread decode (blob and
//! metadata), and so do the pending writes of its latest root one. Checked for a chunk of
//! threads at once ([`check_many`]: a few round trips to a server for all of them instead of
//! two per thread), with the outcome of checking each thread alone ([`check_readable`]).

use anyhow::Result;

use crate::codec::aes::Keyring;
use crate::read::readable;
use crate::storage::{CheckpointInfo, CheckpointRow, CheckpointStore, WriteRow};

/// Kept checkpoints of a thread read at once by [`check_readable`].
const READ_CHUNK: usize = 8;

/// Kept checkpoints (of any threads) read at once by [`check_many`]: what bounds the
/// checkpoints held at a time.
const READ_MANY: usize = 32;

/// One thread to check: its id and the checkpoints gc keeps of it.
pub(super) type Wanted<'a> = (&'a str, Vec<&'a CheckpointInfo>);

/// [`check_readable`] of each of `wanted`, in order, reading the checkpoints of all of them
/// [`READ_MANY`] at a time and the latest root checkpoints' writes in one go. Each thread's
/// outcome is the one it has alone (its first problem, in the same order); a read that fails
/// as a whole is not pinned on every thread: they are then checked one at a time.
pub(super) fn check_many(
    store: &dyn CheckpointStore,
    keys: &Keyring,
    wanted: &[Wanted<'_>],
) -> Vec<Result<()>> {
    if wanted.len() < 2 {
        return wanted
            .iter()
            .map(|(t, kept)| check_readable(store, keys, t, kept))
            .collect();
    }
    match try_many(store, keys, wanted) {
        Ok(out) => out,
        Err(_) => wanted
            .iter()
            .map(|(t, kept)| check_readable(store, keys, t, kept))
            .collect(),
    }
}

/// [`check_many`]'s reads; an error when one of them failed as a whole.
fn try_many(
    store: &dyn CheckpointStore,
    keys: &Keyring,
    wanted: &[Wanted<'_>],
) -> Result<Vec<Result<()>>> {
    let roots: Vec<Option<&str>> = wanted.iter().map(|(_, kept)| latest_root(kept)).collect();
    // The writes of each thread's latest root checkpoint, read once for all.
    let root_keys: Vec<(&str, &str, &str)> = wanted
        .iter()
        .zip(&roots)
        .filter_map(|((t, _), r)| r.map(|id| (*t, "", id)))
        .collect();
    let mut root_writes = store.writes_at(&root_keys)?.into_iter();
    let mut writes: Vec<Option<Vec<WriteRow>>> = roots
        .iter()
        .map(|r| r.and_then(|_| root_writes.next()))
        .collect();
    // Every kept checkpoint, thread by thread in the order each thread checks them.
    let at: Vec<(usize, (&str, &str, &str))> = wanted
        .iter()
        .enumerate()
        .flat_map(|(n, (t, kept))| {
            kept.iter()
                .map(move |c| (n, (*t, c.ns.as_str(), c.id.as_str())))
        })
        .collect();
    let mut out: Vec<Result<()>> = wanted.iter().map(|_| Ok(())).collect();
    for chunk in at.chunks(READ_MANY) {
        let ask: Vec<(&str, &str, &str)> = chunk.iter().map(|(_, k)| *k).collect();
        for ((n, c), row) in chunk.iter().zip(store.checkpoints_at(&ask)?) {
            if out[*n].is_err() {
                continue; // its first problem is its outcome
            }
            let mut given = || Ok(writes[*n].take().unwrap_or_default());
            out[*n] = row.and_then(|row| check_kept(keys, c, row, roots[*n], &mut given));
        }
    }
    Ok(out)
}

/// The latest root checkpoint among `kept` (the one whose pending writes are checked too).
fn latest_root<'a>(kept: &[&'a CheckpointInfo]) -> Option<&'a str> {
    kept.iter()
        .filter(|c| c.ns.is_empty())
        .map(|c| c.id.as_str())
        .max()
}

/// Checks that the checkpoints gc keeps decode (blob and metadata), with the pending writes
/// of the latest root one: what the thread will be after the gc. Encrypted rows are checked
/// when a key is given (decrypted with it); without one they are left to their AES tag, as
/// gc needs no key.
pub(super) fn check_readable(
    store: &dyn CheckpointStore,
    keys: &Keyring,
    thread: &str,
    kept: &[&CheckpointInfo],
) -> Result<()> {
    let root = latest_root(kept);
    let at: Vec<(&str, &str, &str)> = kept
        .iter()
        .map(|c| (thread, c.ns.as_str(), c.id.as_str()))
        .collect();
    for chunk in at.chunks(READ_CHUNK) {
        for (c, row) in chunk.iter().zip(store.checkpoints_at(chunk)?) {
            let mut writes = || store.writes(c.0, c.1, c.2);
            check_kept(keys, c, row?, root, &mut writes)?;
        }
    }
    Ok(())
}

/// [`check_readable`] of one kept checkpoint `c` (`(thread, ns, id)`), read as `row`;
/// `writes` gives its pending writes (asked only for the latest root checkpoint `root`). The
/// checks are [`crate::read::readable`]'s, which `copy` and `migrate` make of what they move.
fn check_kept(
    keys: &Keyring,
    c: &(&str, &str, &str),
    row: Option<CheckpointRow>,
    root: Option<&str>,
    writes: &mut dyn FnMut() -> Result<Vec<WriteRow>>,
) -> Result<()> {
    let (thread, ns, id) = *c;
    let Some(row) = row else {
        return Ok(());
    };
    readable::check_checkpoint(keys, thread, &row)?;
    if ns.is_empty() && Some(id) == root {
        readable::check_writes(keys, thread, &row.checkpoint_id, &writes()?)?;
    }
    Ok(())
}
