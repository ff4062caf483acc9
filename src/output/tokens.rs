//! `tokens`' reports: a thread's messages with what each costs (the table written a chunk of
//! rows at a time), the provider-reported usage of its AI messages, and every thread's total.

use std::io::Write;

use anyhow::Result;
use serde::Serialize;

use super::{human, table, Format};

use crate::jobs::tokens::usage;
pub use crate::jobs::tokens::{
    MessageTokens, MessageUsage, MessagesReport, ThreadTokens, UsageReport,
};

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

/// `tokens`' rows of every thread, written as they come or once all are counted (the job's
/// [`crate::jobs::tokens::Rows`]).
pub struct Listed<'o, 'c> {
    /// The list written.
    pub listing: super::listing::Listing<'o>,
    counter: Option<&'c str>,
}

impl<'o, 'c> Listed<'o, 'c> {
    /// The rows written to `listing`, counted by `counter` (`None`: the provider's usage).
    pub fn new(listing: super::listing::Listing<'o>, counter: Option<&'c str>) -> Self {
        Listed { listing, counter }
    }
}

impl crate::jobs::tokens::Rows for Listed<'_, '_> {
    fn push(&mut self, row: ThreadTokens) -> Result<bool> {
        // Most tokens first; a thread without a count last.
        let key = row.tokens.map_or(i128::MIN, i128::from);
        let record = row.record(self.counter);
        self.listing.push(key, false, &record, || row.cells())
    }

    fn wants_more(&self) -> bool {
        self.listing.wants_more()
    }
}
