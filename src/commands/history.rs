//! `memctl history --thread T`: a thread's checkpoints, newest first (rendered by
//! `output::history`).

use std::io::Write;

use anyhow::Result;

use crate::cli::{GlobalArgs, HistoryArgs};
use crate::read::history::Selection;

/// Runs `history`.
pub fn run(g: &GlobalArgs, args: &HistoryArgs, out: &mut dyn Write) -> Result<()> {
    let store = super::open_read_only(g)?;
    let keys = super::keys(g);
    let thread = &args.thread.thread;
    let select = Selection {
        before: args.before.as_deref(),
        source: args.source.as_deref(),
        limit: args.limit,
    };
    let records = crate::read::history::checkpoints(&*store, &keys, thread, &g.ns, &select)?;
    crate::output::history::write(out, crate::output::resolve_format(g.format), &records)
}
