//! `memctl gc`: delete old checkpoints inside threads, keeping each one resumable as before
//! ([`crate::jobs::gc`]).

use std::io::Write;

use anyhow::Result;

use crate::cli::{GcArgs, GlobalArgs};
use crate::jobs::gc::{self, Request};
use crate::output::{self};

/// The job's request for these arguments.
pub fn request(args: &GcArgs) -> Request {
    let m = &args.maintenance;
    Request {
        thread: args.thread.clone().or_else(|| args.thread_id.clone()),
        keep_checkpoints: args.keep_checkpoints,
        min_idle: m.min_idle.clone(),
        dry_run: m.dry_run,
        vacuum: m.vacuum,
    }
}

/// Runs `gc`.
pub fn run(g: &GlobalArgs, args: &GcArgs, out: &mut dyn Write) -> Result<()> {
    let sink = g.sink(args.maintenance.yes);
    let report = gc::run(&request(args), &g.ctx(), &sink)?;
    output::gc::render(out, output::resolve_format(g.format), &report.gc)?;
    if g.quiet {
        // The report is hidden: the threads an operator must act on are still named on
        // stderr (unreadable ones, and ones that moved while memctl worked).
        for (thread, status, why) in report.problems()? {
            output::quiet_problem(&thread, status, &why);
        }
    }
    report.finish()
}
