//! `dump --thread T`: the messages of a state as `model_dump()` dictionaries (streamed by
//! the caller from the stored list the job reads), or with `--raw` the whole decoded
//! checkpoint as one JSON document.

use anyhow::Result;
use serde_json::{json, Value as Json};

use super::{Ctx, Sink};
use crate::codec::json::to_json;
use crate::model::checkpoint::{StoredList, StoredMessages};
use crate::read::{DeltaValue, LoadedCheckpoint, Origin};

/// Which checkpoint, and how much of it.
#[derive(Debug, Clone, Default)]
pub struct Request {
    /// The thread.
    pub thread: String,
    /// The checkpoint (an id or a prefix; `None`: the latest).
    pub checkpoint: Option<String>,
    /// The whole decoded checkpoint, not only its messages.
    pub raw: bool,
}

/// What `dump` read.
pub enum Report {
    /// The checkpoint read shallow: its messages stay in their stored list ([`Report::list`])
    /// and are decoded as they are written.
    Messages {
        /// The checkpoint.
        cp: Box<LoadedCheckpoint>,
        /// Its message list, stored.
        messages: StoredMessages,
    },
    /// `--raw`: the checkpoint, its metadata, pending writes and DeltaChannels, as JSON.
    Raw(Json),
}

impl Report {
    /// The stored message list of a [`Report::Messages`] (`None`: no messages channel, or a
    /// raw report).
    pub fn list(&self) -> Result<Option<&StoredList>> {
        match self {
            Report::Messages { cp, messages } => crate::read::message_list(cp, messages),
            Report::Raw(_) => Ok(None),
        }
    }
}

/// Reads what `dump` writes of the checkpoint `req` names, in `ctx.ns`.
pub fn run(req: &Request, ctx: &Ctx, _sink: &dyn Sink) -> Result<Report> {
    let store = ctx.open_read_only()?;
    let keys = ctx.keys();
    if !req.raw {
        let (cp, messages, _) = crate::read::load_shallow(
            &*store,
            &keys,
            &req.thread,
            &ctx.ns,
            req.checkpoint.as_deref(),
        )?;
        // An unreadable message list is the error it was before anything was written.
        crate::read::message_list(&cp, &messages)?;
        return Ok(Report::Messages {
            cp: Box::new(cp),
            messages,
        });
    }
    let row =
        crate::read::fetch_checkpoint(&*store, &req.thread, &ctx.ns, req.checkpoint.as_deref())?;
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
    Ok(Report::Raw(doc))
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
