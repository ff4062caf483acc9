//! The `(type, blob)` envelope that `SqliteSaver` stores in its `type` column.

use anyhow::{bail, Context, Result};

use super::aes::Keyring;
use super::msgpack::{self, Value};

/// A blob decoded according to its `type` column.
#[derive(Debug, Clone)]
pub enum Decoded {
    /// `msgpack`: the normal case.
    Msgpack(Value),
    /// `json`: the legacy LangChain-serialized JSON (old serializer fallback).
    Json(serde_json::Value),
    /// `null`: Python `None` (the blob is empty).
    Null,
    /// `bytes`: raw bytes.
    Bytes(Vec<u8>),
    /// `bytearray`: raw bytes.
    ByteArray(Vec<u8>),
    /// `pickle`: kept opaque; memctl never unpickles.
    Pickle(Vec<u8>),
}

impl Decoded {
    /// The msgpack value, if this blob was msgpack.
    pub fn as_msgpack(&self) -> Option<&Value> {
        match self {
            Decoded::Msgpack(v) => Some(v),
            _ => None,
        }
    }

    /// A JSON rendering of this blob (see [`crate::codec::json`]).
    pub fn to_json(&self) -> serde_json::Value {
        use base64::Engine;
        let b64 = |b: &[u8]| base64::engine::general_purpose::STANDARD.encode(b);
        match self {
            Decoded::Msgpack(v) => super::json::to_json(v),
            Decoded::Json(j) => j.clone(),
            Decoded::Null => serde_json::Value::Null,
            Decoded::Bytes(b) | Decoded::ByteArray(b) => serde_json::json!({"$bytes": b64(b)}),
            Decoded::Pickle(b) => serde_json::json!({
                "$pickle": b64(b),
                "note": "pickled value: memctl does not unpickle",
            }),
        }
    }
}

/// The `type` column values memctl decodes (the serializers of `JsonPlusSerializer.dumps_typed`
/// and its fallbacks), in the order errors and `memctl --version` list them.
pub const TYPES: [&str; 6] = ["msgpack", "json", "null", "bytes", "bytearray", "pickle"];

/// Decodes a blob by its `type` column value.
///
/// Encrypted blobs (`msgpack+aes` …) must be opened first ([`decode_opened`]); here they and
/// unknown types are errors that say what is missing.
pub fn decode_typed(type_name: &str, blob: &[u8]) -> Result<Decoded> {
    if let Some((inner, cipher)) = type_name.split_once('+') {
        bail!(
            "value is encrypted (type '{type_name}': {inner} encrypted with '{cipher}'); \
             it must be decrypted with the app's key (LANGGRAPH_AES_KEY) before it is decoded"
        );
    }
    Ok(match type_name {
        "msgpack" => Decoded::Msgpack(msgpack::decode(blob).context("corrupt msgpack blob")?),
        "json" => Decoded::Json(parse_legacy_json(blob)?),
        "null" => Decoded::Null,
        "bytes" => Decoded::Bytes(blob.to_vec()),
        "bytearray" => Decoded::ByteArray(blob.to_vec()),
        "pickle" => Decoded::Pickle(blob.to_vec()),
        "" => bail!("value has an empty type tag"),
        other => bail!(
            "unknown serialization type '{}' (known: {})",
            other.escape_debug(),
            TYPES.join(", ")
        ),
    })
}

/// Decodes a stored value the way LangGraph's `EncryptedSerializer.loads_typed` does: an
/// encrypted one (`msgpack+aes` …) decrypted with `keys` first, a plain one as it is. `what`
/// names the value in errors ("the 'messages' write of task … on checkpoint …").
pub fn decode_opened(keys: &Keyring, type_name: &str, blob: &[u8], what: &str) -> Result<Decoded> {
    let opened = keys.open(type_name, blob, what)?;
    decode_typed(opened.type_name, &opened.bytes)
}

/// Parses the legacy `json` serialization.
///
/// Python's `json` allows lone UTF-16 surrogates (`"\ud800"`), which the old serializer writes
/// exactly when msgpack could not encode the string; JSON parsers in Rust reject them. They are
/// replaced with U+FFFD, which is what the current LangGraph serializer does on write.
fn parse_legacy_json(blob: &[u8]) -> Result<serde_json::Value> {
    let text = std::str::from_utf8(blob).context("corrupt json blob: not UTF-8")?;
    match serde_json::from_str(text) {
        Ok(v) => Ok(v),
        Err(first) => {
            let fixed = replace_lone_surrogates(text);
            serde_json::from_str(&fixed)
                .map_err(|_| first)
                .context("corrupt json blob")
        }
    }
}

/// Replaces `\uD800`–`\uDFFF` escapes that are not part of a valid pair with `\uFFFD`.
fn replace_lone_surrogates(text: &str) -> String {
    let b = text.as_bytes();
    let hex_at = |i: usize| -> Option<u16> {
        if i + 6 <= b.len() && b[i] == b'\\' && b[i + 1] == b'u' {
            u16::from_str_radix(std::str::from_utf8(&b[i + 2..i + 6]).ok()?, 16).ok()
        } else {
            None
        }
    };
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let mut last = 0;
    while i < b.len() {
        if b[i] == b'\\' {
            if let Some(u) = hex_at(i) {
                let is_high = (0xD800..0xDC00).contains(&u);
                let is_low = (0xDC00..0xE000).contains(&u);
                let paired =
                    is_high && hex_at(i + 6).is_some_and(|n| (0xDC00..0xE000).contains(&n));
                if paired {
                    i += 12;
                    continue;
                }
                if is_high || is_low {
                    out.push_str(&text[last..i]);
                    out.push_str("\\ufffd");
                    i += 6;
                    last = i;
                    continue;
                }
                i += 6;
                continue;
            }
            i += 2; // any other escape: skip the escaped character
            continue;
        }
        i += 1;
    }
    out.push_str(&text[last..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encrypted_blob_names_the_cipher() {
        let err = decode_typed("msgpack+aes", b"xx").expect_err("must fail");
        assert!(err.to_string().contains("encrypted"), "{err}");
        assert!(err.to_string().contains("aes"), "{err}");
    }

    #[test]
    fn unknown_type_is_an_error() {
        let err = decode_typed("yaml", b"").expect_err("must fail");
        assert!(err
            .to_string()
            .contains("unknown serialization type 'yaml'"));
    }

    #[test]
    fn lone_surrogates_become_replacement_chars() {
        let v = parse_legacy_json(br#"{"a": "x\ud800y", "b": "\ud83d\ude00"}"#).expect("parses");
        assert_eq!(v["a"], "x\u{fffd}y");
        assert_eq!(v["b"], "😀");
    }
}
