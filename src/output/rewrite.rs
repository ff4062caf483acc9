//! The report of a rewrite (trim, rm, summarize): a table with a totals line and, for a dry
//! run, the messages each thread would lose; or one JSON record per thread.

use std::io::Write;

use anyhow::{Context, Result};
use serde::Serialize;

use crate::model::outline::PREVIEW_CHARS;
use crate::ops::outcome::{Outcome, Removed, Status};

use super::tape::Tape;
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

/// A rewrite's report streamed to `out` as the job hands over its batches
/// ([`crate::jobs::batch::Batches`]); with `name_problems` (`--quiet` over many threads: the
/// report hidden), the threads an operator must act on are still named on stderr.
pub struct Stream<'w> {
    report: Option<Report>,
    out: &'w mut dyn Write,
    name_problems: bool,
}

impl<'w> Stream<'w> {
    /// A report in `format` (already resolved) written to `out`.
    pub fn new(format: Format, dry_run: bool, name_problems: bool, out: &'w mut dyn Write) -> Self {
        Stream {
            report: Some(Report::new(format, dry_run)),
            out,
            name_problems,
        }
    }
}

impl crate::jobs::batch::Batches for Stream<'_> {
    fn add(&mut self, done: Vec<Outcome>) -> Result<()> {
        if self.name_problems {
            // The report is hidden: the threads an operator must act on are still named.
            for o in done
                .iter()
                .filter(|o| o.status.is_failure() || o.status == Status::Superseded)
            {
                super::quiet_problem(&o.thread_id, o.status.as_str(), &o.notes.join("; "));
            }
        }
        match &mut self.report {
            Some(r) => r.add(done, self.out),
            None => Ok(()),
        }
    }

    fn end(&mut self) -> Result<()> {
        match self.report.take() {
            Some(r) => r.end(self.out),
            None => Ok(()),
        }
    }
}

/// A rewrite's report written while the rewrite runs: JSON records go out as each batch of
/// threads is final, so a run over thousands of threads does not hold every removed
/// message's preview until its end; the table, which needs every row for its column widths
/// and totals, is drawn at the end from its rows kept out of memory ([`Tape`]: a dry run at a
/// million threads held every outcome, 2.1 GB). The bytes equal [`render`]'s for the same
/// outcomes.
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
    /// The table's rows (every cell, the endpoint column's included), out of memory until
    /// [`Report::end`].
    rows: Tape,
    /// A dry run's lists of the messages each thread would lose, printed after the table.
    removed: Tape,
    /// A thread reported a model endpoint's tokens (the table has that column).
    endpoint: bool,
    /// The counter of the first counted thread (the table's tokens header).
    counter: Option<String>,
}

impl Report {
    /// An empty report in `format` (already resolved).
    pub fn new(format: Format, dry_run: bool) -> Report {
        Report {
            dry_run,
            format,
            totals: Totals::default(),
            written: 0,
            rows: Tape::new(),
            removed: Tape::new(),
            endpoint: false,
            counter: None,
        }
    }

    /// Keeps `outcomes`' table rows (and a dry run's lists of removed messages) for
    /// [`Report::end_table`].
    fn add_to_table(&mut self, outcomes: &[Outcome]) -> Result<()> {
        for o in outcomes {
            self.endpoint |= o.endpoint_tokens.is_some();
            if self.counter.is_none() && o.counted {
                self.counter = Some(o.counter_name().to_owned());
            }
            self.rows.push(&serde_json::to_vec(&table_row(o))?)?;
            if self.dry_run && !o.removed.is_empty() {
                self.removed.push(removed_list(o).as_bytes())?;
            }
        }
        Ok(())
    }

    /// Draws the table of the outcomes added ([`table::write_chunked`]: its rows are read
    /// back, never all held), its totals line, and a dry run's lists of removed messages.
    fn end_table(self, out: &mut dyn Write) -> Result<()> {
        let tokens_header = format!("tokens ({})", self.counter.as_deref().unwrap_or("approx"));
        let mut headers = vec!["thread_id", "status", "messages", tokens_header.as_str()];
        if self.endpoint {
            headers.push("endpoint in/out");
        }
        headers.extend(["checkpoint", "notes"]);
        let n = self.rows.len();
        if n == 0 {
            // No header row over nothing: the selection said so.
            writeln!(out, "no thread selected: nothing to do")?;
            if self.dry_run {
                writeln!(out, "dry run: nothing was written")?;
            }
            return Ok(());
        }
        let mut rows = self.rows.reader()?;
        table::write_chunked(out, &headers, &[], n, |i| {
            let mut row: Vec<String> = serde_json::from_slice(rows.get(i)?)
                .context("a reported row does not read back")?;
            if !self.endpoint && row.len() > ENDPOINT_CELL {
                row.remove(ENDPOINT_CELL);
            }
            Ok(row)
        })?;
        if n > 1 {
            writeln!(out, "{}", self.totals.line())?;
        }
        if self.dry_run {
            let mut removed = self.removed.reader()?;
            for i in 0..removed.len() {
                out.write_all(removed.get(i)?)?;
            }
            writeln!(out, "\ndry run: nothing was written")?;
        }
        Ok(())
    }

    /// The start of the JSON object, up to its `threads` array's opening bracket.
    fn head(&self) -> String {
        format!("{{\n  \"dry_run\": {},\n  \"threads\": [", self.dry_run)
    }

    /// Adds final outcomes (in thread order, after the ones added before).
    pub fn add(&mut self, outcomes: Vec<Outcome>, out: &mut dyn Write) -> Result<()> {
        self.totals.add(&outcomes);
        if self.format == Format::Table {
            return self.add_to_table(&outcomes);
        }
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
            Format::Table => self.end_table(out),
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
        let endpoint = match self.endpoint_tokens {
            Some((sent, received)) => {
                format!("; endpoint tokens: {sent} sent, {received} received")
            }
            None => String::new(),
        };
        format!(
            "{}: {}; messages {m0} → {m1}, tokens ({}) {t0} → {t1}{endpoint}",
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
/// Where a table row holds the endpoint's tokens (left out when no thread reported any).
const ENDPOINT_CELL: usize = 4;

/// An outcome's table row, the endpoint's cell included (at [`ENDPOINT_CELL`]).
fn table_row(o: &Outcome) -> Vec<String> {
    let notes: Vec<String> = o.notes.iter().map(|n| human::id(n)).collect();
    vec![
        human::id(&o.thread_id),
        o.status.as_str().to_owned(),
        arrow(o.counted, o.messages.0 as u64, o.messages.1 as u64),
        arrow(o.counted, o.tokens.0, o.tokens.1),
        o.endpoint_tokens
            .map_or("-".into(), |(a, b)| format!("{a} / {b}")),
        o.checkpoint_id.as_deref().map_or(String::new(), human::id),
        notes.join("; "),
    ]
}

/// A dry run's list of the messages a thread would lose, as printed after the table.
fn removed_list(o: &Outcome) -> String {
    let mut text = format!(
        "\n{}: would remove {}\n",
        human::id(&o.thread_id),
        human::count(o.removed.len() as u64, "message")
    );
    for r in &o.removed {
        text.push_str(&format!(
            "  - #{} [{}] {} {}\n",
            r.index,
            r.kind,
            r.id.as_deref().unwrap_or(""),
            human::preview(&r.text, PREVIEW_CHARS)
        ));
    }
    text
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

    /// The table as it was drawn with every outcome held (the reference for the rows kept
    /// out of memory).
    fn whole_table(dry_run: bool, outcomes: &[Outcome]) -> Vec<u8> {
        let mut out = Vec::new();
        if outcomes.is_empty() {
            // No header row over nothing.
            writeln!(out, "no thread selected: nothing to do").expect("writes");
            if dry_run {
                writeln!(out, "dry run: nothing was written").expect("writes");
            }
            return out;
        }
        let endpoint = outcomes.iter().any(|o| o.endpoint_tokens.is_some());
        let counter = outcomes
            .iter()
            .find(|o| o.counted)
            .map_or("approx", Outcome::counter_name);
        let tokens_header = format!("tokens ({counter})");
        let mut headers = vec!["thread_id", "status", "messages", tokens_header.as_str()];
        if endpoint {
            headers.push("endpoint in/out");
        }
        headers.extend(["checkpoint", "notes"]);
        let mut t = table::new_table(&headers);
        for o in outcomes {
            let mut row = table_row(o);
            if !endpoint {
                row.remove(ENDPOINT_CELL);
            }
            t.add_row(row);
        }
        writeln!(out, "{}", table::render(&t)).expect("writes");
        if outcomes.len() > 1 {
            let mut totals = Totals::default();
            totals.add(outcomes);
            writeln!(out, "{}", totals.line()).expect("writes");
        }
        if dry_run {
            for o in outcomes.iter().filter(|o| !o.removed.is_empty()) {
                out.extend_from_slice(removed_list(o).as_bytes());
            }
            writeln!(out, "\ndry run: nothing was written").expect("writes");
        }
        out
    }

    /// The table drawn from rows kept out of memory (past the table's chunk and the tape's
    /// memory) is the table drawn with every outcome held, with and without the endpoint's
    /// column, in any batching.
    #[test]
    fn the_table_from_kept_rows_is_the_whole_table() {
        let statuses = [Status::Rewritten, Status::Failed, Status::Unchanged];
        for n in [0usize, 1, 2, 5, 3000, 30_000] {
            let mut all: Vec<Outcome> = (0..n).map(|i| outcome(i, statuses[i % 3])).collect();
            for endpoint in [true, false] {
                if !endpoint {
                    all.iter_mut().for_each(|o| o.endpoint_tokens = None);
                }
                for dry_run in [false, true] {
                    let expected = whole_table(dry_run, &all);
                    let mut report = Report::new(Format::Table, dry_run);
                    let mut got = Vec::new();
                    for batch in all.chunks(700) {
                        report.add(batch.to_vec(), &mut got).expect("adds");
                    }
                    report.end(&mut got).expect("ends");
                    assert!(
                        got == expected,
                        "{n} outcomes, endpoint {endpoint}, dry run {dry_run}"
                    );
                }
            }
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
