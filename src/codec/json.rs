//! JSON rendering of decoded msgpack values.
//!
//! Plain values map to plain JSON. What JSON cannot hold is written as a one-key object, so
//! nothing is lost (this is the form `dump --raw` prints, documented in docs/formats.md):
//! - bytes: `{"$bytes": "<base64>"}`
//! - a map with a non-string key: `{"$map": [[key, value], …]}`
//! - NaN / ±infinity: `{"$float": "NaN" | "inf" | "-inf"}`
//! - an ext object: `{"$ext": code, "kind": "<code name>", "payload": <payload>}`

use base64::Engine;
use serde_json::{json, Map as JsonMap, Value as Json};

use super::ext;
use super::msgpack::Value;

/// Converts a decoded value to its lossless JSON form.
pub fn to_json(v: &Value) -> Json {
    match v {
        Value::Nil => Json::Null,
        Value::Bool(b) => Json::Bool(*b),
        Value::Int(i) if i.neg < 0 => Json::from(i.neg),
        Value::Int(i) => Json::from(i.pos),
        Value::F32(f) => float(f64::from(*f)),
        Value::F64(f) => float(*f),
        Value::Str(s) => Json::String(s.text.clone()),
        Value::Bin(b) => {
            json!({"$bytes": base64::engine::general_purpose::STANDARD.encode(&b.bytes)})
        }
        Value::Array(a) => Json::Array(a.items.iter().map(to_json).collect()),
        Value::Map(m) => {
            if m.entries.iter().all(|(k, _)| k.as_str().is_some()) {
                let mut obj = JsonMap::with_capacity(m.entries.len());
                for (k, val) in &m.entries {
                    if let Some(key) = k.as_str() {
                        obj.insert(key.to_owned(), to_json(val));
                    }
                }
                Json::Object(obj)
            } else {
                let pairs = m
                    .entries
                    .iter()
                    .map(|(k, val)| Json::Array(vec![to_json(k), to_json(val)]))
                    .collect();
                tagged([("$map", Json::Array(pairs))])
            }
        }
        Value::Raw(r) => match super::msgpack::decode(r.bytes()) {
            Ok(v) => to_json(&v),
            Err(e) => json!({ "$undecodable": e.to_string() }),
        },
        Value::Ext(e) => tagged([
            ("$ext", Json::from(e.code)),
            ("kind", Json::from(ext::code_name(e.code))),
            ("payload", to_json(&e.payload)),
        ]),
    }
}

/// A JSON object of these entries, moved in. (`json!` would serialize a nested `Json` into a
/// copy: each ext or `$map` level copied its whole subtree again, quadratic in the nesting.)
fn tagged<const N: usize>(entries: [(&str, Json); N]) -> Json {
    let mut obj = JsonMap::with_capacity(N);
    for (k, v) in entries {
        obj.insert(k.to_owned(), v);
    }
    Json::Object(obj)
}

fn float(f: f64) -> Json {
    if f.is_finite() {
        serde_json::Number::from_f64(f).map_or(Json::Null, Json::Number)
    } else if f.is_nan() {
        json!({"$float": "NaN"})
    } else if f > 0.0 {
        json!({"$float": "inf"})
    } else {
        json!({"$float": "-inf"})
    }
}

/// Converts JSON (the legacy `json` serialization, and LangGraph.js's `JsonPlusSerializer`)
/// into the value model, so the same views read both. LangChain constructor objects stay
/// maps; the model reads them. LangGraph.js's DeltaChannel snapshot
/// `{"lc": 2, "type": "delta_snapshot", "value": v}` (its `DeltaSnapshot` class, which
/// `isDeltaSnapshot` and the ancestor walk take as a seed) becomes the same
/// [`super::ext::DELTA_SNAPSHOT`] as Python's `_DeltaSnapshot`.
pub fn json_to_value(j: &serde_json::Value) -> Value {
    use serde_json::Value as J;
    if let Some(inner) = js_delta_snapshot(j) {
        return Value::ext(ext::DELTA_SNAPSHOT, json_to_value(inner));
    }
    match j {
        J::Null => Value::Nil,
        J::Bool(b) => Value::Bool(*b),
        J::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => Value::int(i),
            (None, Some(u)) => Value::Int(super::msgpack::Int {
                pos: u,
                neg: 0,
                marker: None,
            }),
            _ => Value::F64(n.as_f64().unwrap_or(f64::NAN)),
        },
        J::String(s) => Value::str(s.clone()),
        J::Array(items) => Value::array(items.iter().map(json_to_value).collect()),
        J::Object(obj) => Value::map(
            obj.iter()
                .map(|(k, v)| (Value::str(k.clone()), json_to_value(v)))
                .collect(),
        ),
    }
}

/// The value inside LangGraph.js's `DeltaSnapshot` record (`_default` in its
/// `JsonPlusSerializer` writes `{lc: 2, type: "delta_snapshot", value}`; `_reviver` revives
/// exactly that shape, with `value` present).
fn js_delta_snapshot(j: &serde_json::Value) -> Option<&serde_json::Value> {
    let o = j.as_object()?;
    if o.get("lc").and_then(serde_json::Value::as_u64) == Some(2)
        && o.get("type").and_then(serde_json::Value::as_str) == Some("delta_snapshot")
    {
        return o.get("value");
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_langgraph_js_delta_snapshot_is_a_delta_snapshot() {
        let v = json_to_value(&json!({"lc": 2, "type": "delta_snapshot", "value": [1, "a"]}));
        let e = v.as_ext().expect("an ext");
        assert_eq!(e.code, ext::DELTA_SNAPSHOT);
        assert_eq!(to_json(&e.payload), json!([1, "a"]));
        // Anything else stays a map: another lc 2 record, or one without a value.
        for other in [
            json!({"lc": 2, "type": "undefined"}),
            json!({"lc": 2, "type": "delta_snapshot"}),
            json!({"lc": 1, "type": "delta_snapshot", "value": []}),
        ] {
            assert!(json_to_value(&other).as_map().is_some(), "{other}");
        }
    }
    use crate::codec::msgpack::decode;

    #[test]
    fn nested_ext_objects_are_built_in_linear_time() {
        // 255 ext levels (as deep as the decoder allows) around 400,000 values. Each level
        // used to copy its whole subtree again (json! serializes a nested Json): 255 copies.
        let mut v = Value::array((0..400_000).map(Value::int).collect());
        for _ in 0..255 {
            v = Value::ext(5, v);
        }
        let start = std::time::Instant::now();
        let mut j = &to_json(&v);
        let elapsed = start.elapsed();
        for _ in 0..255 {
            assert_eq!(j["$ext"], 5);
            j = &j["payload"];
        }
        assert_eq!(j.as_array().map(Vec::len), Some(400_000));
        assert!(
            elapsed.as_millis() < 1500,
            "to_json took {elapsed:?} (linear: ~0.1 s)"
        );
    }

    #[test]
    fn special_values_are_tagged() {
        // {1: b"\x00"} — a non-string key holding bytes.
        let v = decode(&[0x81, 0x01, 0xc4, 0x01, 0x00]).expect("decodes");
        assert_eq!(to_json(&v), json!({"$map": [[1, {"$bytes": "AA=="}]]}));
        let e = decode(&[0xd4, 0x07, 0xc0]).expect("decodes");
        assert_eq!(
            to_json(&e),
            json!({"$ext": 7, "kind": "delta_snapshot", "payload": null})
        );
    }
}
