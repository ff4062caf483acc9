//! LangChain's `count_tokens_approximately` with its default parameters
//! (`chars_per_token=4`, `extra_tokens_per_message=3`, `count_name=True`, `tokens_per_image=85`),
//! written once over [`Part`]: a message is counted the same whether it was decoded to JSON
//! ([`Message`]), to the value model ([`Value`]) or is read in place from a blob
//! ([`Spanned`]). Equal to LangChain on every fixture message (tests/tokens.rs).

use serde_json::Value as Json;

use crate::codec::json::to_json;
use crate::codec::lazy::{Fields, Lazy, Spanned};
use crate::codec::pyrepr::{lazy_repr_chars, repr};
use crate::codec::{ext, msgpack, Value};

use super::message::{Kind, Message};

/// Characters per token.
const CHARS_PER_TOKEN: usize = 4;
/// Tokens added per message for the chat framing.
const EXTRA_TOKENS_PER_MESSAGE: u64 = 3;
/// Tokens counted for an image block.
const TOKENS_PER_IMAGE: u64 = 85;

/// The shape of a part of a message, as the counter tells them apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// A string.
    Str,
    /// A list.
    Array,
    /// A dict.
    Map,
    /// Anything else (numbers, None, tagged values).
    Other,
}

/// A part of a stored message (its content, a content block, its tool calls, …) in whatever
/// form it was read: what the counter needs to know of it.
pub trait Part: Sized {
    /// Its shape.
    fn shape(&self) -> Shape;
    /// The text of a string.
    fn text(&self) -> Option<&str>;
    /// The items of a list (`None`: not a list, or unreadable).
    fn items(&self) -> Option<Vec<Self>>;
    /// The value under `key` of a dict.
    fn field(&self, key: &str) -> Option<Self>;
    /// `len(repr(x))` in code points, as Python prints the value (`None`: unreadable).
    fn repr_chars(&self) -> Option<usize>;
}

/// Counts one message of `kind` whose fields `get` reads (`model_dump` names). `None` when a
/// part cannot be read. With the default (integer) parameters the count of a list of messages
/// is exactly the sum of its messages' counts.
pub fn count<P: Part>(kind: Kind, get: impl Fn(&str) -> Option<P>) -> Option<u64> {
    let chars = |s: &str| s.chars().count();
    let mut n_chars = 0usize;
    let mut tokens = 0u64;
    let content = get("content");
    let content_is_list = content.as_ref().is_some_and(|c| c.shape() == Shape::Array);
    match &content {
        None => n_chars += 4, // repr(None)
        Some(c) => match c.shape() {
            Shape::Str => n_chars += c.text().map_or(0, chars),
            Shape::Array => {
                for block in c.items()? {
                    match block.shape() {
                        Shape::Str => n_chars += block.text().map_or(0, chars),
                        Shape::Map => match block.field("type").as_ref().and_then(Part::text) {
                            Some("image" | "image_url") => tokens += TOKENS_PER_IMAGE,
                            Some("text") => {
                                n_chars += block
                                    .field("text")
                                    .as_ref()
                                    .and_then(Part::text)
                                    .map_or(0, chars)
                            }
                            _ => n_chars += block.repr_chars()?,
                        },
                        _ => n_chars += block.repr_chars()?,
                    }
                }
            }
            _ => n_chars += c.repr_chars()?,
        },
    }
    if kind == Kind::Ai && !content_is_list {
        let calls = get("tool_calls")
            .filter(|c| c.shape() == Shape::Array && c.items().is_some_and(|i| !i.is_empty()));
        if let Some(calls) = calls {
            n_chars += calls.repr_chars()?;
        }
    }
    if kind == Kind::Tool {
        n_chars += get("tool_call_id")
            .as_ref()
            .and_then(Part::text)
            .map_or(0, chars);
    }
    // The OpenAI role LangChain counts.
    n_chars += match kind {
        Kind::Human | Kind::Tool => chars("user"),
        Kind::Ai => chars("assistant"),
        Kind::Function => chars("function"),
        Kind::Remove => chars("remove"),
        Kind::System => get("additional_kwargs")
            .and_then(|k| k.field("__openai_role__"))
            .as_ref()
            .and_then(Part::text)
            .map_or(chars("system"), chars),
        Kind::Chat => get("role").as_ref().and_then(Part::text).map_or(0, chars),
    };
    if let Some(name) = get("name")
        .as_ref()
        .and_then(Part::text)
        .filter(|n| !n.is_empty())
    {
        n_chars += chars(name);
    }
    Some(tokens + n_chars.div_ceil(CHARS_PER_TOKEN) as u64 + EXTRA_TOKENS_PER_MESSAGE)
}

impl Part for &Json {
    fn shape(&self) -> Shape {
        match self {
            Json::String(_) => Shape::Str,
            Json::Array(_) => Shape::Array,
            Json::Object(_) => Shape::Map,
            _ => Shape::Other,
        }
    }
    fn text(&self) -> Option<&str> {
        self.as_str()
    }
    fn items(&self) -> Option<Vec<Self>> {
        self.as_array().map(|a| a.iter().collect())
    }
    fn field(&self, key: &str) -> Option<Self> {
        self.get(key)
    }
    fn repr_chars(&self) -> Option<usize> {
        Some(repr(self).chars().count())
    }
}

impl Part for &Value {
    fn shape(&self) -> Shape {
        match self {
            Value::Str(_) => Shape::Str,
            Value::Array(_) => Shape::Array,
            Value::Map(_) => Shape::Map,
            _ => Shape::Other,
        }
    }
    fn text(&self) -> Option<&str> {
        self.as_str()
    }
    fn items(&self) -> Option<Vec<Self>> {
        self.as_array().map(|a| a.iter().collect())
    }
    fn field(&self, key: &str) -> Option<Self> {
        self.get(key)
    }
    fn repr_chars(&self) -> Option<usize> {
        Some(repr(&to_json(self)).chars().count())
    }
}

impl<'a> Part for Spanned<'a> {
    fn shape(&self) -> Shape {
        match self.value {
            Lazy::Str(_) => Shape::Str,
            Lazy::Array(_) => Shape::Array,
            Lazy::Map(_) => Shape::Map,
            _ => Shape::Other,
        }
    }
    fn text(&self) -> Option<&str> {
        self.as_str()
    }
    fn items(&self) -> Option<Vec<Self>> {
        self.items().ok()?
    }
    fn field(&self, key: &str) -> Option<Self> {
        self.get(key).ok()?
    }
    fn repr_chars(&self) -> Option<usize> {
        // In place, or through the JSON form for tagged values.
        lazy_repr_chars(self).or_else(|| {
            let v = msgpack::decode(self.raw().ok()?).ok()?;
            Some(repr(&to_json(&v)).chars().count())
        })
    }
}

/// Approximate tokens of a plain text (no message framing): its characters over
/// `chars_per_token`, rounded up.
pub fn count_text(s: &str) -> u64 {
    s.chars().count().div_ceil(CHARS_PER_TOKEN) as u64
}

/// Tokens of one message.
pub fn count_message(m: &Message) -> u64 {
    count(m.kind, |k| match k {
        // A message always has content (`None` counts as its repr).
        "content" => Some(m.content()),
        _ => m.fields.get(k),
    })
    .unwrap_or(0)
}

/// Tokens of one stored message value: an ext-object message is read in place (no JSON
/// built); other values (dicts in writes) go through [`Message`].
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
    count(kind, |k| fields.get(k))
}

/// Tokens of a message of `kind` whose `model_dump` fields are `fields`, read in place.
pub fn count_fields(kind: Kind, fields: &Fields<'_>) -> Option<u64> {
    count(kind, |k| fields.get(k))
}
