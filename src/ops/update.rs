//! The checkpoint and write row that `graph.update_state(config, {"messages":
//! [RemoveMessage(REMOVE_ALL_MESSAGES), *new_list]})` appends to a quiescent thread
//! (langgraph-format.md §6, checked against real LangGraph by the interop tests).
//!
//! - the new checkpoint's parent is the latest; its id is a uuid6 whose clock sequence is the
//!   new step, and the smallest such id that sorts after the parent (not the clock's time, so
//!   that a checkpoint a live app made after the parent always sorts after memctl's);
//! - `ts` is now (`isoformat()` in UTC), `updated_channels` is nil, `versions_seen` and every
//!   other channel are copied byte for byte; the written channels' versions move, to
//!   `next_version(max(all versions))`;
//! - on a DeltaChannel thread, a DeltaChannel the update snapshots without writing it (its
//!   counters reached the bound, or the head's pending writes touch it) moves to
//!   `next_version(its own version)`, and `versions_seen` marks that bump as
//!   `create_checkpoint` does (`model::delta::mark_bumps_seen`): `put` stores a blob only
//!   for a version that moved;
//! - metadata is `{source: "update", step: +1, parents}` plus the app's config keys from the
//!   previous checkpoint (never `run_id`), serialized like Python's `json.dumps`;
//! - one write row on the parent records the update itself (task id
//!   `uuid5(parent id, "__interrupt__")`), as LangGraph does.

use anyhow::{bail, Context, Result};
use jiff::Timestamp;
use serde_json::{Map as JsonMap, Value as Json};
use uuid::Uuid;

use crate::codec::aes::{self, AesKey};
use crate::codec::msgpack::{Map, Value};
use crate::codec::pieces::{encode_pieces, Pieces};
use crate::codec::pyjson;
use crate::codec::pyjson::float_repr;
use crate::ids::{uuid6_parts, GREGORIAN_OFFSET};
use crate::model::checkpoint::MESSAGES;
use crate::model::{Checkpoint, Metadata};

/// What an edit of a thread whose messages are a DeltaChannel needs beyond the messages
/// (rebuilt as `get_state` shows them: the `delta` of an edit's latest rows).
#[derive(Debug, Clone, Default)]
pub struct DeltaHead {
    /// The graph's DeltaChannels, in the graph's order as far as the head shows it (messages
    /// first, then those its counters name, then those it holds a snapshot of).
    pub channels: Vec<String>,
    /// The head's values of its other DeltaChannels (`None`: a reducer memctl does not
    /// know), for the snapshot an update may have to write.
    pub values: Vec<(String, Option<Value>)>,
    /// The DeltaChannels the update snapshots whatever their counters: those the head's
    /// pending writes touch (`update_state` snapshots them), and messages for a `--purge`
    /// (the new checkpoint then needs none of the rows the purge rewrites).
    pub snapshot: Vec<String>,
    /// The `snapshot_frequency` of the channels whose counters show it
    /// (`model::delta::inferred_frequency`): an update that brings a channel's count to it
    /// snapshots the channel, as LangGraph's would.
    pub frequencies: Vec<(String, u64)>,
}

/// `REMOVE_ALL_MESSAGES` in `langgraph.graph.message`.
pub const REMOVE_ALL: &str = "__remove_all__";
/// The checkpoint format version memctl writes (LangGraph's `LATEST_VERSION`).
pub const CHECKPOINT_VERSION: i64 = 4;
/// Metadata keys LangGraph never copies from the config (`get_checkpoint_metadata`), plus the
/// ones it computes itself and `run_id`, which would make the next input resume that run.
const METADATA_NOT_COPIED: [&str; 14] = [
    "source",
    "step",
    "parents",
    "run_id",
    "writes",
    crate::model::channels::DELTA_COUNTERS,
    "thread_id",
    "checkpoint_id",
    "checkpoint_ns",
    "checkpoint_map",
    "langgraph_step",
    "langgraph_node",
    "langgraph_triggers",
    "langgraph_path",
];

/// The rows one update appends.
#[derive(Debug, Clone)]
pub struct Update {
    /// The new checkpoint id.
    pub checkpoint_id: String,
    /// The parent (the latest checkpoint when the update was built).
    pub parent_id: String,
    /// The type of `checkpoint`: `msgpack`, or `msgpack+aes` once [`Update::seal`]ed.
    pub checkpoint_type: String,
    /// The encoded checkpoint blob, in pieces: kept messages are slices of the parent's blob
    /// (one buffer once sealed).
    pub checkpoint: Pieces,
    /// The metadata JSON.
    pub metadata: Vec<u8>,
    /// The write rows recorded on the parent: `messages` first, then other channels.
    pub writes: Vec<UpdateWrite>,
    /// The new step.
    pub step: i64,
}

/// The write row `update_state` records on the parent checkpoint: task id
/// `uuid5(parent id, "__interrupt__")`, task path `~__interrupt__, 0000000000` (3.x schema
/// only), idx 0 for messages then 1, 2… for other channels, value the msgpack of
/// `[RemoveMessage(REMOVE_ALL), *new_list]` or of the channel's new value.
pub type UpdateWrite = crate::storage::NewWrite;

impl Update {
    /// The rows to append, as storage takes them.
    pub fn rows(&self) -> crate::storage::NewRows<'_> {
        crate::storage::NewRows {
            checkpoint_id: &self.checkpoint_id,
            parent_id: &self.parent_id,
            checkpoint_type: &self.checkpoint_type,
            checkpoint: &self.checkpoint,
            metadata: &self.metadata,
            writes: &self.writes,
        }
    }

    /// Encrypts the checkpoint and every write value as the app's `EncryptedSerializer`
    /// would store them (`msgpack+aes`, a fresh random nonce per value); the metadata stays
    /// plain JSON, as LangGraph keeps it.
    pub fn seal(&mut self, key: &AesKey) {
        // EAX seals a value whole: the pieces are joined first.
        let (t, b) = aes::seal(key, &self.checkpoint_type, &self.checkpoint.to_vec());
        (self.checkpoint_type, self.checkpoint) = (t, Pieces::from(b));
        for w in &mut self.writes {
            let (t, b) = aes::seal(key, &w.type_name, &w.value.to_vec());
            (w.type_name, w.value) = (t, Pieces::from(b));
        }
    }
}

/// Sources of time and randomness, injectable for tests.
pub struct Env<'a> {
    /// The current time.
    pub now: Timestamp,
    /// 64 random bits per call.
    pub random: &'a mut dyn FnMut() -> u64,
}

/// A RemoveMessage that clears the list, as `model_dump()` writes it.
pub fn remove_all_message() -> Value {
    let fields = Value::map(vec![
        (Value::str("content"), Value::str("")),
        (Value::str("additional_kwargs"), Value::map(vec![])),
        (Value::str("response_metadata"), Value::map(vec![])),
        (Value::str("type"), Value::str("remove")),
        (Value::str("name"), Value::Nil),
        (Value::str("id"), Value::str(REMOVE_ALL)),
    ]);
    message_ext("langchain_core.messages.modifier", "RemoveMessage", fields)
}

pub use crate::model::message::message_ext;

/// Builds the update that replaces the `messages` list of `parent` with `new_messages`
/// (stored message values: kept ones as read, new ones built with [`message_ext`]) and sets
/// the `other` channels (e.g. a `summary` string), like
/// `update_state(cfg, {"messages": [RemoveMessage(REMOVE_ALL), *new_messages], **other})`.
/// `parent_id` must be the latest checkpoint of the thread and namespace (the write checks it).
pub fn build(
    parent_id: &str,
    parent: &Checkpoint,
    parent_md: &Metadata,
    new_messages: Vec<Value>,
    other: Vec<(String, Value)>,
    delta: Option<&DeltaHead>,
    env: &mut Env<'_>,
) -> Result<Update> {
    let v = parent.v().unwrap_or(0);
    if v != CHECKPOINT_VERSION {
        bail!("checkpoint format v{v} is not v{CHECKPOINT_VERSION}: continue the thread once with a current LangGraph first");
    }
    let step = parent_md
        .step()
        .context("the latest checkpoint's metadata has no step")?
        + 1;
    let checkpoint_id = new_checkpoint_id(step, parent_id, env)?;
    let ts = iso_utc(env.now);
    let written: Vec<&str> = std::iter::once(MESSAGES)
        .chain(other.iter().map(|(k, _)| k.as_str()))
        .collect();

    // channel_versions: only the written channels move, all to next_version(max of all).
    let versions = channel_map(parent, "channel_versions")?;
    let next = next_version(versions, env)?;
    let mut new_versions = versions.to_vec();
    for channel in &written {
        set_entry(&mut new_versions, channel, Value::str(next.clone()));
    }

    let mut new_values = channel_map(parent, "channel_values")?.to_vec();
    let list = Value::array(new_messages.clone());
    let assigned = match delta {
        None => Assigned {
            values: vec![(MESSAGES.to_owned(), list)],
            counters: Vec::new(),
            bumps: Vec::new(),
        },
        Some(d) => {
            // A DeltaChannel thread: the new checkpoint leaves its DeltaChannels out, but for
            // those LangGraph snapshots now; its metadata carries their counters.
            new_values.retain(|(k, _)| {
                !k.as_str()
                    .is_some_and(|k| d.channels.iter().any(|c| c == k))
            });
            delta_assignments(d, parent_md, &written, list, &mut new_versions, env)?
        }
    };
    for (channel, value) in assigned.values.into_iter().chain(other.iter().cloned()) {
        set_entry(&mut new_values, &channel, value);
    }

    let root = new_root(
        parent,
        v,
        ts,
        &checkpoint_id,
        new_values,
        new_versions,
        &assigned.bumps,
    )?;
    let metadata = update_metadata(parent_md, step, &assigned.counters);
    let writes = update_writes(parent_id, new_messages, &other)?;
    Ok(Update {
        checkpoint_id,
        parent_id: parent_id.to_owned(),
        checkpoint_type: "msgpack".into(),
        checkpoint: encode_pieces(&root),
        metadata: pyjson::dumps(&Json::Object(metadata)).into_bytes(),
        writes,
        step,
    })
}

/// The map under `key` in the checkpoint's root (`channel_values`, `channel_versions`).
fn channel_map<'a>(parent: &'a Checkpoint, key: &str) -> Result<&'a [(Value, Value)]> {
    parent
        .root
        .get(key)
        .and_then(Value::as_map)
        .with_context(|| format!("checkpoint has no {key}"))
}

/// Sets `channel` to `value` in a msgpack map's entries, appending it when absent.
fn set_entry(entries: &mut Vec<(Value, Value)>, channel: &str, value: Value) {
    match entries
        .iter_mut()
        .find(|(k, _)| k.as_str() == Some(channel))
    {
        Some((_, val)) => *val = value,
        None => entries.push((Value::str(channel), value)),
    }
}

/// What an update puts into the new checkpoint's channels besides the `other` channels.
struct Assigned {
    /// Channel values to set: `messages` on a plain thread, the DeltaChannel snapshots on a
    /// delta one.
    values: Vec<(String, Value)>,
    /// The DeltaChannels not snapshotted, with their counters (updates, supersteps).
    counters: Vec<(String, (u64, u64))>,
    /// The DeltaChannels snapshotted without being written, whose own version moved.
    bumps: Vec<crate::model::delta::Bump>,
}

/// On a DeltaChannel thread, which channels the update snapshots (LangGraph's
/// `delta_channels_to_snapshot`) and which keep counting: a snapshot is due for a channel
/// with a version whose counters reached the bound, or one the head's pending writes touch.
/// A snapshot of a channel the update does not write bumps its version (`create_checkpoint`:
/// `put` stores a blob only for a channel whose version moved).
fn delta_assignments(
    d: &DeltaHead,
    parent_md: &Metadata,
    written: &[&str],
    list: Value,
    new_versions: &mut Vec<(Value, Value)>,
    env: &mut Env<'_>,
) -> Result<Assigned> {
    let mut out = Assigned {
        values: Vec::new(),
        counters: Vec::new(),
        bumps: Vec::new(),
    };
    let head = crate::model::delta::counters(parent_md);
    let next = crate::model::delta::next_counters(&d.channels, &head, written);
    for (ch, (u, s)) in next {
        let frequency = d.frequencies.iter().find(|(k, _)| *k == ch);
        let versioned = written.contains(&ch.as_str())
            || new_versions
                .iter()
                .any(|(k, _)| k.as_str() == Some(ch.as_str()));
        let due = s >= crate::model::delta::MAX_SUPERSTEPS_SINCE_SNAPSHOT
            || frequency.is_some_and(|(_, f)| u >= *f);
        let snapshot = (versioned && due) || d.snapshot.contains(&ch);
        if !snapshot {
            out.counters.push((ch, (u, s)));
            continue;
        }
        let value = if ch == MESSAGES {
            list.clone()
        } else {
            match d.values.iter().find(|(k, _)| *k == ch) {
                Some((_, Some(v))) => v.clone(),
                _ => bail!(
                    "the update must snapshot DeltaChannel '{ch}', whose value memctl cannot rebuild"
                ),
            }
        };
        if !written.contains(&ch.as_str()) {
            let at = new_versions
                .iter()
                .position(|(k, _)| k.as_str() == Some(ch.as_str()));
            let old = at.map(|i| new_versions[i].1.clone());
            let bumped = Value::str(version_after(old.as_ref(), env)?);
            set_entry(new_versions, &ch, bumped.clone());
            out.bumps.push(crate::model::delta::Bump {
                channel: ch.clone(),
                old,
                new: bumped,
            });
        }
        out.values
            .push((ch, Value::ext(crate::codec::ext::DELTA_SNAPSHOT, value)));
    }
    Ok(out)
}

/// The new checkpoint's root map: the parent's `v`, markers and `versions_seen` (with the
/// bumps marked seen), the new `ts`, `id`, channel values and versions.
fn new_root(
    parent: &Checkpoint,
    v: i64,
    ts: String,
    checkpoint_id: &str,
    new_values: Vec<(Value, Value)>,
    new_versions: Vec<(Value, Value)>,
    bumps: &[crate::model::delta::Bump],
) -> Result<Value> {
    let marker = |key: &str| match parent.root.get(key) {
        Some(Value::Map(m)) => m.marker,
        _ => None,
    };
    let versions_seen = parent
        .root
        .get("versions_seen")
        .cloned()
        .unwrap_or_else(|| Value::map(vec![]));
    Ok(Value::map(vec![
        (
            Value::str("v"),
            parent.root.get("v").cloned().unwrap_or(Value::int(v)),
        ),
        (Value::str("ts"), Value::str(ts)),
        (Value::str("id"), Value::str(checkpoint_id)),
        (
            Value::str("channel_values"),
            Value::Map(Map {
                entries: new_values,
                marker: marker("channel_values"),
            }),
        ),
        (
            Value::str("channel_versions"),
            Value::Map(Map {
                entries: new_versions,
                marker: marker("channel_versions"),
            }),
        ),
        (
            Value::str("versions_seen"),
            crate::model::delta::mark_bumps_seen(&versions_seen, bumps)?,
        ),
        (Value::str("updated_channels"), Value::Nil),
    ]))
}

/// The update's metadata: `{source: "update", step, parents}`, the DeltaChannel counters,
/// and the parent's plain config keys (never the ones LangGraph computes, nor `run_id`).
fn update_metadata(
    parent_md: &Metadata,
    step: i64,
    counters: &[(String, (u64, u64))],
) -> JsonMap<String, Json> {
    let mut md = JsonMap::new();
    md.insert("source".into(), Json::String("update".into()));
    md.insert("step".into(), Json::from(step));
    md.insert(
        "parents".into(),
        parent_md
            .fields
            .get("parents")
            .cloned()
            .unwrap_or_else(|| Json::Object(JsonMap::new())),
    );
    if !counters.is_empty() {
        let named = counters
            .iter()
            .map(|(ch, (u, s))| (ch.clone(), Json::from(vec![*u, *s])))
            .collect();
        md.insert(
            crate::model::channels::DELTA_COUNTERS.into(),
            Json::Object(named),
        );
    }
    for (k, val) in &parent_md.fields {
        if METADATA_NOT_COPIED.contains(&k.as_str()) || k.starts_with("__") {
            continue;
        }
        if matches!(val, Json::String(_) | Json::Number(_) | Json::Bool(_)) {
            md.insert(k.clone(), val.clone());
        }
    }
    md
}

/// The write rows recorded on the parent: `[RemoveMessage(REMOVE_ALL), *new_messages]` on
/// `messages` (idx 0), then each other channel, under task `uuid5(parent, "__interrupt__")`.
fn update_writes(
    parent_id: &str,
    new_messages: Vec<Value>,
    other: &[(String, Value)],
) -> Result<Vec<UpdateWrite>> {
    let mut update_list = Vec::with_capacity(new_messages.len() + 1);
    update_list.push(remove_all_message());
    update_list.extend(new_messages);
    let parent_uuid = Uuid::parse_str(parent_id)
        .with_context(|| format!("the latest checkpoint id '{parent_id}' is not a UUID"))?;
    let task_id = Uuid::new_v5(&parent_uuid, b"__interrupt__").to_string();
    let write = |idx: usize, channel: &str, value: Pieces| UpdateWrite {
        task_id: task_id.clone(),
        task_path: "~__interrupt__, 0000000000".into(),
        idx: idx as i64,
        channel: channel.into(),
        type_name: "msgpack".into(),
        value,
    };
    let mut writes = vec![write(
        0,
        MESSAGES,
        encode_pieces(&Value::array(update_list)),
    )];
    for (i, (channel, value)) in other.iter().enumerate() {
        writes.push(write(i + 1, channel, encode_pieces(value)));
    }
    Ok(writes)
}

/// `datetime.now(timezone.utc).isoformat()`: microseconds, left out when zero.
pub fn iso_utc(t: Timestamp) -> String {
    let micros = t.subsec_microsecond();
    let base = t.strftime("%Y-%m-%dT%H:%M:%S").to_string();
    if micros == 0 {
        format!("{base}+00:00")
    } else {
        format!("{base}.{micros:06}+00:00")
    }
}

/// The saver's `get_next_version(max(versions))` (`apply_writes`: every channel an update
/// writes gets it).
fn next_version(versions: &[(Value, Value)], env: &mut Env<'_>) -> Result<String> {
    let mut max_int: Option<&Value> = None;
    let mut max_str: Option<&Value> = None;
    for (_, v) in versions {
        match v {
            Value::Str(s) => {
                if max_str.is_none_or(|m| m.as_str().is_some_and(|m| s.text.as_str() > m)) {
                    max_str = Some(v);
                }
            }
            other => {
                if let Some(i) = other.as_i64() {
                    if max_int.is_none_or(|m| m.as_i64().is_some_and(|m| i > m)) {
                        max_int = Some(v);
                    }
                }
            }
        }
    }
    version_after(max_str.or(max_int), env)
}

/// SqliteSaver's and PostgresSaver's `get_next_version(current)`:
/// `f"{n+1:032}.{random.random():016}"`, `n` the integer part of `current` (0 for none).
fn version_after(current: Option<&Value>, env: &mut Env<'_>) -> Result<String> {
    let n: i64 = match current {
        None => 0,
        Some(Value::Str(s)) => {
            let int_part = s.text.split('.').next().unwrap_or("0");
            int_part.parse().with_context(|| {
                format!("channel version '{}' does not start with a number", s.text)
            })?
        }
        Some(other) => other
            .as_i64()
            .context("a channel version is neither a string nor an integer")?,
    };
    let r = ((env.random)() >> 11) as f64 / (1u64 << 53) as f64;
    Ok(format!("{:032}.{:0>16}", n + 1, float_repr(r)))
}

/// The uuid6 of the checkpoint memctl appends: LangGraph's layout (100 ns ticks since 1582,
/// version 6, clock_seq = step), but the *smallest* such id that sorts after `parent` rather
/// than one made from the clock.
///
/// Why: an app creates its checkpoint ids (from the clock) before it commits them, and its
/// commit can queue behind memctl's. Had memctl's id come from the clock, it would sort after
/// the ids the app is about to commit, and LangGraph (which takes the largest id as the
/// thread's state) would drop the app's turn. Made just after the parent, memctl's id sorts
/// before every checkpoint the app makes after the parent: when they race, the app's turn
/// wins and memctl's edit is the one superseded (reported by the command). The id keeps the
/// parent's time, with the new step as clock_seq and a zero node; when the step does not
/// sort after the parent's clock_seq (step -1 is stored as 0x3FFF), the time moves one tick.
/// A parent that is not a uuid6 falls back to the clock (still after `parent`).
fn new_checkpoint_id(step: i64, parent: &str, env: &mut Env<'_>) -> Result<String> {
    let clock_seq = (step & 0x3FFF) as u16;
    let parent_parts = Uuid::parse_str(parent)
        .ok()
        .filter(|u| parent == u.to_string())
        .as_ref()
        .and_then(uuid6_parts);
    let ticks = match parent_parts {
        Some((ticks, parent_seq)) if clock_seq > parent_seq => ticks,
        Some((ticks, _)) => ticks + 1,
        None => (env.now.as_nanosecond().max(0) as u64) / 100 + GREGORIAN_OFFSET,
    };
    if ticks >= 1 << 60 {
        bail!("cannot make a checkpoint id that sorts after '{parent}'");
    }
    let id = uuid::Builder::from_sorted_gregorian_timestamp(ticks, clock_seq, &[0; 6])
        .into_uuid()
        .to_string();
    if id.as_str() <= parent {
        bail!("cannot make a checkpoint id that sorts after '{parent}'");
    }
    Ok(id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::msgpack;
    use crate::ids::id_time;

    fn env<'a>(now: &str, seq: &'a mut dyn FnMut() -> u64) -> Env<'a> {
        Env {
            now: now.parse().expect("ts"),
            random: seq,
        }
    }

    /// A uuid6 as LangGraph's `uuid6(clock_seq=step)` makes it at `ticks` with `node`.
    fn lg_uuid6(ticks: u128, step: u128, node: u128) -> String {
        Uuid::from_u128(
            (((ticks >> 12) & 0xFFFF_FFFF_FFFF) << 80)
                | (0x6 << 76)
                | ((ticks & 0xFFF) << 64)
                | (0b10 << 62)
                | ((step & 0x3FFF) << 48)
                | node,
        )
        .to_string()
    }

    #[test]
    fn ids_sort_just_after_the_parent_and_carry_the_step() {
        let mut r = || 0x1234_5678_9abc_def0u64;
        let mut e = env("2030-01-01T00:00:00Z", &mut r);
        let parent = "1f1ed411-b1d1-6121-8009-a1b2c3d4e5f6";
        let id = new_checkpoint_id(10, parent, &mut e).expect("id");
        assert_eq!(id, "1f1ed411-b1d1-6121-800a-000000000000");
        assert!(id.as_str() > parent);
        // The parent's time, not the clock's.
        assert_eq!(id_time(&id), id_time(parent));
        // Step -1 is stored as clock_seq 0x3FFF: step 0 moves one tick instead.
        let input = "1f1ed411-b1d1-6121-bfff-a1b2c3d4e5f6";
        let id = new_checkpoint_id(0, input, &mut e).expect("id");
        assert_eq!(id, "1f1ed411-b1d1-6122-8000-000000000000");
        assert!(id.as_str() > input);
        // A parent that is not a uuid6 falls back to the clock.
        let id = new_checkpoint_id(3, "0", &mut e).expect("id");
        assert_eq!(id_time(&id).map(|t| t.as_second()), Some(e.now.as_second()));
        // Nothing sorts after the largest uuid6.
        let last = "ffffffff-ffff-6fff-bfff-ffffffffffff";
        assert!(new_checkpoint_id(10, last, &mut e).is_err());
    }

    /// The race of issue #12: an app made its next checkpoint (any time after the parent, any
    /// node, the step after the parent's or later) but commits it after memctl's. LangGraph
    /// takes the largest id: it must be the app's, for every such id.
    #[test]
    fn every_checkpoint_an_app_makes_after_the_parent_sorts_after_memctls() {
        let mut r = || 0u64;
        let mut e = env("2030-01-01T00:00:00Z", &mut r);
        let base: u128 = 0x01f1_ed41_1b1d_1121;
        let mut rng = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        };
        for parent_step in [-1i64, 0, 1, 5, 0x3FFE, 0x3FFF, 100_000] {
            let parent_node = u128::from(next() & 0xFFFF_FFFF_FFFF);
            let parent = lg_uuid6(base, parent_step as u128, parent_node);
            let ours = new_checkpoint_id(parent_step + 1, &parent, &mut e).expect("id");
            for _ in 0..2000 {
                // LangGraph's uuid6 is monotonic per process: later ticks than the parent's,
                // or the same tick from another process (then a larger step).
                let later = u128::from(next() % 3);
                let step = (parent_step + 1 + (next() % 3) as i64) as u128;
                let node = u128::from(next() & 0xFFFF_FFFF_FFFF).max(1);
                let app = lg_uuid6(base + later, step, node);
                if app.as_str() <= parent.as_str() {
                    continue; // sorts before the parent: LangGraph itself would lose it
                }
                assert!(
                    app > ours,
                    "app {app} sorts before memctl's {ours} (parent {parent})"
                );
            }
        }
    }

    #[test]
    fn versions_and_timestamps_look_like_langgraph() {
        let mut r = || 1u64 << 63; // random() == 0.5
        let mut e = env("2026-12-01T04:38:50Z", &mut r);
        let versions = vec![
            (
                Value::str("messages"),
                Value::str("00000000000000000000000000000011.0.2193"),
            ),
            (
                Value::str("x"),
                Value::str("00000000000000000000000000000003.0.5"),
            ),
        ];
        assert_eq!(
            next_version(&versions, &mut e).expect("v"),
            "00000000000000000000000000000012.00000000000000.5"
        );
        assert_eq!(
            iso_utc("2026-12-01T04:38:50Z".parse().expect("ts")),
            "2026-12-01T04:38:50+00:00"
        );
        assert_eq!(
            iso_utc("2026-12-01T04:38:50.000120Z".parse().expect("ts")),
            "2026-12-01T04:38:50.000120+00:00"
        );
    }

    /// A DeltaChannel head whose `files` is one superstep short of the bound: the update
    /// writes messages (`next_version(max)`), snapshots files without writing it under
    /// `next_version(files' own version)` (langgraph's `create_checkpoint`), and names neither
    /// in its counters; versions_seen stays as it was (no node had seen files).
    #[test]
    fn a_snapshot_of_an_unwritten_delta_channel_bumps_its_own_version() {
        let v = |n: u32| Value::str(format!("{n:032}.0.5"));
        let seen = Value::map(vec![(
            Value::str("model"),
            Value::map(vec![(Value::str("branch:to:model"), v(7))]),
        )]);
        let root = Value::map(vec![
            (Value::str("v"), Value::int(4)),
            (Value::str("ts"), Value::str("t")),
            (
                Value::str("id"),
                Value::str("1f1ed411-b1d1-6121-8009-a1b2c3d4e5f6"),
            ),
            (Value::str("channel_values"), Value::map(vec![])),
            (
                Value::str("channel_versions"),
                Value::map(vec![
                    (Value::str("messages"), v(9)),
                    (Value::str("files"), v(3)),
                    (Value::str("branch:to:model"), v(7)),
                ]),
            ),
            (Value::str("versions_seen"), seen.clone()),
            (Value::str("updated_channels"), Value::Nil),
        ]);
        let parent = Checkpoint { root };
        let md_head = Metadata::parse(Some(
            br#"{"source": "loop", "step": 9, "parents": {}, "counters_since_delta_snapshot": {"messages": [1, 2], "files": [1, 4999]}}"#,
        ))
        .expect("md");
        let files = Value::map(vec![(Value::str("/a"), Value::str("x"))]);
        let head = DeltaHead {
            channels: vec![MESSAGES.into(), "files".into()],
            values: vec![("files".into(), Some(files.clone()))],
            snapshot: vec![],
            frequencies: vec![],
        };
        let mut r = || 1u64 << 63;
        let mut e = env("2030-01-01T00:00:00Z", &mut r);
        let upd = build(
            "1f1ed411-b1d1-6121-8009-a1b2c3d4e5f6",
            &parent,
            &md_head,
            vec![],
            vec![],
            Some(&head),
            &mut e,
        )
        .expect("built");
        let cp = msgpack::decode(&upd.checkpoint.to_vec()).expect("decodes");
        let versions = cp.get("channel_versions").expect("versions");
        let text = |k: &str| versions.get(k).and_then(Value::as_str).map(str::to_owned);
        assert_eq!(
            text("messages").as_deref(),
            Some("00000000000000000000000000000010.00000000000000.5")
        );
        assert_eq!(
            text("files").as_deref(),
            Some("00000000000000000000000000000004.00000000000000.5")
        );
        assert_eq!(text("branch:to:model"), Some(format!("{:032}.0.5", 7)));
        let snap = cp
            .get("channel_values")
            .and_then(|c| c.get("files"))
            .expect("files snapshot");
        assert!(matches!(snap, Value::Ext(x) if x.code == crate::codec::ext::DELTA_SNAPSHOT));
        assert_eq!(
            msgpack::encode(cp.get("versions_seen").expect("seen")),
            msgpack::encode(&seen)
        );
        let md: Json = serde_json::from_slice(&upd.metadata).expect("json");
        assert_eq!(
            md["counters_since_delta_snapshot"],
            serde_json::json!({"messages": [2, 3]})
        );

        // A DeltaChannel never written (no version) has nothing to snapshot at the bound: it
        // stays out, its counters go on (`delta_channels_to_snapshot` skips it).
        let mut root = parent.root.clone();
        if let Value::Map(m) = &mut root {
            for (k, v) in &mut m.entries {
                if k.as_str() == Some("channel_versions") {
                    *v = Value::map(vec![(
                        Value::str("messages"),
                        Value::str(format!("{:032}.0.5", 9)),
                    )]);
                }
            }
        }
        let unwritten = Checkpoint { root };
        let upd = build(
            "1f1ed411-b1d1-6121-8009-a1b2c3d4e5f6",
            &unwritten,
            &md_head,
            vec![],
            vec![],
            Some(&head),
            &mut e,
        )
        .expect("built");
        let cp = msgpack::decode(&upd.checkpoint.to_vec()).expect("decodes");
        let versions = cp.get("channel_versions").expect("versions");
        assert!(versions.get("files").is_none());
        assert!(cp
            .get("channel_values")
            .and_then(|c| c.get("files"))
            .is_none());
        let md: Json = serde_json::from_slice(&upd.metadata).expect("json");
        assert_eq!(
            md["counters_since_delta_snapshot"],
            serde_json::json!({"messages": [2, 3], "files": [1, 5000]})
        );
    }

    #[test]
    fn remove_all_is_langchains_remove_message() {
        let bytes = msgpack::encode(&remove_all_message());
        assert_eq!(bytes[0], 0xc7, "ext8 like ormsgpack");
        assert_eq!(bytes[2], 5);
        assert!(bytes
            .windows(REMOVE_ALL.len())
            .any(|w| w == REMOVE_ALL.as_bytes()));
    }

    #[test]
    fn sealed_rows_decrypt_to_the_plain_rows_with_fresh_nonces() {
        let plain = Update {
            checkpoint_id: "c".into(),
            parent_id: "p".into(),
            checkpoint_type: "msgpack".into(),
            checkpoint: msgpack::encode(&Value::map(vec![])).into(),
            metadata: b"{}".to_vec(),
            writes: vec![UpdateWrite {
                task_id: "t".into(),
                task_path: String::new(),
                idx: 0,
                channel: MESSAGES.into(),
                type_name: "msgpack".into(),
                value: msgpack::encode(&Value::array(vec![remove_all_message()])).into(),
            }],
            step: 1,
        };
        let key = AesKey::new(zeroize::Zeroizing::new(b"0123456789abcdef".to_vec())).expect("key");
        let mut sealed = plain.clone();
        sealed.seal(&key);
        assert_eq!(sealed.checkpoint_type, "msgpack+aes");
        assert_eq!(
            key.decrypt(&sealed.checkpoint.to_vec()).expect("opens"),
            plain.checkpoint.to_vec()
        );
        assert_eq!(sealed.metadata, plain.metadata, "metadata stays plain JSON");
        let w = &sealed.writes[0];
        assert_eq!(w.type_name, "msgpack+aes");
        assert_eq!(
            key.decrypt(&w.value.to_vec()).expect("opens"),
            plain.writes[0].value.to_vec()
        );
        assert_ne!(
            sealed.checkpoint.to_vec()[..16],
            w.value.to_vec()[..16],
            "every value has its own nonce"
        );
        let rows = sealed.rows();
        assert_eq!(rows.checkpoint_type, "msgpack+aes");
    }
}
