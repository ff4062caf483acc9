//! `memctl show --thread T`: flags -> [`crate::jobs::show`] (the state) ->
//! [`crate::output::show`] (the chat transcript, then other channels, then what the thread
//! is waiting on).

use std::io::Write;

use anyhow::Result;

use crate::cli::{GlobalArgs, ShowArgs};
use crate::jobs::show::{self, Request};
use crate::output::show::ShowReport;

/// Runs `show`.
pub fn run(g: &GlobalArgs, args: &ShowArgs, out: &mut dyn Write) -> Result<()> {
    let req = Request {
        thread: args.thread.thread.clone(),
        checkpoint: args.checkpoint.clone(),
    };
    let sink = g.sink(false);
    let state = show::run(&req, &g.ctx(), &sink)?;
    let report = ShowReport::of(&state, &req.thread, &g.ns, args.last)?;
    crate::output::show::write(out, crate::output::resolve_format(g.format), &report)
}
