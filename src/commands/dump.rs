//! `memctl dump --thread T`: the messages of a state as `model_dump()` dictionaries, or with
//! `--raw` the whole decoded checkpoint.
//!
//! A thread's messages are written one by one (decoded and serialized a chunk at a time on
//! all cores) through the streaming JSON writer the read commands share
//! ([`crate::output::stream`]).

use std::io::Write;
use std::ops::Range;

use anyhow::Result;
use serde_json::{json, Value as Json};

use crate::cli::{DumpArgs, Format, GlobalArgs};
use crate::codec::json::to_json;
use crate::model::checkpoint::StoredList;
use crate::output;
use crate::output::stream::{element_bytes, placeholder, write_streamed};

use crate::read::LoadedCheckpoint;

/// Runs `dump`.
pub fn run(g: &GlobalArgs, args: &DumpArgs, out: &mut dyn Write) -> Result<()> {
    let store = super::open_read_only(g)?;
    let keys = super::keys(g);
    // dump is for machines: JSON unless JSON lines were asked for.
    let format = match g.format {
        Some(Format::Jsonl) => Format::Jsonl,
        _ => Format::Json,
    };
    if !args.raw {
        let (cp, messages, _) = crate::read::load_shallow(
            &*store,
            &keys,
            &args.thread.thread,
            &g.ns,
            args.checkpoint.as_deref(),
        )?;
        let Some(list) = crate::read::message_list(&cp, &messages)? else {
            return output::write_records::<Json>(out, format, &[]);
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
        return write_streamed(out, format, &Json::String(placeholder(0)), vec![elements]);
    }
    let row = crate::read::fetch_checkpoint(
        &*store,
        &args.thread.thread,
        &g.ns,
        args.checkpoint.as_deref(),
    )?;
    // The type as stored (`msgpack+aes` for an encrypted checkpoint), the values decrypted.
    let stored_type = row.type_name.clone();
    let cp = LoadedCheckpoint::open(&keys, row)?;
    // The DeltaChannels: where each value came from, and the value get_state shows.
    let deltas = if crate::read::replay::channels_of(&cp).is_empty() {
        serde_json::Map::new()
    } else {
        let (shallow, messages) = crate::read::load_stored(
            &*store,
            &keys,
            &cp.row.thread_id,
            &cp.row.checkpoint_ns,
            Some(&cp.row.checkpoint_id),
        )?;
        let deltas = crate::read::replay::values(&*store, &keys, &shallow, &messages)?;
        deltas
            .iter()
            .map(|d| {
                let value = match (&d.value, d.channel == crate::model::checkpoint::MESSAGES) {
                    (Some(v), _) => to_json(v),
                    (None, true) => match messages.list() {
                        Some(l) => to_json(&l.value()?),
                        None => Json::Null,
                    },
                    (None, false) => Json::Null,
                };
                Ok((d.channel.clone(), delta_json(d, value)))
            })
            .collect::<Result<serde_json::Map<_, _>>>()?
    };
    let writes = store.writes(
        &cp.row.thread_id,
        &cp.row.checkpoint_ns,
        &cp.row.checkpoint_id,
    )?;
    let writes: Vec<Json> = writes
        .iter()
        .map(|w| {
            let what = format!(
                "the '{}' write of task {} on checkpoint {}",
                w.channel, w.task_id, cp.row.checkpoint_id
            );
            let value = crate::codec::decode_opened(&keys, &w.type_name, &w.value, &what)
                .map(|d| d.to_json())
                .unwrap_or_else(|e| json!({"$error": format!("{e:#}")}));
            json!({
                "task_id": w.task_id, "task_path": w.task_path, "idx": w.idx,
                "channel": w.channel, "type": w.type_name, "value": value,
            })
        })
        .collect();
    let mut doc = json!({
        "thread_id": cp.row.thread_id,
        "checkpoint_ns": cp.row.checkpoint_ns,
        "checkpoint_id": cp.row.checkpoint_id,
        "parent_checkpoint_id": cp.row.parent_checkpoint_id,
        "type": stored_type,
        "checkpoint": to_json(&cp.checkpoint.root),
        "metadata": Json::Object(cp.metadata.fields.clone()),
        "pending_writes": writes,
    });
    if !deltas.is_empty() {
        doc["delta_channels"] = Json::Object(deltas);
    }
    output::write_document(out, format, &doc)
}

/// What `dump --raw` says of a DeltaChannel: its reducer, where its value came from (the
/// checkpoint that seeded it and how many writes were replayed), and the value `get_state`
/// shows (`value`); for a reducer memctl does not know, the seed and the writes instead.
fn delta_json(d: &crate::read::replay::DeltaValue, value: Json) -> Json {
    use crate::read::replay::Origin;
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
