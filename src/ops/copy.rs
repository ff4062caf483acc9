//! The plan of a copy (`copy`, `copy --at`, `export`, `migrate`): which rows of a thread go,
//! and what changes in them on the way. Checkpoint ids, parents, blobs and write values are
//! kept as they are stored (encrypted ones too); only the thread id changes, and with it the
//! metadata's `thread_id` where an app stored one (LangGraph keeps `thread_id` out of the
//! metadata it writes, `EXCLUDED_METADATA_KEYS`, but older versions and apps passing it in
//! `config["metadata"]` did store it).

use std::collections::HashSet;

use anyhow::{bail, Result};
use serde::Serialize;
use serde_json::Value as Json;

use crate::storage::ThreadRows;

/// What a copy writes, counted.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct CopyCounts {
    /// Checkpoint rows.
    pub checkpoints: u64,
    /// Namespaces they are in (the root namespace and subgraphs).
    pub namespaces: u64,
    /// Pending-write rows.
    pub writes: u64,
    /// Checkpoints whose metadata named the source thread and now names the target.
    pub metadata_rewritten: u64,
}

/// The rows a copy writes, and their counts.
#[derive(Debug, Clone)]
pub struct CopyPlan {
    /// The rows, ready for [`crate::storage::CheckpointStore::write_thread`].
    pub rows: ThreadRows,
    /// Their counts.
    pub counts: CopyCounts,
}

/// Plans the copy of thread `from` (its rows `source`) as thread `to`; with `at`, a fork: the
/// copy ends at root checkpoint `at` (its ancestors, the subgraph checkpoints that ran under
/// them, and the pending writes of those checkpoints, `at`'s own included: the state
/// `get_state` shows at `at`). An `at` that is not a root checkpoint of the thread is an error.
pub fn plan(mut source: ThreadRows, from: &str, to: &str, at: Option<&str>) -> Result<CopyPlan> {
    if source.checkpoints.is_empty() {
        bail!("thread '{from}' has no checkpoint");
    }
    if let Some(at) = at {
        let keep = fork_cut(&source, at)?;
        let kept = |ns: &str, id: &str| keep.contains(&(ns.to_owned(), id.to_owned()));
        source
            .checkpoints
            .retain(|c| kept(&c.checkpoint_ns, &c.checkpoint_id));
        source
            .writes
            .retain(|w| kept(&w.checkpoint_ns, &w.checkpoint_id));
    }
    let mut counts = CopyCounts::default();
    let mut namespaces = HashSet::new();
    for c in &mut source.checkpoints {
        namespaces.insert(c.checkpoint_ns.clone());
        c.thread_id = to.to_owned();
        if let Some(m) = &c.metadata {
            if let Some(new) = rewrite_metadata(m, from, to) {
                c.metadata = Some(new);
                counts.metadata_rewritten += 1;
            }
        }
    }
    counts.checkpoints = source.checkpoints.len() as u64;
    counts.namespaces = namespaces.len() as u64;
    counts.writes = source.writes.len() as u64;
    Ok(CopyPlan {
        rows: source,
        counts,
    })
}

/// `(ns, id)` of the checkpoints a fork at root checkpoint `at` keeps: `at` and its ancestors
/// in the root namespace, and every subgraph checkpoint whose `metadata.parents[""]` is one of
/// them (a subgraph checkpoint without it is kept when it is not newer than `at`).
fn fork_cut(source: &ThreadRows, at: &str) -> Result<HashSet<(String, String)>> {
    let root: std::collections::HashMap<&str, Option<&str>> = source
        .checkpoints
        .iter()
        .filter(|c| c.checkpoint_ns.is_empty())
        .map(|c| (c.checkpoint_id.as_str(), c.parent_checkpoint_id.as_deref()))
        .collect();
    if !root.contains_key(at) {
        bail!("--at {at}: the thread has no such root checkpoint (see `memctl history`)");
    }
    let mut chain: HashSet<&str> = HashSet::new();
    let mut next = Some(at);
    while let Some(id) = next {
        if !chain.insert(id) {
            break;
        }
        next = root.get(id).copied().flatten();
    }
    let mut keep = HashSet::new();
    for c in &source.checkpoints {
        let keep_it = if c.checkpoint_ns.is_empty() {
            chain.contains(c.checkpoint_id.as_str())
        } else {
            match root_parent(c.metadata.as_deref()) {
                Some(p) => chain.contains(p.as_str()),
                None => c.checkpoint_id.as_str() <= at,
            }
        };
        if keep_it {
            keep.insert((c.checkpoint_ns.clone(), c.checkpoint_id.clone()));
        }
    }
    Ok(keep)
}

/// `metadata.parents[""]`: the root checkpoint a subgraph checkpoint ran under.
fn root_parent(metadata: Option<&[u8]>) -> Option<String> {
    let json: Json = serde_json::from_slice(metadata?).ok()?;
    json.get("parents")?.get("")?.as_str().map(str::to_owned)
}

/// The metadata with a top-level `thread_id` equal to `from` set to `to`, in the style it was
/// written in (Python's `json.dumps` separators, or compact JSON as LangGraph.js writes it);
/// `None` when it names no such thread (it is then kept byte for byte).
pub fn rewrite_metadata(metadata: &[u8], from: &str, to: &str) -> Option<Vec<u8>> {
    let mut json: Json = serde_json::from_slice(metadata).ok()?;
    let obj = json.as_object_mut()?;
    if obj.get("thread_id").and_then(Json::as_str) != Some(from) {
        return None;
    }
    let compact = serde_json::to_vec(&json).ok()? == metadata;
    let obj = json.as_object_mut()?;
    obj.insert("thread_id".into(), Json::String(to.to_owned()));
    Some(match compact {
        true => serde_json::to_vec(&json).ok()?,
        false => crate::codec::pyjson::dumps(&json).into_bytes(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::{CheckpointRow, ThreadWrite, WriteRow};

    fn cp(ns: &str, id: &str, parent: Option<&str>, md: &str) -> CheckpointRow {
        CheckpointRow {
            thread_id: "a".into(),
            checkpoint_ns: ns.into(),
            checkpoint_id: id.into(),
            parent_checkpoint_id: parent.map(Into::into),
            type_name: "msgpack".into(),
            checkpoint: vec![0x80],
            metadata: Some(md.as_bytes().to_vec()),
        }
    }

    fn write(ns: &str, id: &str) -> ThreadWrite {
        ThreadWrite {
            checkpoint_ns: ns.into(),
            checkpoint_id: id.into(),
            row: WriteRow {
                task_id: "t".into(),
                task_path: String::new(),
                idx: 0,
                channel: "c".into(),
                type_name: "msgpack".into(),
                value: vec![0xc0],
            },
        }
    }

    fn thread() -> ThreadRows {
        ThreadRows {
            checkpoints: vec![
                cp("", "1", None, r#"{"step": -1, "parents": {}}"#),
                cp("", "2", Some("1"), r#"{"step": 0, "parents": {}}"#),
                cp(
                    "",
                    "3",
                    Some("2"),
                    r#"{"step": 1, "parents": {}, "thread_id": "a"}"#,
                ),
                // A branch from 2 (time travel), newer than 3.
                cp("", "4", Some("2"), r#"{"step": 1, "parents": {}}"#),
                cp("sub:x", "2a", None, r#"{"parents": {"": "2"}}"#),
                cp("sub:y", "3a", None, r#"{"parents": {"": "3"}}"#),
            ],
            writes: vec![write("", "2"), write("", "3"), write("sub:x", "2a")],
        }
    }

    #[test]
    fn a_copy_takes_every_row_and_renames_the_thread() {
        let p = plan(thread(), "a", "b", None).expect("plans");
        assert_eq!(
            p.counts,
            CopyCounts {
                checkpoints: 6,
                namespaces: 3,
                writes: 3,
                metadata_rewritten: 1
            }
        );
        assert!(p.rows.checkpoints.iter().all(|c| c.thread_id == "b"));
        assert_eq!(
            p.rows.checkpoints[2].metadata.as_deref(),
            Some(&br#"{"step": 1, "parents": {}, "thread_id": "b"}"#[..])
        );
        assert_eq!(
            p.rows.checkpoints[0].metadata.as_deref(),
            Some(&br#"{"step": -1, "parents": {}}"#[..]),
            "metadata without the thread is kept byte for byte"
        );
    }

    #[test]
    fn a_fork_keeps_the_ancestors_and_what_ran_under_them() {
        let p = plan(thread(), "a", "b", Some("2")).expect("plans");
        let ids: Vec<_> = p
            .rows
            .checkpoints
            .iter()
            .map(|c| c.checkpoint_id.as_str())
            .collect();
        assert_eq!(ids, ["1", "2", "2a"]);
        let writes: Vec<_> = p
            .rows
            .writes
            .iter()
            .map(|w| w.checkpoint_id.as_str())
            .collect();
        assert_eq!(writes, ["2", "2a"]);
        let p = plan(thread(), "a", "b", Some("4")).expect("plans");
        let ids: Vec<_> = p
            .rows
            .checkpoints
            .iter()
            .map(|c| c.checkpoint_id.as_str())
            .collect();
        assert_eq!(ids, ["1", "2", "4", "2a"], "3 is another branch");
    }

    #[test]
    fn a_fork_at_an_unknown_checkpoint_is_refused() {
        let e = plan(thread(), "a", "b", Some("2a")).expect_err("refused");
        assert!(e.to_string().contains("no such root checkpoint"), "{e}");
        assert!(plan(ThreadRows::default(), "a", "b", None).is_err());
    }

    #[test]
    fn compact_metadata_stays_compact() {
        let out = rewrite_metadata(br#"{"thread_id":"a","n":1}"#, "a", "b");
        assert_eq!(out.as_deref(), Some(&br#"{"thread_id":"b","n":1}"#[..]));
        assert_eq!(rewrite_metadata(br#"{"thread_id":"z"}"#, "a", "b"), None);
    }
}
