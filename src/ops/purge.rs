//! Scrubbing removed messages out of older checkpoints and writes (`rm --purge`).
//!
//! A message is matched by id; a message without an id (the plain dict an app passes to
//! `invoke`, e.g. `{"role": "user", "content": "..."}`, as it sits in the `writes` table) is
//! matched by its text. The tool calls of removed AI messages go too, wherever LangGraph copied
//! them: `create_agent` hands each tool call to the tools node as a `Send("tools", call)` (or a
//! `ToolCallWithContext` holding the call and a copy of the state) in `__pregel_tasks`, both in
//! pending writes and in the channel values of older checkpoints.

use std::collections::{BTreeSet, HashSet};

use crate::codec::msgpack::{Array, Value};
use crate::model::{Kind, Message};
use crate::ops::patterns::Patterns;
use crate::storage::BlobKind;

/// What a redaction puts where erased text was (`forget --match`).
pub const ERASED: &str = "[erased]";

/// Keys whose string values are structure, never text a person wrote (ids, types, tool and
/// node names): a redaction leaves them as they are, so LangGraph still routes and loads.
const STRUCTURAL_KEYS: &[&str] = &["id", "type", "tool_call_id", "name", "lc", "__type"];

/// True when a map key's value is structure a redaction leaves alone (see
/// `STRUCTURAL_KEYS`).
pub fn is_structural(key: &str) -> bool {
    STRUCTURAL_KEYS.contains(&key)
}

/// What to scrub.
#[derive(Debug, Default, Clone)]
pub struct Scrub {
    /// Ids of the removed messages.
    pub ids: HashSet<String>,
    /// Texts of the removed messages (for id-less dict messages).
    pub texts: HashSet<String>,
    /// Ids of the tool calls the removed AI messages made.
    pub tool_call_ids: HashSet<String>,
    /// Every string the removed messages carried (text, content strings, tool-call argument
    /// strings): after the purge none may be left in the file.
    pub private: BTreeSet<String>,
    /// Tool calls whose ToolMessage was removed: the AI messages that made them go too (a
    /// call without its answer is as invalid as an answer without its call).
    pub answered_call_ids: HashSet<String>,
    /// `forget --match`: text erased wherever it stands outside the removed messages (a
    /// summary, another state channel, a tool call's arguments in a `Send`): what the
    /// patterns match in a string value is replaced by [`ERASED`] (see [`redact`]).
    pub redact: Option<Patterns>,
}

impl Scrub {
    /// Adds a removed message.
    pub fn add(&mut self, m: &Message) {
        self.ids.extend(m.id().map(str::to_owned));
        let text = m.text();
        if !text.is_empty() {
            self.texts.insert(text);
        }
        self.tool_call_ids
            .extend(m.tool_call_ids().into_iter().map(str::to_owned));
        if m.kind == Kind::Tool {
            self.answered_call_ids
                .extend(m.tool_call_id().map(str::to_owned));
        }
        self.private.extend(m.private_strings());
    }

    /// True when the scrub removes and redacts nothing.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
            && self.texts.is_empty()
            && self.tool_call_ids.is_empty()
            && self.answered_call_ids.is_empty()
            && self.redact.is_none()
    }

    /// True when `v` is one of the removed messages.
    pub fn matches(&self, v: &Value) -> bool {
        let Some(m) = Message::from_value(v) else {
            return false;
        };
        let itself = match m.id() {
            Some(id) => self.ids.contains(id),
            None => {
                let text = m.text();
                !text.is_empty() && self.texts.contains(&text)
            }
        };
        // The other half of a removed tool-call pair.
        itself
            || match m.kind {
                Kind::Tool => m
                    .tool_call_id()
                    .is_some_and(|c| self.tool_call_ids.contains(c)),
                Kind::Ai if !self.answered_call_ids.is_empty() => m
                    .tool_call_ids()
                    .iter()
                    .any(|c| self.answered_call_ids.contains(*c)),
                _ => false,
            }
    }

    /// True when `v` is a removed message, one of their tool calls (`{name, args, id}`), a
    /// `ToolCallWithContext` holding one, or a `Send` carrying either.
    pub fn refers(&self, v: &Value) -> bool {
        if self.matches(v) {
            return true;
        }
        match v {
            Value::Map(_) => {
                let removed_call = !self.tool_call_ids.is_empty()
                    && v.get("args").is_some()
                    && v.get("id")
                        .and_then(Value::as_str)
                        .is_some_and(|id| self.tool_call_ids.contains(id));
                removed_call || v.get("tool_call").is_some_and(|c| self.refers(c))
            }
            Value::Ext(e) if !self.tool_call_ids.is_empty() => {
                // Send: ext payload [module, "Send", [node, arg]].
                let Some(parts) = e.payload.as_array() else {
                    return false;
                };
                parts.len() >= 3
                    && parts[1].as_str() == Some("Send")
                    && parts[2]
                        .as_array()
                        .and_then(|a| a.get(1))
                        .is_some_and(|arg| self.refers(arg))
            }
            _ => false,
        }
    }

    /// Removes what [`Scrub::refers`] to wherever it sits in `v`: items of lists (at any depth,
    /// e.g. the `{"messages": [...]}` input held by `__start__`, the `Send`s of
    /// `__pregel_tasks`), or `v` itself (replaced by an empty list, which LangGraph's channels
    /// read as no update). Kept message objects are not searched inside. Returns true when
    /// something changed.
    pub fn scrub_list(&self, v: &mut Value) -> bool {
        if self.refers(v) {
            *v = Value::Array(Array {
                items: vec![],
                marker: None,
            });
            return true;
        }
        self.scrub_inside(v)
    }

    fn scrub_inside(&self, v: &mut Value) -> bool {
        match v {
            Value::Array(a) => {
                let before = a.items.len();
                a.items.retain(|item| !self.refers(item));
                let mut changed = a.items.len() != before;
                for item in a.items.iter_mut() {
                    changed |= self.scrub_inside(item);
                }
                changed
            }
            Value::Map(m) => {
                let mut changed = false;
                for (_, val) in m.entries.iter_mut() {
                    changed |= self.scrub_list(val);
                }
                changed
            }
            Value::Ext(_) if Message::from_value(v).is_none() => {
                let Value::Ext(e) = v else { return false };
                self.scrub_inside(&mut e.payload)
            }
            _ => false,
        }
    }

    /// Scrubs every channel of a decoded checkpoint. Returns true when something changed.
    pub fn scrub_checkpoint(&self, root: &mut Value) -> bool {
        let Some(values) = root.get_mut("channel_values") else {
            return false;
        };
        let removed = self.scrub_inside(values);
        let redacted = self.redact.as_ref().is_some_and(|p| redact(p, values) > 0);
        removed || redacted
    }

    /// Scrubs a pending write's value (see [`Scrub::scrub_list`]), then redacts it. Returns
    /// true when something changed.
    pub fn scrub_write(&self, value: &mut Value) -> bool {
        let removed = self.scrub_list(value);
        let redacted = self.redact.as_ref().is_some_and(|p| redact(p, value) > 0);
        removed || redacted
    }

    /// A stored blob with the removed messages scrubbed out (checkpoints: every channel;
    /// writes: the value), or `None` when it holds none of them. For
    /// `CheckpointStore::append_update`.
    pub fn rewrite_blob(&self, kind: BlobKind, bytes: &[u8]) -> anyhow::Result<Option<Vec<u8>>> {
        let mut value = crate::codec::msgpack::decode(bytes)
            .map_err(anyhow::Error::from)
            .map_err(|e| e.context("it does not decode, so memctl cannot purge it"))?;
        let changed = match kind {
            BlobKind::Checkpoint => self.scrub_checkpoint(&mut value),
            BlobKind::Write => self.scrub_write(&mut value),
        };
        Ok(changed.then(|| crate::codec::msgpack::encode(&value)))
    }

    /// The private strings a purge can check for in the file: at least 4 bytes long (shorter
    /// ones occur by chance), and not in a message the thread keeps (`kept`: their
    /// searchable texts), where the user chose to leave them.
    pub fn strings_to_verify(&self, kept: &[String]) -> Vec<String> {
        self.private
            .iter()
            .filter(|s| s.len() >= 4 && !kept.iter().any(|k| k.contains(s.as_str())))
            .cloned()
            .collect()
    }
}

/// Erases what `p` matches in the string values of `v` (map values and list items at any
/// depth, the fields of typed objects): the union of every pattern's matches, each stretch
/// replaced by [`ERASED`] once (see [`Patterns::erase`]); map keys, the values of
/// `STRUCTURAL_KEYS` and the class path of typed objects are left alone. Returns how many
/// strings changed.
pub fn redact(p: &Patterns, v: &mut Value) -> usize {
    match v {
        Value::Str(s) => match p.erase(&s.text) {
            Some(erased) => {
                s.text = erased;
                s.marker = None;
                1
            }
            None => 0,
        },
        Value::Array(a) => a.items.iter_mut().map(|x| redact(p, x)).sum(),
        Value::Map(m) => m
            .entries
            .iter_mut()
            .filter(|(k, _)| k.as_str().is_none_or(|k| !is_structural(k)))
            .map(|(_, x)| redact(p, x))
            .sum(),
        // A typed object: [module, class, arguments…]; only the arguments are data.
        Value::Ext(e) => match &mut e.payload {
            Value::Array(a) if a.items.len() > 2 => {
                a.items[2..].iter_mut().map(|x| redact(p, x)).sum()
            }
            _ => 0,
        },
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::msgpack::{decode, encode};
    use crate::model::checkpoint::json_to_value;
    use serde_json::json;

    #[test]
    fn scrubs_by_id_and_dicts_by_text() {
        let s = Scrub {
            ids: ["m2".to_owned()].into_iter().collect(),
            texts: ["my secret is hunter2".to_owned()].into_iter().collect(),
            ..Scrub::default()
        };
        let mut list = json_to_value(&json!([
            {"role": "user", "content": "hello", "id": "m1"},
            {"role": "user", "content": "my secret is hunter2"},
            {"role": "assistant", "content": "noted", "id": "m2"},
            {"role": "assistant", "content": "my secret is hunter2", "id": "m9"},
        ]));
        assert!(s.scrub_list(&mut list));
        let left: Vec<String> = list
            .as_array()
            .expect("list")
            .iter()
            .filter_map(|v| Message::from_value(v).and_then(|m| m.id().map(str::to_owned)))
            .collect();
        assert_eq!(
            left,
            ["m1", "m9"],
            "id-bearing messages are matched by id only"
        );
        let mut single = json_to_value(&json!({"role": "user", "content": "my secret is hunter2"}));
        assert!(s.scrub_list(&mut single));
        assert_eq!(encode(&single), [0x90]);
        let mut untouched = decode(&[0x91, 0x01]).expect("decodes");
        assert!(!s.scrub_list(&mut untouched));
    }

    #[test]
    fn removed_tool_calls_go_from_sends_and_tool_call_contexts() {
        let ai = json_to_value(&json!({
            "type": "ai", "content": "", "id": "ai-1",
            "tool_calls": [{"name": "login", "args": {"password": "hunter2-TOPSECRET"},
                            "id": "call_1", "type": "tool_call"}]
        }));
        let mut s = Scrub::default();
        s.add(&Message::from_value(&ai).expect("a message"));
        assert!(s.tool_call_ids.contains("call_1"));
        assert!(s.private.contains("hunter2-TOPSECRET"));
        let call = json_to_value(
            &json!({"name": "login", "args": {"password": "hunter2-TOPSECRET"},
                                         "id": "call_1", "type": "tool_call"}),
        );
        let other = json_to_value(
            &json!({"name": "add", "args": {"a": 1}, "id": "call_2", "type": "tool_call"}),
        );
        let send = |arg: Value| {
            Value::ext(
                crate::codec::ext::CONSTRUCTOR_POS_ARGS,
                Value::array(vec![
                    Value::str("langgraph.types"),
                    Value::str("Send"),
                    Value::array(vec![Value::str("tools"), arg]),
                ]),
            )
        };
        let with_context = Value::map(vec![
            (Value::str("__type"), Value::str("tool_call_with_context")),
            (Value::str("tool_call"), call.clone()),
            (Value::str("state"), Value::map(vec![])),
        ]);
        // A write row holding one Send becomes an empty list; a list of Sends loses the one.
        let mut row = send(call.clone());
        assert!(s.scrub_list(&mut row));
        assert_eq!(encode(&row), [0x90]);
        let mut tasks = Value::array(vec![send(with_context), send(other.clone())]);
        assert!(s.scrub_list(&mut tasks));
        assert_eq!(tasks.as_array().map(<[Value]>::len), Some(1));
        assert!(!encode(&tasks).windows(7).any(|w| w == b"hunter2"));
        // Kept text is not checked for; short strings are not either.
        assert_eq!(s.strings_to_verify(&[]), ["hunter2-TOPSECRET"]);
        assert!(s
            .strings_to_verify(&["my hunter2-TOPSECRET again".into()])
            .is_empty());
    }
}
