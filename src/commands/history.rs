//! `memctl history --thread T`: a thread's checkpoints, newest first (rendered by
//! `output::history`).

use std::io::Write;

use anyhow::Result;

use crate::cli::{GlobalArgs, HistoryArgs};
use crate::output::history::HistoryRecord;
use crate::read::history::{child_namespaces, delta_counts};

/// Runs `history`.
pub fn run(g: &GlobalArgs, args: &HistoryArgs, out: &mut dyn Write) -> Result<()> {
    let store = super::open_read_only(g)?;
    let keys = super::keys(g);
    let thread = &args.thread.thread;
    crate::read::require_thread(&*store, thread, &g.ns)?;
    let writes = store.write_counts(thread, &g.ns)?;
    let children = child_namespaces(&*store, thread, &g.ns)?;
    let mut records: Vec<HistoryRecord> = Vec::new();
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
        records.push(HistoryRecord {
            parent_checkpoint_id: cp.row.parent_checkpoint_id.clone(),
            step: cp.metadata.step(),
            source: cp.metadata.source().map(str::to_owned),
            ts: cp.checkpoint.ts().map(str::to_owned),
            messages: count,
            pending_writes: writes.get(&id).copied().unwrap_or(0),
            namespaces: children.get(&id).cloned().unwrap_or_default(),
            checkpoint_id: id,
        });
    }
    crate::output::history::write(out, crate::output::resolve_format(g.format), &records)
}
