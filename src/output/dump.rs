//! `dump`'s JSON: the messages of a state as `model_dump()` dictionaries, streamed (decoded
//! and serialized a chunk at a time on all cores, never held whole), and what `dump --raw`
//! says of each DeltaChannel.

use std::io::Write;
use std::ops::Range;

use anyhow::Result;
use serde_json::{json, Value as Json};

use super::stream::{element_bytes, placeholder, write_streamed};
use super::Format;
use crate::codec::json::to_json;
use crate::model::checkpoint::StoredList;
use crate::read::{DeltaValue, Origin};

/// Writes the messages of `list` (none: the state has no messages channel) as `dump` does:
/// a JSON array, or one object per line.
pub fn write_messages(
    out: &mut dyn Write,
    format: Format,
    list: Option<&StoredList>,
) -> Result<()> {
    let Some(list) = list else {
        return super::write_records::<Json>(out, format, &[]);
    };
    let spans = list.spans()?;
    let elements = dumps(list, &spans, format);
    if format == Format::Jsonl {
        for element in elements {
            out.write_all(&element?)?;
            out.write_all(b"\n")?;
        }
        return Ok(());
    }
    write_streamed(out, format, &Json::String(placeholder(0)), vec![elements])
}

/// What `dump --raw` says of a DeltaChannel: its reducer, where its value came from (the
/// checkpoint that seeded it and how many writes were replayed), and the value `get_state`
/// shows (`value`); for a reducer memctl does not know, the seed and the writes instead.
pub fn delta_json(d: &DeltaValue, value: Json) -> Json {
    let mut j = json!({"reducer": d.reducer.name()});
    match &d.origin {
        Origin::Stored(snapshot) => {
            j["stored"] = json!(if *snapshot { "snapshot" } else { "plain" });
        }
        Origin::Replayed { seed, writes } => {
            j["seed"] = match seed {
                Some((id, snapshot)) => json!({
                    "checkpoint_id": id,
                    "kind": if *snapshot { "snapshot" } else { "plain" },
                }),
                None => Json::Null,
            };
            j["writes_replayed"] = json!(writes);
        }
        Origin::Unwritten => j["stored"] = json!("never written"),
    }
    if d.own_writes > 0 {
        j["own_input_writes"] = json!(d.own_writes);
    }
    j["value"] = value;
    if let Some(h) = &d.unreplayed {
        j["seed_value"] = h.seed.as_ref().map_or(Json::Null, |s| to_json(&s.value));
        j["writes"] = h
            .writes
            .iter()
            .map(|(id, v)| json!({"checkpoint_id": id, "value": to_json(v)}))
            .collect();
    }
    if let Some(n) = d.note() {
        j["note"] = json!(n);
    }
    j
}

/// Every message of `list` at `spans` as its `model_dump()` dictionary, serialized for
/// `format`, in order.
pub fn dumps<'a>(
    list: &'a StoredList,
    spans: &'a [Range<usize>],
    format: Format,
) -> impl Iterator<Item = Result<Vec<u8>>> + 'a {
    crate::par::par_in_order(spans.len(), move |i| {
        let m = list.message(i, &spans[i])?;
        element_bytes(format, &Json::Object(m.fields))
    })
}
