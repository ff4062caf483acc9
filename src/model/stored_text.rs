//! Which text a stored row holds, as an erasure's verification counts it: the string values
//! the app wrote, not LangGraph's structure (map keys, type tags, ids, names, LangChain class
//! names). A row that does not decode counts whole.

use serde_json::Value as Json;

use crate::codec::msgpack::Value;

/// Map keys whose values are structure, not the app's text (the keys a redaction leaves
/// alone: `ops::purge`'s list, checked equal by a test there).
pub const STRUCTURAL_KEYS: &[&str] = &["id", "type", "tool_call_id", "name", "lc", "__type"];

fn is_structural(key: &str) -> bool {
    STRUCTURAL_KEYS.contains(&key)
}

/// True when a stored row holds `text` in a value the app wrote, as the verification counts
/// it: a string value of the decoded row (msgpack, or JSON for metadata), not a map key, not
/// a value under a structural key (`type`, `id`, `name`… — LangGraph's type tags, ids and
/// names: see [`STRUCTURAL_KEYS`]) and not an extension's module or class
/// name, or a byte string. A row memctl cannot decode (another serialization, an encrypted or
/// damaged value) holds it when its bytes do: it is never explained away.
pub fn row_holds_text(type_name: &str, bytes: &[u8], text: &str) -> bool {
    rows_hold_texts(type_name, bytes, &[text])[0]
}

/// [`row_holds_text`] for each of `texts`, the row decoded once.
pub fn rows_hold_texts(type_name: &str, bytes: &[u8], texts: &[&str]) -> Vec<bool> {
    match type_name {
        "msgpack" => match crate::codec::msgpack::decode(bytes) {
            Ok(v) => texts.iter().map(|t| value_holds_text(&v, t)).collect(),
            Err(_) => vec![true; texts.len()],
        },
        "json" => match serde_json::from_slice::<Json>(bytes) {
            Ok(j) => texts.iter().map(|t| json_holds_text(&j, t)).collect(),
            Err(_) => vec![true; texts.len()],
        },
        _ => vec![true; texts.len()],
    }
}

fn value_holds_text(v: &Value, text: &str) -> bool {
    match v {
        Value::Str(s) => s.text.contains(text),
        Value::Bin(b) => memchr::memmem::find(&b.bytes, text.as_bytes()).is_some(),
        Value::Array(a) => a.items.iter().any(|x| value_holds_text(x, text)),
        Value::Map(m) => m.entries.iter().any(|(k, x)| {
            k.as_str().is_none_or(|k| !is_structural(k)) && value_holds_text(x, text)
        }),
        // [module, class, fields…]: the names are LangChain's, the fields the app's.
        Value::Ext(e) => match &e.payload {
            Value::Array(a) => a
                .items
                .iter()
                .skip(2)
                .filter(|x| !matches!(x, Value::Str(_)))
                .any(|x| value_holds_text(x, text)),
            other => value_holds_text(other, text),
        },
        Value::Raw(_) => true,
        Value::Nil | Value::Bool(_) | Value::Int(_) | Value::F32(_) | Value::F64(_) => false,
    }
}

fn json_holds_text(v: &Json, text: &str) -> bool {
    match v {
        Json::String(s) => s.contains(text),
        Json::Number(n) => n.to_string().contains(text),
        Json::Array(a) => a.iter().any(|x| json_holds_text(x, text)),
        Json::Object(o) => o
            .iter()
            .any(|(k, x)| !is_structural(k) && json_holds_text(x, text)),
        Json::Null | Json::Bool(_) => false,
    }
}
