//! `tokens`' reports: a thread's messages with what each costs (the table written a chunk of
//! rows at a time), the provider-reported usage of its AI messages, and every thread's total.

use std::io::Write;

use anyhow::Result;
use serde::Serialize;
use serde_json::Value as Json;

use super::{human, table, Format};

/// One message of `tokens --thread`.
#[derive(Debug, Clone, Serialize)]
pub struct MessageTokens {
    /// Its position in the state's message list.
    pub index: usize,
    /// Its type (`human`, `ai`, `tool`…).
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// Its id.
    pub id: Option<String>,
    /// What it costs.
    pub tokens: u64,
    /// Its text on one line, cut (the table only).
    #[serde(skip)]
    pub text: String,
}

/// `tokens --thread`: what each message of a thread's state costs by a counter.
#[derive(Debug, Serialize)]
pub struct MessagesReport<'a> {
    /// The thread.
    pub thread_id: &'a str,
    /// The counter's name.
    pub counter: String,
    /// The messages' tokens and the list's own overhead.
    pub total: u64,
    /// Each message.
    pub messages: Vec<MessageTokens>,
    /// The tokens the counter adds for the list itself (the reply priming), in `total`.
    #[serde(skip)]
    pub list_overhead: u64,
}

/// One AI message's provider-reported usage.
#[derive(Debug, Clone, Serialize)]
pub struct MessageUsage {
    /// Its position in the state's message list.
    pub index: usize,
    /// Its id.
    pub id: Option<String>,
    /// Its `usage_metadata`, as stored.
    pub usage_metadata: serde_json::Map<String, Json>,
}

/// `tokens --thread --counter usage`: what the provider billed, per AI message and in all.
#[derive(Debug, Serialize)]
pub struct UsageReport<'a> {
    /// The thread.
    pub thread_id: &'a str,
    /// Always `usage`.
    pub counter: &'static str,
    /// The last turn's input tokens (none: no message carries usage).
    pub last_input_tokens: Option<u64>,
    /// Input tokens of all turns.
    pub input_tokens: u64,
    /// Output tokens of all turns.
    pub output_tokens: u64,
    /// Total tokens of all turns.
    pub total_tokens: u64,
    /// The messages that carry usage.
    pub messages: Vec<MessageUsage>,
}

impl<'a> UsageReport<'a> {
    /// The report of `messages` (those that carry usage, in order).
    pub fn new(thread_id: &'a str, messages: Vec<MessageUsage>) -> UsageReport<'a> {
        let sum = |k: &str| messages.iter().map(|m| usage(&m.usage_metadata, k)).sum();
        UsageReport {
            thread_id,
            counter: "usage",
            last_input_tokens: messages
                .last()
                .map(|m| usage(&m.usage_metadata, "input_tokens")),
            input_tokens: sum("input_tokens"),
            output_tokens: sum("output_tokens"),
            total_tokens: sum("total_tokens"),
            messages,
        }
    }
}

/// One field of a `usage_metadata` (0 when it is missing or not a count).
fn usage(u: &serde_json::Map<String, Json>, key: &str) -> u64 {
    u.get(key).and_then(Json::as_u64).unwrap_or(0)
}

/// One thread of `tokens --all`.
#[derive(Debug, Clone)]
pub struct ThreadTokens {
    /// The thread.
    pub thread_id: String,
    /// Messages of its latest state.
    pub messages: usize,
    /// Their tokens (by usage: the last input tokens the provider reported, if any).
    pub tokens: Option<u64>,
}

/// One thread of `tokens --all` in JSON: [`ThreadTokens`] and the counter's name.
#[derive(Serialize)]
pub struct ThreadRecord<'a> {
    thread_id: &'a str,
    messages: usize,
    tokens: Option<u64>,
    counter: &'a str,
}

/// The name a report gives the counter `counter` (`None`: the provider's usage).
fn counter_name(counter: Option<&str>) -> &str {
    counter.unwrap_or("usage (last input_tokens)")
}

impl ThreadTokens {
    /// The thread in JSON, counted by `counter` (`None`: the provider's usage).
    pub fn record<'a>(&'a self, counter: Option<&'a str>) -> ThreadRecord<'a> {
        ThreadRecord {
            thread_id: &self.thread_id,
            messages: self.messages,
            tokens: self.tokens,
            counter: counter_name(counter),
        }
    }

    /// The thread's cells in the table (`thread_id`, `messages`, the tokens).
    pub fn cells(&self) -> Vec<String> {
        vec![
            human::id(&self.thread_id),
            self.messages.to_string(),
            self.tokens.map_or("-".into(), |n| n.to_string()),
        ]
    }
}

/// The header of `tokens --all`'s tokens column for `counter` (`None`: the provider's usage).
pub fn threads_tokens_header(counter: Option<&str>) -> String {
    match counter {
        Some(c) => format!("tokens ({c})"),
        None => "last input tokens (usage)".to_owned(),
    }
}

/// The line under `tokens --all`'s table: the threads written and their tokens (the sum of
/// the rows' keys: their tokens).
pub fn write_threads_total(
    out: &mut dyn Write,
    counter: Option<&str>,
    written: &super::listing::Written,
) -> Result<()> {
    writeln!(
        out,
        "{}, {} tokens ({})",
        human::count(written.rows as u64, "thread"),
        written.key_sum,
        counter_name(counter)
    )?;
    Ok(())
}

/// Writes `tokens --thread`'s report in `format`.
pub fn write_messages(out: &mut dyn Write, format: Format, r: &MessagesReport<'_>) -> Result<()> {
    if format != Format::Table {
        return super::write_document(out, format, r);
    }
    let tokens_header = format!("tokens ({})", r.counter);
    table::write_chunked(
        out,
        &["#", "type", "id", &tokens_header, "text"],
        &[0, 3],
        r.messages.len(),
        |i| {
            let m = &r.messages[i];
            Ok(vec![
                i.to_string(),
                m.kind.to_owned(),
                human::id(m.id.as_deref().unwrap_or("-")),
                m.tokens.to_string(),
                m.text.clone(),
            ])
        },
    )?;
    let extra = if r.list_overhead > 0 {
        format!(" (including {} for the reply priming)", r.list_overhead)
    } else {
        String::new()
    };
    writeln!(out, "total: {} tokens ({}){extra}", r.total, r.counter)?;
    Ok(())
}

/// Writes `tokens --thread --counter usage`'s report in `format`.
pub fn write_usage(out: &mut dyn Write, format: Format, r: &UsageReport<'_>) -> Result<()> {
    if format != Format::Table {
        return super::write_document(out, format, r);
    }
    if r.messages.is_empty() {
        writeln!(
            out,
            "no AI message of thread '{}' carries usage_metadata",
            r.thread_id
        )?;
        return Ok(());
    }
    let mut t = table::new_table(&["#", "id", "input", "output", "total"]);
    table::align_right(&mut t, &[0, 2, 3, 4]);
    for m in &r.messages {
        let u = &m.usage_metadata;
        t.add_row(vec![
            m.index.to_string(),
            human::id(m.id.as_deref().unwrap_or("-")),
            usage(u, "input_tokens").to_string(),
            usage(u, "output_tokens").to_string(),
            usage(u, "total_tokens").to_string(),
        ]);
    }
    writeln!(out, "{}", table::render(&t))?;
    writeln!(
        out,
        "last turn: {} input tokens; all turns: {} input, {} output, {} total",
        r.last_input_tokens.unwrap_or(0),
        r.input_tokens,
        r.output_tokens,
        r.total_tokens
    )?;
    Ok(())
}
