//! Escapes untrusted text (message content from a database) before it reaches a terminal.
//!
//! Control characters (except newline and tab), escape sequences and bidirectional overrides
//! are shown as `\u{..}` so a stored message cannot move the cursor, recolour or hide text.

/// Returns `s` with control and bidi-control characters escaped; newlines and tabs are kept.
pub fn for_terminal(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    s.chars().for_each(|c| push_char(&mut out, c, false));
    out
}

/// Like [`for_terminal`], but also escapes newlines and tabs (for one-line cells).
pub fn one_line(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    s.chars().for_each(|c| push_char(&mut out, c, true));
    out
}

/// Appends `c` as [`for_terminal`] (or, with `one_line`, [`one_line`]) writes it.
pub fn push_char(out: &mut String, c: char, one_line: bool) {
    match c {
        '\n' if one_line => out.push_str("\\n"),
        '\t' if one_line => out.push_str("\\t"),
        '\n' | '\t' => out.push(c),
        c if is_dangerous(c) => {
            use std::fmt::Write;
            let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
        }
        c => out.push(c),
    }
}

fn is_dangerous(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
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
}
