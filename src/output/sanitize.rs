//! Escapes untrusted text (message content from a database) before it reaches a terminal.
//!
//! Control characters (except newline and tab), escape sequences and bidirectional overrides
//! are shown as `\u{..}` so a stored message cannot move the cursor, recolour or hide text.

/// Returns `s` with control and bidi-control characters escaped; newlines and tabs are kept.
pub fn for_terminal(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if c == '\n' || c == '\t' || !is_dangerous(c) {
            out.push(c);
        } else {
            out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
        }
    }
    out
}

/// Like [`for_terminal`], but also escapes newlines and tabs (for one-line cells).
pub fn one_line(s: &str) -> String {
    for_terminal(s).replace('\n', "\\n").replace('\t', "\\t")
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
