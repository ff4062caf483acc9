//! A decoded checkpoint: `{v, ts, id, channel_values, channel_versions, versions_seen, …}`.

use anyhow::{bail, Context, Result};

use crate::codec::{ext, json::to_json, msgpack, Decoded, Value};

use super::message::Message;

/// The name of the channel that holds the conversation in `MessagesState` / `AgentState`.
pub const MESSAGES: &str = "messages";

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
        let has_version = self.channel_versions().iter().any(|(k, _)| k == MESSAGES);
        let Some(value) = self.channel(MESSAGES) else {
            return Ok(if has_version {
                MessagesChannel::DeltaOmitted
            } else {
                MessagesChannel::Absent
            });
        };
        if let Value::Ext(e) = value {
            if e.code == ext::DELTA_SNAPSHOT {
                return Ok(MessagesChannel::DeltaSnapshot(message_list(&e.payload)?));
            }
        }
        Ok(MessagesChannel::List(message_list(value)?))
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

/// Converts JSON (the legacy `json` serialization) into the value model, so the same views
/// read both. LangChain constructor objects stay maps; [`Message::from_value`] knows them.
pub fn json_to_value(j: &serde_json::Value) -> Value {
    use serde_json::Value as J;
    match j {
        J::Null => Value::Nil,
        J::Bool(b) => Value::Bool(*b),
        J::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => Value::int(i),
            (None, Some(u)) => Value::Int(crate::codec::msgpack::Int {
                pos: u,
                neg: 0,
                marker: None,
            }),
            _ => Value::F64(n.as_f64().unwrap_or(f64::NAN)),
        },
        J::String(s) => Value::str(s.clone()),
        J::Array(items) => Value::array(items.iter().map(json_to_value).collect()),
        J::Object(obj) => Value::map(
            obj.iter()
                .map(|(k, v)| (Value::str(k.clone()), json_to_value(v)))
                .collect(),
        ),
    }
}

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
