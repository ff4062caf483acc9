//! How `PostgresSaver` (langgraph-checkpoint-postgres 3.2.0) splits a checkpoint, and how
//! memctl puts it back together.
//!
//! A `checkpoints` row holds the checkpoint dict as JSONB with only the primitive channel values
//! (`None`, `str`, `int`, `float`, `bool`) inline; every other value is one `checkpoint_blobs`
//! row per `(channel, version)`, `(type, blob)` as `serde.dumps_typed` made it, shared by every
//! checkpoint whose `channel_versions` names that version. Databases written before mid-2025
//! keep every value in blobs and have `type = 'empty'` rows for channels without a value.
//!
//! [`assemble`] does what `PostgresSaver._load_checkpoint_tuple` does (`{**inline,
//! **blobs}`, `empty` rows skipped) and encodes the result as the msgpack map `SqliteSaver`
//! stores, so every command reads both backends the same way. A plain `msgpack` blob goes in
//! as its stored bytes (checked, not decoded: decoding and re-encoding it gives the same
//! bytes); the other rows are decoded. [`split`] does what `PostgresSaver.put` does with a
//! checkpoint memctl made.

use anyhow::{anyhow, bail, Context, Result};
use serde_json::Value as Json;

use crate::codec::aes::{self, Keyring};
use crate::codec::json::json_to_value;
use crate::codec::lazy;
use crate::codec::msgpack::{self, Value};
use crate::codec::Decoded;

#[cfg(test)]
mod reference;
#[cfg(test)]
mod same_bytes;

/// A `checkpoint_blobs` row.
#[derive(Debug, Clone)]
pub struct BlobRow {
    /// The channel.
    pub channel: String,
    /// The channel version it holds the value of.
    pub version: String,
    /// `dumps_typed`'s type (`msgpack`, `bytes`, `empty`, `msgpack+aes`, …).
    pub type_name: String,
    /// The serialized value (`NULL` for `empty`).
    pub blob: Option<Vec<u8>>,
}

/// The keys of a checkpoint in the order LangGraph's `Checkpoint` dict has them (and so the
/// order `SqliteSaver`'s msgpack has them); other keys follow in stored order.
const KEY_ORDER: [&str; 7] = [
    "v",
    "ts",
    "id",
    "channel_values",
    "channel_versions",
    "versions_seen",
    "updated_channels",
];

/// An assembled checkpoint: the serialization type for [`crate::storage::CheckpointRow::type_name`]
/// and the msgpack bytes.
pub struct Assembled {
    /// `msgpack`, or the type of a blob memctl cannot decode (`msgpack+aes`, `pickle`): the
    /// value is then left out and the type tells the reader why.
    pub type_name: String,
    /// The checkpoint as `SqliteSaver` would store it.
    pub bytes: Vec<u8>,
}

/// Puts a checkpoint together from its JSONB text and the blob rows its `channel_versions`
/// name (other rows are ignored), as `PostgresSaver`'s loader does. Encrypted blob rows are
/// left out (the type says why); see [`assemble_with`] to open them.
pub fn assemble(checkpoint_json: &str, blobs: &[&BlobRow]) -> Result<Assembled> {
    assemble_with(checkpoint_json, blobs, &Keyring::none())
}

/// [`assemble`], opening encrypted blob rows (`msgpack+aes` …, as `EncryptedSerializer`
/// stores each value) with `keys`: the checkpoint is then sealed whole with the same key
/// (`msgpack+aes`), so that it reaches the commands as an encrypted `SqliteSaver` checkpoint
/// does, and what they write from it is encrypted too. Without a key (the variable not set)
/// encrypted values are left out and the type says so, as [`assemble`] does; a refused or
/// wrong key is an error naming the channel (the caller names the checkpoint).
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
    let mut values: Vec<(String, Slot)> = Vec::new();
    if let Some(Json::Object(inline)) = obj.get("channel_values") {
        for (k, v) in inline {
            values.push((k.clone(), Slot::Value(json_to_value(v))));
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
        let value = match spliceable(blob) {
            Some(bytes) => Slot::Bytes(bytes),
            None => match decoded(blob, keys, &mut key, &mut type_name)? {
                Some(v) => Slot::Value(v),
                None => continue,
            },
        };
        match values.iter_mut().find(|(k, _)| *k == blob.channel) {
            Some(slot) => slot.1 = value,
            None => values.push((blob.channel.clone(), value)),
        }
    }
    let bytes = encode_checkpoint(&obj, &values);
    Ok(match key {
        Some(key) if type_name == "msgpack" => {
            let (type_name, bytes) = aes::seal(&key, "msgpack", &bytes);
            Assembled { type_name, bytes }
        }
        _ => Assembled { type_name, bytes },
    })
}

/// A channel value of the assembled checkpoint.
enum Slot<'a> {
    /// A value to encode: inline in the JSONB, or a blob row that was decoded.
    Value(Value),
    /// A plain `msgpack` blob written as it is (see [`spliceable`]).
    Bytes(&'a [u8]),
}

/// The bytes of a blob row that go into the assembled checkpoint as they are: a plain
/// `msgpack` row that is exactly one value [`msgpack::decode`] accepts (checked by
/// [`lazy::check`], which accepts what `decode` accepts and builds nothing). Decoding such a
/// value and encoding it again gives back its bytes (every node keeps the marker it was read
/// with), so the splice is what the decode would give, without the value tree. Every other row
/// is decoded ([`decoded`]): the other types are transformed (`json`, `bytes`, `null`),
/// encrypted rows are opened or left out, and a blob that does not decode gets the decode's
/// error.
fn spliceable(blob: &BlobRow) -> Option<&[u8]> {
    if blob.type_name != "msgpack" {
        return None;
    }
    let bytes = blob.blob.as_deref().unwrap_or_default();
    lazy::check(bytes).ok().map(|()| bytes)
}

/// A blob row's value decoded by its type, opened first with `keys` when it is encrypted (the
/// key it took goes to `key`); `None` when it is left out (a type memctl does not decode, or
/// encrypted without a key), its type then in `type_name`.
fn decoded(
    blob: &BlobRow,
    keys: &Keyring,
    key: &mut Option<std::sync::Arc<aes::AesKey>>,
    type_name: &mut String,
) -> Result<Option<Value>> {
    let stored = blob.blob.as_deref().unwrap_or_default();
    let sealed = aes::split_type(&blob.type_name).1.is_some();
    let opened;
    let (inner, bytes) = if sealed && !keys.is_unset() {
        let what = format!("its '{}' value", blob.channel.escape_debug());
        opened = keys.open(&blob.type_name, stored, &what)?;
        *key = Some(keys.key(&what)?.clone());
        (opened.type_name, &*opened.bytes)
    } else {
        (blob.type_name.as_str(), stored)
    };
    if inner.contains('+') || inner == "pickle" {
        type_name.clone_from(&blob.type_name);
        return Ok(None);
    }
    let value = match crate::codec::decode_typed(inner, bytes).with_context(|| {
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
    };
    Ok(Some(value))
}

/// The checkpoint as the msgpack map `SqliteSaver` stores: the keys in [`KEY_ORDER`] (then the
/// others in stored order), `channel_values` from `values`. What encoding the map built of
/// them gives ([`msgpack::encode`]), spliced values copied in place.
fn encode_checkpoint(obj: &serde_json::Map<String, Json>, values: &[(String, Slot)]) -> Vec<u8> {
    // `None`: the channel values.
    let mut entries: Vec<(&str, Option<&Json>)> = Vec::with_capacity(obj.len() + 1);
    for key in KEY_ORDER {
        if key == "channel_values" {
            entries.push((key, None));
        } else if let Some(v) = obj.get(key) {
            entries.push((key, Some(v)));
        }
    }
    for (k, v) in obj {
        if !KEY_ORDER.contains(&k.as_str()) {
            entries.push((k, Some(v)));
        }
    }
    let spliced: usize = values
        .iter()
        .map(|(_, s)| match s {
            Slot::Bytes(b) => b.len(),
            Slot::Value(_) => 0,
        })
        .sum();
    let mut out = Vec::with_capacity(spliced + 256);
    msgpack::write_map_header(&mut out, entries.len());
    for (k, v) in entries {
        msgpack::encode_into(&mut out, &Value::str(k));
        match v {
            Some(v) => msgpack::encode_into(&mut out, &json_to_value(v)),
            None => {
                msgpack::write_map_header(&mut out, values.len());
                for (channel, slot) in values {
                    msgpack::encode_into(&mut out, &Value::str(channel.as_str()));
                    match slot {
                        Slot::Value(v) => msgpack::encode_into(&mut out, v),
                        Slot::Bytes(b) => out.extend_from_slice(b),
                    }
                }
            }
        }
    }
    out
}

fn unreachable_pickle() -> Result<Value> {
    Err(anyhow!("pickled value: memctl does not unpickle"))
}

/// A checkpoint split as `PostgresSaver.put` splits it.
#[derive(Debug)]
pub struct Split {
    /// The JSONB document: the checkpoint with only primitive channel values.
    pub checkpoint: Json,
    /// `(channel, type, blob)` of every other channel value.
    pub blobs: Vec<(String, &'static str, Vec<u8>)>,
}

/// Splits a msgpack checkpoint (as memctl makes them) into the JSONB document and the blob
/// values, exactly as `PostgresSaver.put` does: `None`/`str`/`int`/`float`/`bool` stay inline,
/// a `_DeltaSnapshot` (ext 7) becomes a blob with `true` inline, everything else is a blob
/// (`dumps_typed`: `bytes` for a byte string, `msgpack` otherwise).
pub fn split(bytes: &[u8]) -> Result<Split> {
    let root = msgpack::decode(bytes).context("the new checkpoint does not decode")?;
    let Some(entries) = root.as_map() else {
        bail!("the new checkpoint is not a map");
    };
    let mut obj = serde_json::Map::new();
    let mut blobs = Vec::new();
    for (k, v) in entries {
        let key = k
            .as_str()
            .ok_or_else(|| anyhow!("the new checkpoint has a key that is not a string"))?;
        if key != "channel_values" {
            obj.insert(
                key.to_owned(),
                plain_json(v).with_context(|| key.to_owned())?,
            );
            continue;
        }
        let mut inline = serde_json::Map::new();
        for (ck, cv) in v.as_map().unwrap_or_default() {
            let channel = ck
                .as_str()
                .ok_or_else(|| anyhow!("a channel name is not a string"))?
                .to_owned();
            match cv {
                Value::Nil | Value::Bool(_) | Value::Int(_) | Value::F32(_) | Value::F64(_) => {
                    inline.insert(channel, plain_json(cv)?);
                }
                Value::Str(s) => {
                    inline.insert(channel, Json::String(s.text.clone()));
                }
                Value::Bin(b) => blobs.push((channel, "bytes", b.bytes.clone())),
                Value::Ext(e) if e.code == crate::codec::ext::DELTA_SNAPSHOT => {
                    inline.insert(channel.clone(), Json::Bool(true));
                    blobs.push((channel, "msgpack", msgpack::encode(cv)));
                }
                _ => blobs.push((channel, "msgpack", msgpack::encode(cv))),
            }
        }
        obj.insert(key.to_owned(), Json::Object(inline));
    }
    Ok(Split {
        checkpoint: Json::Object(obj),
        blobs,
    })
}

/// A msgpack value that JSON can hold as it is (what `json.dumps` makes of the checkpoint
/// dict outside its channel values).
pub fn plain_json(v: &Value) -> Result<Json> {
    Ok(match v {
        Value::Nil => Json::Null,
        Value::Bool(b) => Json::Bool(*b),
        Value::Int(i) => {
            if i.neg < 0 {
                Json::from(i.neg)
            } else {
                Json::from(i.pos)
            }
        }
        Value::F32(f) => float(f64::from(*f))?,
        Value::F64(f) => float(*f)?,
        Value::Str(s) => Json::String(s.text.clone()),
        Value::Array(a) => Json::Array(a.items.iter().map(plain_json).collect::<Result<_>>()?),
        Value::Map(m) => {
            let mut obj = serde_json::Map::new();
            for (k, v) in &m.entries {
                let k = k
                    .as_str()
                    .ok_or_else(|| anyhow!("a map key is not a string: JSONB cannot hold it"))?;
                obj.insert(k.to_owned(), plain_json(v)?);
            }
            Json::Object(obj)
        }
        Value::Raw(r) => plain_json(&msgpack::decode(r.bytes())?)?,
        Value::Bin(_) | Value::Ext(_) => {
            bail!("a byte string or typed object outside channel_values: JSONB cannot hold it")
        }
    })
}

fn float(f: f64) -> Result<Json> {
    serde_json::Number::from_f64(f)
        .map(Json::Number)
        .ok_or_else(|| anyhow!("{f} is not a number JSON can hold"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn row(channel: &str, version: &str, type_name: &str, blob: &[u8]) -> BlobRow {
        BlobRow {
            channel: channel.into(),
            version: version.into(),
            type_name: type_name.into(),
            blob: Some(blob.to_vec()),
        }
    }

    #[test]
    fn assembles_inline_values_and_referenced_blobs_only() {
        let cp = json!({
            "v": 4, "id": "x", "ts": "t",
            "channel_values": {"n": 1, "topic": "x", "d": true},
            "channel_versions": {"messages": "02.1", "n": "02.1", "topic": "01.1", "d": "03.1", "gone": "01.2"},
            "versions_seen": {}, "updated_channels": null
        })
        .to_string();
        let messages = row("messages", "02.1", "msgpack", &[0x91, 0x01]);
        let older = row("messages", "01.1", "msgpack", &[0x90]);
        let delta = row("d", "03.1", "msgpack", &[0xd4, 0x07, 0xc0]);
        let empty = BlobRow {
            channel: "gone".into(),
            version: "01.2".into(),
            type_name: "empty".into(),
            blob: None,
        };
        let a = assemble(&cp, &[&messages, &older, &delta, &empty]).expect("assembles");
        assert_eq!(a.type_name, "msgpack");
        let v = msgpack::decode(&a.bytes).expect("decodes");
        let keys: Vec<_> = v
            .as_map()
            .expect("map")
            .iter()
            .filter_map(|(k, _)| k.as_str())
            .collect();
        assert_eq!(
            keys,
            [
                "v",
                "ts",
                "id",
                "channel_values",
                "channel_versions",
                "versions_seen",
                "updated_channels"
            ]
        );
        let values = v.get("channel_values").expect("values");
        assert_eq!(values.get("n").and_then(Value::as_i64), Some(1));
        assert_eq!(
            values.get("messages").map(msgpack::encode),
            Some(vec![0x91, 0x01])
        );
        assert!(
            values.get("d").and_then(Value::as_ext).is_some(),
            "blob wins"
        );
        assert!(values.get("gone").is_none(), "empty rows are skipped");
    }

    #[test]
    fn split_is_what_put_stores_and_assemble_reads_it_back() {
        let cp = json!({
            "v": 4, "ts": "t", "id": "x",
            "channel_values": {"messages": [{"a": 1}], "n": 2, "s": "x", "f": 1.5, "none": null},
            "channel_versions": {"messages": "1", "n": "1", "s": "1", "f": "1", "none": "1"},
            "versions_seen": {"__input__": {}}, "updated_channels": ["n"]
        });
        let bytes = msgpack::encode(&json_to_value(&cp));
        let s = split(&bytes).expect("splits");
        assert_eq!(
            s.checkpoint["channel_values"],
            json!({"n": 2, "s": "x", "f": 1.5, "none": null})
        );
        assert_eq!(s.blobs.len(), 1);
        assert_eq!(s.blobs[0].0, "messages");
        let blob = row("messages", "1", s.blobs[0].1, &s.blobs[0].2);
        let back = assemble(&s.checkpoint.to_string(), &[&blob]).expect("assembles");
        let back = crate::codec::json::to_json(&msgpack::decode(&back.bytes).expect("decodes"));
        assert_eq!(back["channel_values"]["messages"], json!([{"a": 1}]));
        assert_eq!(back["channel_values"]["f"], json!(1.5));
    }

    #[test]
    fn encrypted_blobs_open_with_the_key_and_the_checkpoint_is_sealed_whole() {
        let key = || aes::AesKey::new(zeroize::Zeroizing::new(b"0123456789abcdef".to_vec()));
        let keys = Keyring::with_key("K", key().expect("key"));
        let cp =
            json!({"v": 4, "channel_values": {"n": 1}, "channel_versions": {"m": "1", "n": "1"}})
                .to_string();
        let (t, sealed) = aes::seal(&key().expect("key"), "msgpack", &[0x91, 0x01]);
        let enc = row("m", "1", &t, &sealed);
        let a = assemble_with(&cp, &[&enc], &keys).expect("assembles");
        assert_eq!(a.type_name, "msgpack+aes");
        let opened = keys.open(&a.type_name, &a.bytes, "x").expect("opens");
        let v = msgpack::decode(&opened.bytes).expect("decodes");
        let values = v.get("channel_values").expect("values");
        assert_eq!(values.get("m").map(msgpack::encode), Some(vec![0x91, 0x01]));
        assert_eq!(values.get("n").and_then(Value::as_i64), Some(1));
        let other = Keyring::with_key(
            "K",
            aes::AesKey::new(zeroize::Zeroizing::new(b"fedcba9876543210".to_vec())).expect("key"),
        );
        let e = assemble_with(&cp, &[&enc], &other)
            .err()
            .expect("wrong key");
        assert!(format!("{e:#}").contains("does not decrypt"), "{e:#}");
    }

    #[test]
    fn encrypted_blobs_give_their_type() {
        let cp = json!({"v": 4, "channel_values": {}, "channel_versions": {"m": "1"}}).to_string();
        let enc = row("m", "1", "msgpack+aes", b"xxxx");
        assert_eq!(
            assemble(&cp, &[&enc]).expect("assembles").type_name,
            "msgpack+aes"
        );
    }
}
