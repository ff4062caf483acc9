//! What a summary replaces, the prompt that asks for it, and the message that holds it.
//!
//! The kept window follows the trim rules ([`super::window`]); everything older (an earlier
//! summary included, so summaries roll forward instead of stacking) goes into a transcript with
//! role prefixes. The summary is written the way LangChain's SummarizationMiddleware writes it:
//! a HumanMessage starting `Here is a summary of the conversation to date:` with
//! `additional_kwargs={"lc_source": "summarization"}`.

use anyhow::{bail, Result};
use serde_json::Value as Json;

use crate::codec::Value;
use crate::model::{Kind, Message};

use super::update::message_ext;

/// The text SummarizationMiddleware puts before a summary.
pub const SUMMARY_PREFIX: &str = "Here is a summary of the conversation to date:\n\n";

/// The placeholder a prompt template must contain.
pub const PLACEHOLDER: &str = "{messages}";

/// memctl's default prompt.
pub const DEFAULT_PROMPT: &str = "\
You are condensing the earlier part of a conversation between a user and an AI assistant. \
Your summary will replace those messages, and the assistant will continue the conversation \
from it, so anything you leave out is forgotten.

Write a concise summary that keeps:
- every name: people, companies, products, places, files, tools;
- every number, date, amount, identifier, setting and quoted value;
- the decisions made and the reasons given, and options that were rejected;
- the user's goals, preferences and constraints;
- open tasks, unanswered questions and anything the assistant promised to do.

If the conversation starts with an earlier summary, merge it into the new one. Write in the \
language of the conversation, in short plain sentences or bullet points, without a preamble. \
Reply with the summary only.

The conversation:
{messages}";

/// True for a summary message written by SummarizationMiddleware or by memctl.
pub fn is_summary(m: &Message) -> bool {
    m.kind == Kind::Human
        && m.fields
            .get("additional_kwargs")
            .and_then(|k| k.get("lc_source"))
            .and_then(Json::as_str)
            == Some("summarization")
}

/// The indices of the messages a summary replaces: everything not kept, except a leading
/// SystemMessage (which stays in place).
pub fn older(msgs: &[Message], keep: &[usize]) -> Vec<usize> {
    (0..msgs.len())
        .filter(|i| !keep.contains(i))
        .filter(|&i| !(i == 0 && msgs[0].kind == Kind::System))
        .collect()
}

/// One transcript line: `Human: …`, `AI: … [tool call f({"a": 1})]`, `Tool (f): …`.
pub fn line(m: &Message) -> String {
    if is_summary(m) {
        let text = m.text();
        return format!(
            "Earlier summary: {}",
            text.strip_prefix(SUMMARY_PREFIX).unwrap_or(&text)
        );
    }
    let role = match m.kind {
        Kind::Human => "Human".to_owned(),
        Kind::Ai => "AI".to_owned(),
        Kind::System => "System".to_owned(),
        Kind::Tool => match m.name() {
            Some(n) => format!("Tool ({n})"),
            None => "Tool".to_owned(),
        },
        Kind::Function => "Function".to_owned(),
        Kind::Chat => m
            .fields
            .get("role")
            .and_then(Json::as_str)
            .unwrap_or("Chat")
            .to_owned(),
        Kind::Remove => "Remove".to_owned(),
    };
    let mut text = m.text();
    for call in m.tool_calls() {
        let name = call.get("name").and_then(Json::as_str).unwrap_or("?");
        let args = call
            .get("args")
            .map(crate::codec::pyjson::dumps)
            .unwrap_or_default();
        if !text.is_empty() {
            text.push(' ');
        }
        text.push_str(&format!("[tool call {name}({args})]"));
    }
    format!("{role}: {text}")
}

pub use crate::model::approx::count_text as approx_tokens;

/// The transcript of `msgs` (oldest first), with `previous` (an existing summary kept in a
/// state channel) first, in parts of at most about `max_tokens` each: nothing is left out.
/// One part when it all fits; otherwise the caller summarizes each part and then the part
/// summaries ([`combine`]), as map-reduce summarization does. A message longer than a part is
/// split across parts at character boundaries, each piece marked as continued.
pub fn transcript_parts(msgs: &[&Message], previous: Option<&str>, max_tokens: u64) -> Vec<String> {
    let mut parts = Vec::new();
    transcript_parts_each(
        msgs.iter().map(|m| line(m)),
        previous,
        max_tokens,
        &mut |p| parts.push(p),
    );
    parts
}

/// [`transcript_parts`] of the messages whose [`line()`]s `lines` yields (oldest first), each
/// part handed to `part` as soon as it is complete: for a long thread, whose messages are
/// read one at a time and whose transcript need not be held whole.
pub fn transcript_parts_each(
    lines: impl IntoIterator<Item = String>,
    previous: Option<&str>,
    max_tokens: u64,
    part: &mut dyn FnMut(String),
) {
    let previous = previous
        .filter(|p| !p.trim().is_empty())
        .map(|p| format!("Earlier summary: {p}"));
    pack_each(previous.into_iter().chain(lines), max_tokens, part)
}

/// The input of the next round: one line per part summary, in parts of at most `max_tokens`.
pub fn combine(summaries: &[String], max_tokens: u64) -> Vec<String> {
    let n = summaries.len();
    let lines = summaries
        .iter()
        .enumerate()
        .map(|(i, s)| format!("Summary of part {} of {n} of the conversation: {s}", i + 1));
    pack(lines, max_tokens)
}

/// Packs lines into parts of at most `max_tokens` (approximate), splitting a longer line.
fn pack(lines: impl IntoIterator<Item = String>, max_tokens: u64) -> Vec<String> {
    let mut parts = Vec::new();
    pack_each(lines, max_tokens, &mut |p| parts.push(p));
    parts
}

/// [`pack`], handing each part to `part` as soon as it is complete.
fn pack_each(
    lines: impl IntoIterator<Item = String>,
    max_tokens: u64,
    part: &mut dyn FnMut(String),
) {
    let max_chars = (max_tokens.max(1) * 4) as usize;
    let mut parts = 0usize; // parts handed over so far
    let mut current = String::new();
    let mut current_tokens = 0u64;
    let mut push = |piece: String, current: &mut String, t: &mut u64| {
        let cost = approx_tokens(&piece) + 1;
        if !current.is_empty() && *t + cost > max_tokens {
            part(std::mem::take(current));
            parts += 1;
            *t = 0;
        }
        if !current.is_empty() {
            current.push('\n');
        }
        current.push_str(&piece);
        *t += cost;
    };
    for line in lines {
        if approx_tokens(&line) < max_tokens {
            push(line, &mut current, &mut current_tokens);
            continue;
        }
        let chars: Vec<char> = line.chars().collect();
        let step = max_chars.saturating_sub(16).max(1);
        for (k, piece) in chars.chunks(step).enumerate() {
            let text: String = piece.iter().collect();
            let text = if k == 0 {
                text
            } else {
                format!("(continued) {text}")
            };
            push(text, &mut current, &mut current_tokens);
        }
    }
    if !current.is_empty() || parts == 0 {
        part(current);
    }
}

/// Fills a prompt template's `{messages}` placeholder.
pub fn render_prompt(template: &str, transcript: &str) -> Result<String> {
    if !template.contains(PLACEHOLDER) {
        bail!("the prompt has no {PLACEHOLDER} placeholder for the conversation");
    }
    Ok(template.replace(PLACEHOLDER, transcript))
}

/// The summary message as LangGraph stores it (ext 5 HumanMessage with `lc_source`).
pub fn summary_message(summary: &str, id: &str) -> Value {
    let fields = Value::map(vec![
        (
            Value::str("content"),
            Value::str(format!("{SUMMARY_PREFIX}{summary}")),
        ),
        (
            Value::str("additional_kwargs"),
            Value::map(vec![(Value::str("lc_source"), Value::str("summarization"))]),
        ),
        (Value::str("response_metadata"), Value::map(vec![])),
        (Value::str("type"), Value::str("human")),
        (Value::str("name"), Value::Nil),
        (Value::str("id"), Value::str(id)),
    ]);
    message_ext("langchain_core.messages.human", "HumanMessage", fields)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn msgs() -> Vec<Message> {
        [
            json!({"role": "system", "content": "be kind", "id": "s"}),
            json!({"role": "user", "content": "Here is a summary of the conversation to date:\n\nAlice likes tea.",
                   "additional_kwargs": {"lc_source": "summarization"}, "id": "sum"}),
            json!({"role": "user", "content": "My name is Bob", "id": "h1"}),
            json!({"role": "assistant", "content": "", "id": "a1",
                   "tool_calls": [{"name": "lookup", "args": {"q": "Bob"}, "id": "c1"}]}),
            json!({"role": "tool", "content": "found", "id": "t1", "tool_call_id": "c1", "name": "lookup"}),
            json!({"role": "assistant", "content": "Hi Bob", "id": "a2"}),
        ]
        .iter()
        .map(|j| Message::from_json(j).expect("message"))
        .collect()
    }

    #[test]
    fn older_skips_the_system_message_and_kept_window() {
        let m = msgs();
        assert_eq!(older(&m, &[0, 5]), vec![1, 2, 3, 4]);
        assert!(is_summary(&m[1]));
        assert!(!is_summary(&m[2]));
    }

    #[test]
    fn transcript_has_role_prefixes_and_rolls_summaries_forward() {
        let m = msgs();
        let refs: Vec<&Message> = m[1..].iter().collect();
        let t = transcript_parts(&refs, None, 10_000);
        assert_eq!(t.len(), 1);
        assert_eq!(
            t[0],
            "Earlier summary: Alice likes tea.\nHuman: My name is Bob\nAI: [tool call lookup({\"q\": \"Bob\"})]\nTool (lookup): found\nAI: Hi Bob"
        );
        let t = transcript_parts(&refs[1..], Some("Alice likes tea."), 10_000);
        assert!(t[0].starts_with("Earlier summary: Alice likes tea.\nHuman: My name is Bob"));
    }

    #[test]
    fn long_transcripts_are_split_into_parts_and_nothing_is_left_out() {
        let text: String = (0..10_000)
            .map(|i| char::from(b'a' + (i % 26) as u8))
            .collect();
        let long =
            Message::from_json(&json!({"role": "user", "content": text, "id": "l"})).expect("m");
        let short = Message::from_json(&json!({"role": "user", "content": "keep me", "id": "k"}))
            .expect("m");
        let parts = transcript_parts(&[&long, &short], Some("earlier"), 100);
        assert!(parts.len() > 20, "{} parts", parts.len());
        for p in &parts {
            assert!(
                approx_tokens(p) <= 100 + 1,
                "part of {} tokens",
                approx_tokens(p)
            );
        }
        // Every character of every message is in some part, in order.
        let joined: String = parts
            .join("\n")
            .replace("\n(continued) ", "")
            .replace("(continued) ", "");
        assert!(joined.starts_with("Earlier summary: earlier\nHuman: "));
        assert!(
            joined.contains(&text),
            "the long message is whole across parts"
        );
        assert!(joined.ends_with("Human: keep me"));
        // The part summaries are combined the same way.
        let round = combine(&["one".into(), "two".into()], 100);
        assert_eq!(round.len(), 1);
        assert!(round[0].contains("part 2 of 2 of the conversation: two"));
    }

    #[test]
    fn prompt_needs_the_placeholder() {
        assert_eq!(
            render_prompt("S:\n{messages}", "Human: hi").ok().as_deref(),
            Some("S:\nHuman: hi")
        );
        assert!(render_prompt("no placeholder", "x").is_err());
        assert!(DEFAULT_PROMPT.contains(PLACEHOLDER));
    }
}
