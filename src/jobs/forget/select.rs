//! Choosing the threads `forget` deletes whole, and the question before anything is written.

use std::collections::HashSet;

use anyhow::Result;

use crate::codec::aes::Keyring;
use crate::jobs::{Question, Sink};
use crate::ops::find::MetaCondition;
use crate::ops::forget::Reported;
use crate::storage::{CheckpointStore, ThreadSummary};

use super::{Line, Tally};

/// The threads the request deletes whole, and what selecting them found.
#[derive(Default)]
pub(super) struct Selection {
    /// The threads to delete (named, or selected by `--meta`).
    pub(super) doomed: Vec<ThreadSummary>,
    /// Threads named with `--thread` that are not in the database.
    pub(super) absent: Vec<String>,
    /// Threads `--meta` selected.
    pub(super) meta_selected: usize,
    /// Threads `--meta` could not check (it may have matched them).
    pub(super) meta_unknown: usize,
}

/// The threads deleted whole: the ones `--thread` names (absent ones listed) and the ones
/// `--meta` selects (a thread it cannot check is reported).
pub(super) fn select_threads(
    store: &dyn CheckpointStore,
    keys: &Keyring,
    threads: &[String],
    conditions: &[MetaCondition],
    tally: &mut Tally,
    sink: &dyn Sink,
) -> Result<Selection> {
    let mut sel = Selection::default();
    let mut named_seen: HashSet<&str> = HashSet::new();
    // Phases on stderr (hidden when it is not a terminal, or with --quiet); the bar grows as
    // the batches come.
    let pb = sink.bar(2, "forget: select");
    pb.set_length(0);
    // Nothing is written while the threads stream (on a second handle, this one free for
    // --meta's reads); --meta's selection a batch of threads at a time (a few queries per
    // batch).
    crate::read::stream::threads_for_run(store, false, &mut |batch| {
        pb.inc_length(batch.len() as u64);
        let selects = match conditions.is_empty() {
            true => Vec::new(),
            false => meta_select_or_report(store, keys, &batch, conditions),
        };
        let mut selects = selects.into_iter();
        for t in batch {
            pb.inc(1);
            let named = threads.iter().find(|n| **n == t.thread_id);
            if let Some(n) = named {
                named_seen.insert(n.as_str());
            }
            let by_meta = match selects.next() {
                None | Some(Ok(false)) => false,
                Some(Ok(true)) => true,
                Some(Err(why)) => {
                    sel.meta_unknown += 1;
                    tally.reported.push(Reported {
                        thread_id: t.thread_id.clone(),
                        reason: format!("could not check --meta: {why}"),
                    });
                    false
                }
            };
            sel.meta_selected += usize::from(by_meta);
            if named.is_some() || by_meta {
                sel.doomed.push(t);
            }
        }
        Ok(true)
    })?;
    // The select phase's line goes before the question (a bar redrawn over it would hide it).
    pb.finish_and_clear();
    for t in threads {
        if !named_seen.contains(t.as_str()) && !sel.absent.contains(t) {
            sel.absent.push(t.clone());
            tally.lines.push(Line::new(
                t,
                "absent",
                "not in the database (already deleted?)",
            ));
        }
    }
    Ok(sel)
}

/// Whether `--meta` selects each of `threads` ([`crate::read::meta_select`]), or why it could
/// not tell: a database error is every thread's of the batch (each is reported, none taken).
pub(super) fn meta_select_or_report(
    store: &dyn CheckpointStore,
    keys: &Keyring,
    threads: &[ThreadSummary],
    conditions: &[MetaCondition],
) -> Vec<Result<bool, String>> {
    let ids: Vec<&str> = threads.iter().map(|t| t.thread_id.as_str()).collect();
    let readers = crate::read::Readers::one(store);
    match crate::read::meta_select(&readers, keys, &ids, conditions) {
        Ok(selects) => selects
            .into_iter()
            .map(|s| s.map_err(|e| format!("{e:#}")))
            .collect(),
        Err(e) => {
            let why = format!("{e:#}");
            threads.iter().map(|_| Err(why.clone())).collect()
        }
    }
}

/// The question before anything is written (none on a dry run, nor when nothing is).
pub(super) fn confirm(
    sink: &dyn Sink,
    doomed: &[ThreadSummary],
    pattern: bool,
    items: usize,
    dry_run: bool,
) -> Result<()> {
    if dry_run || doomed.is_empty() && !pattern && items == 0 {
        return Ok(());
    }
    let mut action = format!(
        "delete {} ({})",
        crate::text::human::count(doomed.len() as u64, "thread"),
        crate::text::human::count(
            doomed.iter().map(|t| t.checkpoints).sum::<u64>(),
            "checkpoint"
        )
    );
    if pattern {
        action.push_str(", scrub what --match matches from every other thread's history,");
    }
    if items > 0 {
        action.push_str(&format!(
            ", delete {} of the LangGraph store,",
            crate::text::human::count(items as u64, "item")
        ));
    }
    action.push_str(" and erase the freed space");
    sink.confirm(&Question {
        command: "forget",
        action,
        threads: doomed.iter().map(|t| t.thread_id.clone()).collect(),
    })
}
