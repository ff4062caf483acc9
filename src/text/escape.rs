//! Characters that could move a terminal's cursor, recolour it or reorder text, written as
//! visible escapes (`\u{1b}`). Pure functions: `output`'s [`TerminalWriter`](crate::output::sanitize::TerminalWriter)
//! applies them to every byte memctl prints; a job quoting a stored name in a message may too.

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

/// Characters that can move the cursor, recolour, reorder or break lines on a terminal: C0
/// and C1 controls (U+009B is a one-byte CSI), bidi marks, embeddings, overrides and
/// isolates, the Arabic letter mark, and the Unicode line and paragraph separators.
pub fn is_dangerous(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061c}'
                | '\u{200e}'
                | '\u{200f}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202a}'..='\u{202e}'
                | '\u{2066}'..='\u{2069}'
        )
}

/// A stored name quoted in an error: its line breaks written `\n`, so that the error line
/// (which main folds at line breaks, then escapes) keeps it whole; every other character is
/// escaped by that one writer.
pub fn line_breaks(name: &str) -> String {
    name.replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    #[test]
    fn line_breaks_are_written_and_the_rest_left_to_the_writer() {
        assert_eq!(super::line_breaks("a\nb\tc"), "a\\nb\tc");
    }
}
