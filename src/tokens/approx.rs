//! LangChain's `count_tokens_approximately` over stored messages and lists: adapters over the
//! one implementation in [`crate::model::approx`].

use crate::codec::lazy::{Lazy, Spanned};
use crate::codec::{msgpack, Value};
use crate::model::checkpoint::MESSAGES;
use crate::model::Message;

pub use crate::model::approx::{count_fields, count_message, count_value};

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

/// Message count and approximate tokens of a checkpoint blob's `messages` channel, read in
/// place: `None` when the channel is absent or holds something else.
pub fn count_checkpoint_blob(blob: &[u8]) -> Option<(usize, Option<u64>)> {
    let (_, list) = crate::model::channels::stored_lazy(blob, MESSAGES, || false).ok()?;
    let list = list?;
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
    use serde_json::{json, Value as Json};

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
