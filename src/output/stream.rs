//! JSON documents written as they are made: arrays of elements (messages, rows) streamed
//! into their place in a document, byte for byte what [`super::write_document`] would write
//! had the whole document been built first, so a long thread is never held whole.

use std::io::Write;

use anyhow::Result;
#[cfg(test)]
use serde_json::json;
use serde_json::Value as Json;

use super::Format;

/// One element of a JSON document as [`write_streamed`] takes it: pretty for `json`,
/// compact for `jsonl`.
pub fn element_bytes(format: Format, value: &impl serde::Serialize) -> Result<Vec<u8>> {
    Ok(if format == Format::Jsonl {
        serde_json::to_vec(value)?
    } else {
        serde_json::to_vec_pretty(value)?
    })
}

/// A string value that marks where [`write_streamed`] puts its `n`th streamed array: no
/// stored value can hold it (it carries a random UUID), and it serializes as itself.
pub fn placeholder(n: usize) -> String {
    use std::sync::OnceLock;
    static RUN: OnceLock<String> = OnceLock::new();
    let run = RUN.get_or_init(|| uuid::Uuid::new_v4().simple().to_string());
    format!("memctl-streamed-{run}-{n}")
}

/// Writes `doc` exactly as [`super::write_document`] would (the same bytes) had each value
/// [`placeholder`]`(n)` been the array of the elements `arrays[n]` yields; those elements
/// (serialized by [`element_bytes`]) are written as they come, so the array is never held
/// whole. A placeholder missing from `doc` leaves its elements unread.
pub fn write_streamed(
    out: &mut dyn Write,
    format: Format,
    doc: &Json,
    arrays: Vec<impl Iterator<Item = Result<Vec<u8>>>>,
) -> Result<()> {
    let pretty = format != Format::Jsonl;
    let text = if pretty {
        serde_json::to_string_pretty(doc)?
    } else {
        serde_json::to_string(doc)?
    };
    // Where each placeholder sits, in the order of the text.
    let mut places: Vec<(usize, usize, usize)> = Vec::new(); // (at, len, array)
    for n in 0..arrays.len() {
        let quoted = format!("\"{}\"", placeholder(n));
        if let Some(at) = text.find(&quoted) {
            places.push((at, quoted.len(), n));
        }
    }
    places.sort_unstable();
    let mut arrays: Vec<Option<_>> = arrays.into_iter().map(Some).collect();
    let mut written = 0;
    for (at, len, n) in places {
        out.write_all(&text.as_bytes()[written..at])?;
        written = at + len;
        let Some(elements) = arrays.get_mut(n).and_then(Option::take) else {
            continue;
        };
        // The indentation of the line the array opens on; elements go one level deeper.
        let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
        let indent = text[line_start..at].len() - text[line_start..at].trim_start().len();
        let inner = format!("\n{}", " ".repeat(indent + 2));
        out.write_all(b"[")?;
        let mut any = false;
        for element in elements {
            let element = element?;
            if any {
                out.write_all(b",")?;
            }
            any = true;
            if !pretty {
                out.write_all(&element)?;
                continue;
            }
            // serde_json's pretty printer: each element on its own line, one level in.
            for line in element.split(|&b| b == b'\n') {
                out.write_all(inner.as_bytes())?;
                out.write_all(line)?;
            }
        }
        if pretty && any {
            out.write_all(b"\n")?;
            out.write_all(" ".repeat(indent).as_bytes())?;
        }
        out.write_all(b"]")?;
    }
    out.write_all(&text.as_bytes()[written..])?;
    out.write_all(b"\n")?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output;

    /// Streamed arrays give serde_json's own bytes for the whole document, at any depth.
    #[test]
    fn streamed_documents_are_serde_jsons_bytes() {
        let elements = [
            json!({"a": 1, "nested": {"list": [1, {"x": "line\nbreak"}], "empty": [], "obj": {}}}),
            json!("é😀 \"quoted\""),
            json!([]),
            json!(null),
        ];
        for format in [Format::Json, Format::Jsonl] {
            for n in 0..=elements.len() {
                let part = &elements[..n];
                let whole = json!({"id": "t", "messages": {"before": 3, "added": part,
                    "removed": [], "changed": part}, "values": {}, "after": part});
                let doc = json!({"id": "t", "messages": {"before": 3, "added": placeholder(0),
                    "removed": placeholder(1), "changed": placeholder(2)}, "values": {},
                    "after": placeholder(3)});
                let stream = |items: &[Json]| {
                    items
                        .iter()
                        .map(|e| element_bytes(format, e))
                        .collect::<Vec<_>>()
                        .into_iter()
                };
                let arrays = vec![stream(part), stream(&[]), stream(part), stream(part)];
                let mut got = Vec::new();
                write_streamed(&mut got, format, &doc, arrays).expect("writes");
                let mut want = Vec::new();
                output::write_document(&mut want, format, &whole).expect("writes");
                assert_eq!(
                    String::from_utf8_lossy(&got),
                    String::from_utf8_lossy(&want)
                );
                // A bare array (dump's records).
                let mut got = Vec::new();
                write_streamed(
                    &mut got,
                    format,
                    &Json::String(placeholder(0)),
                    vec![stream(part)],
                )
                .expect("writes");
                let mut want = Vec::new();
                output::write_document(&mut want, format, &Json::Array(part.to_vec()))
                    .expect("writes");
                assert_eq!(
                    String::from_utf8_lossy(&got),
                    String::from_utf8_lossy(&want)
                );
            }
        }
    }
}
