//! Rendering: tables for people, JSON / JSON lines for scripts, sanitized terminal text.
//!
//! Data goes to stdout; progress and notes go to stderr. Renderers write to any
//! `io::Write` so tests can capture them.

pub mod confirm;
pub mod copy;
pub mod diff;
pub mod dump;
pub mod find;
pub mod forget;
pub mod gc;
pub mod history;
pub use crate::text::human;
pub mod listing;
pub mod missing;
pub mod notes;
pub mod progress;
pub mod prune;
pub mod rekey;
pub mod rewrite;
pub mod sanitize;
pub mod show;
pub use crate::overflow::spill;
pub mod stats;
pub mod store;
pub mod stream;
pub mod table;
pub use crate::overflow::tape;
pub mod threads;
pub mod tokens;
pub mod ttl;

use std::io::Write;

use anyhow::Result;

/// What `--quiet` still prints, on stderr: a thread that failed, or whose change did not
/// take effect (superseded by a live app, moved while memctl worked), and why. `--quiet`
/// hides the report, so these are the lines the run's closing error points to. One line per
/// thread: `memctl: thread 'T' failed: why` (escaped for the terminal).
pub fn quiet_problem(thread: &str, status: &str, why: &str) {
    let _ = writeln!(
        std::io::stderr(),
        "memctl: thread '{}' {status}: {}",
        human::id(thread),
        human::id(why)
    );
}

/// Output formats. A plain enum: the command line's `--format` values map onto it
/// (`cli::FormatArg`), the output layer knows no clap type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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
    let mut stream = RecordStream::new(format);
    stream.write(out, records)?;
    stream.end(out)
}

/// A JSON array (`json`) or JSON lines (`jsonl`) written a few records at a time, so a long
/// report need not be held until its end: the bytes are those [`write_records`] writes for
/// all the records at once.
pub struct RecordStream {
    lines: bool,
    written: usize,
}

impl RecordStream {
    /// A stream with no record written yet.
    pub fn new(format: Format) -> RecordStream {
        RecordStream {
            lines: format == Format::Jsonl,
            written: 0,
        }
    }

    /// Writes `records` (serialized on all cores) after the ones written before.
    pub fn write<T: serde::Serialize + Sync>(
        &mut self,
        out: &mut dyn Write,
        records: &[T],
    ) -> Result<()> {
        let parts = crate::par::map_owned(records.iter().collect(), crate::par::cores(), |r| {
            self.encode(r)
        });
        for part in parts {
            self.write_encoded(out, &part?)?;
        }
        Ok(())
    }

    /// One record as this stream writes it ([`RecordStream::write_encoded`] writes it).
    pub fn encode<T: serde::Serialize>(&self, record: &T) -> Result<Vec<u8>> {
        Ok(if self.lines {
            serde_json::to_vec(record)?
        } else {
            indent_element(&serde_json::to_vec_pretty(record)?)
        })
    }

    /// Writes a record [`RecordStream::encode`] made after the ones written before.
    pub fn write_encoded(&mut self, out: &mut dyn Write, part: &[u8]) -> Result<()> {
        match (self.lines, self.written) {
            (true, _) => {}
            (false, 0) => out.write_all(b"[\n")?,
            (false, _) => out.write_all(b",\n")?,
        }
        out.write_all(part)?;
        if self.lines {
            out.write_all(b"\n")?;
        }
        self.written += 1;
        Ok(())
    }

    /// Ends the document (closes the JSON array; `[]` when no record was written).
    pub fn end(self, out: &mut dyn Write) -> Result<()> {
        match (self.lines, self.written) {
            (true, _) => {}
            (false, 0) => out.write_all(b"[]\n")?,
            (false, _) => out.write_all(b"\n]\n")?,
        }
        Ok(())
    }
}

/// A pretty-printed value as an element of a pretty-printed array: every line indented two
/// spaces (JSON text has no raw newline inside strings, so every newline is a line break).
fn indent_element(pretty: &[u8]) -> Vec<u8> {
    indent_lines(pretty, 2)
}

/// A pretty-printed value with every line indented `spaces` spaces: an element of a value
/// nested that deep in a pretty-printed document.
pub(crate) fn indent_lines(pretty: &[u8], spaces: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(pretty.len() + pretty.len() / 8 + spaces);
    for line in pretty.split(|&b| b == b'\n') {
        if !out.is_empty() {
            out.push(b'\n');
        }
        out.extend(std::iter::repeat_n(b' ', spaces));
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

    #[test]
    fn a_stream_in_pieces_writes_the_bytes_of_the_whole_list() {
        let records: Vec<serde_json::Value> = (0..7)
            .map(|i| json!({"i": i, "removed": [{"text": format!("m{i}\n")}]}))
            .collect();
        for format in [Format::Json, Format::Jsonl] {
            let mut whole = Vec::new();
            write_records(&mut whole, format, &records).expect("writes");
            // Pieces of 1, 2 and 3 records, an empty piece between each two.
            for size in 1..=3 {
                let mut stream = RecordStream::new(format);
                let mut pieces = Vec::new();
                for chunk in records.chunks(size) {
                    stream.write(&mut pieces, chunk).expect("writes");
                    stream.write(&mut pieces, &records[..0]).expect("writes");
                }
                stream.end(&mut pieces).expect("ends");
                assert_eq!(
                    String::from_utf8_lossy(&pieces),
                    String::from_utf8_lossy(&whole),
                    "{format:?} in pieces of {size}"
                );
            }
        }
    }
}
