//! The one place that knows where a checkpoint keeps a channel's value: stored plainly, as a
//! DeltaChannel snapshot (msgpack ext 7 around the value), left out by a DeltaChannel (the
//! channel has a version but no value: LangGraph rebuilds it from writes), or absent. Every
//! command asks here instead of looking for ext codes or metadata keys itself.

use anyhow::Result;

use crate::codec::lazy::{self, Lazy, Spanned};
use crate::codec::{ext, Value};

use super::checkpoint::Checkpoint;
use super::metadata::Metadata;

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

/// A channel's decoded value and where it was: the snapshot's inner value for a
/// DeltaChannel snapshot, `None` when the checkpoint stores none.
pub fn stored_value<'a>(cp: &'a Checkpoint, channel: &str) -> (Location, Option<&'a Value>) {
    let value = cp.channel(channel);
    let has_version = || cp.channel_versions().iter().any(|(k, _)| k == channel);
    let code = value.map(|v| v.as_ext().map(|e| e.code));
    let location = Location::of(code, value.is_none() && has_version());
    match (location, value) {
        (Location::DeltaSnapshot, Some(Value::Ext(e))) => (location, Some(&e.payload)),
        _ => (location, value),
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
/// out, or the metadata says so (see [`super::delta::marks_delta`], the one reading of it).
pub fn is_delta(messages: Location, metadata: &Metadata) -> bool {
    messages.is_delta() || super::delta::marks_delta(metadata)
}
