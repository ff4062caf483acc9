//! A checkpoint of a thread read from the store: the latest or the one named (by id or
//! prefix), whole or shallow (its message list left stored and read one message at a time),
//! as stored or as `get_state` shows it (DeltaChannels rebuilt), and its pending writes.

use std::ops::Range;

use anyhow::Result;

use crate::codec::aes::Keyring;
use crate::model::checkpoint::{StoredList, StoredMessages};
use crate::model::state::{pending_work, PendingWork, PendingWrite};
use crate::model::Checkpoint;
use crate::storage::{CheckpointRow, CheckpointStore};

use super::replay::DeltaValue;
use super::thread::{require_thread, resolve_checkpoint_id, Missing};
use super::{decode_writes, LoadedCheckpoint};

/// Loads a checkpoint of a thread: the latest, or the one named (decrypted with `keys` when
/// encrypted).
pub fn load_checkpoint(
    store: &dyn CheckpointStore,
    keys: &Keyring,
    thread: &str,
    ns: &str,
    id: Option<&str>,
) -> Result<LoadedCheckpoint> {
    LoadedCheckpoint::open(keys, fetch_checkpoint(store, thread, ns, id)?)
}

/// The stored row of a checkpoint of a thread (the latest, or the one named by id or
/// prefix), as it is stored.
pub fn fetch_checkpoint(
    store: &dyn CheckpointStore,
    thread: &str,
    ns: &str,
    id: Option<&str>,
) -> Result<CheckpointRow> {
    require_thread(store, thread, ns)?;
    // A whole id is read once (on Postgres a row comes with its blobs); only a prefix that is
    // no id of its own is resolved first.
    let row = match id {
        None => store.checkpoint(thread, ns, None)?,
        Some(id) => match store.checkpoint(thread, ns, Some(id))? {
            Some(row) => Some(row),
            None => {
                let full = resolve_checkpoint_id(store, thread, ns, id)?;
                store.checkpoint(thread, ns, Some(&full))?
            }
        },
    };
    row.ok_or_else(|| {
        Missing::NoCheckpoints {
            thread: thread.to_owned(),
        }
        .into()
    })
}

/// Loads and decodes the pending writes of a checkpoint (decrypted with `keys` when
/// encrypted).
pub fn load_writes(
    store: &dyn CheckpointStore,
    keys: &Keyring,
    cp: &CheckpointRow,
) -> Result<Vec<PendingWrite>> {
    decode_writes(
        keys,
        store.writes(&cp.thread_id, &cp.checkpoint_ns, &cp.checkpoint_id)?,
        &cp.thread_id,
        &cp.checkpoint_id,
    )
}

/// Loads a checkpoint of a thread (the latest, or the one named) like
/// [`load_checkpoint`], with its errors, but leaves its message list stored: read it
/// one message at a time from the returned [`StoredMessages`]. The messages are the state's,
/// as `get_state` shows them: a DeltaChannel's are rebuilt (from the ancestors' rows), and
/// every DeltaChannel of the checkpoint comes with its value.
pub fn load_shallow(
    store: &dyn CheckpointStore,
    keys: &Keyring,
    thread: &str,
    ns: &str,
    id: Option<&str>,
) -> Result<(LoadedCheckpoint, StoredMessages, Vec<DeltaValue>)> {
    let (cp, messages) = load_stored(store, keys, thread, ns, id)?;
    let (messages, deltas) = super::replay::state_messages(store, keys, &cp, messages)?;
    Ok((cp, messages, deltas))
}

/// A checkpoint's state as `get_state` shows it, its message list left stored (see
/// [`load_shallow`]), with what the thread is waiting on.
pub struct State {
    /// The checkpoint.
    pub cp: LoadedCheckpoint,
    /// Its messages (a DeltaChannel's rebuilt).
    pub messages: StoredMessages,
    /// Its DeltaChannels and their values.
    pub deltas: Vec<DeltaValue>,
    /// Its next nodes and interrupts (from its pending writes).
    pub work: PendingWork,
}

/// [`load_shallow`] and what the thread is waiting on (its pending writes read): all that
/// `show` shows of a checkpoint.
pub fn load_state(
    store: &dyn CheckpointStore,
    keys: &Keyring,
    thread: &str,
    ns: &str,
    id: Option<&str>,
) -> Result<State> {
    let (cp, messages, deltas) = load_shallow(store, keys, thread, ns, id)?;
    let writes = load_writes(store, keys, &cp.row)?;
    let work = pending_work(&cp.checkpoint, &writes);
    Ok(State {
        cp,
        messages,
        deltas,
        work,
    })
}

/// [`load_shallow`] without the DeltaChannel replay: the message list as the checkpoint
/// stores it.
pub fn load_stored(
    store: &dyn CheckpointStore,
    keys: &Keyring,
    thread: &str,
    ns: &str,
    id: Option<&str>,
) -> Result<(LoadedCheckpoint, StoredMessages)> {
    let row = fetch_checkpoint(store, thread, ns, id)?;
    decode_shallow(keys, row)
}

/// Decodes a stored row like [`LoadedCheckpoint::open`], with its errors, but for its
/// message list (see [`Checkpoint::decode_shallow`]); the row keeps no blob.
pub fn decode_shallow(
    keys: &Keyring,
    row: CheckpointRow,
) -> Result<(LoadedCheckpoint, StoredMessages)> {
    let (mut row, _) = crate::ops::edit::open_checkpoint(keys, row)?;
    let blob = std::mem::take(&mut row.checkpoint);
    // A checkpoint that does not decode fails in `assemble`, with its name.
    let (checkpoint, messages) = match Checkpoint::decode_shallow(&row.type_name, blob) {
        Ok((c, m)) => (Ok(c), m),
        Err(e) => (Err(e), StoredMessages::Absent),
    };
    Ok((LoadedCheckpoint::assemble(row, checkpoint)?, messages))
}

/// The checkpoint's stored message list:
/// `None` when it has no messages channel; an error for a DeltaChannel checkpoint that
/// stores no list.
pub fn message_list<'a>(
    cp: &LoadedCheckpoint,
    messages: &'a StoredMessages,
) -> Result<Option<&'a StoredList>> {
    Ok(match messages {
        StoredMessages::List(list) => Some(list),
        StoredMessages::Absent => None,
        StoredMessages::DeltaOmitted => {
            return Err(crate::model::channels::not_stored(
                &cp.row.thread_id,
                &cp.row.checkpoint_id,
            ))
        }
    })
}

/// The checkpoint's stored message list and where each message is (none when it has no
/// messages channel); an error for a DeltaChannel checkpoint that stores no list.
pub fn stored_list<'a>(
    cp: &LoadedCheckpoint,
    messages: &'a StoredMessages,
) -> Result<(Option<&'a StoredList>, Vec<Range<usize>>)> {
    Ok(match messages {
        StoredMessages::List(list) => (Some(list), list.spans()?),
        StoredMessages::Absent => (None, vec![]),
        StoredMessages::DeltaOmitted => {
            return Err(crate::model::channels::not_stored(
                &cp.row.thread_id,
                &cp.row.checkpoint_id,
            ))
        }
    })
}
