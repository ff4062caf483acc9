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
fn line(m: &Message) -> String {
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

/// A transcript and what had to be cut to fit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transcript {
    /// The text, one message per line group.
    pub text: String,
    /// Messages shortened to fit.
    pub shortened: usize,
    /// Oldest messages left out to fit.
    pub omitted: usize,
}

/// Approximate tokens of a text (4 characters per token, as LangChain's approximation).
fn approx_tokens(s: &str) -> u64 {
    (s.chars().count() as u64).div_ceil(4)
}

/// Builds the transcript of `msgs` (oldest first), with `previous` (an existing summary kept in
/// a state channel) first, cut to about `max_tokens`: long messages are shortened first, then
/// the oldest messages are left out.
pub fn transcript(msgs: &[&Message], previous: Option<&str>, max_tokens: u64) -> Transcript {
    let mut lines: Vec<String> = Vec::with_capacity(msgs.len() + 1);
    if let Some(p) = previous.filter(|p| !p.trim().is_empty()) {
        lines.push(format!("Earlier summary: {p}"));
    }
    lines.extend(msgs.iter().map(|m| line(m)));
    let total = |ls: &[String]| ls.iter().map(|l| approx_tokens(l) + 1).sum::<u64>();
    let mut shortened = 0;
    if total(&lines) > max_tokens && !lines.is_empty() {
        let cap_chars = ((max_tokens * 4) / lines.len() as u64).max(200) as usize;
        for l in lines.iter_mut() {
            if l.chars().count() > cap_chars {
                *l = format!("{} …[cut]", l.chars().take(cap_chars).collect::<String>());
                shortened += 1;
            }
        }
    }
    let mut omitted = 0;
    while total(&lines) > max_tokens && lines.len() > 1 {
        lines.remove(0);
        omitted += 1;
    }
    let mut text = String::new();
    if omitted > 0 {
        text.push_str(&format!(
            "[… {omitted} earlier messages left out to fit …]\n"
        ));
    }
    text.push_str(&lines.join("\n"));
    Transcript {
        text,
        shortened,
        omitted,
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
        let t = transcript(&refs, None, 10_000);
        assert_eq!(
            t.text,
            "Earlier summary: Alice likes tea.\nHuman: My name is Bob\nAI: [tool call lookup({\"q\": \"Bob\"})]\nTool (lookup): found\nAI: Hi Bob"
        );
        let t = transcript(&refs[1..], Some("Alice likes tea."), 10_000);
        assert!(t
            .text
            .starts_with("Earlier summary: Alice likes tea.\nHuman: My name is Bob"));
    }

    #[test]
    fn long_transcripts_are_cut_to_the_budget() {
        let long =
            Message::from_json(&json!({"role": "user", "content": "x".repeat(10_000), "id": "l"}))
                .expect("m");
        let short = Message::from_json(&json!({"role": "user", "content": "keep me", "id": "k"}))
            .expect("m");
        let t = transcript(&[&long, &short], None, 100);
        assert!(t.text.contains("keep me"));
        assert!(t.text.chars().count() < 10_000);
        assert!(t.shortened + t.omitted > 0);
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
