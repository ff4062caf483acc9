//! `memctl history --thread T`: a thread's checkpoints, newest first.

use std::collections::{BTreeMap, HashMap};
use std::io::Write;

use anyhow::{Context, Result};
use serde_json::{json, Value as Json};

use crate::cli::{Format, GlobalArgs, HistoryArgs};
use crate::codec::aes::Keyring;
use crate::model::checkpoint::StoredMessages;
use crate::model::Metadata;

use crate::output::{self, human, table};
use crate::read::LoadedCheckpoint;
use crate::storage::CheckpointStore;

/// Runs `history`.
pub fn run(g: &GlobalArgs, args: &HistoryArgs, out: &mut dyn Write) -> Result<()> {
    let store = super::open_read_only(g)?;
    let keys = super::keys(g);
    let thread = &args.thread.thread;
    crate::read::require_thread(&*store, thread, &g.ns)?;
    let writes = store.write_counts(thread, &g.ns)?;
    let children = child_namespaces(&*store, thread, &g.ns)?;
    let mut records = Vec::new();
    let rows = store.checkpoints(thread, &g.ns)?;
    let limit = args.limit.unwrap_or(usize::MAX);
    // --before: ids that sort before the one given (LangGraph's `checkpoint_id < ?`).
    let before = args
        .before
        .as_deref()
        .map(|id| crate::read::resolve_checkpoint_id(&*store, thread, &g.ns, id))
        .transpose()?;
    // A DeltaChannel's messages are rebuilt for every checkpoint at once (each continues from
    // its parent's): that needs every checkpoint of the namespace, listed or not.
    let decoded = rows
        .into_iter()
        .map(|row| crate::read::decode_shallow(&keys, row))
        .collect::<Result<Vec<_>>>()?;
    let mut replayed = delta_counts(&*store, &keys, &decoded)?;
    // --source and --before select as `get_state_history(filter=, before=)` does, then
    // --limit counts what is left.
    let selected = decoded.into_iter().filter(|(cp, _)| {
        before
            .as_deref()
            .is_none_or(|b| cp.row.checkpoint_id.as_str() < b)
            && args
                .source
                .as_deref()
                .is_none_or(|src| cp.metadata.source() == Some(src))
    });
    for (cp, messages) in selected.take(limit) {
        // Messages are counted in place.
        let id = cp.row.checkpoint_id.clone();
        let count = match (
            replayed.as_mut().and_then(|r| r.remove(&id)),
            messages.list(),
        ) {
            (Some(n), _) => Some(n?),
            (None, Some(list)) => Some(list.spans()?.len()),
            (None, None) => None,
        };
        records.push(json!({
            "checkpoint_id": id,
            "parent_checkpoint_id": cp.row.parent_checkpoint_id,
            "step": cp.metadata.step(),
            "source": cp.metadata.source(),
            "ts": cp.checkpoint.ts(),
            "messages": count,
            "pending_writes": writes.get(&id).copied().unwrap_or(0),
            "namespaces": children.get(&id).cloned().unwrap_or_default(),
        }));
    }
    match output::resolve_format(g.format) {
        Format::Table => {
            let mut t = table::new_table(&[
                "checkpoint_id",
                "parent",
                "step",
                "source",
                "ts",
                "messages",
                "writes",
                "namespaces",
            ]);
            table::align_right(&mut t, &[2, 5, 6]);
            let cell = |v: &Json| match v {
                Json::Null => "-".to_owned(),
                Json::String(s) => human::preview(s, 60),
                Json::Array(items) => human::preview(
                    &items
                        .iter()
                        .filter_map(Json::as_str)
                        .collect::<Vec<_>>()
                        .join(", "),
                    40,
                ),
                other => other.to_string(),
            };
            for r in &records {
                let ts = r["ts"].as_str().and_then(human::parse_ts);
                let id = |v: &Json| v.as_str().map_or("-".into(), human::id);
                t.add_row(vec![
                    id(&r["checkpoint_id"]),
                    id(&r["parent_checkpoint_id"]),
                    cell(&r["step"]),
                    cell(&r["source"]),
                    ts.as_ref().map_or("-".into(), human::utc),
                    cell(&r["messages"]),
                    cell(&r["pending_writes"]),
                    cell(&r["namespaces"]),
                ]);
            }
            writeln!(out, "{}", table::render(&t))?;
        }
        format => output::write_records(out, format, &records)?,
    }
    Ok(())
}

/// The message count of every checkpoint in `rows` (one namespace of a thread) as
/// `get_state_history` shows it, when the thread's messages are a DeltaChannel (`None`
/// otherwise): one pass over the checkpoints ([`crate::read::replay::fold_messages`]).
fn delta_counts(
    store: &dyn CheckpointStore,
    keys: &Keyring,
    rows: &[(LoadedCheckpoint, StoredMessages)],
) -> Result<Option<HashMap<String, Result<usize>>>> {
    let mut counts = HashMap::with_capacity(rows.len());
    let is_delta = crate::read::replay::fold_messages(store, keys, rows, &mut |i, value| {
        let n = value.and_then(|v| {
            v.count()
                .ok_or_else(|| anyhow::anyhow!("the rebuilt 'messages' value is not a list"))
        });
        let id = &rows[i].0.row.checkpoint_id;
        counts.insert(id.clone(), n.with_context(|| format!("checkpoint {id}")));
    })?;
    Ok(is_delta.then_some(counts))
}

/// For each checkpoint of `ns`, the child namespaces whose checkpoints name it as parent
/// (`metadata.parents[ns]`), i.e. the subgraphs that ran during that step.
fn child_namespaces(
    store: &dyn CheckpointStore,
    thread: &str,
    ns: &str,
) -> Result<BTreeMap<String, Vec<String>>> {
    let mut map: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for child in store.namespaces(thread)? {
        if child == ns {
            continue;
        }
        for (_, md) in store.metadata(thread, &child)? {
            let Ok(md) = Metadata::parse(md.as_deref()) else {
                continue;
            };
            let parent = md
                .fields
                .get("parents")
                .and_then(|p| p.get(ns))
                .and_then(Json::as_str);
            if let Some(parent) = parent {
                let list = map.entry(parent.to_owned()).or_default();
                if !list.contains(&child) {
                    list.push(child.clone());
                }
            }
        }
    }
    Ok(map)
}
