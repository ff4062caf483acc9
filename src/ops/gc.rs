//! Which old checkpoints of a thread can go, keeping the thread resumable exactly as before.
//!
//! - In the root namespace the newest `keep` checkpoints stay (at least 1: the latest, whose
//!   pending writes — an interrupt, a resume — go with it and stay too).
//! - A subgraph checkpoint (non-root namespace) stays when the root checkpoint it ran under
//!   (`metadata.parents[""]`) stays, or is newer than every root checkpoint (a run still
//!   going on, whose root checkpoint a live app has not committed yet); one that names no
//!   root parent follows the same newest-`keep` rule inside its namespace. The newest
//!   checkpoint of a `checkpointer=True` subgraph's namespace ([`is_persistent`]) always
//!   stays: its next run starts there, as `BaseCheckpointSaver.prune`'s `keep_latest`
//!   keeps the latest checkpoint of every namespace.
//! - A kept checkpoint whose parent is deleted gets no parent (like a thread's first
//!   checkpoint), so history ends cleanly instead of pointing at a missing row.
//! - A DeltaChannel thread's kept checkpoints rebuild their values from older ones (back to
//!   each channel's seed, in their own namespace: a stateful subgraph's namespace goes on
//!   from run to run, so its kept checkpoints may replay from ones whose root checkpoints
//!   go). Two ways keep them exact, as LangGraph's own guidance for pruning
//!   delta threads says (`BaseCheckpointSaver.prune`): keep every ancestor back to the seeds
//!   ([`plan`], see `delta_seeds`), or write a fresh `_DeltaSnapshot` of each DeltaChannel's
//!   value into each kept checkpoint whose parent goes ([`plan_without_seeds`] and
//!   [`with_snapshots`]), so that nothing older is read. [`prefer_snapshots`] picks the one
//!   that leaves fewer stored bytes.

use std::collections::{BTreeMap, HashSet};

pub use crate::storage::CheckpointInfo;

/// The decision for one thread.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GcPlan {
    /// `(ns, id)` of checkpoints to delete (their writes go with them).
    pub delete: Vec<(String, String)>,
    /// `(ns, id)` of kept checkpoints whose parent is deleted: their parent becomes NULL.
    pub orphaned: Vec<(String, String)>,
    /// Pending writes deleted with them.
    pub writes: u64,
    /// Stored bytes of the deleted checkpoint and write rows.
    pub bytes: u64,
}

impl GcPlan {
    /// The checkpoints the plan keeps, `(ns, id)`.
    pub fn kept<'a>(&self, checkpoints: &'a [CheckpointInfo]) -> Vec<&'a CheckpointInfo> {
        let deleted: HashSet<(&str, &str)> = self
            .delete
            .iter()
            .map(|(ns, id)| (ns.as_str(), id.as_str()))
            .collect();
        checkpoints
            .iter()
            .filter(|c| !deleted.contains(&(c.ns.as_str(), c.id.as_str())))
            .collect()
    }
}

/// Plans a gc of one thread keeping the newest `keep` (≥ 1) root checkpoints, and on a
/// DeltaChannel thread every older one their values are rebuilt from.
pub fn plan(checkpoints: &[CheckpointInfo], keep: usize) -> GcPlan {
    plan_keeping(checkpoints, keep, true)
}

/// Plans a gc of one thread keeping the newest `keep` (≥ 1) root checkpoints and nothing
/// older, even on a DeltaChannel thread: its `orphaned` checkpoints must then get snapshots
/// of the DeltaChannels they do not store ([`with_snapshots`]) before the others go.
pub fn plan_without_seeds(checkpoints: &[CheckpointInfo], keep: usize) -> GcPlan {
    plan_keeping(checkpoints, keep, false)
}

fn plan_keeping(checkpoints: &[CheckpointInfo], keep: usize, seeds: bool) -> GcPlan {
    let keep = keep.max(1);
    let mut by_ns: BTreeMap<&str, Vec<&CheckpointInfo>> = BTreeMap::new();
    for c in checkpoints {
        by_ns.entry(c.ns.as_str()).or_default().push(c);
    }
    for list in by_ns.values_mut() {
        list.sort_by(|a, b| b.id.cmp(&a.id)); // newest first: ids sort by time
    }
    let mut kept: HashSet<(&str, &str)> = HashSet::new();
    let mut kept_root: HashSet<&str> = by_ns
        .get("")
        .map(|l| l.iter().take(keep).map(|c| c.id.as_str()).collect())
        .unwrap_or_default();
    if let (true, Some(root)) = (seeds, by_ns.get("")) {
        kept_root.extend(delta_seeds(root, &kept_root));
    }
    let newest_root = by_ns.get("").and_then(|l| l.first()).map(|c| c.id.as_str());
    for (ns, list) in &by_ns {
        let persistent = is_persistent(ns);
        let mut here: HashSet<&str> = list
            .iter()
            .enumerate()
            .filter(|(i, c)| {
                if ns.is_empty() {
                    return kept_root.contains(c.id.as_str());
                }
                match &c.root_parent {
                    Some(root) if by_ns.contains_key("") => {
                        kept_root.contains(root.as_str())
                            // A run still going on: its root checkpoint is not committed
                            // yet (an app commits a subgraph's checkpoints and the root's
                            // in two queues, not in id order).
                            || newest_root.is_some_and(|n| root.as_str() > n)
                            || (persistent && *i == 0)
                    }
                    _ => *i < keep,
                }
            })
            .map(|(_, c)| c.id.as_str())
            .collect();
        // A subgraph namespace that goes on from run to run (a stateful subgraph's) replays
        // its own DeltaChannels from older checkpoints of that namespace, whose root
        // checkpoints may go.
        if seeds && !ns.is_empty() {
            let more = delta_seeds(list, &here);
            here.extend(more);
        }
        kept.extend(here.into_iter().map(|id| (*ns, id)));
    }
    let mut plan = GcPlan::default();
    for c in checkpoints {
        if kept.contains(&(c.ns.as_str(), c.id.as_str())) {
            if let Some(p) = &c.parent {
                if !kept.contains(&(c.ns.as_str(), p.as_str())) {
                    plan.orphaned.push((c.ns.clone(), c.id.clone()));
                }
            }
        } else {
            plan.delete.push((c.ns.clone(), c.id.clone()));
            plan.writes += c.writes;
            plan.bytes += c.bytes + c.write_bytes;
        }
    }
    plan
}

/// True when subgraph namespace `ns` is a `checkpointer=True` subgraph's one history per
/// thread: LangGraph stores it under the namespace with the task ids removed
/// (`Pregel._own_checkpoint_config`: no `name:task id` part), and its next run starts from
/// its newest checkpoint. A per-run subgraph's namespace names its task (`child:<task id>`).
pub fn is_persistent(ns: &str) -> bool {
    !ns.is_empty() && !ns.contains(':')
}

/// True when some checkpoint's metadata says the thread's graph has DeltaChannels (Python's
/// or LangGraph.js's: both write `counters_since_delta_snapshot`).
pub fn is_delta(checkpoints: &[CheckpointInfo]) -> bool {
    !delta_channels(checkpoints, None).is_empty()
}

/// The DeltaChannels the metadata of a thread's checkpoints (of namespace `ns`, or all)
/// names (`counters_since_delta_snapshot` keys), in the order first seen. A channel that
/// every checkpoint snapshots is not named, and needs nothing.
pub fn delta_channels(checkpoints: &[CheckpointInfo], ns: Option<&str>) -> Vec<String> {
    use crate::model::{delta, Metadata};
    let mut out: Vec<String> = Vec::new();
    for c in checkpoints.iter().filter(|c| ns.is_none_or(|n| c.ns == n)) {
        let Ok(md) = Metadata::parse(c.metadata.as_deref()) else {
            continue;
        };
        for ch in delta::counted_channels(&md) {
            if !out.contains(&ch) {
                out.push(ch);
            }
        }
    }
    out
}

/// A checkpoint with `_DeltaSnapshot`s of `snapshots` (`(channel, value)`) written into its
/// `channel_values`, as LangGraph's `create_checkpoint` writes one: the new blob, and the
/// new metadata JSON when it changes (the snapshotted channels leave
/// `counters_since_delta_snapshot`, reset as the loop resets them; the key goes when no
/// channel is left, as the loop drops it). Everything else (id, `ts`, versions,
/// `versions_seen`) stays as it is.
pub fn with_snapshots(
    checkpoint: &[u8],
    metadata: Option<&[u8]>,
    snapshots: Vec<(String, crate::codec::Value)>,
) -> anyhow::Result<(Vec<u8>, Option<Vec<u8>>)> {
    use crate::codec::{ext, msgpack, Value};
    use anyhow::{anyhow, Context};
    let mut root = msgpack::decode(checkpoint).context("the checkpoint does not decode")?;
    let Value::Map(m) = &mut root else {
        anyhow::bail!("the checkpoint is not a map");
    };
    let values = m
        .entries
        .iter_mut()
        .find(|(k, _)| k.as_str() == Some("channel_values"))
        .map(|(_, v)| v)
        .ok_or_else(|| anyhow!("the checkpoint has no channel_values"))?;
    let Value::Map(values) = values else {
        anyhow::bail!("the checkpoint's channel_values is not a map");
    };
    let names: Vec<String> = snapshots.iter().map(|(k, _)| k.clone()).collect();
    for (channel, value) in snapshots {
        let snapshot = Value::ext(ext::DELTA_SNAPSHOT, value);
        match values
            .entries
            .iter_mut()
            .find(|(k, _)| k.as_str() == Some(channel.as_str()))
        {
            Some((_, v)) => *v = snapshot,
            None => values.entries.push((Value::str(channel), snapshot)),
        }
    }
    let bytes = msgpack::encode(&root);
    let mut md = crate::model::Metadata::parse(metadata)?;
    let key = crate::model::channels::DELTA_COUNTERS;
    let Some(serde_json::Value::Object(counters)) = md.fields.get_mut(key) else {
        return Ok((bytes, None));
    };
    let before = counters.len();
    counters.retain(|k, _| !names.contains(k));
    if counters.len() == before {
        return Ok((bytes, None));
    }
    if counters.is_empty() {
        md.fields.shift_remove(key);
    }
    let json = crate::codec::pyjson::dumps(&serde_json::Value::Object(md.fields));
    Ok((bytes, Some(json.into_bytes())))
}

/// True when the snapshot plan leaves fewer stored bytes than the chain plan: what it
/// deletes, less the `added` bytes its snapshots add to the checkpoints it rewrites, beats
/// what the chain plan deletes.
pub fn prefer_snapshots(chain: &GcPlan, snapshot: &GcPlan, added: u64) -> bool {
    snapshot.bytes.saturating_sub(added) > chain.bytes
}

/// The older checkpoints of one namespace (`root`: its checkpoints, of any order) the kept
/// ones need to rebuild their DeltaChannels' values: for
/// each kept checkpoint and each DeltaChannel it does not store, every ancestor back to the
/// one that does (LangGraph's walk replays their writes onto that seed). Read from the
/// metadata alone: a checkpoint of a DeltaChannel graph stores a channel exactly when its
/// `counters_since_delta_snapshot` does not name it (a snapshot resets them); a checkpoint
/// without the counters (written before the graph switched to DeltaChannels) stores every
/// channel's value. Nothing for a thread without DeltaChannels.
fn delta_seeds<'a>(root: &[&'a CheckpointInfo], kept: &HashSet<&'a str>) -> HashSet<&'a str> {
    use crate::model::delta;
    let counters: std::collections::HashMap<&str, Option<delta::Counters>> = root
        .iter()
        .map(|c| {
            let md = crate::model::Metadata::parse(c.metadata.as_deref()).unwrap_or_default();
            let named = md
                .fields
                .contains_key(crate::model::channels::DELTA_COUNTERS)
                .then(|| delta::counters(&md));
            (c.id.as_str(), named)
        })
        .collect();
    let mut channels: Vec<&str> = Vec::new();
    for named in counters.values().flatten() {
        for (ch, _) in named {
            if !channels.contains(&ch.as_str()) {
                channels.push(ch);
            }
        }
    }
    let mut needed = HashSet::new();
    if channels.is_empty() {
        return needed;
    }
    let parent: std::collections::HashMap<&str, Option<&str>> = root
        .iter()
        .map(|c| (c.id.as_str(), c.parent.as_deref()))
        .collect();
    // Stores `ch`: no counters at all, or counters that do not name it.
    let stores = |id: &str, ch: &str| match counters.get(id) {
        Some(Some(named)) => !named.iter().any(|(k, _)| k == ch),
        Some(None) => true,
        None => false,
    };
    let mut work: Vec<&str> = kept.iter().copied().collect();
    let mut seen: HashSet<&str> = kept.clone();
    while let Some(k) = work.pop() {
        for ch in &channels {
            if stores(k, ch) {
                continue;
            }
            let mut at = parent.get(k).copied().flatten();
            while let Some(a) = at {
                if !parent.contains_key(a) {
                    break;
                }
                if seen.insert(a) {
                    needed.insert(a);
                    work.push(a);
                }
                if stores(a, ch) {
                    break;
                }
                at = parent.get(a).copied().flatten();
            }
        }
    }
    needed
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cp(ns: &str, id: &str, parent: Option<&str>, root: Option<&str>) -> CheckpointInfo {
        CheckpointInfo {
            ns: ns.into(),
            id: id.into(),
            parent: parent.map(Into::into),
            root_parent: root.map(Into::into),
            metadata: None,
            bytes: 10,
            writes: 2,
            write_bytes: 5,
        }
    }

    #[test]
    fn keeps_the_newest_and_subgraphs_of_kept_steps() {
        let cps = vec![
            cp("", "1", None, None),
            cp("", "2", Some("1"), None),
            cp("", "3", Some("2"), None),
            cp("", "4", Some("3"), None),
            cp("child:a", "a1", None, Some("2")),
            cp("child:a", "a2", Some("a1"), Some("2")),
            cp("child:b", "b1", None, Some("4")),
        ];
        let p = plan(&cps, 2);
        let deleted: Vec<&str> = p.delete.iter().map(|(_, id)| id.as_str()).collect();
        assert_eq!(deleted, ["1", "2", "a1", "a2"]);
        assert_eq!(p.orphaned, vec![("".to_owned(), "3".to_owned())]);
        assert_eq!(p.bytes, 4 * (10 + 5));
        assert_eq!(p.writes, 8);
        let kept: Vec<&str> = p.kept(&cps).iter().map(|c| c.id.as_str()).collect();
        assert_eq!(kept, ["3", "4", "b1"]);
        // keep is at least 1: the latest always stays.
        let p = plan(&cps, 0);
        assert!(!p.delete.iter().any(|(_, id)| id == "4" || id == "b1"));
    }

    #[test]
    fn nothing_to_do_for_short_threads() {
        let cps = vec![cp("", "1", None, None), cp("", "2", Some("1"), None)];
        assert_eq!(plan(&cps, 5), GcPlan::default());
    }

    #[test]
    fn delta_threads_keep_the_chain_back_to_the_seed() {
        let md = |counters: Option<&str>| {
            counters.map(|c| format!(r#"{{"step": 1, "counters_since_delta_snapshot": {c}}}"#))
        };
        let mut cps = Vec::new();
        // 1 (snapshot: no counters) <- 2 <- 3 <- 4 (snapshot) <- 5 <- 6
        for (i, counters) in [
            None,
            Some(r#"{"messages": [1, 1]}"#),
            Some(r#"{"messages": [2, 2]}"#),
            Some(r#"{}"#),
            Some(r#"{"messages": [1, 1]}"#),
            Some(r#"{"messages": [2, 2]}"#),
        ]
        .into_iter()
        .enumerate()
        {
            let id = (i + 1).to_string();
            let parent = (i > 0).then(|| i.to_string());
            let mut c = cp("", &id, parent.as_deref(), None);
            c.metadata = md(counters
                .or(Some(r#"{"messages": [0, 1]}"#))
                .filter(|_| i > 0))
            .map(String::into_bytes);
            cps.push(c);
        }
        // Keep 6 and 5: 5's value is 4's snapshot plus 4's writes, so 4 stays.
        let p = plan(&cps, 2);
        let deleted: Vec<&str> = p.delete.iter().map(|(_, id)| id.as_str()).collect();
        assert_eq!(deleted, ["1", "2", "3"]);
        // Keep 3 newest (4, 5, 6): 4 holds its snapshot, nothing older is needed.
        let p = plan(&cps, 3);
        assert_eq!(p.delete.len(), 3);
        // Keep 4 newest (3..6): 3 needs 2 and 1 (the first checkpoint stores the value).
        let p = plan(&cps, 4);
        assert!(p.delete.is_empty(), "{:?}", p.delete);
    }

    /// 1 <- 2 <- 3 <- 4 <- 5: messages snapshotted at 1 and 4, files at 1 only (staggered, as
    /// in a deep agent).
    fn staggered() -> Vec<CheckpointInfo> {
        let counters = [
            None,
            Some(r#"{"messages": [1, 1], "files": [1, 1]}"#),
            Some(r#"{"messages": [2, 2], "files": [1, 2]}"#),
            Some(r#"{"files": [2, 3]}"#),
            Some(r#"{"messages": [1, 1], "files": [2, 4]}"#),
        ];
        counters
            .iter()
            .enumerate()
            .map(|(i, counters)| {
                let id = (i + 1).to_string();
                let parent = (i > 0).then(|| i.to_string());
                let mut c = cp("", &id, parent.as_deref(), None);
                c.metadata = counters.map(|c| {
                    format!(r#"{{"step": {i}, "counters_since_delta_snapshot": {c}}}"#).into_bytes()
                });
                c
            })
            .collect()
    }

    #[test]
    fn without_seeds_a_delta_thread_keeps_only_the_newest() {
        let cps = staggered();
        assert!(is_delta(&cps));
        assert_eq!(delta_channels(&cps, Some("")), ["messages", "files"]);
        // The chain plan keeps all of it: 4 reads files from 1.
        assert!(plan(&cps, 2).delete.is_empty());
        let p = plan_without_seeds(&cps, 2);
        let deleted: Vec<&str> = p.delete.iter().map(|(_, id)| id.as_str()).collect();
        assert_eq!(deleted, ["1", "2", "3"]);
        // 4 is the one to snapshot.
        assert_eq!(p.orphaned, vec![("".to_owned(), "4".to_owned())]);
        assert!(prefer_snapshots(&plan(&cps, 2), &p, p.bytes - 1));
        assert!(!prefer_snapshots(&plan(&cps, 2), &p, p.bytes));
        assert!(!is_delta(&[cp("", "1", None, None)]));
    }

    #[test]
    fn a_stateful_subgraphs_namespace_keeps_its_own_seeds() {
        // Root 1..6, each storing its values; namespace "child" (a stateful subgraph, one
        // checkpoint per run under root i) snapshots at c1 and c4 only.
        let mut cps = Vec::new();
        for i in 1..=6 {
            let parent = (i > 1).then(|| (i - 1).to_string());
            cps.push(cp("", &i.to_string(), parent.as_deref(), None));
            let counters = match i {
                1 | 4 => "{}",
                _ => r#"{"messages": [1, 1]}"#,
            };
            let cparent = (i > 1).then(|| format!("c{}", i - 1));
            let mut c = cp(
                "child",
                &format!("c{i}"),
                cparent.as_deref(),
                Some(&i.to_string()),
            );
            c.metadata = Some(
                format!(r#"{{"step": {i}, "counters_since_delta_snapshot": {counters}}}"#)
                    .into_bytes(),
            );
            cps.push(c);
        }
        let deleted = |p: &GcPlan| -> Vec<String> {
            let mut d: Vec<String> = p.delete.iter().map(|(_, id)| id.clone()).collect();
            d.sort();
            d
        };
        // Keep 2 (roots 5, 6): c5 and c6 replay from c4's snapshot, whose root goes.
        let p = plan(&cps, 2);
        assert_eq!(deleted(&p), ["1", "2", "3", "4", "c1", "c2", "c3"]);
        assert_eq!(
            p.orphaned,
            vec![
                ("child".to_owned(), "c4".to_owned()),
                ("".into(), "5".into())
            ]
        );
        // Keep 3 (roots 4..6): c4 holds its snapshot, nothing older is needed.
        assert_eq!(deleted(&plan(&cps, 3)), ["1", "2", "3", "c1", "c2", "c3"]);
        // Without seeds c5 is the one to snapshot.
        let p = plan_without_seeds(&cps, 2);
        assert_eq!(deleted(&p), ["1", "2", "3", "4", "c1", "c2", "c3", "c4"]);
        assert!(p.orphaned.contains(&("child".into(), "c5".into())));
        // Root 7 after the subgraph's last run: keeping it alone still keeps the subgraph's
        // newest checkpoint (its next run starts there) and, chained, its seeds.
        cps.push(cp("", "7", Some("6"), None));
        let p = plan(&cps, 1);
        assert_eq!(
            deleted(&p),
            ["1", "2", "3", "4", "5", "6", "c1", "c2", "c3"]
        );
        let p = plan_without_seeds(&cps, 1);
        assert!(!p.delete.contains(&("child".into(), "c6".into())));
        assert!(p.orphaned.contains(&("child".into(), "c6".into())));
        // A per-run namespace whose root checkpoint is not committed yet (a live run): kept;
        // one of an old run goes.
        cps.push(cp("sub:t8", "s8", None, Some("8")));
        cps.push(cp("sub:t5", "s5", None, Some("5")));
        let p = plan(&cps, 1);
        assert!(!p.delete.contains(&("sub:t8".into(), "s8".into())));
        assert!(p.delete.contains(&("sub:t5".into(), "s5".into())));
        assert!(is_persistent("child") && is_persistent("a|b") && !is_persistent("sub:t8"));
        assert!(!is_persistent(""));
    }

    #[test]
    fn snapshots_go_into_channel_values_and_reset_their_counters() {
        use crate::codec::{ext, msgpack, Value};
        let checkpoint = Value::map(vec![
            (Value::str("v"), Value::int(4)),
            (Value::str("id"), Value::str("4")),
            (
                Value::str("channel_values"),
                Value::map(vec![(Value::str("n"), Value::int(1))]),
            ),
            (
                Value::str("channel_versions"),
                Value::map(vec![(Value::str("messages"), Value::str("3"))]),
            ),
        ]);
        let md = br#"{"source": "loop", "step": 3, "counters_since_delta_snapshot": {"files": [2, 3], "messages": [1, 1]}}"#;
        let list = Value::array(vec![Value::str("m")]);
        let (bytes, new_md) = with_snapshots(
            &msgpack::encode(&checkpoint),
            Some(md),
            vec![("messages".into(), list.clone())],
        )
        .expect("rewrites");
        let root = msgpack::decode(&bytes).expect("decodes");
        let values = root.get("channel_values").expect("values");
        assert_eq!(values.get("n").and_then(Value::as_i64), Some(1));
        let snap = values.get("messages").and_then(Value::as_ext).expect("ext");
        assert_eq!(snap.code, ext::DELTA_SNAPSHOT);
        assert_eq!(msgpack::encode(&snap.payload), msgpack::encode(&list));
        assert_eq!(root.get("id").and_then(Value::as_str), Some("4"));
        let new_md = String::from_utf8(new_md.expect("metadata changes")).expect("utf-8");
        assert_eq!(
            new_md,
            r#"{"source": "loop", "step": 3, "counters_since_delta_snapshot": {"files": [2, 3]}}"#
        );
        // The last channel snapshotted: the key goes, as the loop drops it.
        let (_, md2) = with_snapshots(
            &bytes,
            Some(new_md.as_bytes()),
            vec![("files".into(), Value::map(vec![]))],
        )
        .expect("rewrites");
        assert_eq!(
            md2.as_deref(),
            Some(br#"{"source": "loop", "step": 3}"#.as_slice())
        );
        // Counters that do not name the channel: the metadata stays as stored.
        let (_, same) = with_snapshots(&bytes, Some(b"{}"), vec![("files".into(), Value::Nil)])
            .expect("rewrites");
        assert!(same.is_none());
    }
}
