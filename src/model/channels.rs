//! The one place that knows where a checkpoint keeps a channel's value: stored plainly, as a
//! DeltaChannel snapshot (msgpack ext 7 around the value), left out by a DeltaChannel (the
//! channel has a version but no value: LangGraph rebuilds it from writes), or absent. Every
//! command asks here instead of looking for ext codes or metadata keys itself.

use anyhow::Result;

use crate::codec::ext;
use crate::codec::lazy::{self, Lazy, Spanned};

use super::metadata::Metadata;

/// The metadata key LangGraph.js (`@langchain/langgraph` ≥ 1.7, `DELTA_WRITES_VERSIONED`)
/// writes, `true`, on every checkpoint of a branch its DeltaChannel graph started; it writes
/// `counters_since_delta_snapshot` as Python does too. Under it a DeltaChannel with no version
/// was never written and is not walked (`deltaChannelsToReplay`).
pub const JS_DELTA_MARKER: &str = "delta_writes_versioned";

/// The name of the channel that holds the conversation in `MessagesState` / `AgentState`.
pub const MESSAGES: &str = "messages";

/// The metadata key a DeltaChannel graph writes on every checkpoint that is not a snapshot.
pub const DELTA_COUNTERS: &str = "counters_since_delta_snapshot";

/// Where a checkpoint keeps a channel's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Location {
    /// The value itself is stored (the normal case).
    Plain,
    /// A DeltaChannel snapshot (ext 7) holding the whole value.
    DeltaSnapshot,
    /// The channel has a version but no stored value: a DeltaChannel rebuilt from writes.
    DeltaOmitted,
    /// The graph has no such channel (or it has not been written yet).
    Absent,
}

impl Location {
    /// Where the value is, from what is stored: `value` is `None` when the checkpoint stores
    /// no value for the channel, else `Some(ext code)` (`None` inside for a value that is not
    /// an ext); `has_version` says whether `channel_versions` names the channel.
    pub fn of(value: Option<Option<i8>>, has_version: bool) -> Location {
        match value {
            Some(Some(code)) if code == ext::DELTA_SNAPSHOT => Location::DeltaSnapshot,
            Some(_) => Location::Plain,
            None if has_version => Location::DeltaOmitted,
            None => Location::Absent,
        }
    }

    /// True for the two DeltaChannel forms.
    pub fn is_delta(self) -> bool {
        matches!(self, Location::DeltaSnapshot | Location::DeltaOmitted)
    }
}

/// A channel's value read in place from a checkpoint blob (the snapshot's inner value for a
/// DeltaChannel snapshot) and where it was. `has_version` is asked only when no value is
/// stored.
pub fn stored_lazy<'a>(
    blob: &'a [u8],
    channel: &str,
    has_version: impl FnOnce() -> bool,
) -> Result<(Location, Option<Spanned<'a>>)> {
    let root = lazy::root(blob)?;
    let value = match root.get("channel_values")? {
        Some(values) => values.get(channel)?,
        None => None,
    };
    let Some(value) = value else {
        return Ok((Location::of(None, has_version()), None));
    };
    match value.value {
        Lazy::Ext(code, payload) => match Location::of(Some(Some(code)), true) {
            Location::DeltaSnapshot => Ok((Location::DeltaSnapshot, Some(lazy::root(payload)?))),
            other => Ok((other, Some(value))),
        },
        _ => Ok((Location::Plain, Some(value))),
    }
}

/// Where a channel's value is, given where its stored value starts in `blob` (`None`: no value
/// stored).
pub fn location_at(blob: &[u8], start: Option<usize>, has_version: bool) -> Location {
    let code = start.map(|at| match lazy::read(blob, at).map(|v| v.value) {
        Ok(Lazy::Ext(code, _)) => Some(code),
        _ => None,
    });
    Location::of(code, has_version)
}

/// The error of a command that needs a checkpoint's message list where a DeltaChannel left it
/// out and the list was not rebuilt from the thread's older rows.
pub fn not_stored(thread_id: &str, checkpoint_id: &str) -> anyhow::Error {
    anyhow::anyhow!(
        "thread '{thread_id}' keeps its messages in a DeltaChannel: checkpoint {checkpoint_id} stores no message list \
         and it could not be rebuilt from the thread's older rows (use `dump --raw` to see what is stored)"
    )
}

/// True when a checkpoint belongs to a DeltaChannel graph: the messages are a snapshot or left
/// out, or the metadata says so (see [`marks_delta`], the one reading of it).
pub fn is_delta(messages: Location, metadata: &Metadata) -> bool {
    messages.is_delta() || marks_delta(metadata)
}

/// True when a checkpoint's metadata says its graph has DeltaChannels (the counters
/// LangGraph keeps between snapshots, or LangGraph.js's marker).
pub fn marks_delta(metadata: &Metadata) -> bool {
    metadata.fields.contains_key(DELTA_COUNTERS) || metadata.fields.contains_key(JS_DELTA_MARKER)
}

/// The DeltaChannels a checkpoint's metadata names (the keys of
/// `counters_since_delta_snapshot`; a channel snapshotted at this very checkpoint has its
/// counters reset and is not named).
pub fn counted_channels(metadata: &Metadata) -> Vec<String> {
    metadata
        .fields
        .get(DELTA_COUNTERS)
        .and_then(serde_json::Value::as_object)
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default()
}

/// Channels LangGraph uses internally; not shown as state.
pub fn is_internal_channel(name: &str) -> bool {
    name == "__start__"
        || name == "__pregel_tasks"
        || name.starts_with("branch:to:")
        || name.starts_with("__")
}
