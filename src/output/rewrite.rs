//! The report of a rewrite (trim, rm, summarize): a table with a totals line and, for a dry
//! run, the messages each thread would lose; or one JSON record per thread.

use std::io::Write;

use anyhow::Result;
use serde::Serialize;

use crate::model::outline::PREVIEW_CHARS;
use crate::ops::outcome::{Outcome, Removed};

use super::{human, table, Format};

/// Renders the outcomes of a rewrite in `format` (already resolved: see
/// [`super::resolve_format`]).
pub fn render(
    format: Format,
    dry_run: bool,
    outcomes: &[Outcome],
    out: &mut dyn Write,
) -> Result<()> {
    match format {
        Format::Table => render_table(dry_run, outcomes, out),
        format => super::write_records(out, format, &records(dry_run, outcomes)),
    }
}

/// A rewrite's report written while the rewrite runs: JSON records go out as each batch of
/// threads is final, so a run over thousands of threads does not hold every removed
/// message's preview until its end; the table, which needs every row for its column widths
/// and totals, is drawn at the end. The bytes equal [`render`]'s for the same outcomes.
pub struct Report {
    dry_run: bool,
    /// The JSON document being written (`json`, `jsonl`), or `None` for the table.
    stream: Option<super::RecordStream>,
    /// The table's outcomes, held until [`Report::end`].
    held: Vec<Outcome>,
}

impl Report {
    /// An empty report in `format` (already resolved).
    pub fn new(format: Format, dry_run: bool) -> Report {
        Report {
            dry_run,
            stream: (format != Format::Table).then(|| super::RecordStream::new(format)),
            held: Vec::new(),
        }
    }

    /// Adds final outcomes (in thread order, after the ones added before).
    pub fn add(&mut self, outcomes: Vec<Outcome>, out: &mut dyn Write) -> Result<()> {
        match &mut self.stream {
            Some(stream) => stream.write(out, &records(self.dry_run, &outcomes)),
            None => {
                self.held.extend(outcomes);
                Ok(())
            }
        }
    }

    /// Ends the report: closes the JSON document, or draws the table.
    pub fn end(self, out: &mut dyn Write) -> Result<()> {
        match self.stream {
            Some(stream) => stream.end(out),
            None => render_table(self.dry_run, &self.held, out),
        }
    }
}

/// The table of a rewrite's outcomes, its totals line and, for a dry run, the messages each
/// thread would lose.
fn render_table(dry_run: bool, outcomes: &[Outcome], out: &mut dyn Write) -> Result<()> {
    let endpoint = outcomes.iter().any(|o| o.endpoint_tokens.is_some());
    let tokens_header = format!("tokens ({})", counter_of(outcomes));
    let mut headers = vec!["thread_id", "status", "messages", tokens_header.as_str()];
    if endpoint {
        headers.push("endpoint in/out");
    }
    headers.extend(["checkpoint", "notes"]);
    let mut t = table::new_table(&headers);
    for o in outcomes {
        let notes: Vec<String> = o.notes.iter().map(|n| human::id(n)).collect();
        let mut row = vec![
            human::id(&o.thread_id),
            o.status.as_str().to_owned(),
            arrow(o.counted, o.messages.0 as u64, o.messages.1 as u64),
            arrow(o.counted, o.tokens.0, o.tokens.1),
        ];
        if endpoint {
            row.push(
                o.endpoint_tokens
                    .map_or("-".into(), |(a, b)| format!("{a} / {b}")),
            );
        }
        row.push(o.checkpoint_id.as_deref().map_or(String::new(), human::id));
        row.push(notes.join("; "));
        t.add_row(row);
    }
    writeln!(out, "{}", table::render(&t))?;
    if outcomes.len() > 1 {
        writeln!(out, "{}", totals(outcomes))?;
    }
    if dry_run {
        for o in outcomes.iter().filter(|o| !o.removed.is_empty()) {
            writeln!(
                out,
                "\n{}: would remove {}",
                human::id(&o.thread_id),
                human::count(o.removed.len() as u64, "message")
            )?;
            for r in &o.removed {
                writeln!(
                    out,
                    "  - #{} [{}] {} {}",
                    r.index,
                    r.kind,
                    r.id.as_deref().unwrap_or(""),
                    human::preview(&r.text, PREVIEW_CHARS)
                )?;
            }
        }
        writeln!(out, "\ndry run: nothing was written")?;
    }
    Ok(())
}

/// The JSON records of `outcomes`.
fn records(dry_run: bool, outcomes: &[Outcome]) -> Vec<Record<'_>> {
    outcomes
        .iter()
        .map(|o| Record {
            thread_id: &o.thread_id,
            status: o.status,
            dry_run,
            messages_before: o.counted.then_some(o.messages.0),
            messages_after: o.counted.then_some(o.messages.1),
            tokens_before: o.counted.then_some(o.tokens.0),
            tokens_after: o.counted.then_some(o.tokens.1),
            counter: o.counted.then(|| o.counter_name()),
            removed: o
                .removed
                .iter()
                .map(|r| Removed {
                    text: human::preview(&r.text, PREVIEW_CHARS),
                    ..r.clone()
                })
                .collect(),
            checkpoint_id: o.checkpoint_id.as_deref(),
            endpoint_tokens: o
                .endpoint_tokens
                .map(|(sent, received)| EndpointTokens { sent, received }),
            notes: &o.notes,
        })
        .collect()
}

/// The counter of a report's token counts: the one its counted threads were counted in
/// (`approx` unless a token budget was applied in another).
fn counter_of(outcomes: &[Outcome]) -> &str {
    outcomes
        .iter()
        .find(|o| o.counted)
        .map_or("approx", Outcome::counter_name)
}

/// The totals line under a batch table: threads per status, then messages and tokens (in
/// their counter) before → after over the threads that were counted.
fn totals(outcomes: &[Outcome]) -> String {
    let mut statuses: Vec<(&str, usize)> = Vec::new();
    for o in outcomes {
        match statuses.iter_mut().find(|(s, _)| *s == o.status.as_str()) {
            Some((_, n)) => *n += 1,
            None => statuses.push((o.status.as_str(), 1)),
        }
    }
    let counted = outcomes.iter().filter(|o| o.counted);
    let (m0, m1, t0, t1) = counted.fold((0, 0, 0, 0), |(a, b, c, d), o| {
        (
            a + o.messages.0 as u64,
            b + o.messages.1 as u64,
            c + o.tokens.0,
            d + o.tokens.1,
        )
    });
    let by_status: Vec<String> = statuses.iter().map(|(s, n)| format!("{n} {s}")).collect();
    format!(
        "{}: {}; messages {m0} → {m1}, tokens ({}) {t0} → {t1}",
        human::count(outcomes.len() as u64, "thread"),
        by_status.join(", "),
        counter_of(outcomes)
    )
}

/// `before → after`, or `-` when the thread was never counted.
fn arrow(counted: bool, before: u64, after: u64) -> String {
    if counted {
        format!("{before} → {after}")
    } else {
        "-".into()
    }
}

/// One thread of a rewrite report in JSON.
#[derive(Serialize)]
struct Record<'a> {
    thread_id: &'a str,
    status: crate::ops::outcome::Status,
    dry_run: bool,
    messages_before: Option<usize>,
    messages_after: Option<usize>,
    tokens_before: Option<u64>,
    tokens_after: Option<u64>,
    /// The counter of `tokens_before` / `tokens_after` (`approx`, or the `o200k` / `cl100k`
    /// a token budget was applied in).
    counter: Option<&'a str>,
    removed: Vec<Removed>,
    checkpoint_id: Option<&'a str>,
    endpoint_tokens: Option<EndpointTokens>,
    notes: &'a [String],
}

/// Tokens a model endpoint reported for a summary.
#[derive(Serialize)]
struct EndpointTokens {
    sent: u64,
    received: u64,
}
