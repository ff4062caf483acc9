//! `memctl dump --thread T`: the messages of a state as `model_dump()` dictionaries, or with
//! `--raw` the whole decoded checkpoint.
//!
//! A thread's messages are written one by one (decoded and serialized a chunk at a time on
//! all cores) through the streaming JSON writer the read commands share
//! ([`crate::output::dump`], [`crate::output::stream`]).

use std::io::Write;

use anyhow::Result;
use serde_json::{json, Value as Json};

use crate::cli::{DumpArgs, Format, GlobalArgs};
use crate::codec::json::to_json;
use crate::model::checkpoint::StoredMessages;
use crate::output;
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
        let list = crate::read::message_list(&cp, &messages)?;
        return crate::output::dump::write_messages(out, format, list);
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
    let deltas = if !crate::read::needs_replay(&cp, &StoredMessages::Absent) {
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
                Ok((d.channel.clone(), crate::output::dump::delta_json(d, value)))
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
