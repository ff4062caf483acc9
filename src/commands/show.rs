//! `memctl show --thread T`: the state as a chat transcript, then other channels, then what
//! the thread is waiting on (rendered by `output::show`).

use std::io::Write;

use anyhow::Result;

use crate::cli::{GlobalArgs, ShowArgs};
use crate::model::state::pending_work;
use crate::output::show::{Channel, ShowReport};
use crate::read::DeltaValue;

/// Runs `show`.
pub fn run(g: &GlobalArgs, args: &ShowArgs, out: &mut dyn Write) -> Result<()> {
    let store = super::open_read_only(g)?;
    let keys = super::keys(g);
    let (cp, messages, deltas) = crate::read::load_shallow(
        &*store,
        &keys,
        &args.thread.thread,
        &g.ns,
        args.checkpoint.as_deref(),
    )?;
    let writes = crate::read::load_writes(&*store, &keys, &cp.row)?;
    let work = pending_work(&cp.checkpoint, &writes);
    // The messages are checked here (the errors of a full read), then read one at a time.
    let shown = match messages.list() {
        Some(list) => {
            let mut spans = list.spans()?;
            if let Some(n) = args.last {
                spans.drain(..spans.len().saturating_sub(n));
            }
            Some((list, spans))
        }
        None => None,
    };
    let values = crate::read::state_values(&cp, &deltas)
        .into_iter()
        .map(|(name, value)| Channel {
            name,
            value,
            note: deltas
                .iter()
                .find(|d| d.channel == name)
                .and_then(DeltaValue::note),
        })
        .collect();
    let report = ShowReport {
        thread_id: &args.thread.thread,
        checkpoint_ns: &g.ns,
        checkpoint_id: &cp.row.checkpoint_id,
        step: cp.metadata.step(),
        ts: cp.checkpoint.ts(),
        messages: shown,
        values,
        next: &work.next,
        interrupts: ShowReport::interrupts_of(&work),
        notes: deltas.iter().filter_map(DeltaValue::note).collect(),
        stored: &messages,
    };
    crate::output::show::write(out, crate::output::resolve_format(g.format), &report)
}
