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

/// One checkpoint of a thread's history (`history`'s record, rendered by `output::history`).
#[derive(Debug, Clone, serde::Serialize)]
pub struct HistoryRecord {
    /// Its id.
    pub checkpoint_id: String,
    /// Its parent's id.
    pub parent_checkpoint_id: Option<String>,
    /// `metadata.step`.
    pub step: Option<i64>,
    /// `metadata.source`.
    pub source: Option<String>,
    /// The checkpoint's `ts`.
    pub ts: Option<String>,
    /// Messages of the state as `get_state_history` shows it (`None`: no messages channel).
    pub messages: Option<usize>,
    /// Pending writes stored with it.
    pub pending_writes: usize,
    /// The subgraph namespaces that ran during this step.
    pub namespaces: Vec<String>,
}

/// Which checkpoints of a history are listed, as `get_state_history(filter=, before=,
/// limit=)` selects them.
#[derive(Debug, Clone, Default)]
pub struct Selection<'a> {
    /// Only ids that sort before this one (an id or a prefix of one).
    pub before: Option<&'a str>,
    /// Only checkpoints whose `metadata.source` is this.
    pub source: Option<&'a str>,
    /// At most this many, newest first.
    pub limit: Option<usize>,
}

/// The checkpoints of `thread` in namespace `ns` that `select` lists, newest first, each
/// with its message count (a DeltaChannel's rebuilt over the whole history), pending writes
/// and the subgraphs that ran during its step.
pub fn checkpoints(
    store: &dyn CheckpointStore,
    keys: &Keyring,
    thread: &str,
    ns: &str,
    select: &Selection<'_>,
) -> Result<Vec<HistoryRecord>> {
    super::require_thread(store, thread, ns)?;
    let writes = store.write_counts(thread, ns)?;
    let children = child_namespaces(store, thread, ns)?;
    let before = select
        .before
        .map(|id| super::resolve_checkpoint_id(store, thread, ns, id))
        .transpose()?;
    let record = |cp: LoadedCheckpoint, count: Option<usize>| {
        let id = cp.row.checkpoint_id.clone();
        HistoryRecord {
            parent_checkpoint_id: cp.row.parent_checkpoint_id.clone(),
            step: cp.metadata.step(),
            source: cp.metadata.source().map(str::to_owned),
            ts: cp.checkpoint.ts().map(str::to_owned),
            messages: count,
            pending_writes: writes.get(&id).copied().unwrap_or(0),
            namespaces: children.get(&id).cloned().unwrap_or_default(),
            checkpoint_id: id,
        }
    };
    if let Some(page) = page_alone(store, keys, thread, ns, select, before.as_deref())? {
        let mut records = Vec::with_capacity(page.len());
        for (cp, messages) in page {
            let count = messages
                .list()
                .map(|l| l.spans().map(|s| s.len()))
                .transpose()?;
            records.push(record(cp, count));
        }
        return Ok(records);
    }
    let rows = store.checkpoints(thread, ns)?;
    let limit = select.limit.unwrap_or(usize::MAX);
    let decoded = rows
        .into_iter()
        .map(|row| super::decode_shallow(keys, row))
        .collect::<Result<Vec<_>>>()?;
    let mut replayed = delta_counts(store, keys, &decoded)?;
    let selected = decoded.into_iter().filter(|(cp, _)| {
        before
            .as_deref()
            .is_none_or(|b| cp.row.checkpoint_id.as_str() < b)
            && select
                .source
                .is_none_or(|src| cp.metadata.source() == Some(src))
    });
    let mut records: Vec<HistoryRecord> = Vec::new();
    for (cp, messages) in selected.take(limit) {
        let id = &cp.row.checkpoint_id;
        let count = match (
            replayed.as_mut().and_then(|r| r.remove(id)),
            messages.list(),
        ) {
            (Some(n), _) => Some(n?),
            (None, Some(list)) => Some(list.spans()?.len()),
            (None, None) => None,
        };
        records.push(record(cp, count));
    }
    Ok(records)
}

/// A page of a history (`select.limit` checkpoints) read without the rows outside it: the
/// rows' ids, metadata and sizes first (no blobs), then only the page's blobs, a few at a
/// time. `None` when the history must be read whole: no limit, or a checkpoint of the page
/// whose messages need a DeltaChannel replay (older rows carry them). A plain checkpoint's
/// count is its own stored list, whatever the rows around it.
fn page_alone(
    store: &dyn CheckpointStore,
    keys: &Keyring,
    thread: &str,
    ns: &str,
    select: &Selection<'_>,
    before: Option<&str>,
) -> Result<Option<Vec<(LoadedCheckpoint, StoredMessages)>>> {
    let Some(limit) = select.limit else {
        return Ok(None);
    };
    let mut infos: Vec<_> = store
        .checkpoint_infos(thread)?
        .into_iter()
        .filter(|i| i.ns == ns && before.is_none_or(|b| i.id.as_str() < b))
        .collect();
    // Newest first, in the byte order the savers sort ids by.
    infos.sort_by(|a, b| b.id.cmp(&a.id));
    // A DeltaChannel thread is read whole: its checkpoints' counts come from one replay
    // (even one that stores no messages counts the channel's rebuilt list). Its metadata
    // carries the channels' counters, and its newest checkpoint needs a replay.
    let counters = crate::model::channels::DELTA_COUNTERS.as_bytes();
    let delta_metadata = infos.iter().any(|i| {
        i.metadata
            .as_deref()
            .is_some_and(|md| md.windows(counters.len()).any(|w| w == counters))
    });
    if delta_metadata {
        return Ok(None);
    }
    if let Some(newest) = store.latest_checkpoint_id(thread, ns)? {
        if let Some(row) = store.checkpoint(thread, ns, Some(&newest))? {
            let (cp, messages) = super::decode_shallow(keys, row)?;
            if matches!(messages, StoredMessages::DeltaOmitted)
                || super::needs_replay(&cp, &messages)
            {
                return Ok(None);
            }
        }
    }
    let source_of = |md: Option<&[u8]>| Metadata::parse(md).ok()?.source().map(str::to_owned);
    let ids: Vec<&str> = infos
        .iter()
        .filter(|i| {
            select
                .source
                .is_none_or(|src| source_of(i.metadata.as_deref()).as_deref() == Some(src))
        })
        .take(limit)
        .map(|i| i.id.as_str())
        .collect();
    let mut page = Vec::with_capacity(ids.len());
    for chunk in ids.chunks(16) {
        let keys_of: Vec<(&str, &str, &str)> = chunk.iter().map(|id| (thread, ns, *id)).collect();
        for row in store.checkpoints_at(&keys_of)? {
            // A row deleted since its id was read is not listed.
            let Some(row) = row? else { continue };
            let (cp, messages) = super::decode_shallow(keys, row)?;
            if matches!(messages, StoredMessages::DeltaOmitted)
                || super::needs_replay(&cp, &messages)
            {
                return Ok(None);
            }
            page.push((cp, messages));
        }
    }
    Ok(Some(page))
}

/// The message count of every checkpoint in `rows` (one namespace of a thread) as
/// `get_state_history` shows it, when the thread's messages are a DeltaChannel (`None`
/// otherwise): one pass over the checkpoints ([`super::replay::fold_messages`]).
fn delta_counts(
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

/// A checkpoint of a history page as its row alone gives it, without its blob: what a
/// browser draws at once ([`page_rows`]); the rest comes from [`blob_facts`].
#[derive(Debug, Clone)]
pub struct RowRecord {
    /// Its id.
    pub checkpoint_id: String,
    /// Its parent's id.
    pub parent_checkpoint_id: Option<String>,
    /// `metadata.step`.
    pub step: Option<i64>,
    /// `metadata.source`.
    pub source: Option<String>,
    /// Stored bytes of the row (checkpoint + metadata, the values' lengths: no blob read).
    pub bytes: u64,
    /// Pending writes stored with it.
    pub pending_writes: usize,
    /// The subgraph namespaces that ran during this step.
    pub namespaces: Vec<String>,
}

/// A page of a history from the rows' ids, metadata and sizes only
/// ([`CheckpointStore::checkpoint_infos`]): the `limit` checkpoints of `ns` before `before`
/// (an exact id), newest first, in the order [`checkpoints`] lists them. The second value is
/// true when the thread's metadata carries DeltaChannel counters (its message counts need a
/// replay of the whole history: [`checkpoints`]).
pub fn page_rows(
    store: &dyn CheckpointStore,
    thread: &str,
    ns: &str,
    before: Option<&str>,
    limit: usize,
) -> Result<(Vec<RowRecord>, bool)> {
    super::require_thread(store, thread, ns)?;
    let children = child_namespaces(store, thread, ns)?;
    let mut infos: Vec<_> = store
        .checkpoint_infos(thread)?
        .into_iter()
        .filter(|i| i.ns == ns)
        .collect();
    let counters = crate::model::channels::DELTA_COUNTERS.as_bytes();
    let delta = infos.iter().any(|i| {
        i.metadata
            .as_deref()
            .is_some_and(|md| md.windows(counters.len()).any(|w| w == counters))
    });
    infos.retain(|i| before.is_none_or(|b| i.id.as_str() < b));
    // Newest first, in the byte order the savers sort ids by.
    infos.sort_by(|a, b| b.id.cmp(&a.id));
    infos.truncate(limit);
    let rows = infos
        .into_iter()
        .map(|i| {
            let md = Metadata::parse(i.metadata.as_deref()).ok();
            RowRecord {
                step: md.as_ref().and_then(Metadata::step),
                source: md.as_ref().and_then(|m| m.source().map(str::to_owned)),
                parent_checkpoint_id: i.parent,
                bytes: i.bytes,
                pending_writes: usize::try_from(i.writes).unwrap_or(usize::MAX),
                namespaces: children.get(&i.id).cloned().unwrap_or_default(),
                checkpoint_id: i.id,
            }
        })
        .collect();
    Ok((rows, delta))
}

/// What a checkpoint's blob adds to its row: its `ts`, its message count as `history`
/// gives it, and the approximate tokens of its stored messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlobFacts {
    /// The checkpoint's `ts`.
    pub ts: Option<String>,
    /// Messages of the state (`None`: no messages channel).
    pub messages: Option<usize>,
    /// Approximate tokens of the messages stored in the blob (`None`: none readable there).
    pub tokens: Option<u64>,
}

/// [`BlobFacts`] of checkpoints `ids` of `thread` (namespace `ns`), their blobs read one
/// after the other and dropped; `check_newest` also reads the thread's newest checkpoint, as
/// [`checkpoints`] does before it trusts a page alone. `None` when a checkpoint's messages
/// need a DeltaChannel replay: then the counts are [`checkpoints`]'s. A row deleted since
/// its id was read gives facts of nothing (`ts` and counts `None`).
pub fn blob_facts(
    store: &dyn CheckpointStore,
    keys: &Keyring,
    thread: &str,
    ns: &str,
    ids: &[&str],
    check_newest: bool,
) -> Result<Option<Vec<BlobFacts>>> {
    if check_newest {
        if let Some(newest) = store.latest_checkpoint_id(thread, ns)? {
            if !ids.contains(&newest.as_str()) {
                if let Some(row) = store.checkpoint(thread, ns, Some(&newest))? {
                    let (cp, messages) = super::decode_shallow(keys, row)?;
                    if matches!(messages, StoredMessages::DeltaOmitted)
                        || super::needs_replay(&cp, &messages)
                    {
                        return Ok(None);
                    }
                }
            }
        }
    }
    let keys_of: Vec<(&str, &str, &str)> = ids.iter().map(|id| (thread, ns, *id)).collect();
    let mut out = Vec::with_capacity(ids.len());
    for row in store.checkpoints_at(&keys_of)? {
        let Some(row) = row? else {
            out.push(BlobFacts {
                ts: None,
                messages: None,
                tokens: None,
            });
            continue;
        };
        let tokens =
            crate::tokens::approx::count_checkpoint_blob(&row.checkpoint).and_then(|(_, t)| t);
        let (cp, messages) = super::decode_shallow(keys, row)?;
        if matches!(messages, StoredMessages::DeltaOmitted) || super::needs_replay(&cp, &messages) {
            return Ok(None);
        }
        let count = messages
            .list()
            .map(|l| l.spans().map(|s| s.len()))
            .transpose()?;
        out.push(BlobFacts {
            ts: cp.checkpoint.ts().map(str::to_owned),
            messages: count,
            tokens,
        });
    }
    Ok(Some(out))
}
