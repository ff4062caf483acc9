//! LangChain's `count_tokens_approximately` with its default parameters
//! (`chars_per_token=4`, `extra_tokens_per_message=3`, `count_name=True`, `tokens_per_image=85`).

use serde_json::Value as Json;

use super::pyrepr::{lazy_repr_chars, repr};
use crate::codec::lazy::{self, Fields, Lazy, Spanned};
use crate::codec::{ext, json::to_json, msgpack, Value};
use crate::model::{Kind, Message};

/// Characters per token.
const CHARS_PER_TOKEN: usize = 4;
/// Tokens added per message for the chat framing.
const EXTRA_TOKENS_PER_MESSAGE: u64 = 3;
/// Tokens counted for an image block.
const TOKENS_PER_IMAGE: u64 = 85;

/// The OpenAI role string LangChain counts for a message.
fn role(m: &Message) -> String {
    match m.kind {
        Kind::Human => "user".into(),
        Kind::Ai => "assistant".into(),
        Kind::Tool => "tool".into(),
        Kind::Function => "function".into(),
        Kind::System => m
            .fields
            .get("additional_kwargs")
            .and_then(|k| k.get("__openai_role__"))
            .and_then(Json::as_str)
            .unwrap_or("system")
            .to_owned(),
        Kind::Chat => m
            .fields
            .get("role")
            .and_then(Json::as_str)
            .unwrap_or("")
            .to_owned(),
        Kind::Remove => "remove".into(),
    }
}

fn chars(s: &str) -> usize {
    s.chars().count()
}

/// Tokens of one message. With the default (integer) parameters the count of a list of
/// messages is exactly the sum of the per-message counts.
pub fn count_message(m: &Message) -> u64 {
    let mut n_chars = 0usize;
    let mut tokens = 0u64;
    match m.content() {
        Json::String(s) => n_chars += chars(s),
        Json::Array(blocks) => {
            for block in blocks {
                match block {
                    Json::String(s) => n_chars += chars(s),
                    Json::Object(o) => match o.get("type").and_then(Json::as_str) {
                        Some("image" | "image_url") => tokens += TOKENS_PER_IMAGE,
                        Some("text") => {
                            n_chars += o.get("text").and_then(Json::as_str).map_or(0, chars)
                        }
                        _ => n_chars += chars(&repr(block)),
                    },
                    other => n_chars += chars(&repr(other)),
                }
            }
        }
        other => n_chars += chars(&repr(other)),
    }
    if m.kind == Kind::Ai && !m.content().is_array() && !m.tool_calls().is_empty() {
        n_chars += chars(&repr(&Json::Array(m.tool_calls().to_vec())));
    }
    if m.kind == Kind::Tool {
        n_chars += m.tool_call_id().map_or(0, chars);
    }
    n_chars += chars(&role(m));
    if let Some(name) = m.name().filter(|n| !n.is_empty()) {
        n_chars += chars(name);
    }
    tokens + n_chars.div_ceil(CHARS_PER_TOKEN) as u64 + EXTRA_TOKENS_PER_MESSAGE
}

/// Tokens of one stored message value, read in place (no JSON built): the fast path for
/// counting whole databases. Values that are not ext-object messages (dicts in writes) go
/// through [`Message`].
pub fn count_value(v: &Value) -> Option<u64> {
    let Some(e) = v
        .as_ext()
        .filter(|e| e.code == ext::PYDANTIC_V2 || e.code == ext::PYDANTIC_V1)
    else {
        return Message::from_value(v).map(|m| count_message(&m));
    };
    let (module, class) = ext::type_path(e)?;
    if !module.starts_with("langchain_core.messages") {
        return None;
    }
    let (kind, _) = Kind::from_class(class)?;
    let fields = ext::argument(e)?;
    let get = |k: &str| fields.get(k);
    let mut n_chars = 0usize;
    let mut tokens = 0u64;
    let content = get("content");
    match content {
        Some(Value::Str(s)) => n_chars += chars(&s.text),
        Some(Value::Array(a)) => {
            for block in &a.items {
                match block {
                    Value::Str(s) => n_chars += chars(&s.text),
                    Value::Map(_) => match block.get("type").and_then(Value::as_str) {
                        Some("image" | "image_url") => tokens += TOKENS_PER_IMAGE,
                        Some("text") => {
                            n_chars += block.get("text").and_then(Value::as_str).map_or(0, chars)
                        }
                        _ => n_chars += chars(&repr(&to_json(block))),
                    },
                    other => n_chars += chars(&repr(&to_json(other))),
                }
            }
        }
        Some(other) => n_chars += chars(&repr(&to_json(other))),
        None => n_chars += chars(&repr(&Json::Null)),
    }
    let calls = get("tool_calls")
        .and_then(Value::as_array)
        .filter(|c| !c.is_empty());
    if kind == Kind::Ai && !matches!(content, Some(Value::Array(_))) {
        if let Some(calls) = calls {
            n_chars += chars(&repr(&Json::Array(calls.iter().map(to_json).collect())));
        }
    }
    if kind == Kind::Tool {
        n_chars += get("tool_call_id").and_then(Value::as_str).map_or(0, chars);
    }
    n_chars += match kind {
        Kind::Human => 4,
        Kind::Ai => 9,
        Kind::Tool => 4,
        Kind::Function => 8,
        Kind::Remove => 6,
        Kind::System => get("additional_kwargs")
            .and_then(|k| k.get("__openai_role__"))
            .and_then(Value::as_str)
            .map_or(6, chars),
        Kind::Chat => get("role").and_then(Value::as_str).map_or(0, chars),
    };
    if let Some(name) = get("name")
        .and_then(Value::as_str)
        .filter(|n| !n.is_empty())
    {
        n_chars += chars(name);
    }
    Some(tokens + n_chars.div_ceil(CHARS_PER_TOKEN) as u64 + EXTRA_TOKENS_PER_MESSAGE)
}

/// Tokens of a stored message list (`channel_values["messages"]`), read in place.
pub fn count_values(list: &Value) -> Option<u64> {
    list.as_array()?.iter().map(count_value).sum()
}

/// Tokens of one stored message read in place with the lazy reader (nothing allocated for
/// plain text; unusual parts are decoded on their own).
pub fn count_lazy(item: &Spanned<'_>) -> Option<u64> {
    match crate::model::outline::read_message(item) {
        Some((kind, _, fields)) => count_fields(kind, &fields),
        None if matches!(item.value, Lazy::Ext(..)) => None,
        None => count_value(&msgpack::decode(item.raw().ok()?).ok()?),
    }
}

/// Tokens of a message of `kind` whose `model_dump` fields are `fields`, read in place.
pub fn count_fields(kind: Kind, fields: &Fields<'_>) -> Option<u64> {
    let get = |k: &str| fields.get(k);
    // len(repr(x)): in place, or through the JSON form for tagged values.
    let repr_len = |s: &Spanned<'_>| {
        lazy_repr_chars(s).or_else(|| {
            let v = msgpack::decode(s.raw().ok()?).ok()?;
            Some(chars(&repr(&to_json(&v))))
        })
    };
    let mut n_chars = 0usize;
    let mut tokens = 0u64;
    let content = get("content");
    let content_is_list = matches!(content.map(|c| c.value), Some(Lazy::Array(_)));
    match content {
        Some(c) => match c.value {
            Lazy::Str(s) => n_chars += chars(s),
            Lazy::Array(_) => {
                for block in c.items().ok()?? {
                    match block.value {
                        Lazy::Str(s) => n_chars += chars(s),
                        Lazy::Map(_) => match block.get("type").ok()?.and_then(|t| t.as_str()) {
                            Some("image" | "image_url") => tokens += TOKENS_PER_IMAGE,
                            Some("text") => {
                                n_chars += block
                                    .get("text")
                                    .ok()?
                                    .and_then(|t| t.as_str())
                                    .map_or(0, chars)
                            }
                            _ => n_chars += repr_len(&block)?,
                        },
                        _ => n_chars += repr_len(&block)?,
                    }
                }
            }
            _ => n_chars += repr_len(&c)?,
        },
        None => n_chars += 4, // repr(None)
    }
    if kind == Kind::Ai && !content_is_list {
        if let Some(calls) =
            get("tool_calls").filter(|c| matches!(c.value, Lazy::Array(a) if a.len > 0))
        {
            n_chars += repr_len(&calls)?;
        }
    }
    if kind == Kind::Tool {
        n_chars += get("tool_call_id")
            .and_then(|t| t.as_str())
            .map_or(0, chars);
    }
    n_chars += match kind {
        Kind::Human | Kind::Tool => 4,
        Kind::Ai => 9,
        Kind::Function => 8,
        Kind::Remove => 6,
        Kind::System => get("additional_kwargs")
            .and_then(|k| k.get("__openai_role__").ok().flatten())
            .and_then(|r| r.as_str())
            .map_or(6, chars),
        Kind::Chat => get("role").and_then(|r| r.as_str()).map_or(0, chars),
    };
    if let Some(name) = get("name")
        .and_then(|n| n.as_str())
        .filter(|n| !n.is_empty())
    {
        n_chars += chars(name);
    }
    Some(tokens + n_chars.div_ceil(CHARS_PER_TOKEN) as u64 + EXTRA_TOKENS_PER_MESSAGE)
}

/// Message count and approximate tokens of a checkpoint blob's `messages` channel, read in
/// place: `None` when the channel is absent or holds something else.
pub fn count_checkpoint_blob(blob: &[u8]) -> Option<(usize, Option<u64>)> {
    let root = lazy::root(blob).ok()?;
    let mut list = root.get("channel_values").ok()??.get("messages").ok()??;
    let snapshot;
    if let Lazy::Ext(code, payload) = list.value {
        if code != ext::DELTA_SNAPSHOT {
            return None;
        }
        snapshot = lazy::root(payload).ok()?;
        list = snapshot;
    }
    let items = list.items().ok()??;
    let tokens = items.iter().map(count_lazy).sum::<Option<u64>>();
    Some((items.len(), tokens))
}

/// Tokens of a list of messages (`count_tokens_approximately(messages)`).
pub fn count(messages: &[Message]) -> u64 {
    messages.iter().map(count_message).sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn msg(j: Json) -> Message {
        Message::from_json(&j).expect("a message")
    }

    #[test]
    fn documented_examples() {
        // langgraph-format.md §1.3, each checked against LangChain.
        assert_eq!(
            count(&[msg(
                json!({"role": "user", "content": "Hello, how are you today?"})
            )]),
            11
        );
        assert_eq!(
            count(&[
                msg(json!({"role": "system", "content": "You are helpful."})),
                msg(json!({"role": "user", "content": "hi", "name": "bob"})),
            ]),
            15
        );
        assert_eq!(
            count(&[
                msg(json!({"role": "assistant", "content": "", "tool_calls": [
                    {"name": "get_weather", "args": {"city": "Paris"}, "id": "call_1"}]})),
                msg(json!({"role": "tool", "content": "sunny", "tool_call_id": "call_1"})),
            ]),
            35
        );
        assert_eq!(
            count(&[msg(json!({"role": "user", "content": [
                {"type": "text", "text": "look at this"},
                {"type": "image_url", "image_url": {"url": "data:x"}},
                "raw str"]}))]),
            94
        );
    }
}
