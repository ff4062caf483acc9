//! Escapes untrusted text (message content from a database) before it reaches a terminal.
//!
//! Control characters (except newline and tab), escape sequences and bidirectional overrides
//! are shown as `\u{..}` so a stored message cannot move the cursor, recolour or hide text.

pub use crate::text::escape::{for_terminal, is_dangerous, one_line, push_char};

/// How [`TerminalWriter`] escapes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Escape {
    /// Human text: `\u{1b}`, newlines and tabs kept.
    Text,
    /// JSON text: `\u001b` (valid inside JSON strings, where such characters can only be).
    Json,
}

/// The one boundary between memctl's output and the terminal: a writer that escapes every
/// dangerous character ([`is_dangerous`]) of the UTF-8 stream written through it, whatever
/// command produced it (tables, chat views, notes, JSON). Bytes that are not UTF-8 pass
/// through as they are; a character split across two writes is held until it is whole.
pub struct TerminalWriter<'a> {
    inner: &'a mut dyn std::io::Write,
    mode: Escape,
    pending: Vec<u8>,
}

impl<'a> TerminalWriter<'a> {
    /// Wraps `inner`.
    pub fn new(inner: &'a mut dyn std::io::Write, mode: Escape) -> TerminalWriter<'a> {
        TerminalWriter {
            inner,
            mode,
            pending: Vec::new(),
        }
    }

    fn emit(&mut self, end: usize) -> std::io::Result<()> {
        let mut start = 0;
        let mut out = Vec::with_capacity(end + 16);
        while start < end {
            match std::str::from_utf8(&self.pending[start..end]) {
                Ok(text) => {
                    escape_into(text, self.mode, &mut out);
                    start = end;
                }
                Err(e) => {
                    let valid = start + e.valid_up_to();
                    let text = std::str::from_utf8(&self.pending[start..valid]).unwrap_or("");
                    escape_into(text, self.mode, &mut out);
                    let bad = e.error_len().unwrap_or(end - valid).max(1);
                    out.extend_from_slice(&self.pending[valid..(valid + bad).min(end)]);
                    start = valid + bad;
                }
            }
        }
        self.pending.drain(..end.min(self.pending.len()));
        self.inner.write_all(&out)
    }
}

fn escape_into(text: &str, mode: Escape, out: &mut Vec<u8>) {
    if !text
        .chars()
        .any(|c| c != '\n' && c != '\t' && is_dangerous(c))
    {
        out.extend_from_slice(text.as_bytes());
        return;
    }
    for c in text.chars() {
        if c != '\n' && c != '\t' && is_dangerous(c) {
            let escaped = match mode {
                Escape::Text => format!("\\u{{{:x}}}", u32::from(c)),
                Escape::Json => format!("\\u{:04x}", u32::from(c)),
            };
            out.extend_from_slice(escaped.as_bytes());
        } else {
            let mut buf = [0u8; 4];
            out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
        }
    }
}

/// True when `buf` cannot hold a dangerous character: no C0 control but newline and tab, no
/// DEL, and none of the lead bytes of the dangerous non-ASCII characters (0xC2: C1 controls;
/// 0xD8: U+061C; 0xE2: the bidi marks and line separators). Most output takes this path.
fn plainly_safe(buf: &[u8]) -> bool {
    buf.iter().all(|&b| {
        (b >= 0x20 || b == b'\n' || b == b'\t') && !matches!(b, 0x7f | 0xc2 | 0xd8 | 0xe2)
    })
}

impl std::io::Write for TerminalWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.pending.is_empty() && plainly_safe(buf) {
            // ASCII-safe bytes and whole UTF-8 sequences of other leads pass as they are; a
            // sequence split at the end is completed by the next write unchanged, since its
            // lead byte is not a dangerous one.
            self.inner.write_all(buf)?;
            return Ok(buf.len());
        }
        self.pending.extend_from_slice(buf);
        // Hold back an incomplete character at the end (at most 3 bytes).
        let end = match std::str::from_utf8(&self.pending) {
            Ok(_) => self.pending.len(),
            Err(e) if e.error_len().is_none() => e.valid_up_to(),
            Err(_) => self.pending.len(),
        };
        self.emit(end)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        let end = self.pending.len();
        self.emit(end)?;
        self.inner.flush()
    }
}

impl Drop for TerminalWriter<'_> {
    fn drop(&mut self) {
        let end = self.pending.len();
        let _ = self.emit(end);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_terminal_controls() {
        assert_eq!(for_terminal("a\u{1b}[31mb"), "a\\u{1b}[31mb");
        assert_eq!(for_terminal("x\u{202e}y"), "x\\u{202e}y");
        assert_eq!(for_terminal("line\nnext\t中文😀"), "line\nnext\t中文😀");
        assert_eq!(one_line("a\nb"), "a\\nb");
    }

    #[test]
    fn the_writer_escapes_whatever_passes_and_keeps_split_characters() {
        use std::io::Write;
        let attack = "id\u{1b}[2J\u{9b}31m\u{202e}x\u{2028}y\n中😀\tz";
        for mode in [Escape::Text, Escape::Json] {
            for split in 0..attack.len() {
                let mut sink = Vec::new();
                {
                    let mut w = TerminalWriter::new(&mut sink, mode);
                    let (a, b) = attack.as_bytes().split_at(split);
                    w.write_all(a).expect("write");
                    w.write_all(b).expect("write");
                    w.flush().expect("flush");
                }
                let text = String::from_utf8(sink).expect("UTF-8");
                assert!(
                    !text
                        .chars()
                        .any(|c| c != '\n' && c != '\t' && is_dangerous(c)),
                    "{text:?}"
                );
                assert!(text.contains("中😀\tz") && text.contains('\n'), "{text:?}");
                match mode {
                    Escape::Text => {
                        assert!(text.starts_with("id\\u{1b}[2J\\u{9b}31m\\u{202e}x\\u{2028}y"))
                    }
                    Escape::Json => {
                        assert!(text.starts_with("id\\u001b[2J\\u009b31m\\u202ex\\u2028y"))
                    }
                }
            }
        }
        // JSON stays JSON and means the same.
        let doc = serde_json::json!({"content": attack});
        let mut sink = Vec::new();
        {
            let mut w = TerminalWriter::new(&mut sink, Escape::Json);
            serde_json::to_writer(&mut w, &doc).expect("json");
        }
        let back: serde_json::Value = serde_json::from_slice(&sink).expect("still JSON");
        assert_eq!(back, doc);
    }
}
