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
    let mut report = Report::new(format, dry_run);
    report.add(outcomes.to_vec(), out)?;
    report.end(out)
}

/// A rewrite's report written while the rewrite runs: JSON records go out as each batch of
/// threads is final, so a run over thousands of threads does not hold every removed
/// message's preview until its end; the table, which needs every row for its column widths
/// and totals, is drawn at the end. The bytes equal [`render`]'s for the same outcomes.
///
/// `json` is one object, the shape of gc's and prune's reports: `{"dry_run": …, "threads":
/// [one record per thread], "totals": {…}}` (see [`Totals`]); its bytes are `serde_json`'s
/// pretty output of that object. `jsonl` is one record per line, then one last line
/// `{"totals": {…}}`.
pub struct Report {
    dry_run: bool,
    format: Format,
    /// The totals so far.
    totals: Totals,
    /// JSON records written so far.
    written: usize,
    /// The table's outcomes, held until [`Report::end`].
    held: Vec<Outcome>,
}

impl Report {
    /// An empty report in `format` (already resolved).
    pub fn new(format: Format, dry_run: bool) -> Report {
        Report {
            dry_run,
            format,
            totals: Totals::default(),
            written: 0,
            held: Vec::new(),
        }
    }

    /// The start of the JSON object, up to its `threads` array's opening bracket.
    fn head(&self) -> String {
        format!("{{\n  \"dry_run\": {},\n  \"threads\": [", self.dry_run)
    }

    /// Adds final outcomes (in thread order, after the ones added before).
    pub fn add(&mut self, outcomes: Vec<Outcome>, out: &mut dyn Write) -> Result<()> {
        if self.format == Format::Table {
            self.held.extend(outcomes);
            return Ok(());
        }
        self.totals.add(&outcomes);
        let lines = self.format == Format::Jsonl;
        let records = records(self.dry_run, &outcomes);
        let parts = crate::par::map_owned(records.iter().collect(), crate::par::cores(), |r| {
            if lines {
                serde_json::to_vec(r)
            } else {
                serde_json::to_vec_pretty(r).map(|v| super::indent_lines(&v, 4))
            }
        });
        for part in parts {
            let part = part?;
            if lines {
                out.write_all(&part)?;
                out.write_all(b"\n")?;
            } else {
                match self.written {
                    0 => writeln!(out, "{}", self.head())?,
                    _ => out.write_all(b",\n")?,
                }
                out.write_all(&part)?;
            }
            self.written += 1;
        }
        Ok(())
    }

    /// Ends the report: writes the totals and closes the JSON document, or draws the table.
    pub fn end(self, out: &mut dyn Write) -> Result<()> {
        match self.format {
            Format::Table => render_table(self.dry_run, &self.held, out),
            Format::Jsonl => {
                serde_json::to_writer(
                    &mut *out,
                    &TotalsLine {
                        totals: &self.totals,
                    },
                )?;
                out.write_all(b"\n")?;
                Ok(())
            }
            Format::Json => {
                match self.written {
                    0 => writeln!(out, "{}],", self.head())?,
                    _ => out.write_all(b"\n  ],\n")?,
                }
                let totals = serde_json::to_vec_pretty(&self.totals)?;
                let totals = super::indent_lines(&totals, 2);
                out.write_all(b"  \"totals\": ")?;
                out.write_all(totals.get(2..).unwrap_or_default())?;
                out.write_all(b"\n}\n")?;
                Ok(())
            }
        }
    }
}

/// The last line of a `jsonl` report.
#[derive(Serialize)]
struct TotalsLine<'a> {
    totals: &'a Totals,
}

/// What a rewrite did over all its threads (JSON `totals`; the table's totals line): threads
/// reported and how many per status (in the order they first came), then messages and
/// tokens before and after over the threads that were counted, in `counter` (`approx`, or
/// the counter a token budget was applied in), and the tokens a model endpoint reported.
#[derive(Debug, Default)]
pub struct Totals {
    threads: usize,
    statuses: Vec<(&'static str, usize)>,
    messages: (u64, u64),
    tokens: (u64, u64),
    counter: Option<String>,
    endpoint_tokens: Option<(u64, u64)>,
}

impl Totals {
    /// Adds outcomes.
    pub fn add(&mut self, outcomes: &[Outcome]) {
        for o in outcomes {
            self.threads += 1;
            match self
                .statuses
                .iter_mut()
                .find(|(s, _)| *s == o.status.as_str())
            {
                Some((_, n)) => *n += 1,
                None => self.statuses.push((o.status.as_str(), 1)),
            }
            if o.counted {
                self.messages.0 += o.messages.0 as u64;
                self.messages.1 += o.messages.1 as u64;
                self.tokens.0 += o.tokens.0;
                self.tokens.1 += o.tokens.1;
                if self.counter.is_none() {
                    self.counter = Some(o.counter_name().to_owned());
                }
            }
            if let Some((sent, received)) = o.endpoint_tokens {
                let e = self.endpoint_tokens.get_or_insert((0, 0));
                e.0 += sent;
                e.1 += received;
            }
        }
    }

    /// The counter of the token counts.
    fn counter(&self) -> &str {
        self.counter.as_deref().unwrap_or("approx")
    }

    /// The totals line under a batch table.
    fn line(&self) -> String {
        let by_status: Vec<String> = self
            .statuses
            .iter()
            .map(|(s, n)| format!("{n} {s}"))
            .collect();
        let ((m0, m1), (t0, t1)) = (self.messages, self.tokens);
        format!(
            "{}: {}; messages {m0} → {m1}, tokens ({}) {t0} → {t1}",
            human::count(self.threads as u64, "thread"),
            by_status.join(", "),
            self.counter()
        )
    }
}

impl Serialize for Totals {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        /// Threads per status, in the order they first came.
        struct Statuses<'a>(&'a [(&'static str, usize)]);
        impl Serialize for Statuses<'_> {
            fn serialize<S: serde::Serializer>(
                &self,
                s: S,
            ) -> std::result::Result<S::Ok, S::Error> {
                let mut m = s.serialize_map(Some(self.0.len()))?;
                for (status, n) in self.0 {
                    m.serialize_entry(status, n)?;
                }
                m.end()
            }
        }
        let mut m = s.serialize_map(Some(8))?;
        m.serialize_entry("threads", &self.threads)?;
        m.serialize_entry("statuses", &Statuses(&self.statuses))?;
        m.serialize_entry("messages_before", &self.messages.0)?;
        m.serialize_entry("messages_after", &self.messages.1)?;
        m.serialize_entry("tokens_before", &self.tokens.0)?;
        m.serialize_entry("tokens_after", &self.tokens.1)?;
        m.serialize_entry("counter", self.counter())?;
        m.serialize_entry(
            "endpoint_tokens",
            &self
                .endpoint_tokens
                .map(|(sent, received)| EndpointTokens { sent, received }),
        )?;
        m.end()
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
        let mut totals = Totals::default();
        totals.add(outcomes);
        writeln!(out, "{}", totals.line())?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::outcome::Status;

    fn outcome(i: usize, status: Status) -> Outcome {
        Outcome {
            status,
            counted: i % 3 != 2,
            messages: (4 + i, 2),
            tokens: (40 + i as u64, 20),
            removed: vec![Removed {
                index: 0,
                kind: "human",
                id: Some(format!("m{i}")),
                text: format!("line\nbreak {i} \"quoted\""),
            }],
            endpoint_tokens: (i == 1).then_some((100, 20)),
            ..Outcome::skipped(&format!("t{i}"), format!("note {i}"))
        }
    }

    /// The streamed JSON is serde_json's pretty output of the whole object, in any batching;
    /// JSON lines are the records then the totals.
    #[test]
    fn the_json_report_is_one_object_with_its_totals() {
        let statuses = [Status::Rewritten, Status::Failed, Status::Unchanged];
        for n in 0..5 {
            let all: Vec<Outcome> = (0..n).map(|i| outcome(i, statuses[i % 3])).collect();
            for dry_run in [false, true] {
                let mut totals = Totals::default();
                totals.add(&all);
                let whole = serde_json::json!({
                    "dry_run": dry_run,
                    "threads": records(dry_run, &all),
                    "totals": totals,
                });
                let mut expected = serde_json::to_vec_pretty(&whole).expect("serializes");
                expected.push(b'\n');
                for size in 1..=3 {
                    let mut report = Report::new(Format::Json, dry_run);
                    let mut got = Vec::new();
                    for chunk in all.chunks(size) {
                        report.add(chunk.to_vec(), &mut got).expect("adds");
                        report.add(vec![], &mut got).expect("adds");
                    }
                    report.end(&mut got).expect("ends");
                    assert_eq!(
                        String::from_utf8_lossy(&got),
                        String::from_utf8_lossy(&expected),
                        "{n} in pieces of {size}"
                    );
                }
                let mut lines = Vec::new();
                render(Format::Jsonl, dry_run, &all, &mut lines).expect("renders");
                let lines = String::from_utf8(lines).expect("utf-8");
                let parsed: Vec<serde_json::Value> = lines
                    .lines()
                    .map(|l| serde_json::from_str(l).expect("a JSON line"))
                    .collect();
                assert_eq!(parsed.len(), n + 1);
                assert_eq!(parsed[..n], whole["threads"].as_array().expect("rows")[..]);
                assert_eq!(parsed[n], serde_json::json!({"totals": whole["totals"]}));
            }
        }
        let mut totals = Totals::default();
        totals.add(
            &(0..4)
                .map(|i| outcome(i, statuses[i % 3]))
                .collect::<Vec<_>>(),
        );
        let v = serde_json::to_value(&totals).expect("serializes");
        assert_eq!(v["threads"], 4);
        assert_eq!(
            v["statuses"],
            serde_json::json!({"rewritten": 2, "failed": 1, "unchanged": 1})
        );
        // Thread 2 was not counted.
        assert_eq!(v["messages_before"], 4 + 5 + 7);
        assert_eq!(
            v["endpoint_tokens"],
            serde_json::json!({"sent": 100, "received": 20})
        );
        assert_eq!(v["counter"], "approx");
    }
}
