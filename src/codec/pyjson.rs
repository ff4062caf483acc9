//! `json.dumps(value, ensure_ascii=False)` byte for byte: how SqliteSaver writes metadata.
//!
//! Python separates with `", "` and `": "`, keeps non-ASCII text as is, escapes control
//! characters as `\u00XX` (except `\n \r \t \b \f`), and prints floats with `repr()`.

use serde_json::Value as Json;

/// Serializes like Python's `json.dumps(v, ensure_ascii=False)`.
pub fn dumps(v: &Json) -> String {
    let mut out = String::new();
    write(&mut out, v);
    out
}

/// How Python prints the leaves of a value (`json.dumps` or `repr()`): both print lists as
/// `[a, b]` and dicts as `{k: v}`, with the same separators.
pub(crate) struct Leaves {
    /// `None` / `null`.
    pub null: &'static str,
    /// `True` / `true`, then `False` / `false`.
    pub bools: [&'static str; 2],
    /// A float that is not an integer.
    pub float: fn(f64) -> String,
    /// A string (and a dict key).
    pub string: fn(&mut String, &str),
}

/// `json.dumps`'s leaves.
const JSON_LEAVES: Leaves = Leaves {
    null: "null",
    bools: ["true", "false"],
    float: |f| match float_repr(f).as_str() {
        "nan" => "NaN".to_owned(),
        "inf" => "Infinity".to_owned(),
        "-inf" => "-Infinity".to_owned(),
        other => other.to_owned(),
    },
    string: write_str,
};

fn write(out: &mut String, v: &Json) {
    write_python(out, v, &JSON_LEAVES);
}

/// Writes `v` as Python prints it, with `leaves` for what is not a list or dict.
pub(crate) fn write_python(out: &mut String, v: &Json, leaves: &Leaves) {
    match v {
        Json::Null => out.push_str(leaves.null),
        Json::Bool(b) => out.push_str(leaves.bools[usize::from(!*b)]),
        Json::Number(n) => {
            if let Some(i) = n.as_i64() {
                out.push_str(&i.to_string());
            } else if let Some(u) = n.as_u64() {
                out.push_str(&u.to_string());
            } else {
                out.push_str(&(leaves.float)(n.as_f64().unwrap_or(f64::NAN)));
            }
        }
        Json::String(s) => (leaves.string)(out, s),
        Json::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_python(out, item, leaves);
            }
            out.push(']');
        }
        Json::Object(map) => {
            out.push('{');
            for (i, (k, val)) in map.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                (leaves.string)(out, k);
                out.push_str(": ");
                write_python(out, val, leaves);
            }
            out.push('}');
        }
    }
}

fn write_str(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
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
    fn matches_python_json_dumps() {
        let v = json!({"source": "update", "step": 10, "parents": {}, "ls_integration": "x",
                       "u": "é\n\u{1}", "f": 2.0, "l": [1, null, true]});
        assert_eq!(
            dumps(&v),
            r#"{"source": "update", "step": 10, "parents": {}, "ls_integration": "x", "u": "é\n\u0001", "f": 2.0, "l": [1, null, true]}"#
        );
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
}
