//! Deleting the threads `forget` deletes whole, after collecting what they held to search
//! for afterwards.

use std::collections::BTreeSet;

use anyhow::Result;

use crate::codec::aes::{self, Keyring};
use crate::jobs::Sink;
use crate::ops::find::Pattern;
use crate::ops::forget::{message_strings, Reported};
use crate::storage::{CheckpointStore, Deleted, ThreadSummary, ValueOf};

use super::{Line, Tally};

/// What the deletion of whole threads did.
#[derive(Default)]
pub(super) struct Deletion {
    /// Rows deleted.
    pub(super) deleted: Deleted,
    /// The threads deleted (would be, in a dry run).
    pub(super) ids: Vec<String>,
    /// The strings of every message they held, searched for afterwards.
    pub(super) strings: BTreeSet<String>,
}

/// Deletes the `doomed` threads, one transaction per thread (an interrupted run leaves whole
/// threads), after collecting the strings they hold to search for afterwards. A thread that
/// moved while memctl worked is reported, not deleted.
pub(super) fn delete_threads(
    store: &dyn CheckpointStore,
    keys: &Keyring,
    doomed: &[ThreadSummary],
    pattern: Option<&Pattern>,
    dry_run: bool,
    tally: &mut Tally,
    sink: &dyn Sink,
) -> Result<Deletion> {
    let mut d = Deletion::default();
    let pb = sink.bar(doomed.len() as u64, "forget: delete");
    for t in doomed {
        pb.inc(1);
        let collected = collect_strings(store, keys, &t.thread_id, pattern, &mut d.strings);
        match &collected {
            Ok(hit) => tally.pattern_matched |= *hit,
            Err(_) => tally.pattern_matched = true,
        }
        if let Err(e) = collected {
            // The thread goes anyway: what could not be read cannot be searched for.
            tally.lines.push(Line::new(
                &t.thread_id,
                "note",
                &format!("some of its rows could not be read to search for afterwards: {e:#}"),
            ));
        }
        let action = if dry_run { "would delete" } else { "deleted" };
        if !dry_run {
            let (deleted, moved) =
                store.delete_threads(&[(t.thread_id.clone(), t.latest_id.clone())])?;
            if !moved.is_empty() {
                tally.reported.push(Reported {
                    thread_id: t.thread_id.clone(),
                    reason:
                        "got a new checkpoint while memctl worked; not deleted, run forget again"
                            .into(),
                });
                continue;
            }
            d.deleted.add(deleted);
        }
        d.ids.push(t.thread_id.clone());
        tally.lines.push(Line::new(
            &t.thread_id,
            action,
            &format!("{} checkpoints, {} bytes", t.checkpoints, t.bytes),
        ));
    }
    pb.finish_and_clear();
    Ok(d)
}

/// Adds the strings of every message a thread's rows hold to `out`. Returns true when
/// `pattern` matches one of its rows (the bytes as stored, decrypted). Each stored value is
/// decoded once ([`CheckpointStore::visit_values`]), not every checkpoint assembled.
pub(super) fn collect_strings(
    store: &dyn CheckpointStore,
    keys: &Keyring,
    thread: &str,
    pattern: Option<&Pattern>,
    out: &mut BTreeSet<String>,
) -> Result<bool> {
    let mut matched = false;
    let mut visit = |type_name: &str, kind: ValueOf, bytes: &[u8]| {
        matched = matched || pattern.is_some_and(|p| p.maybe_in(bytes));
        if kind != ValueOf::Metadata && type_name == "msgpack" {
            if let Ok(v) = crate::codec::msgpack::decode(bytes) {
                message_strings(&v, out);
            }
        }
    };
    store.visit_values(thread, &mut |v| {
        if aes::split_type(v.type_name).1.is_some() {
            let opened = keys.open(v.type_name, v.bytes, v.place)?;
            visit(opened.type_name, v.kind, &opened.bytes);
        } else {
            visit(v.type_name, v.kind, v.bytes);
        }
        Ok(())
    })?;
    Ok(matched)
}
