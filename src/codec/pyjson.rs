//! `json.dumps(value, ensure_ascii=False)` byte for byte: how SqliteSaver writes metadata.
//!
//! Python separates with `", "` and `": "`, keeps non-ASCII text as is, escapes control
//! characters as `\u00XX` (except `\n \r \t \b \f`), and prints floats with `repr()`.

use serde_json::Value as Json;

use crate::tokens::pyrepr::float_repr;

/// Serializes like Python's `json.dumps(v, ensure_ascii=False)`.
pub fn dumps(v: &Json) -> String {
    let mut out = String::new();
    write(&mut out, v);
    out
}

fn write(out: &mut String, v: &Json) {
    match v {
        Json::Null => out.push_str("null"),
        Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Json::Number(n) => {
            if let Some(i) = n.as_i64() {
                out.push_str(&i.to_string());
            } else if let Some(u) = n.as_u64() {
                out.push_str(&u.to_string());
            } else {
                let f = n.as_f64().unwrap_or(f64::NAN);
                out.push_str(&match float_repr(f).as_str() {
                    "nan" => "NaN".to_owned(),
                    "inf" => "Infinity".to_owned(),
                    "-inf" => "-Infinity".to_owned(),
                    other => other.to_owned(),
                });
            }
        }
        Json::String(s) => write_str(out, s),
        Json::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write(out, item);
            }
            out.push(']');
        }
        Json::Object(map) => {
            out.push('{');
            for (i, (k, val)) in map.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_str(out, k);
                out.push_str(": ");
                write(out, val);
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
}
