//! Python's `repr()` of JSON-like values, as LangChain's approximate counter measures it
//! (`len(repr(tool_calls))`, `len(repr(block))`).

use serde_json::Value as Json;

/// `repr()` of a value the way Python prints the equivalent dict / list / str / number.
pub fn repr(v: &Json) -> String {
    let mut out = String::new();
    write_repr(&mut out, v);
    out
}

fn write_repr(out: &mut String, v: &Json) {
    match v {
        Json::Null => out.push_str("None"),
        Json::Bool(true) => out.push_str("True"),
        Json::Bool(false) => out.push_str("False"),
        Json::Number(n) => {
            if let Some(i) = n.as_i64() {
                out.push_str(&i.to_string());
            } else if let Some(u) = n.as_u64() {
                out.push_str(&u.to_string());
            } else {
                out.push_str(&float_repr(n.as_f64().unwrap_or(f64::NAN)));
            }
        }
        Json::String(s) => out.push_str(&str_repr(s)),
        Json::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_repr(out, item);
            }
            out.push(']');
        }
        Json::Object(map) => {
            out.push('{');
            for (i, (k, val)) in map.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&str_repr(k));
                out.push_str(": ");
                write_repr(out, val);
            }
            out.push('}');
        }
    }
}

/// Python's `repr(str)`: single quotes unless the text has `'` and no `"`.
pub fn str_repr(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if !is_printable(c) => {
                let n = u32::from(c);
                if n < 0x100 {
                    out.push_str(&format!("\\x{n:02x}"));
                } else if n < 0x10000 {
                    out.push_str(&format!("\\u{n:04x}"));
                } else {
                    out.push_str(&format!("\\U{n:08x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

/// Python's `str.isprintable()` for one character: false for control and format characters,
/// separators other than the ASCII space, and private-use code points. (Unassigned code points,
/// which Python also escapes, are not tracked.)
fn is_printable(c: char) -> bool {
    let n = u32::from(c);
    !(c.is_control()
        || matches!(n,
            0x00A0 | 0x00AD | 0x1680 | 0x2000..=0x200F | 0x2028..=0x202F | 0x205F..=0x2064
            | 0x2066..=0x206F | 0x3000 | 0xFEFF | 0xFFF9..=0xFFFB | 0x0600..=0x0605 | 0x061C
            | 0x06DD | 0x070F | 0x180E | 0xE000..=0xF8FF | 0xF0000..=0x10FFFF
            | 0x110BD | 0x1BCA0..=0x1BCA3 | 0x1D173..=0x1D17A | 0xE0001 | 0xE0020..=0xE007F))
}

/// Python's `repr(float)`: the shortest round-trip digits, scientific below 1e-4 and from 1e16.
pub fn float_repr(f: f64) -> String {
    if f.is_nan() {
        return "nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "inf".into() } else { "-inf".into() };
    }
    if f == 0.0 {
        return if f.is_sign_negative() {
            "-0.0".into()
        } else {
            "0.0".into()
        };
    }
    // Rust's `{:e}` gives the shortest round-trip digits: "1.2345e-5".
    let sci = format!("{f:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let negative = mantissa.starts_with('-');
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let sign = if negative { "-" } else { "" };
    if (-4..16).contains(&exp) {
        let point = exp + 1; // digits before the decimal point
        if point <= 0 {
            format!("{sign}0.{}{digits}", "0".repeat((-point) as usize))
        } else if point as usize >= digits.len() {
            format!(
                "{sign}{digits}{}.0",
                "0".repeat(point as usize - digits.len())
            )
        } else {
            let (a, b) = digits.split_at(point as usize);
            format!("{sign}{a}.{b}")
        }
    } else {
        let (first, rest) = digits.split_at(1);
        let mant = if rest.is_empty() {
            first.to_owned()
        } else {
            format!("{first}.{rest}")
        };
        let esign = if exp < 0 { '-' } else { '+' };
        format!("{sign}{mant}e{esign}{:02}", exp.abs())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
    fn floats_print_like_python() {
        for (f, s) in [
            (2.0, "2.0"),
            (0.5, "0.5"),
            (1e16, "1e+16"),
            (1.5e16, "1.5e+16"),
            (123456789012345.6, "123456789012345.6"),
            (0.0001, "0.0001"),
            (1.2e-5, "1.2e-05"),
            (-3.25, "-3.25"),
            (0.8334075239801662, "0.8334075239801662"),
        ] {
            assert_eq!(float_repr(f), s);
        }
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
