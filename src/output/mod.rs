//! Rendering: tables for people, JSON / JSON lines for scripts, sanitized terminal text.
//!
//! Data goes to stdout; progress and notes go to stderr. Renderers write to any
//! `io::Write` so tests can capture them.

pub mod human;
pub mod progress;
pub mod sanitize;
pub mod table;

use std::io::{self, IsTerminal, Write};

use anyhow::Result;
use serde_json::Value as Json;

use crate::cli::Format;

/// The format to use: the one asked for, else a table on a terminal and JSON elsewhere.
pub fn resolve_format(asked: Option<Format>) -> Format {
    asked.unwrap_or_else(|| {
        if io::stdout().is_terminal() {
            Format::Table
        } else {
            Format::Json
        }
    })
}

/// Writes a list of records as one JSON array (`json`) or one object per line (`jsonl`).
pub fn write_records<T: serde::Serialize>(
    out: &mut dyn Write,
    format: Format,
    records: &[T],
) -> Result<()> {
    match format {
        Format::Jsonl => {
            for r in records {
                serde_json::to_writer(&mut *out, r)?;
                out.write_all(b"\n")?;
            }
        }
        _ => {
            serde_json::to_writer_pretty(&mut *out, records)?;
            out.write_all(b"\n")?;
        }
    }
    Ok(())
}

/// Writes one JSON document (pretty for `json`, a single line for `jsonl`).
pub fn write_document(out: &mut dyn Write, format: Format, doc: &Json) -> Result<()> {
    if format == Format::Jsonl {
        serde_json::to_writer(&mut *out, doc)?;
    } else {
        serde_json::to_writer_pretty(&mut *out, doc)?;
    }
    out.write_all(b"\n")?;
    Ok(())
}
