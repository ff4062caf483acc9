//! LangChain's `count_tokens_approximately` with its default parameters
//! (`chars_per_token=4`, `extra_tokens_per_message=3`, `count_name=True`, `tokens_per_image=85`).

use serde_json::Value as Json;

use super::pyrepr::repr;
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
