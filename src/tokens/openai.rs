//! `langchain_openai.ChatOpenAI(model=…).get_num_tokens_from_messages`, with tiktoken's BPE
//! (o200k_base, cl100k_base) compiled into the binary by the bpe-openai crate: no download.
//! bpe-openai splits and merges exactly as tiktoken does (checked against LangChain's counts on
//! the fixtures, and per thread on the benchmark database).
//!
//! Each message becomes the chat-completions dict `_convert_message_to_dict` builds, then every
//! value is encoded: 3 tokens per message (4 for gpt-3.5-turbo-0301), ±1 per name, 3 for a
//! `tool_call_id` (the id itself is not encoded), tool calls by their JSON arguments and name,
//! and 3 more to prime the reply. Image blocks count 0 unless `detail` is `low` (85), as in a
//! default install of langchain-openai without pillow.

use anyhow::{bail, Result};
use serde_json::{Map as JsonMap, Value as Json};
use std::cell::RefCell;
use std::sync::LazyLock;

use bpe_openai::Tokenizer;
use fnv::FnvHashMap;
use regex_automata::meta::{Cache, Regex};
use regex_automata::{Anchored, Input};

use crate::codec::pyjson;
use crate::codec::pyrepr::repr;
use crate::model::{Kind, Message};

/// A tiktoken encoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// gpt-4o, gpt-4.1, gpt-5, o1, o3…
    O200k,
    /// gpt-4, gpt-3.5-turbo.
    Cl100k,
}

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

fn tokenizer(e: Encoding) -> &'static Tokenizer {
    match e {
        Encoding::O200k => bpe_openai::o200k_base(),
        Encoding::Cl100k => bpe_openai::cl100k_base(),
    }
}

/// tiktoken's pre-tokenizer pattern as bpe-openai writes it for the `regex` engine (no
/// look-around): the look-ahead `\s+(?!\S)` becomes `\s+\s` (pattern 1), whose last character
/// is then given back. The same patterns as bpe-openai 0.3, so the same pieces.
fn split_patterns(e: Encoding) -> [String; 3] {
    let first = match e {
        Encoding::O200k => [
            "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
            "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
            "\\p{N}{1,3}",
            " ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*",
            "\\s*[\\r\\n]+",
            "\\s+$",
        ]
        .join("|"),
        Encoding::Cl100k => "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+$".to_owned(),
    };
    [first, "\\s+\\s".to_owned(), "\\s+".to_owned()]
}

/// The pattern of [`split_patterns`] whose last character is a look-ahead.
const LOOKAHEAD_PATTERN: usize = 1;

/// The compiled pre-tokenizer of an encoding, shared by all threads.
fn splitter(e: Encoding) -> &'static Regex {
    static O200K: LazyLock<Regex> = LazyLock::new(|| compile_splitter(Encoding::O200k));
    static CL100K: LazyLock<Regex> = LazyLock::new(|| compile_splitter(Encoding::Cl100k));
    match e {
        Encoding::O200k => &O200K,
        Encoding::Cl100k => &CL100K,
    }
}

#[allow(clippy::expect_used)] // constant patterns, covered by the tests
fn compile_splitter(e: Encoding) -> Regex {
    Regex::new_many(&split_patterns(e)).expect("the pre-tokenizer patterns compile")
}

/// Calls `f` with each piece tiktoken's pre-tokenizer cuts `text` into, using this thread's
/// regex cache (no lock shared between cores).
fn for_each_piece(e: Encoding, cache: &mut Cache, text: &str, mut f: impl FnMut(&str)) {
    let re = splitter(e);
    let mut last = 0;
    while last < text.len() {
        let input = Input::new(&text[last..]).anchored(Anchored::Yes);
        let Some(m) = re.search_with(cache, &input) else {
            break;
        };
        let mut end = last + m.end();
        if m.pattern().as_usize() == LOOKAHEAD_PATTERN {
            end -= text[last..end]
                .chars()
                .next_back()
                .map_or(0, char::len_utf8);
        }
        if end <= last {
            break;
        }
        f(&text[last..end]);
        last = end;
    }
}

/// Loads an encoding's tables (~40 ms) on a background thread, so that they are ready when
/// the first text is counted; counting waits for the load if it is not done yet.
pub fn preload(e: Encoding) {
    std::thread::spawn(move || {
        tokenizer(e);
        splitter(e);
    });
}

/// Pieces longer than this are counted without the cache (they rarely repeat).
const CACHED_PIECE_BYTES: usize = 32;
/// The cache is dropped when it holds this many pieces (memory stays bounded on any input).
const CACHE_CAPACITY: usize = 1 << 18;

/// One thread's state for counting with an encoding.
struct Local {
    /// The pre-tokenizer's scratch space.
    regex: Cache,
    /// Token counts of the pieces seen by this thread. Prose repeats its words, so most pieces
    /// skip the byte-pair merge.
    pieces: FnvHashMap<Box<[u8]>, u32>,
}

thread_local! {
    static LOCAL: RefCell<[Option<Local>; 2]> = RefCell::default();
}

/// Counts the tokens of a text with an encoding (tiktoken's `len(encode_ordinary(text))`).
pub fn encode_len(e: Encoding, text: &str) -> i64 {
    let bpe = &tokenizer(e).bpe;
    LOCAL.with(|local| {
        let mut local = local.borrow_mut();
        let local = local[e as usize].get_or_insert_with(|| Local {
            regex: splitter(e).create_cache(),
            pieces: FnvHashMap::default(),
        });
        let mut n = 0usize;
        let pieces = &mut local.pieces;
        for_each_piece(e, &mut local.regex, text, |piece| {
            let bytes = piece.as_bytes();
            if bytes.len() > CACHED_PIECE_BYTES {
                n += bpe.count(bytes);
                return;
            }
            if let Some(&c) = pieces.get(bytes) {
                n += c as usize;
                return;
            }
            let c = bpe.count(bytes);
            if pieces.len() >= CACHE_CAPACITY {
                pieces.clear();
            }
            pieces.insert(bytes.into(), c as u32);
            n += c;
        });
        n as i64
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

/// Python's `str(value)` for what reaches `encoding.encode(str(value))`.
fn py_str(v: &Json) -> String {
    match v {
        Json::String(s) => s.clone(),
        other => repr(other),
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
                    Json::String(s) => n += encode_len(e, s),
                    Json::Object(o) => match o.get("type").and_then(Json::as_str) {
                        Some("text") => {
                            n += encode_len(e, o.get("text").and_then(Json::as_str).unwrap_or(""))
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
                            n += encode_len(e, &args) + encode_len(e, &name);
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
            n += encode_len(e, &py_str(&value));
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
    fn cached_pieces_count_like_the_tokenizer() {
        // Twice each, so the second pass is served from the cache.
        let texts = [
            "Hello, how are you today?",
            "don't I'LL 'S 123456789  \n\n  x",
            "天气 北京 🌧️☀️ Zürich   ",
            "a very long piece: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
            "",
        ];
        let mut seed: u64 = 7;
        let alphabet: Vec<char> = " \t\n\r\u{a0}aZé'sSLL09.,;!?/-_(\"東京🗼\u{301}\u{200d}ßİK"
            .chars()
            .collect();
        let mut random = Vec::new();
        for _ in 0..3000 {
            let mut s = String::new();
            for _ in 0..(seed % 24) {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                s.push(alphabet[(seed >> 33) as usize % alphabet.len()]);
            }
            random.push(s);
        }
        for e in [Encoding::O200k, Encoding::Cl100k] {
            let mut cache = splitter(e).create_cache();
            for t in texts
                .iter()
                .copied()
                .chain(random.iter().map(String::as_str))
            {
                let mut ours = Vec::new();
                for_each_piece(e, &mut cache, t, |p| ours.push(p.to_owned()));
                let theirs: Vec<&str> = tokenizer(e).split(t).collect();
                assert_eq!(ours, theirs, "{t:?}");
            }
            for _ in 0..2 {
                for t in texts {
                    assert_eq!(encode_len(e, t), tokenizer(e).count(t) as i64, "{t:?}");
                }
            }
        }
        assert_eq!(encode_len(Encoding::O200k, "Hello, how are you today?"), 7);
    }
}
