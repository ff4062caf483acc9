//! A thread's history as `get_state_history` shows it, beside the checkpoints themselves:
//! each checkpoint's message count (a DeltaChannel's rebuilt in one pass over the history)
//! and the subgraph namespaces that ran during each step.

use std::collections::{BTreeMap, HashMap};

use anyhow::{Context, Result};
use serde_json::Value as Json;

use crate::codec::aes::Keyring;
use crate::model::checkpoint::StoredMessages;
use crate::model::Metadata;
use crate::storage::CheckpointStore;

use super::LoadedCheckpoint;

/// The message count of every checkpoint in `rows` (one namespace of a thread) as
/// `get_state_history` shows it, when the thread's messages are a DeltaChannel (`None`
/// otherwise): one pass over the checkpoints ([`super::replay::fold_messages`]).
pub fn delta_counts(
    store: &dyn CheckpointStore,
    keys: &Keyring,
    rows: &[(LoadedCheckpoint, StoredMessages)],
) -> Result<Option<HashMap<String, Result<usize>>>> {
    let mut counts = HashMap::with_capacity(rows.len());
    let is_delta = super::replay::fold_messages(store, keys, rows, &mut |i, value| {
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
pub fn child_namespaces(
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
