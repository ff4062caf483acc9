//! `memctl prune`: delete whole threads — idle ones, or named ones — in short batches beside a
//! live app ([`crate::jobs::prune`]).

use std::io::Write;

use anyhow::Result;

use crate::cli::{GlobalArgs, PruneArgs};
use crate::jobs::prune::{self, Request};
use crate::output::{self};

/// The job's request for these arguments.
pub fn request(args: &PruneArgs) -> Request {
    let m = &args.maintenance;
    let mut threads = args.thread.clone();
    threads.extend(args.thread_ids.iter().cloned());
    Request {
        idle: args.idle.clone(),
        threads,
        batch: args.batch,
        min_idle: m.min_idle.clone(),
        dry_run: m.dry_run,
        vacuum: m.vacuum,
    }
}

/// Runs `prune`.
pub fn run(g: &GlobalArgs, args: &PruneArgs, out: &mut dyn Write) -> Result<()> {
    let sink = g.sink(args.maintenance.yes);
    let report = prune::run(&request(args), &g.ctx(), &sink)?;
    output::prune::render(out, output::resolve_format(g.format), &report.prune)?;
    if g.quiet {
        // The report is hidden: the threads an operator must act on are still named (not
        // the ones --min-idle left alone on purpose).
        for p in &report.problems {
            output::quiet_problem(&p.thread_id, p.status, &p.why);
        }
    }
    report.finish()
}
