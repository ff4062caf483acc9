//! LangGraph's msgpack extension codes (`langgraph.checkpoint.serde.jsonplus`).
//!
//! Every custom object is an ext value whose payload is another msgpack document, usually an
//! array `[module, name, argument(s), (method)]`.

use super::msgpack::{Ext, Value};

/// `[module, name, arg]`: `cls(arg)` — UUID, Decimal, set, Enum…
pub const CONSTRUCTOR_SINGLE_ARG: i8 = 0;
/// `[module, name, [args…]]`: `cls(*args)` — `Send`, date, timedelta…
pub const CONSTRUCTOR_POS_ARGS: i8 = 1;
/// `[module, name, {kwargs}]`: `cls(**kwargs)` — dataclasses, `Interrupt`, `Command`…
pub const CONSTRUCTOR_KW_ARGS: i8 = 2;
/// `[module, name, arg, method]`: `cls.method(arg)` — datetime.
pub const METHOD_SINGLE_ARG: i8 = 3;
/// `[module, name, dict]`: a pydantic v1 model.
pub const PYDANTIC_V1: i8 = 4;
/// `[module, name, model_dump, method]`: a pydantic v2 model — every LangChain message.
pub const PYDANTIC_V2: i8 = 5;
/// `[dtype, shape, order, buffer]`: a numpy array.
pub const NUMPY_ARRAY: i8 = 6;
/// The value itself: a DeltaChannel snapshot (langgraph-checkpoint 4.x).
pub const DELTA_SNAPSHOT: i8 = 7;

/// A short name for an extension code, used in the JSON rendering.
pub fn code_name(code: i8) -> &'static str {
    match code {
        CONSTRUCTOR_SINGLE_ARG => "constructor_single_arg",
        CONSTRUCTOR_POS_ARGS => "constructor_pos_args",
        CONSTRUCTOR_KW_ARGS => "constructor_kw_args",
        METHOD_SINGLE_ARG => "method_single_arg",
        PYDANTIC_V1 => "pydantic_v1",
        PYDANTIC_V2 => "pydantic_v2",
        NUMPY_ARRAY => "numpy_array",
        DELTA_SNAPSHOT => "delta_snapshot",
        _ => "unknown",
    }
}

/// The `(module, name)` an ext payload names, for codes 0–5.
pub fn type_path(e: &Ext) -> Option<(&str, &str)> {
    if !(CONSTRUCTOR_SINGLE_ARG..=PYDANTIC_V2).contains(&e.code) {
        return None;
    }
    let items = e.payload.as_array()?;
    Some((items.first()?.as_str()?, items.get(1)?.as_str()?))
}

/// The argument part of a code 0–5 payload (`payload[2]`).
pub fn argument(e: &Ext) -> Option<&Value> {
    if !(CONSTRUCTOR_SINGLE_ARG..=PYDANTIC_V2).contains(&e.code) {
        return None;
    }
    e.payload.as_array()?.get(2)
}

/// True when `v` is an ext object of class `module.name`.
pub fn is_object(v: &Value, module: &str, name: &str) -> bool {
    v.as_ext()
        .and_then(type_path)
        .is_some_and(|(m, n)| m == module && n == name)
}

/// A short human form of common ext objects (datetime, UUID, Send…), for display only.
pub fn brief(e: &Ext) -> Option<String> {
    let (module, name) = type_path(e)?;
    let arg = argument(e)?;
    match (module, name) {
        ("datetime", "datetime") => arg.as_str().map(str::to_owned),
        ("uuid", "UUID") => arg.as_str().map(|hex| {
            // Sliced by byte offsets: only when it is 32 hex digits (a stored string of 32
            // bytes may hold multi-byte characters).
            if hex.len() == 32 && hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                format!(
                    "{}-{}-{}-{}-{}",
                    &hex[0..8],
                    &hex[8..12],
                    &hex[12..16],
                    &hex[16..20],
                    &hex[20..32]
                )
            } else {
                hex.to_owned()
            }
        }),
        ("langgraph.types", "Send") => {
            let node = arg.as_array()?.first()?.as_str()?;
            Some(format!("Send(node={node:?})"))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn uuid(arg: &str) -> Ext {
        Ext {
            code: CONSTRUCTOR_SINGLE_ARG,
            payload: Value::array(vec![
                Value::str("uuid"),
                Value::str("UUID"),
                Value::str(arg),
            ]),
            marker: None,
        }
    }

    #[test]
    fn uuids_are_dashed_only_when_they_are_hex() {
        assert_eq!(
            brief(&uuid("0123456789abcdef0123456789abcdef")).as_deref(),
            Some("01234567-89ab-cdef-0123-456789abcdef")
        );
        // 32 bytes that are not 32 hex digits (a corrupt or hostile blob): sliced at byte 8
        // this panicked inside '€'; it is shown as stored.
        let odd = format!("{}ab", "€".repeat(10));
        assert_eq!(odd.len(), 32);
        assert_eq!(brief(&uuid(&odd)), Some(odd.clone()));
    }
}
