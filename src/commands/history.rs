//! `memctl history --thread T`: flags -> [`crate::jobs::history`] ->
//! [`crate::output::history`].

use std::io::Write;

use anyhow::Result;

use crate::cli::{GlobalArgs, HistoryArgs};
use crate::jobs::history::{self, Request};

/// Runs `history`.
pub fn run(g: &GlobalArgs, args: &HistoryArgs, out: &mut dyn Write) -> Result<()> {
    let req = Request {
        thread: args.thread.thread.clone(),
        limit: args.limit,
        source: args.source.clone(),
        before: args.before.clone(),
    };
    let sink = g.sink(false);
    let records = history::run(&req, &g.ctx(), &sink)?;
    crate::output::history::write(out, crate::output::resolve_format(g.format), &records)
}
