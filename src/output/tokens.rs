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
struct ThreadRecord<'a> {
    thread_id: &'a str,
    messages: usize,
    tokens: Option<u64>,
    counter: &'a str,
}

/// Writes `tokens --thread`'s report in `format`.
pub fn write_messages(out: &mut dyn Write, format: Format, r: &MessagesReport<'_>) -> Result<()> {
    if format != Format::Table {
        return super::write_document(out, format, r);
    }
    let tokens_header = format!("tokens ({})", r.counter);
    write_table(
        out,
        &["#", "type", "id", &tokens_header, "text"],
        &[0, 3],
        r.messages.len(),
        |i| {
            let m = &r.messages[i];
            vec![
                i.to_string(),
                m.kind.to_owned(),
                human::id(m.id.as_deref().unwrap_or("-")),
                m.tokens.to_string(),
                m.text.clone(),
            ]
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

/// Writes `tokens --all`'s report in `format`: `rows` counted by the counter named `counter`
/// (`None`: the provider's usage, the last input tokens).
pub fn write_threads(
    out: &mut dyn Write,
    format: Format,
    counter: Option<&str>,
    rows: &[ThreadTokens],
) -> Result<()> {
    let counter_name = counter.unwrap_or("usage (last input_tokens)");
    if format != Format::Table {
        let records: Vec<ThreadRecord<'_>> = rows
            .iter()
            .map(|r| ThreadRecord {
                thread_id: &r.thread_id,
                messages: r.messages,
                tokens: r.tokens,
                counter: counter_name,
            })
            .collect();
        return super::write_records(out, format, &records);
    }
    let tokens_header = match counter {
        Some(c) => format!("tokens ({c})"),
        None => "last input tokens (usage)".to_owned(),
    };
    let mut t = table::new_table(&["thread_id", "messages", &tokens_header]);
    table::align_right(&mut t, &[1, 2]);
    for r in rows.iter() {
        t.add_row(vec![
            human::id(&r.thread_id),
            r.messages.to_string(),
            r.tokens.map_or("-".into(), |n| n.to_string()),
        ]);
    }
    writeln!(out, "{}", table::render(&t))?;
    writeln!(
        out,
        "{}, {} tokens ({counter_name})",
        human::count(rows.len() as u64, "thread"),
        rows.iter().filter_map(|r| r.tokens).sum::<u64>()
    )?;
    Ok(())
}

/// Rows a table is laid out and rendered with at a time.
const TABLE_CHUNK: usize = 2048;

/// Writes the table of `n` rows (`row(i)` gives the cells of row `i`) byte for byte as
/// `writeln!(out, "{}", table::render(&t))` writes the whole table `t` (made by
/// [`table::new_table`] with these headers, `right` aligned right), without ever holding
/// more than a chunk of rows as table cells: a table of 100,000 messages as comfy-table cells
/// is ~150 MB.
///
/// How: a table's layout depends on its content only through each column's widest cell,
/// unless a column must wrap (then comfy-table looks at every cell's words). So the widest
/// cell of each column is measured first (by comfy-table, a chunk at a time); a probe table of
/// the header and one row of cells that wide tells the layout. When that row is laid out on
/// one line, nothing wraps: each chunk is rendered with the same probe row first (so the
/// layout is the same), and its lines after the header and the probe row are written. When
/// it wraps, the whole table is built as before.
fn write_table(
    out: &mut dyn Write,
    headers: &[&str],
    right: &[usize],
    n: usize,
    row: impl Fn(usize) -> Vec<String>,
) -> Result<()> {
    let with_rows = |probes: &[Vec<String>], rows: std::ops::Range<usize>| {
        let mut t = table::new_table(headers);
        table::align_right(&mut t, right);
        for p in probes {
            t.add_row(p.clone());
        }
        for i in rows {
            t.add_row(row(i));
        }
        table::render(&t)
    };
    if n <= TABLE_CHUNK {
        writeln!(out, "{}", with_rows(&[], 0..n))?;
        return Ok(());
    }
    let mut widths = vec![0u16; headers.len()];
    for start in (0..n).step_by(TABLE_CHUNK) {
        let mut t = comfy_table::Table::new();
        for i in start..n.min(start + TABLE_CHUNK) {
            t.add_row(row(i));
        }
        for (w, m) in widths.iter_mut().zip(t.column_max_content_widths()) {
            *w = (*w).max(m);
        }
    }
    let probe: Vec<String> = widths.iter().map(|&w| "x".repeat(w.into())).collect();
    let one = with_rows(std::slice::from_ref(&probe), 0..0);
    let two = with_rows(&[probe.clone(), probe.clone()], 0..0);
    let (lines_one, lines_two) = (one.split('\n').count(), two.split('\n').count());
    let probe_lines = lines_two.saturating_sub(lines_one);
    if probe_lines != 1 {
        // A column wraps: comfy-table needs every cell to lay it out.
        writeln!(out, "{}", with_rows(&[], 0..n))?;
        return Ok(());
    }
    let header_lines = lines_one - probe_lines;
    for line in one.split('\n').take(header_lines) {
        writeln!(out, "{line}")?;
    }
    for start in (0..n).step_by(TABLE_CHUNK) {
        let text = with_rows(
            std::slice::from_ref(&probe),
            start..n.min(start + TABLE_CHUNK),
        );
        for line in text.split('\n').skip(header_lines + probe_lines) {
            writeln!(out, "{line}")?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The chunked table is the whole table's bytes (layout from the widest cells).
    #[test]
    fn chunked_tables_are_the_whole_tables_bytes() {
        let headers = ["#", "type", "id", "tokens (approx)", "text"];
        let row = |i: usize| {
            vec![
                i.to_string(),
                ["human", "ai", "tool"][i % 3].to_owned(),
                format!("id-{}", "x".repeat(i % 17)),
                (i * 7919 % 1000).to_string(),
                format!("{} é😀 end", "word ".repeat(i % 9)),
            ]
        };
        for n in [0, 1, TABLE_CHUNK, TABLE_CHUNK + 1, 2 * TABLE_CHUNK + 5] {
            let mut got = Vec::new();
            write_table(&mut got, &headers, &[0, 3], n, row).expect("writes");
            let mut t = table::new_table(&headers);
            table::align_right(&mut t, &[0, 3]);
            for i in 0..n {
                t.add_row(row(i));
            }
            let want = format!("{}\n", table::render(&t));
            assert!(String::from_utf8_lossy(&got) == want, "{n} rows differ");
        }
    }
}
