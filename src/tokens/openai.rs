//! `langchain_openai.ChatOpenAI(model=…).get_num_tokens_from_messages`, with tiktoken's BPE
//! (o200k_base, cl100k_base) compiled into the binary: no download. Texts are cut by
//! tiktoken's pre-tokenizer ([`pretok`]) and each piece merged as tiktoken merges it ([`super::bpe`]),
//! checked against tiktoken itself (tests/tokens.rs) and LangChain's counts on the fixtures.
//!
//! Each message becomes the chat-completions dict `_convert_message_to_dict` builds, then every
//! value is encoded: 3 tokens per message (4 for gpt-3.5-turbo-0301), ±1 per name, 3 for a
//! `tool_call_id` (the id itself is not encoded), tool calls by their JSON arguments and name,
//! and 3 more to prime the reply. Image blocks count 0 unless `detail` is `low` (85), as in a
//! default install of langchain-openai without pillow.

use anyhow::{anyhow, bail, Result};
use serde_json::{Map as JsonMap, Value as Json};
use std::borrow::Cow;
use std::cell::RefCell;
use std::sync::LazyLock;

use super::bpe::{Counter, Ranks};
use super::pretok;
use crate::codec::pyjson;
use crate::codec::pyrepr::repr;
use crate::model::{Kind, Message};

pub use super::pretok::Encoding;

/// How a model frames messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Framing {
    /// The encoding.
    pub encoding: Encoding,
    /// Tokens per message.
    pub per_message: i64,
    /// Tokens added when a message has a name.
    pub per_name: i64,
}

impl Framing {
    /// The framing for a bare encoding (current models: 3 per message, 1 per name).
    pub fn for_encoding(encoding: Encoding) -> Framing {
        Framing {
            encoding,
            per_message: 3,
            per_name: 1,
        }
    }

    /// The framing LangChain uses for an OpenAI model name.
    pub fn for_model(model: &str) -> Result<Framing> {
        let encoding = encoding_for_model(model);
        let (per_message, per_name) = if model.starts_with("gpt-3.5-turbo-0301") {
            (4, -1)
        } else if ["gpt-3.5-turbo", "gpt-4", "gpt-5", "gpt-6", "o1", "o3", "o4"]
            .iter()
            .any(|p| model.starts_with(p))
        {
            (3, 1)
        } else {
            bail!("langchain_openai does not count tokens for model '{model}' (known: gpt-3.5-turbo, gpt-4*, gpt-5*, o1, o3, o4…); use --counter o200k or cl100k");
        };
        Ok(Framing {
            encoding,
            per_message,
            per_name,
        })
    }
}

/// tiktoken's model → encoding table, as `encoding_for_model` and LangChain's fallback use it.
pub fn encoding_for_model(model: &str) -> Encoding {
    // Everything that is not in the o200k family falls back to cl100k_base, as in LangChain.
    const O200K: [&str; 10] = [
        "gpt-4o",
        "gpt-4.1",
        "gpt-4.5",
        "gpt-5",
        "gpt-6",
        "o1",
        "o3",
        "o4",
        "chatgpt-4o",
        "gpt-oss",
    ];
    if O200K.iter().any(|p| model.starts_with(p)) {
        Encoding::O200k
    } else {
        Encoding::Cl100k
    }
}

/// tiktoken's o200k_base token list (`o200k_base.tiktoken`, whose sha256 tiktoken checks,
/// rebuilds from it to the byte: data/tiktoken/README.md).
const O200K_GZ: &[u8] = include_bytes!("../../data/tiktoken/o200k_base.tokens.gz");
/// tiktoken's cl100k_base token list.
const CL100K_GZ: &[u8] = include_bytes!("../../data/tiktoken/cl100k_base.tokens.gz");

/// The rank table of an encoding, read at first use (~20 ms for o200k) and shared.
fn ranks(e: Encoding) -> Result<&'static Ranks> {
    static O200K: LazyLock<Result<Ranks, String>> =
        LazyLock::new(|| Ranks::from_packed_gz(O200K_GZ).map_err(|e| format!("{e:#}")));
    static CL100K: LazyLock<Result<Ranks, String>> =
        LazyLock::new(|| Ranks::from_packed_gz(CL100K_GZ).map_err(|e| format!("{e:#}")));
    let (table, name) = match e {
        Encoding::O200k => (&*O200K, "o200k_base"),
        Encoding::Cl100k => (&*CL100K, "cl100k_base"),
    };
    table
        .as_ref()
        .map_err(|why| anyhow!("cannot read the {name} table built into memctl: {why}"))
}

/// Reads an encoding's table on a background thread, so that it is ready when the first
/// text is counted; counting waits for the read if it is not done yet.
pub fn preload(e: Encoding) {
    std::thread::spawn(move || {
        let _ = ranks(e);
        pretok::preload();
    });
}

thread_local! {
    /// This thread's counter (caches) for each encoding.
    static LOCAL: RefCell<[Option<Counter>; 2]> = RefCell::default();
}

/// Counts the tokens of a text with an encoding (tiktoken's `len(encode_ordinary(text))`).
pub fn encode_len(e: Encoding, text: &str) -> Result<i64> {
    let ranks = ranks(e)?;
    LOCAL.with(|local| {
        let mut local = local.borrow_mut();
        let counter = local[e as usize].get_or_insert_with(Counter::default);
        let mut n = 0usize;
        pretok::for_each_piece(e, text, |piece| n += counter.count(ranks, piece));
        Ok(n as i64)
    })
}

/// The chat-completions dict of a message (`_convert_message_to_dict`).
pub fn openai_dict(m: &Message) -> JsonMap<String, Json> {
    let mut d = JsonMap::new();
    d.insert("content".into(), format_content(m.content()));
    let extra = m.fields.get("additional_kwargs").and_then(Json::as_object);
    let name = m.name().map(|n| Json::String(n.to_owned())).or_else(|| {
        extra
            .and_then(|k| k.get("name"))
            .filter(|v| !v.is_null())
            .cloned()
    });
    if let Some(name) = name {
        d.insert("name".into(), name);
    }
    match m.kind {
        Kind::Chat => {
            d.insert(
                "role".into(),
                m.fields.get("role").cloned().unwrap_or(Json::Null),
            );
        }
        Kind::Human => {
            d.insert("role".into(), "user".into());
        }
        Kind::Ai => {
            d.insert("role".into(), "assistant".into());
            let invalid = m
                .fields
                .get("invalid_tool_calls")
                .and_then(Json::as_array)
                .cloned()
                .unwrap_or_default();
            if !m.tool_calls().is_empty() || !invalid.is_empty() {
                let mut calls: Vec<Json> = m
                    .tool_calls()
                    .iter()
                    .map(|tc| {
                        serde_json::json!({"type": "function", "id": tc.get("id"), "function": {
                            "name": tc.get("name"),
                            "arguments": pyjson::dumps(tc.get("args").unwrap_or(&Json::Null)),
                        }})
                    })
                    .collect();
                calls.extend(invalid.iter().map(|tc| {
                    serde_json::json!({"type": "function", "id": tc.get("id"), "function": {
                        "name": tc.get("name"), "arguments": tc.get("args"),
                    }})
                }));
                d.insert("tool_calls".into(), Json::Array(calls));
            } else if let Some(calls) = extra.and_then(|k| k.get("tool_calls")) {
                d.insert("tool_calls".into(), calls.clone());
            } else if let Some(fc) = extra.and_then(|k| k.get("function_call")) {
                d.insert("function_call".into(), fc.clone());
            }
            if (d.contains_key("tool_calls") || d.contains_key("function_call"))
                && is_falsy(&d["content"])
            {
                d.insert("content".into(), Json::Null);
            }
            if let Some(audio) = extra.and_then(|k| k.get("audio")) {
                let a = match audio.get("id") {
                    Some(id) => serde_json::json!({"id": id}),
                    None => audio.clone(),
                };
                d.insert("audio".into(), a);
            }
        }
        Kind::System => {
            let role = extra
                .and_then(|k| k.get("__openai_role__"))
                .cloned()
                .unwrap_or_else(|| "system".into());
            d.insert("role".into(), role);
        }
        Kind::Function => {
            d.insert("role".into(), "function".into());
        }
        Kind::Tool => {
            let mut t = JsonMap::new();
            t.insert("content".into(), d.remove("content").unwrap_or(Json::Null));
            t.insert("role".into(), "tool".into());
            t.insert(
                "tool_call_id".into(),
                m.fields.get("tool_call_id").cloned().unwrap_or(Json::Null),
            );
            return t;
        }
        Kind::Remove => {
            d.insert("role".into(), "remove".into());
        }
    }
    d
}

/// `_format_message_content`: drops tool_use / thinking / reasoning blocks, maps standard
/// image blocks to `image_url`.
fn format_content(content: &Json) -> Json {
    let Json::Array(blocks) = content else {
        return content.clone();
    };
    if blocks.is_empty() {
        return content.clone();
    }
    let kept = blocks
        .iter()
        .filter(|b| {
            let t = b.get("type").and_then(Json::as_str).unwrap_or("");
            !matches!(
                t,
                "tool_use"
                    | "thinking"
                    | "reasoning_content"
                    | "function_call"
                    | "code_interpreter_call"
            )
        })
        .map(|b| match b.get("type").and_then(Json::as_str) {
            Some("image") => serde_json::json!({"type": "image_url", "image_url": {"url": ""}}),
            _ => b.clone(),
        })
        .collect();
    Json::Array(kept)
}

fn is_falsy(v: &Json) -> bool {
    match v {
        Json::Null => true,
        Json::Bool(b) => !b,
        Json::String(s) => s.is_empty(),
        Json::Array(a) => a.is_empty(),
        Json::Object(o) => o.is_empty(),
        Json::Number(n) => n.as_f64() == Some(0.0),
    }
}

/// Python's `str(value)` for what reaches `encoding.encode(str(value))` (a string as it is).
fn py_str(v: &Json) -> Cow<'_, str> {
    match v {
        Json::String(s) => Cow::Borrowed(s),
        other => Cow::Owned(repr(other)),
    }
}

/// Tokens of one message without the reply priming.
pub fn count_message(m: &Message, f: Framing) -> Result<i64> {
    let e = f.encoding;
    let mut n = f.per_message;
    for (key, value) in openai_dict(m) {
        if key == "tool_call_id" {
            n += 3;
            continue;
        }
        if let Json::Array(items) = &value {
            for v in items {
                match v {
                    Json::String(s) => n += encode_len(e, s)?,
                    Json::Object(o) => match o.get("type").and_then(Json::as_str) {
                        Some("text") => {
                            n += encode_len(e, o.get("text").and_then(Json::as_str).unwrap_or(""))?
                        }
                        Some("image_url") => {
                            let low = o
                                .get("image_url")
                                .and_then(|i| i.get("detail"))
                                .and_then(Json::as_str)
                                == Some("low");
                            if low {
                                n += 85;
                            }
                        }
                        Some("function") => {
                            let func = o.get("function");
                            let args = func
                                .and_then(|f| f.get("arguments"))
                                .map(py_str)
                                .unwrap_or_default();
                            let name = func
                                .and_then(|f| f.get("name"))
                                .map(py_str)
                                .unwrap_or_default();
                            n += encode_len(e, &args)? + encode_len(e, &name)?;
                        }
                        Some("file") => {}
                        other => bail!(
                            "langchain_openai cannot count a content block of type {:?}",
                            other.unwrap_or("(none)")
                        ),
                    },
                    other => bail!("langchain_openai cannot count the content item {other}"),
                }
            }
        } else if is_falsy(&value) {
            continue;
        } else {
            n += encode_len(e, &py_str(&value))?;
        }
        if key == "name" {
            n += f.per_name;
        }
    }
    Ok(n)
}

/// Tokens of a list of messages, reply priming included (`get_num_tokens_from_messages`).
pub fn count(messages: &[Message], f: Framing) -> Result<i64> {
    let mut n = 3;
    for m in messages {
        n += count_message(m, f)?;
    }
    Ok(n)
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
        // langgraph-format.md §3.3 (gpt-4o), checked against langchain_openai.
        let gpt4o = Framing::for_model("gpt-4o").expect("known");
        assert_eq!(
            count(
                &[msg(
                    json!({"role": "user", "content": "Hello, how are you today?"})
                )],
                gpt4o
            )
            .ok(),
            Some(14)
        );
        let sys = [
            msg(json!({"role": "system", "content": "You are helpful."})),
            msg(json!({"role": "user", "content": "hi", "name": "bob"})),
        ];
        assert_eq!(count(&sys, gpt4o).ok(), Some(18));
        let tools = [
            msg(json!({"role": "assistant", "content": "", "tool_calls": [
                {"name": "get_weather", "args": {"city": "Paris"}, "id": "call_1"}]})),
            msg(json!({"role": "tool", "content": "sunny", "tool_call_id": "call_1"})),
        ];
        assert_eq!(count(&tools, gpt4o).ok(), Some(24));
        assert_eq!(count(&[], gpt4o).ok(), Some(3));
        assert!(Framing::for_model("some-other-model").is_err());
        assert_eq!(encoding_for_model("gpt-4"), Encoding::Cl100k);
        assert_eq!(encoding_for_model("o3-mini"), Encoding::O200k);
    }

    #[test]
    fn counts_equal_tiktoken() {
        // tiktoken 0.14: len(get_encoding(name).encode_ordinary(text)).
        let long_x = "x".repeat(300);
        let long_spaces = format!("{}y", " ".repeat(300));
        let cases = [
            ("Hello, how are you today?", 7, 7),
            ("don't I'LL 'S they'Re 'ſ", 9, 12),
            ("天气 北京 🌧️☀️ Zürich   ", 10, 17),
            ("a\n\n  ", 3, 3),
            ("a\n  ", 3, 3),
            (&long_x, 38, 38),
            (&long_spaces, 4, 4),
            ("def f(x):\n    return x ** 2  # square\n\n\n", 14, 14),
            ("1234567890 3.14159 -42 ٣٣٣", 15, 18),
            ("👨\u{200d}👩\u{200d}👧🇫🇷👍🏽", 15, 25),
            (
                "HELLOworld helloWORLD aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
                12,
                13,
            ),
            ("ſ", 1, 2),
            ("{\"a\": [1, 2, {\"b\": null}]}", 15, 15),
            ("\u{3000}中文\u{a0}x\u{85}y", 7, 8),
        ];
        for (text, o200k, cl100k) in cases {
            assert_eq!(
                encode_len(Encoding::O200k, text).ok(),
                Some(o200k),
                "{text:?}"
            );
            assert_eq!(
                encode_len(Encoding::Cl100k, text).ok(),
                Some(cl100k),
                "{text:?}"
            );
        }
        assert_eq!(
            encode_len(Encoding::O200k, "Hello, how are you today?").ok(),
            Some(7)
        );
        assert_eq!(encode_len(Encoding::O200k, "").ok(), Some(0));
        // The Bloom filter in front of the rank table lets few keys that are no token through.
        for e in [Encoding::O200k, Encoding::Cl100k] {
            let rate = ranks(e).expect("table").filter_pass_rate();
            assert!(rate < 0.03, "{e:?}: {rate}");
        }
    }
}
