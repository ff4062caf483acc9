//! `memctl dump --thread T`: the messages of a state as `model_dump()` dictionaries, or with
//! `--raw` the whole decoded checkpoint.

use std::io::Write;

use anyhow::Result;
use serde_json::{json, Value as Json};

use crate::cli::{DumpArgs, Format, GlobalArgs};
use crate::codec::json::to_json;
use crate::output;
use crate::storage::CheckpointStore;

/// Runs `dump`.
pub fn run(g: &GlobalArgs, args: &DumpArgs, out: &mut dyn Write) -> Result<()> {
    let store = super::open_read_only(g)?;
    let cp = super::load_checkpoint(
        &store,
        &args.thread.thread,
        &g.ns,
        args.checkpoint.as_deref(),
    )?;
    // dump is for machines: JSON unless JSON lines were asked for.
    let format = match g.format {
        Some(Format::Jsonl) => Format::Jsonl,
        _ => Format::Json,
    };
    if args.raw {
        let writes = store.writes(
            &cp.row.thread_id,
            &cp.row.checkpoint_ns,
            &cp.row.checkpoint_id,
        )?;
        let writes: Vec<Json> = writes
            .iter()
            .map(|w| {
                let value = crate::codec::decode_typed(&w.type_name, &w.value)
                    .map(|d| d.to_json())
                    .unwrap_or_else(|e| json!({"$error": format!("{e:#}")}));
                json!({
                    "task_id": w.task_id, "task_path": w.task_path, "idx": w.idx,
                    "channel": w.channel, "type": w.type_name, "value": value,
                })
            })
            .collect();
        let doc = json!({
            "thread_id": cp.row.thread_id,
            "checkpoint_ns": cp.row.checkpoint_ns,
            "checkpoint_id": cp.row.checkpoint_id,
            "parent_checkpoint_id": cp.row.parent_checkpoint_id,
            "type": cp.row.type_name,
            "checkpoint": to_json(&cp.checkpoint.root),
            "metadata": Json::Object(cp.metadata.fields.clone()),
            "pending_writes": writes,
        });
        return output::write_document(out, format, &doc);
    }
    let messages = cp.message_list()?;
    let records: Vec<Json> = messages
        .into_iter()
        .map(|m| Json::Object(m.fields))
        .collect();
    output::write_records(out, format, &records)
}
