//! Rendering: tables for people, JSON / JSON lines for scripts, sanitized terminal text.
//!
//! Data goes to stdout; progress and notes go to stderr. Renderers write to any
//! `io::Write` so tests can capture them.

pub mod forget;
pub mod human;
pub mod progress;
pub mod rewrite;
pub mod sanitize;
pub mod table;

use std::io::Write;

use anyhow::Result;

/// Output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Aligned table / readable text.
    Table,
    /// One JSON document.
    Json,
    /// One JSON object per line.
    Jsonl,
}

/// The format to use: the one asked for, else the table (terminal or pipe alike).
pub fn resolve_format(asked: Option<Format>) -> Format {
    // The same human format on a terminal and in a pipe (`memctl show … | less`,
    // `history … | head`), as gh and git do; JSON only when asked for.
    asked.unwrap_or(Format::Table)
}

/// Writes a list of records as one JSON array (`json`) or one object per line (`jsonl`).
/// Records are serialized on all cores (large reports list every removed message), then
/// written in order; the bytes are `serde_json`'s own pretty or compact output.
pub fn write_records<T: serde::Serialize + Sync>(
    out: &mut dyn Write,
    format: Format,
    records: &[T],
) -> Result<()> {
    let lines = format == Format::Jsonl;
    let parts = crate::par::map_owned(records.iter().collect(), crate::par::cores(), |r| {
        if lines {
            serde_json::to_vec(r)
        } else {
            serde_json::to_vec_pretty(r).map(|v| indent_element(&v))
        }
    });
    if lines {
        for part in parts {
            out.write_all(&part?)?;
            out.write_all(b"\n")?;
        }
        return Ok(());
    }
    if parts.is_empty() {
        out.write_all(b"[]\n")?;
        return Ok(());
    }
    out.write_all(b"[\n")?;
    for (i, part) in parts.into_iter().enumerate() {
        if i > 0 {
            out.write_all(b",\n")?;
        }
        out.write_all(&part?)?;
    }
    out.write_all(b"\n]\n")?;
    Ok(())
}

/// A pretty-printed value as an element of a pretty-printed array: every line indented two
/// spaces (JSON text has no raw newline inside strings, so every newline is a line break).
fn indent_element(pretty: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(pretty.len() + pretty.len() / 8 + 2);
    for line in pretty.split(|&b| b == b'\n') {
        if !out.is_empty() {
            out.push(b'\n');
        }
        out.extend_from_slice(b"  ");
        out.extend_from_slice(line);
    }
    out
}

/// Writes one JSON document (pretty for `json`, a single line for `jsonl`).
pub fn write_document(
    out: &mut dyn Write,
    format: Format,
    doc: &impl serde::Serialize,
) -> Result<()> {
    if format == Format::Jsonl {
        serde_json::to_writer(&mut *out, doc)?;
    } else {
        serde_json::to_writer_pretty(&mut *out, doc)?;
    }
    out.write_all(b"\n")?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn records_are_serde_json_arrays_and_lines() {
        let records = [
            json!({"a": 1, "nested": {"list": [1, {"x": "line\nbreak"}], "empty": [], "obj": {}}}),
            json!({"b": "é😀 \"quoted\"", "removed": []}),
            json!([]),
            json!(null),
        ];
        for n in 0..=records.len() {
            let records = &records[..n];
            let mut pretty = Vec::new();
            write_records(&mut pretty, Format::Json, records).expect("writes");
            let mut expected = serde_json::to_vec_pretty(records).expect("serializes");
            expected.push(b'\n');
            assert_eq!(
                String::from_utf8_lossy(&pretty),
                String::from_utf8_lossy(&expected)
            );
            let mut lines = Vec::new();
            write_records(&mut lines, Format::Jsonl, records).expect("writes");
            let expected: String = records.iter().map(|r| format!("{r}\n")).collect();
            assert_eq!(String::from_utf8_lossy(&lines), expected);
        }
    }
}
