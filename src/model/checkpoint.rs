//! A decoded checkpoint: `{v, ts, id, channel_values, channel_versions, versions_seen, …}`.

use std::ops::Range;

use anyhow::{anyhow, bail, Context, Result};

use crate::codec::lazy::{self, Lazy, Spanned};
use crate::codec::{ext, json::to_json, msgpack, Decoded, Value};

use super::channels::{self, Location};
use super::message::{Kind, Message};

pub use super::channels::MESSAGES;

/// A decoded checkpoint blob.
#[derive(Debug, Clone)]
pub struct Checkpoint {
    /// The whole decoded map, kept so that it can be re-encoded unchanged.
    pub root: Value,
}

/// What the `messages` channel of a checkpoint holds.
#[derive(Debug, Clone)]
pub enum MessagesChannel {
    /// A list of messages stored in the checkpoint (the normal case).
    List(Vec<Message>),
    /// A DeltaChannel snapshot (ext 7) holding the full list.
    DeltaSnapshot(Vec<Message>),
    /// The channel has a version but no stored value: a DeltaChannel rebuilt from writes.
    DeltaOmitted,
    /// The graph has no `messages` channel (or it has not been written yet).
    Absent,
}

impl MessagesChannel {
    /// The messages, when the checkpoint itself holds them.
    pub fn messages(&self) -> Option<&[Message]> {
        match self {
            MessagesChannel::List(m) | MessagesChannel::DeltaSnapshot(m) => Some(m),
            _ => None,
        }
    }

    /// The number of messages, when known from the checkpoint alone.
    pub fn count(&self) -> Option<usize> {
        self.messages().map(<[Message]>::len)
    }
}

impl Checkpoint {
    /// A channel's decoded value and where it was (see [`Location`]): the snapshot's inner
    /// value for a DeltaChannel snapshot, `None` when the checkpoint stores none.
    pub fn stored_value(&self, channel: &str) -> (Location, Option<&Value>) {
        let value = self.channel(channel);
        let has_version = || self.channel_versions().iter().any(|(k, _)| k == channel);
        let code = value.map(|v| v.as_ext().map(|e| e.code));
        let location = Location::of(code, value.is_none() && has_version());
        match (location, value) {
            (Location::DeltaSnapshot, Some(Value::Ext(e))) => (location, Some(&e.payload)),
            _ => (location, value),
        }
    }

    /// Decodes a checkpoint blob by its `type` column.
    pub fn decode(type_name: &str, blob: &[u8]) -> Result<Checkpoint> {
        let root = match crate::codec::decode_typed(type_name, blob)? {
            Decoded::Msgpack(v) => v,
            Decoded::Json(j) => json_to_value(&j),
            other => bail!("checkpoint blob has type '{type_name}', expected msgpack ({other:?})"),
        };
        if root.as_map().is_none() {
            bail!("checkpoint blob is not a map");
        }
        Ok(Checkpoint { root })
    }

    /// Decodes a checkpoint blob like [`Checkpoint::decode`], with its errors, except its
    /// message list: that stays stored, to be read one message at a time from the returned
    /// [`StoredMessages`]. A `msgpack` blob is checked whole first (the errors of a full
    /// decode), then decoded but for the list, whose value in the returned checkpoint is nil;
    /// other types (legacy `json`) are decoded whole and their list kept re-encoded.
    pub fn decode_shallow(type_name: &str, blob: Vec<u8>) -> Result<(Checkpoint, StoredMessages)> {
        if type_name != "msgpack" {
            let cp = Checkpoint::decode(type_name, &blob)?;
            let stored = match cp.stored_value(MESSAGES) {
                (Location::DeltaOmitted, _) => StoredMessages::DeltaOmitted,
                (location, Some(v)) => StoredMessages::List(StoredList::of_value(
                    v,
                    location == Location::DeltaSnapshot,
                )),
                (_, None) => StoredMessages::Absent,
            };
            return Ok((cp, stored));
        }
        lazy::check(&blob).context("corrupt msgpack blob")?;
        if !matches!(lazy::root(&blob).map(|r| r.value), Ok(Lazy::Map(_))) {
            bail!("checkpoint blob is not a map");
        }
        let (root, _) = msgpack::decode_except(&blob, "channel_values", MESSAGES)
            .context("corrupt msgpack blob")?;
        let cp = Checkpoint { root };
        // The list `channel(MESSAGES)` would give: the first match, found in place.
        let found = {
            let has_version = || cp.channel_versions().iter().any(|(k, _)| k == MESSAGES);
            let (location, value) = channels::stored_lazy(&blob, MESSAGES, has_version)?;
            let at = value.map(|v| v.raw_start(&blob));
            (location, at)
        };
        let stored = match found {
            (Location::DeltaOmitted, _) => StoredMessages::DeltaOmitted,
            (location, Some(at)) => StoredMessages::List(StoredList {
                blob,
                at,
                snapshot: location == Location::DeltaSnapshot,
            }),
            (_, None) => StoredMessages::Absent,
        };
        Ok((cp, stored))
    }

    /// Re-encodes the checkpoint (byte-identical when nothing was changed).
    pub fn encode(&self) -> Vec<u8> {
        msgpack::encode(&self.root)
    }

    /// The format version `v`.
    pub fn v(&self) -> Option<i64> {
        self.root.get("v").and_then(Value::as_i64)
    }

    /// The timestamp string `ts` (ISO 8601).
    pub fn ts(&self) -> Option<&str> {
        self.root.get("ts").and_then(Value::as_str)
    }

    /// The channel values, in stored order.
    pub fn channel_values(&self) -> Vec<(&str, &Value)> {
        self.root
            .get("channel_values")
            .and_then(Value::as_map)
            .map(|m| {
                m.iter()
                    .filter_map(|(k, v)| Some((k.as_str()?, v)))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// One channel's stored value.
    pub fn channel(&self, name: &str) -> Option<&Value> {
        self.root.get("channel_values")?.get(name)
    }

    /// Channel versions as strings (SqliteSaver writes `"<32 digits>.<random>"`; old graphs ints).
    pub fn channel_versions(&self) -> Vec<(String, String)> {
        version_map(self.root.get("channel_versions"))
    }

    /// `versions_seen[node]` as `(channel, version)` pairs; `None` when the node is missing.
    pub fn versions_seen(&self, node: &str) -> Option<Vec<(String, String)>> {
        let seen = self.root.get("versions_seen")?.get(node)?;
        Some(version_map(Some(seen)))
    }

    /// What the `messages` channel holds.
    pub fn messages(&self) -> Result<MessagesChannel> {
        Ok(match self.stored_value(MESSAGES) {
            (Location::DeltaOmitted, _) => MessagesChannel::DeltaOmitted,
            (Location::DeltaSnapshot, Some(v)) => MessagesChannel::DeltaSnapshot(message_list(v)?),
            (_, Some(v)) => MessagesChannel::List(message_list(v)?),
            (_, None) => MessagesChannel::Absent,
        })
    }

    /// The `Send` objects waiting in `__pregel_tasks` (PUSH tasks), as node names.
    pub fn pending_sends(&self) -> Vec<String> {
        let Some(items) = self.channel("__pregel_tasks").and_then(Value::as_array) else {
            return vec![];
        };
        items
            .iter()
            .filter_map(|s| {
                let e = s.as_ext()?;
                let args = ext::argument(e)?.as_array()?;
                args.first()?.as_str().map(str::to_owned)
            })
            .collect()
    }
}

/// A checkpoint's message list as stored: its msgpack bytes, read one message at a time (a
/// thread of 100,000 messages is never held as 100,000 decoded views).
#[derive(Debug, Clone)]
pub struct StoredList {
    /// The bytes the list and its spans are in (the checkpoint blob).
    blob: Vec<u8>,
    /// Where the list (an array, if it is one) starts in `blob`.
    at: usize,
    /// True for a DeltaChannel snapshot's list (ext 7).
    pub snapshot: bool,
}

/// What the `messages` channel of a checkpoint read by [`Checkpoint::decode_shallow`] holds:
/// [`MessagesChannel`] with the list left stored.
#[derive(Debug, Clone)]
pub enum StoredMessages {
    /// A list stored in the checkpoint (plain, or a DeltaChannel snapshot's).
    List(StoredList),
    /// The channel has a version but no stored value: a DeltaChannel rebuilt from writes.
    DeltaOmitted,
    /// The graph has no `messages` channel (or it has not been written yet).
    Absent,
}

impl StoredMessages {
    /// The stored list, when the checkpoint itself holds one.
    pub fn list(&self) -> Option<&StoredList> {
        match self {
            StoredMessages::List(l) => Some(l),
            _ => None,
        }
    }
}

impl StoredList {
    /// A list kept as the msgpack of `value` (for checkpoints that were decoded whole).
    fn of_value(value: &Value, snapshot: bool) -> StoredList {
        StoredList {
            blob: msgpack::encode(value),
            at: 0,
            snapshot,
        }
    }

    /// A list rebuilt by replaying a DeltaChannel (see `model::delta`), kept as its msgpack.
    pub fn rebuilt(value: &Value) -> StoredList {
        StoredList::of_value(value, false)
    }

    /// The whole stored list, decoded.
    pub fn value(&self) -> Result<Value> {
        let bytes = self
            .blob
            .get(self.at..)
            .ok_or_else(|| anyhow!("the 'messages' list is outside the checkpoint"))?;
        let end = msgpack::skip(bytes, 0).context("corrupt msgpack blob")?;
        msgpack::decode(&bytes[..end]).context("corrupt msgpack blob")
    }

    /// The bytes message spans point into.
    pub fn bytes(&self) -> &[u8] {
        &self.blob
    }

    /// Where each message sits in [`StoredList::bytes`], after checking what
    /// [`message_list`] checks, with its errors: the channel holds a list, and every item is
    /// a LangChain message. Ext-object messages are recognized in place; any other item is
    /// decoded on its own and read as [`Message::from_value`] reads it.
    pub fn spans(&self) -> Result<Vec<Range<usize>>> {
        let list = lazy::read(&self.blob, self.at)?;
        let Lazy::Array(items) = list.value else {
            bail!("the 'messages' channel is not a list");
        };
        let mut out = Vec::with_capacity(items.len.min(self.blob.len()));
        for (i, item) in items.spans().enumerate() {
            let (item, span) = item?;
            let message = plainly_a_message(&item)
                || Message::from_value(&msgpack::decode(item.raw()?)?).is_some();
            if !message {
                bail!("item {i} of 'messages' is not a LangChain message");
            }
            out.push(span);
        }
        Ok(out)
    }

    /// The id of message `i` at `span`, as [`Message::id`] gives it: read in place from an
    /// ext-object message with plain fields, else from the message's view.
    pub fn id(&self, i: usize, span: &Range<usize>) -> Result<Option<String>> {
        let bytes = self
            .blob
            .get(span.clone())
            .ok_or_else(|| anyhow!("item {i} of 'messages' is outside the checkpoint"))?;
        if let Some((_, _, fields)) = super::outline::read_message(&lazy::root(bytes)?) {
            if fields.is_plain() {
                return Ok(fields.get("id").and_then(|v| v.as_str()).map(str::to_owned));
            }
        }
        Ok(self.message(i, span)?.id().map(str::to_owned))
    }

    /// The view of message `i`, at `span` (from [`StoredList::spans`]).
    pub fn message(&self, i: usize, span: &Range<usize>) -> Result<Message> {
        let bytes = self
            .blob
            .get(span.clone())
            .ok_or_else(|| anyhow!("item {i} of 'messages' is outside the checkpoint"))?;
        Message::from_value(&msgpack::decode(bytes)?)
            .with_context(|| format!("item {i} of 'messages' is not a LangChain message"))
    }
}

/// True when `item` is an ext-object LangChain message whose fields are a map: exactly the
/// items [`Message::from_value`] reads as a message that way, recognized without decoding.
/// (False says nothing: the item may still be a message in another shape.)
pub fn plainly_a_message(item: &Spanned<'_>) -> bool {
    let Lazy::Ext(code, payload) = item.value else {
        return false;
    };
    if code != ext::PYDANTIC_V2 && code != ext::PYDANTIC_V1 {
        return false;
    }
    let Ok(Lazy::Array(parts)) = lazy::root(payload).map(|p| p.value) else {
        return false;
    };
    let mut parts = parts.iter();
    let mut next = || parts.next().and_then(Result::ok);
    let (Some(module), Some(class), Some(fields)) = (next(), next(), next()) else {
        return false;
    };
    module
        .as_str()
        .is_some_and(|m| m.starts_with("langchain_core.messages"))
        && class.as_str().and_then(Kind::from_class).is_some()
        && matches!(fields.value, Lazy::Map(_))
}

/// Reads a list of messages; every item must be a message.
pub fn message_list(v: &Value) -> Result<Vec<Message>> {
    let Some(items) = v.as_array() else {
        bail!("the 'messages' channel is not a list");
    };
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            Message::from_value(item)
                .with_context(|| format!("item {i} of 'messages' is not a LangChain message"))
        })
        .collect()
}

fn version_map(v: Option<&Value>) -> Vec<(String, String)> {
    let Some(map) = v.and_then(Value::as_map) else {
        return vec![];
    };
    map.iter()
        .filter_map(|(k, v)| {
            let key = k.as_str()?.to_owned();
            let version = match v {
                Value::Str(s) => s.text.clone(),
                Value::F64(f) => f.to_string(),
                other => other.as_i64().map(|i| i.to_string())?,
            };
            Some((key, version))
        })
        .collect()
}

pub use crate::codec::json::json_to_value;

/// A brief one-line rendering of a channel value for `show` (strings quoted, long values cut).
pub fn brief_value(v: &Value, max_chars: usize) -> String {
    let text = match v {
        Value::Str(s) => format!("{:?}", s.text),
        Value::Ext(e) => ext::brief(e).unwrap_or_else(|| to_json(v).to_string()),
        _ => to_json(v).to_string(),
    };
    if text.chars().count() > max_chars {
        let cut: String = text.chars().take(max_chars.saturating_sub(1)).collect();
        format!("{cut}…")
    } else {
        text
    }
}
