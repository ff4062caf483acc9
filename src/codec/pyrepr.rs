//! Python's `repr()` of JSON-like values, as LangChain's approximate counter measures it
//! (`len(repr(tool_calls))`, `len(repr(block))`).

use crate::codec::pyjson::{float_repr, write_python, Leaves};
use serde_json::Value as Json;

use crate::codec::lazy::{Lazy, Spanned};

/// `repr()` of a value the way Python prints the equivalent dict / list / str / number.
pub fn repr(v: &Json) -> String {
    let mut out = String::new();
    write_repr(&mut out, v);
    out
}

/// `repr()`'s leaves.
const REPR_LEAVES: Leaves = Leaves {
    null: "None",
    bools: ["True", "False"],
    float: float_repr,
    string: |out, s| out.push_str(&str_repr(s)),
};

fn write_repr(out: &mut String, v: &Json) {
    write_python(out, v, &REPR_LEAVES);
}

/// Python's `repr(str)`: single quotes unless the text has `'` and no `"`.
pub fn str_repr(s: &str) -> String {
    let quote = quote_for(s);
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    for c in s.chars() {
        match escape(c, quote) {
            None => out.push(c),
            Some(Escape::Pair(e)) => {
                out.push('\\');
                out.push(e);
            }
            Some(Escape::Hex(n)) if n < 0x100 => out.push_str(&format!("\\x{n:02x}")),
            Some(Escape::Hex(n)) if n < 0x10000 => out.push_str(&format!("\\u{n:04x}")),
            Some(Escape::Hex(n)) => out.push_str(&format!("\\U{n:08x}")),
        }
    }
    out.push(quote);
    out
}

/// `len(repr(s))` in characters, without building the repr (one pass).
pub fn str_repr_chars(s: &str) -> usize {
    let (mut n, mut single, mut double) = (2, 0, 0);
    for c in s.chars() {
        n += match c {
            '\'' => {
                single += 1;
                1
            }
            '"' => {
                double += 1;
                1
            }
            ' '..='~' if c != '\\' => 1,
            // Quotes were counted above (which one is escaped is known only at the end).
            c => escape(c, '\'').map_or(1, Escape::len),
        };
    }
    // Quoted with ' (unless the text has ' and no "), each ' is escaped.
    if single > 0 && double == 0 {
        n
    } else {
        n + single
    }
}

/// The quote Python's `repr(str)` picks.
fn quote_for(s: &str) -> char {
    if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    }
}

/// How `repr(str)` writes a character it does not write as itself.
#[derive(Debug, Clone, Copy)]
enum Escape {
    /// A backslash and this character (`\\n`, `\\'`…).
    Pair(char),
    /// `\\xNN`, `\\uNNNN` or `\\UNNNNNNNN` of this code point.
    Hex(u32),
}

impl Escape {
    /// Characters the escape takes.
    fn len(self) -> usize {
        match self {
            Escape::Pair(_) => 2,
            Escape::Hex(n) if n < 0x100 => 4,
            Escape::Hex(n) if n < 0x10000 => 6,
            Escape::Hex(_) => 10,
        }
    }
}

/// The escape `repr(str)` quoted with `quote` writes for `c`, if any.
fn escape(c: char, quote: char) -> Option<Escape> {
    match c {
        '\\' => Some(Escape::Pair('\\')),
        '\n' => Some(Escape::Pair('n')),
        '\r' => Some(Escape::Pair('r')),
        '\t' => Some(Escape::Pair('t')),
        c if c == quote => Some(Escape::Pair(c)),
        c if !is_printable(c) => Some(Escape::Hex(u32::from(c))),
        _ => None,
    }
}

/// `len(repr(x))` in characters for the value `v` read in place, where `x` is the Python
/// value its JSON form ([`crate::codec::json::to_json`]) stands for — what
/// `repr(&to_json(&decode(v)))` counts, without building either. `None` for values whose JSON
/// form is tagged (bytes, ext objects, maps with non-string keys, non-finite floats) or that
/// do not read.
pub fn lazy_repr_chars(v: &Spanned<'_>) -> Option<usize> {
    Some(match v.value {
        Lazy::Nil | Lazy::Bool(true) => 4,
        Lazy::Bool(false) => 5,
        Lazy::Int(i) => {
            let digits = i
                .unsigned_abs()
                .checked_ilog10()
                .map_or(1, |d| d as usize + 1);
            digits + usize::from(i < 0)
        }
        Lazy::Float(f) if f.is_finite() => float_repr(f).len(),
        Lazy::Str(s) => str_repr_chars(s),
        Lazy::Array(a) => {
            let mut n = 2 + 2 * a.len.saturating_sub(1);
            for item in a.iter() {
                n += lazy_repr_chars(&item.ok()?)?;
            }
            n
        }
        Lazy::Map(m) => {
            let mut n = 2 + 2 * m.len.saturating_sub(1);
            for pair in m.pairs() {
                let (k, val) = pair.ok()?;
                n += str_repr_chars(k.as_str()?) + 2 + lazy_repr_chars(&val)?;
            }
            n
        }
        _ => return None,
    })
}

/// Python's `str.isprintable()` for one character: false for the general categories Python
/// escapes in `repr()` — controls (Cc), format characters (Cf), surrogates (Cs), private use
/// (Co), unassigned (Cn), line and paragraph separators (Zl, Zp) and space separators (Zs)
/// other than the ASCII space. The categories come from the `unicode-general-category`
/// crate; a character assigned in a Unicode version newer than the one of the Python that
/// runs LangChain (3.11: Unicode 14) counts as printable here and is escaped there.
fn is_printable(c: char) -> bool {
    use unicode_general_category::{get_general_category, GeneralCategory as G};
    if c == ' ' {
        return true;
    }
    !matches!(
        get_general_category(c),
        G::Control
            | G::Format
            | G::Surrogate
            | G::PrivateUse
            | G::Unassigned
            | G::LineSeparator
            | G::ParagraphSeparator
            | G::SpaceSeparator
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// `repr()` of each character, as Python 3.11 (the pinned venv) prints it.
    #[test]
    fn format_and_unassigned_characters_are_escaped_like_python() {
        for (c, python) in [
            ('\u{0890}', "'\\u0890'"),
            ('\u{08e2}', "'\\u08e2'"),
            ('\u{110cd}', "'\\U000110cd'"),
            ('\u{13430}', "'\\U00013430'"),
            ('\u{00ad}', "'\\xad'"),
            ('\u{200b}', "'\\u200b'"),
            ('\u{3000}', "'\\u3000'"),
            ('\u{e000}', "'\\ue000'"),
            ('\u{e0001}', "'\\U000e0001'"),
            ('\u{0378}', "'\\u0378'"),
            ('a', "'a'"),
            ('😀', "'😀'"),
            (' ', "' '"),
        ] {
            let s = c.to_string();
            assert_eq!(str_repr(&s), python, "U+{:04X}", u32::from(c));
            assert_eq!(
                str_repr_chars(&s),
                python.chars().count(),
                "U+{:04X}",
                u32::from(c)
            );
        }
    }

    #[test]
    fn strings_quote_like_python() {
        assert_eq!(str_repr("abc"), "'abc'");
        assert_eq!(str_repr("it's"), "\"it's\"");
        assert_eq!(str_repr("it's \"x\""), "'it\\'s \"x\"'");
        assert_eq!(str_repr("a\nb\\"), "'a\\nb\\\\'");
        assert_eq!(str_repr("é😀中"), "'é😀中'");
        assert_eq!(str_repr("\u{7}\u{a0}\u{200b}"), "'\\x07\\xa0\\u200b'");
    }

    #[test]
    fn repr_lengths_count_without_building() {
        for s in [
            "",
            "abc",
            "it's",
            "it's \"x\"",
            "say \"hi\"",
            "a\nb\\",
            "é😀中",
            "\u{7}\u{a0}\u{200b}",
            "\u{7f}",
            "\u{10ffff}",
            "tab\there",
            "\0",
            "\u{85}x'y",
            "\u{e000}\u{1bca0}",
        ] {
            assert_eq!(str_repr_chars(s), str_repr(s).chars().count(), "{s:?}");
        }
    }

    #[test]
    fn in_place_repr_lengths_equal_the_json_repr() {
        use crate::codec::{json::to_json, lazy, msgpack};
        let cases = [
            json!([{"name": "get_weather", "args": {"city": "Paris"}, "id": "call_1", "type": "tool_call"}]),
            json!({"s": "a\nb", "q": "it's \"x\"", "u": "é😀", "n": [1, 2.0, null, true, false]}),
            json!({"big": u64::MAX, "neg": i64::MIN, "zero": 0, "f": [0.1, -2.5e-7, 1e16], "e": {}, "l": []}),
            json!("plain"),
            json!(12345),
        ];
        for case in cases {
            let bytes = msgpack::encode(&crate::codec::json::json_to_value(&case));
            let expected = repr(&to_json(&msgpack::decode(&bytes).expect("decodes")))
                .chars()
                .count();
            let v = lazy::root(&bytes).expect("reads");
            assert_eq!(lazy_repr_chars(&v), Some(expected), "{case}");
        }
        // Tagged JSON forms are left to the full path.
        let bin = [0xc4, 0x01, 0x00];
        assert_eq!(lazy_repr_chars(&lazy::root(&bin).expect("reads")), None);
        let int_key = [0x81, 0x01, 0x02];
        assert_eq!(lazy_repr_chars(&lazy::root(&int_key).expect("reads")), None);
    }

    #[test]
    fn tool_call_repr_matches_the_documented_length() {
        // langgraph-format.md §1.1: this args dict gives a repr 126 code points long.
        let args = json!({"s": "a\nb", "q": "it's \"x\"", "u": "é😀", "n": [1, 2.0, null, true]});
        assert_eq!(
            repr(&args),
            "{'s': 'a\\nb', 'q': 'it\\'s \"x\"', 'u': 'é😀', 'n': [1, 2.0, None, True]}"
        );
        let call = json!([{"name": "get_weather", "args": {"city": "Paris"}, "id": "call_1", "type": "tool_call"}]);
        assert_eq!(repr(&call).chars().count(), 89);
    }
}
