//! The latest checkpoints of threads, read in batches: the rows a whole-file command hands
//! to its workers ([`map_latest`]), and what a rewrite edits ([`read_latest`],
//! [`load_editable`]): the latest root checkpoint, its pending writes and, for a
//! DeltaChannel thread, its messages as `get_state` shows them.

use anyhow::{anyhow, bail, Context, Result};

use crate::codec::aes::{self, Keyring};
use crate::ops::edit::{prepare, Editable, Filters, LatestRows};
use crate::storage::{CheckpointRow, CheckpointStore};

use super::checkpoint::decode_shallow;
use super::readers::{map_at, Readers};
use super::replay::state_messages;
use super::thread::require_thread;

/// Reads the root-namespace checkpoints `ids` names (`(thread, checkpoint id)`) and hands each
/// row to `f`; results keep the order of `ids`. On one handle the rows are read here a batch
/// at a time and `f` runs on all cores (see [`crate::par::pipeline`]); with more
/// ([`Readers`], `--jobs`) the batches are shared out among the handles, each reading and
/// running `f` on a thread of its own, and merged back in order ([`crate::par::in_batches`]).
/// A row that cannot be read (on Postgres a checkpoint is assembled from its blobs as it is
/// read: a damaged blob, a bad type tag) is that thread's error, never the others'.
pub fn map_latest<R: Send>(
    readers: &Readers<'_>,
    ids: &[(String, String)],
    f: impl Fn(CheckpointRow) -> Result<R> + Sync,
) -> Result<Vec<Result<R>>> {
    map_at(readers, ids, |(thread, _), row| {
        row.and_then(|row| {
            row.with_context(|| format!("thread '{thread}' vanished while memctl read it"))
        })
        .and_then(&f)
    })
}

/// Reads a thread's latest root checkpoint (`id`, or the newest) and its pending writes; for
/// a DeltaChannel thread also its messages as `get_state` shows them (rows opened with
/// `keys`).
pub fn read_latest(
    store: &dyn CheckpointStore,
    keys: &Keyring,
    thread: &str,
    id: Option<&str>,
) -> Result<LatestRows> {
    let row = store
        .checkpoint(thread, "", id)?
        .ok_or_else(|| anyhow!("thread '{thread}' has no root checkpoint"))?;
    let writes = store.writes(thread, "", &row.checkpoint_id)?;
    let delta = delta_head(store, keys, &row, &writes)?;
    Ok(LatestRows {
        thread_id: thread.to_owned(),
        row,
        writes,
        delta,
    })
}

/// [`read_latest`] of each of `batch` (`(thread, latest root id)`), each with its own
/// outcome, in order: the checkpoints and their writes read in one round trip each where the
/// store can (a database error there reads them one by one instead, so that each thread
/// gets its own error, as it would alone).
pub fn read_latest_batch(
    store: &dyn CheckpointStore,
    keys: &Keyring,
    batch: &[(String, Option<String>)],
) -> Vec<(String, Result<LatestRows>)> {
    let one_by_one = || {
        batch
            .iter()
            .map(|(thread, id)| {
                (
                    thread.clone(),
                    read_latest(store, keys, thread, id.as_deref()),
                )
            })
            .collect()
    };
    let Some(at) = batch
        .iter()
        .map(|(t, id)| id.as_deref().map(|id| (t.as_str(), "", id)))
        .collect::<Option<Vec<_>>>()
    else {
        return one_by_one();
    };
    let (Ok(rows), Ok(writes)) = (store.checkpoints_at(&at), store.writes_at(&at)) else {
        return one_by_one();
    };
    batch
        .iter()
        .zip(rows.into_iter().zip(writes))
        .map(|((thread, _), (row, writes))| {
            let read = row.and_then(|row| {
                let row = row.ok_or_else(|| anyhow!("thread '{thread}' has no root checkpoint"))?;
                let delta = delta_head(store, keys, &row, &writes)?;
                Ok(LatestRows {
                    thread_id: thread.clone(),
                    row,
                    writes,
                    delta,
                })
            });
            (thread.clone(), read)
        })
        .collect()
}

/// For a thread whose messages are a DeltaChannel: the messages `get_state` shows (rebuilt
/// from older rows), encoded, and what an update needs of the other DeltaChannels. `None`
/// for any other thread (and for a checkpoint that does not open or decode: `prepare` says
/// why). An encrypted checkpoint and the rows its replay reads are opened with `keys`.
pub fn delta_head(
    store: &dyn CheckpointStore,
    keys: &Keyring,
    row: &crate::storage::CheckpointRow,
    writes: &[crate::storage::WriteRow],
) -> Result<Option<(Vec<u8>, crate::ops::update::DeltaHead)>> {
    use crate::model::checkpoint::MESSAGES;
    let Ok(md) = crate::model::Metadata::parse(row.metadata.as_deref()) else {
        return Ok(None);
    };
    // An encrypted checkpoint holds its snapshot inside the envelope: opened first (a copy;
    // `prepare` opens the row it is given again).
    let opened;
    let plain = if aes::split_type(&row.type_name).1.is_some() {
        let Ok((row, _)) = crate::ops::edit::open_checkpoint(keys, row.clone()) else {
            return Ok(None);
        };
        opened = row;
        &opened
    } else {
        row
    };
    let stored = super::replay::stored_messages_location(&plain.checkpoint);
    if !crate::model::channels::is_delta(stored, &md) {
        return Ok(None);
    }
    let Ok((cp, stored)) = decode_shallow(keys, plain.clone()) else {
        return Ok(None);
    };
    let (messages, deltas) = state_messages(store, keys, &cp, stored)?;
    if !deltas.iter().any(|d| d.channel == MESSAGES) {
        return Ok(None);
    }
    let list = match messages.list() {
        Some(l) => crate::codec::msgpack::encode(&l.value()?),
        None => crate::codec::msgpack::encode(&crate::codec::Value::array(vec![])),
    };
    // The graph's order: messages, then the channels the counters name, then the others.
    let mut channels = vec![MESSAGES.to_owned()];
    for name in crate::model::delta::counted_channels(&cp.metadata)
        .into_iter()
        .chain(deltas.iter().map(|d| d.channel.clone()))
    {
        if !channels.contains(&name) {
            channels.push(name);
        }
    }
    // Each channel's snapshot_frequency, where the root namespace's counters show it.
    let infos = store.checkpoint_infos(&cp.row.thread_id)?;
    let counters: std::collections::HashMap<&str, crate::model::delta::Counters> = infos
        .iter()
        .filter(|i| i.ns.is_empty())
        .map(|i| {
            let md = crate::model::Metadata::parse(i.metadata.as_deref()).unwrap_or_default();
            (i.id.as_str(), crate::model::delta::counters(&md))
        })
        .collect();
    let counters_of = |id: Option<&str>| id.and_then(|id| counters.get(id)).cloned();
    let pairs: Vec<_> = infos
        .iter()
        .filter(|i| i.ns.is_empty())
        .map(|i| {
            let own = counters_of(Some(&i.id)).unwrap_or_default();
            (own, counters_of(i.parent.as_deref()).unwrap_or_default())
        })
        .collect();
    let frequencies = channels
        .iter()
        .filter_map(|ch| {
            crate::model::delta::inferred_frequency(ch, &pairs).map(|f| (ch.clone(), f))
        })
        .collect();
    let head = crate::ops::update::DeltaHead {
        frequencies,
        values: deltas
            .iter()
            .filter(|d| d.channel != MESSAGES)
            .map(|d| (d.channel.clone(), d.value.clone()))
            .collect(),
        snapshot: writes
            .iter()
            .filter(|w| channels.contains(&w.channel))
            .map(|w| w.channel.clone())
            .collect(),
        channels,
    };
    Ok(Some((list, head)))
}

/// Loads a thread's latest root state (decrypted with `keys` when encrypted), refusing what
/// memctl must not edit.
pub fn load_editable(
    store: &dyn CheckpointStore,
    keys: &Keyring,
    thread: &str,
    force: bool,
) -> Result<Editable> {
    require_thread(store, thread, "")?;
    prepare(
        read_latest(store, keys, thread, None)?,
        keys,
        force,
        &Filters::default(),
    )
    .unwrap_or_else(|| bail!("thread '{thread}' was filtered out"))
}
