//! The assembly as it was before plain `msgpack` blobs were spliced in as they are (every
//! blob decoded into a value tree and the whole checkpoint re-encoded): kept, verbatim, as the
//! reference the tests hold [`super::assemble_with`] to, byte for byte.

use anyhow::{anyhow, bail, Context, Result};
use serde_json::Value as Json;

use super::{Assembled, BlobRow, KEY_ORDER};
use crate::codec::aes::{self, Keyring};
use crate::codec::json::json_to_value;
use crate::codec::msgpack::{self, Value};
use crate::codec::Decoded;

/// The checkpoint assembled as `assemble_with` did before the splice (see the module docs).
pub fn assemble_with(
    checkpoint_json: &str,
    blobs: &[&BlobRow],
    keys: &Keyring,
) -> Result<Assembled> {
    let mut key = None;
    let root: Json =
        serde_json::from_str(checkpoint_json).context("the checkpoint JSONB does not parse")?;
    let Json::Object(obj) = root else {
        bail!("the checkpoint JSONB is not an object");
    };
    // LangGraph's loader iterates the versions: anything but an object (or none) is damage.
    let versions = match obj.get("channel_versions") {
        None | Some(Json::Null) => None,
        Some(Json::Object(v)) => Some(v),
        Some(_) => bail!("the checkpoint JSONB's channel_versions is not an object"),
    };
    let mut type_name = "msgpack".to_owned();
    let mut values: Vec<(Value, Value)> = Vec::new();
    if let Some(Json::Object(inline)) = obj.get("channel_values") {
        for (k, v) in inline {
            values.push((Value::str(k.clone()), json_to_value(v)));
        }
    }
    for blob in blobs {
        let referenced = versions
            .and_then(|v| v.get(&blob.channel))
            .and_then(Json::as_str)
            == Some(blob.version.as_str());
        if !referenced || blob.type_name == "empty" {
            continue;
        }
        let stored = blob.blob.as_deref().unwrap_or_default();
        let sealed = aes::split_type(&blob.type_name).1.is_some();
        let opened;
        let (inner, bytes) = if sealed && !keys.is_unset() {
            let what = format!("its '{}' value", blob.channel.escape_debug());
            opened = keys.open(&blob.type_name, stored, &what)?;
            key = Some(keys.key(&what)?.clone());
            (opened.type_name, &*opened.bytes)
        } else {
            (blob.type_name.as_str(), stored)
        };
        let value = if inner.contains('+') || inner == "pickle" {
            type_name = blob.type_name.clone();
            continue;
        } else {
            match crate::codec::decode_typed(inner, bytes).with_context(|| {
                format!(
                    "blob of channel '{}' version {}",
                    blob.channel.escape_debug(),
                    blob.version
                )
            })? {
                Decoded::Msgpack(v) => v,
                Decoded::Json(j) => json_to_value(&j),
                Decoded::Null => Value::Nil,
                Decoded::Bytes(b) | Decoded::ByteArray(b) => Value::Bin(msgpack::Bin {
                    bytes: b,
                    marker: None,
                }),
                Decoded::Pickle(_) => unreachable_pickle()?,
            }
        };
        match values
            .iter_mut()
            .find(|(k, _)| k.as_str() == Some(&blob.channel))
        {
            Some(slot) => slot.1 = value,
            None => values.push((Value::str(blob.channel.clone()), value)),
        }
    }
    let mut entries: Vec<(Value, Value)> = Vec::with_capacity(obj.len() + 1);
    for key in KEY_ORDER {
        if key == "channel_values" {
            entries.push((Value::str(key), Value::map(std::mem::take(&mut values))));
        } else if let Some(v) = obj.get(key) {
            entries.push((Value::str(key), json_to_value(v)));
        }
    }
    for (k, v) in &obj {
        if !KEY_ORDER.contains(&k.as_str()) {
            entries.push((Value::str(k.clone()), json_to_value(v)));
        }
    }
    let bytes = msgpack::encode(&Value::map(entries));
    Ok(match key {
        Some(key) if type_name == "msgpack" => {
            let (type_name, bytes) = aes::seal(&key, "msgpack", &bytes);
            Assembled { type_name, bytes }
        }
        _ => Assembled { type_name, bytes },
    })
}

fn unreachable_pickle() -> Result<Value> {
    Err(anyhow!("pickled value: memctl does not unpickle"))
}
