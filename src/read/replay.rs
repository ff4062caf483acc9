//! The DeltaChannels of a checkpoint and their values as LangGraph's `get_state` shows them:
//! the rows a replay needs are read here through the store (ancestors by parent id, their
//! writes to the channels still looked for, nothing else), the replay itself is
//! `model::delta`'s.

use anyhow::{Context, Result};

use crate::codec::aes::Keyring;
use crate::codec::{Decoded, Value};
use crate::model::channels::Location;
use crate::model::checkpoint::{StoredMessages, MESSAGES};
use crate::model::delta::{self, Ancestor, ChannelHistory, Reducer, NULL_TASK_ID};
use crate::model::Checkpoint;
use crate::storage::{CheckpointStore, WriteRow};

use super::LoadedCheckpoint;
use crate::model::channels::is_internal_channel;

/// How a DeltaChannel's value at a checkpoint was found.
#[derive(Debug, Clone)]
pub enum Origin {
    /// The checkpoint stores it: a snapshot (`true`) or a plain value.
    Stored(bool),
    /// Rebuilt from an older checkpoint's stored value (`None`: from empty, the walk reached
    /// the first checkpoint) and `writes` pending writes of the checkpoints in between.
    Replayed {
        /// `(checkpoint id, is a snapshot)` of the seed.
        seed: Option<(String, bool)>,
        /// How many writes were replayed onto it.
        writes: usize,
    },
    /// The channel has no version at this checkpoint: never written, empty.
    Unwritten,
}

/// One DeltaChannel of a checkpoint.
#[derive(Debug, Clone)]
pub struct DeltaValue {
    /// The channel.
    pub channel: String,
    /// The reducer memctl assumes for it.
    pub reducer: Reducer,
    /// Where its value came from.
    pub origin: Origin,
    /// The value as `get_state` shows it; `None` when memctl cannot know it (a reducer it
    /// does not know had writes to replay).
    pub value: Option<Value>,
    /// What memctl did not replay: the seed and the writes (an unknown reducer only).
    pub unreplayed: Option<ChannelHistory>,
    /// The checkpoint's own `NULL_TASK_ID` writes to it (`get_state` applies them).
    pub own_writes: usize,
}

impl DeltaValue {
    /// The one-line explanation of a value memctl does not show (unknown reducer).
    pub fn note(&self) -> Option<String> {
        if self.reducer != Reducer::Unknown || self.value.is_some() {
            return None;
        }
        Some(match self.origin {
            Origin::Unwritten => format!(
                "DeltaChannel '{}' was never written: empty, of a type memctl does not know",
                self.channel
            ),
            _ => format!(
                "DeltaChannel '{}' has a reducer memctl does not know: not rebuilt; `dump --raw` \
                 lists the seed and the writes LangGraph replays",
                self.channel
            ),
        })
    }
}

/// The DeltaChannels of `cp` (those its metadata counts, those it holds a snapshot of, and
/// under LangGraph.js's marker every user channel it leaves out), in channel order.
pub fn channels_of(cp: &LoadedCheckpoint) -> Vec<String> {
    let mut names = delta::counted_channels(&cp.metadata);
    for (k, v) in cp.checkpoint.channel_values() {
        if v.as_ext()
            .is_some_and(|e| e.code == crate::codec::ext::DELTA_SNAPSHOT)
            && !names.iter().any(|n| n == k)
        {
            names.push(k.to_owned());
        }
    }
    if cp.metadata.fields.contains_key(delta::JS_DELTA_MARKER) {
        for (k, _) in cp.checkpoint.channel_versions() {
            if !is_internal_channel(&k)
                && cp.checkpoint.channel(&k).is_none()
                && !names.contains(&k)
            {
                names.push(k);
            }
        }
    }
    // A snapshot of messages read by `decode_shallow` is not in the decoded checkpoint.
    names
}

/// Decodes write rows to their values (encrypted ones decrypted with `keys`), saying which
/// write failed.
fn write_values(
    keys: &Keyring,
    rows: Vec<WriteRow>,
    thread: &str,
    checkpoint_id: &str,
) -> Result<Vec<(WriteRow, Value)>> {
    crate::ops::edit::open_writes(keys, rows, thread, checkpoint_id)?
        .into_iter()
        .map(|mut w| {
            let decoded =
                crate::codec::decode_typed(&w.type_name, &w.value).with_context(|| {
                    format!(
                        "cannot decode the '{}' write of task {} on checkpoint {checkpoint_id}",
                        w.channel, w.task_id
                    )
                })?;
            let value = match decoded {
                Decoded::Msgpack(v) => v,
                Decoded::Null => Value::Nil,
                Decoded::Json(j) => crate::codec::json::json_to_value(&j),
                other => anyhow::bail!(
                    "the '{}' write of task {} on checkpoint {checkpoint_id} is a {} value, not \
                     what a DeltaChannel reducer takes ({other:?})",
                    w.channel,
                    w.task_id,
                    w.type_name
                ),
            };
            w.value = Vec::new();
            Ok((w, value))
        })
        .collect()
}

/// The stored value of a channel at a checkpoint (the snapshot's inner value), whether it is
/// a snapshot, and whether the checkpoint has a version of it.
fn stored(cp: &Checkpoint, channel: &str) -> (Option<(bool, Value)>, bool) {
    let (location, value) = cp.stored_value(channel);
    let has_version = cp.channel_versions().iter().any(|(k, _)| k == channel);
    match (location, value) {
        (Location::DeltaSnapshot, Some(v)) => (Some((true, v.clone())), has_version),
        (Location::Plain, Some(v)) => (Some((false, v.clone())), has_version),
        _ => (None, has_version),
    }
}

/// Reads one ancestor for the walk: its parent, what it stores of `channels`, its writes to
/// them.
pub fn ancestor(
    store: &dyn CheckpointStore,
    keys: &Keyring,
    thread: &str,
    ns: &str,
    id: &str,
    channels: &[String],
) -> Result<Option<Ancestor>> {
    let Some(row) = store.checkpoint(thread, ns, Some(id))? else {
        return Ok(None);
    };
    let cp = LoadedCheckpoint::open(keys, row)?;
    let stored = channels
        .iter()
        .filter_map(|ch| {
            let (value, _) = stored(&cp.checkpoint, ch);
            value.map(|(snapshot, v)| (ch.clone(), snapshot, v))
        })
        .collect();
    let writes = write_values(
        keys,
        store.channel_writes(thread, ns, id, channels)?,
        thread,
        id,
    )?
    .into_iter()
    .map(|(w, v)| (w.channel, v))
    .collect();
    Ok(Some(Ancestor {
        parent: cp.row.parent_checkpoint_id,
        stored,
        writes,
    }))
}

/// Where a checkpoint blob keeps its messages, read in place before the row is decoded: a
/// DeltaChannel snapshot, a plain list, or nothing (also for a blob that cannot be read in
/// place: decoding it says why). With the metadata, [`crate::model::channels::is_delta`]
/// decides from it whether a stored row needs a replay; [`needs_replay`] decides for a
/// decoded checkpoint.
pub fn stored_messages_location(blob: &[u8]) -> Location {
    match crate::model::channels::stored_lazy(blob, MESSAGES, || false) {
        Ok((location, _)) => location,
        Err(_) => Location::Absent,
    }
}

/// The DeltaChannels of `cp` a replay gives values for: [`channels_of`], and the messages
/// when `decode_shallow` found their list stored as a snapshot (`messages`: the decoded
/// checkpoint leaves it out; for a checkpoint decoded whole, any value).
fn delta_channels(cp: &LoadedCheckpoint, messages: &StoredMessages) -> Vec<String> {
    let mut names = channels_of(cp);
    let messages_snapshot = messages.list().is_some_and(|l| l.snapshot);
    if messages_snapshot && !names.iter().any(|n| n == MESSAGES) {
        names.push(MESSAGES.to_owned());
    }
    names
}

/// Whether a decoded checkpoint's state needs a DeltaChannel replay (older rows read) to be
/// what `get_state` shows: it has DeltaChannels ([`channels_of`], or its messages stored as a
/// snapshot, which its own input writes may change). The one decision for decoded
/// checkpoints: [`values`] replays exactly when this is true.
pub fn needs_replay(cp: &LoadedCheckpoint, messages: &StoredMessages) -> bool {
    !delta_channels(cp, messages).is_empty()
}

/// The values of `cp`'s DeltaChannels as `get_state` at that checkpoint shows them. `stored`
/// is how `decode_shallow` found the message list (the decoded checkpoint leaves it out).
pub fn values(
    store: &dyn CheckpointStore,
    keys: &Keyring,
    cp: &LoadedCheckpoint,
    messages: &StoredMessages,
) -> Result<Vec<DeltaValue>> {
    let mut out = base_values(store, keys, cp, messages)?;
    if out.is_empty() {
        return Ok(out);
    }
    let names: Vec<String> = out.iter().map(|d| d.channel.clone()).collect();
    let thread = &cp.row.thread_id;
    let ns = &cp.row.checkpoint_ns;
    let id = &cp.row.checkpoint_id;
    let context = || format!("thread '{thread}', checkpoint {id}");
    // get_state applies the checkpoint's own NULL_TASK_ID writes.
    let own = write_values(
        keys,
        store.channel_writes(thread, ns, id, &names)?,
        thread,
        id,
    )?;
    for d in &mut out {
        let null: Vec<&Value> = own
            .iter()
            .filter(|(w, _)| w.channel == d.channel && w.task_id == NULL_TASK_ID)
            .map(|(_, v)| v)
            .collect();
        d.own_writes = null.len();
        if null.is_empty() {
            continue;
        }
        if d.channel == MESSAGES && matches!(d.origin, Origin::Stored(_)) {
            d.value = messages.list().map(|l| l.value()).transpose()?;
        }
        d.value = match (d.value.take(), d.reducer) {
            (Some(v), Reducer::Messages | Reducer::Files) => Some(
                delta::update(d.reducer, v, &null)
                    .with_context(|| format!("applying the input to DeltaChannel '{}'", d.channel))
                    .with_context(context)?,
            ),
            _ => None,
        };
    }
    Ok(out)
}

/// The values of `cp`'s DeltaChannels as the checkpoint holds them, before its own input
/// (its `NULL_TASK_ID` writes, which [`values`] applies as `get_state` does): what a graph
/// whose channels are plain reducer channels stores in that checkpoint (`copy
/// --materialize`). `own_writes` is 0; a stored message list is left in `messages` (`value`
/// `None`, as in [`values`]).
pub fn base_values(
    store: &dyn CheckpointStore,
    keys: &Keyring,
    cp: &LoadedCheckpoint,
    messages: &StoredMessages,
) -> Result<Vec<DeltaValue>> {
    let names = delta_channels(cp, messages);
    if names.is_empty() {
        return Ok(vec![]);
    }
    let thread = &cp.row.thread_id;
    let ns = &cp.row.checkpoint_ns;
    let id = &cp.row.checkpoint_id;
    let context = || format!("thread '{thread}', checkpoint {id}");
    let mut out = Vec::with_capacity(names.len());
    let mut to_walk = Vec::new();
    for name in &names {
        let reducer = Reducer::for_channel(name);
        let (value, has_version) = if name == MESSAGES {
            let has_version = cp
                .checkpoint
                .channel_versions()
                .iter()
                .any(|(k, _)| k == MESSAGES);
            // A stored list stays stored (read in place by its users) unless the
            // checkpoint's own input changes it (below).
            let value = messages.list().map(|l| (l.snapshot, Value::Nil));
            (value, has_version)
        } else {
            stored(&cp.checkpoint, name)
        };
        let (origin, value) = match (value, has_version) {
            (Some((snapshot, _)), _) if name == MESSAGES => (Origin::Stored(snapshot), None),
            (Some((snapshot, v)), _) => (Origin::Stored(snapshot), Some(v)),
            (None, false) => (Origin::Unwritten, reducer.empty()),
            (None, true) => {
                to_walk.push(name.clone());
                (
                    Origin::Replayed {
                        seed: None,
                        writes: 0,
                    },
                    None,
                )
            }
        };
        out.push(DeltaValue {
            channel: name.clone(),
            reducer,
            origin,
            value,
            unreplayed: None,
            own_writes: 0,
        });
    }
    if !to_walk.is_empty() {
        let mut fetch =
            |at: &str, channels: &[String]| ancestor(store, keys, thread, ns, at, channels);
        let found = delta::walk(cp.row.parent_checkpoint_id.as_deref(), &to_walk, &mut fetch)
            .with_context(context)?;
        for d in out.iter_mut().filter(|d| to_walk.contains(&d.channel)) {
            let Some(history) = found.get(&d.channel) else {
                continue;
            };
            d.origin = Origin::Replayed {
                seed: history
                    .seed
                    .as_ref()
                    .map(|s| (s.checkpoint_id.clone(), s.snapshot)),
                writes: history.writes.len(),
            };
            if d.reducer == Reducer::Unknown {
                if history.writes.is_empty() {
                    d.value = history.seed.as_ref().map(|s| s.value.clone());
                }
                if d.value.is_none() {
                    d.unreplayed = Some(history.clone());
                }
            } else {
                let from = match &history.seed {
                    Some(seed) => format!(
                        "the {} in checkpoint {}",
                        if seed.snapshot { "snapshot" } else { "value" },
                        seed.checkpoint_id
                    ),
                    None => "empty".to_owned(),
                };
                d.value = Some(
                    history
                        .rebuild(d.reducer)
                        .with_context(|| {
                            format!(
                                "rebuilding DeltaChannel '{}' from {from} and {} writes",
                                d.channel,
                                history.writes.len()
                            )
                        })
                        .with_context(context)?,
                );
            }
        }
    }
    Ok(out)
}

/// The messages of a checkpoint as `get_state` shows them: the stored list, or for a
/// DeltaChannel the rebuilt one (with the other DeltaChannels' values).
pub fn state_messages(
    store: &dyn CheckpointStore,
    keys: &Keyring,
    cp: &LoadedCheckpoint,
    messages: StoredMessages,
) -> Result<(StoredMessages, Vec<DeltaValue>)> {
    let mut deltas = values(store, keys, cp, &messages)?;
    let Some(d) = deltas.iter_mut().find(|d| d.channel == MESSAGES) else {
        return Ok((messages, deltas));
    };
    // A stored list untouched by the checkpoint's input is read in place, as for any thread;
    // a rebuilt one lives in `messages` from now on (not kept twice).
    let messages = match d.value.take() {
        Some(v) => StoredMessages::List(crate::model::checkpoint::StoredList::rebuilt(&v)),
        None => messages,
    };
    Ok((messages, deltas))
}

/// The messages of every checkpoint in `rows` (one namespace of a thread, in any order) as
/// `get_state_history` shows them, when the thread's messages are a DeltaChannel: one pass
/// over the checkpoints ([`delta::fold`]), each replay continuing from its parent's, the
/// writes opened with `keys`. `visit(i, messages)` is called once for each of `rows`. `false`
/// (and nothing visited) when the messages are no DeltaChannel's.
pub fn fold_messages(
    store: &dyn CheckpointStore,
    keys: &Keyring,
    rows: &[(LoadedCheckpoint, StoredMessages)],
    visit: &mut dyn FnMut(usize, Result<&delta::Carried>),
) -> Result<bool> {
    let is_delta = rows.iter().any(|(cp, messages)| {
        matches!(messages, StoredMessages::DeltaOmitted)
            || delta_channels(cp, messages).iter().any(|c| c == MESSAGES)
    });
    if !is_delta {
        return Ok(false);
    }
    let channel = [MESSAGES.to_owned()];
    let nodes = rows
        .iter()
        .map(|(cp, messages)| {
            let id = &cp.row.checkpoint_id;
            let thread = &cp.row.thread_id;
            let has_version = cp
                .checkpoint
                .channel_versions()
                .iter()
                .any(|(k, _)| k == MESSAGES);
            let rows = store.channel_writes(thread, &cp.row.checkpoint_ns, id, &channel)?;
            let writes = write_values(keys, rows, thread, id)?
                .into_iter()
                .map(|(w, value)| (w.task_id, value))
                .collect();
            Ok(delta::Node {
                id: id.clone(),
                parent: cp.row.parent_checkpoint_id.clone(),
                stored: messages.list().map(|l| l.value()).transpose()?,
                has_version,
                writes,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    delta::fold(Reducer::Messages, &nodes, visit);
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::msgpack::encode;
    use crate::model::channels::is_delta;
    use crate::model::Metadata;

    /// A checkpoint blob whose `messages` channel holds `messages`.
    fn blob(messages: Value) -> Vec<u8> {
        encode(&Value::map(vec![
            (Value::str("v"), Value::int(4)),
            (
                Value::str("channel_values"),
                Value::map(vec![(Value::str(MESSAGES), messages)]),
            ),
        ]))
    }

    fn snapshot(inner: Value) -> Value {
        Value::ext(crate::codec::ext::DELTA_SNAPSHOT, inner)
    }

    /// The row-level decision: a snapshot of the messages or metadata that marks a
    /// DeltaChannel graph needs a replay; a plain list, no list or an unreadable blob with
    /// plain metadata does not.
    #[test]
    fn rows_need_a_replay_for_a_snapshot_or_delta_metadata() {
        let plain_md = Metadata::parse(Some(br#"{"step": 1}"#)).expect("parses");
        let delta_md = Metadata::parse(Some(
            br#"{"counters_since_delta_snapshot": {"messages": [1, 2]}}"#,
        ))
        .expect("parses");
        let list = blob(Value::array(vec![Value::str("hi")]));
        let snap = blob(snapshot(Value::array(vec![Value::str("hi")])));
        let none = encode(&Value::map(vec![(
            Value::str("channel_values"),
            Value::map(vec![]),
        )]));
        assert_eq!(stored_messages_location(&list), Location::Plain);
        assert_eq!(stored_messages_location(&snap), Location::DeltaSnapshot);
        assert_eq!(stored_messages_location(&none), Location::Absent);
        assert_eq!(
            stored_messages_location(b"\xc1 not msgpack"),
            Location::Absent
        );
        assert!(is_delta(stored_messages_location(&snap), &plain_md));
        assert!(is_delta(stored_messages_location(&list), &delta_md));
        assert!(!is_delta(stored_messages_location(&list), &plain_md));
        assert!(!is_delta(stored_messages_location(&none), &plain_md));
    }
}
