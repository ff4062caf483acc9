//! `memctl threads list`: flags -> [`crate::jobs::threads`] -> [`crate::output::threads`].

use std::io::Write;

use anyhow::Result;

use crate::cli::{GlobalArgs, ThreadSort, ThreadsListArgs};
use crate::jobs::threads::{self, Request, Sort};
use crate::output::{self, threads::Listed};

/// Runs `threads list`: the threads are read a batch at a time in thread-id order and written
/// as they come (`--sort thread`, JSON) or once all are read (sorted, or a table), with
/// memory flat in the number of threads ([`crate::output::listing`]).
pub fn list(g: &GlobalArgs, args: &ThreadsListArgs, out: &mut dyn Write) -> Result<()> {
    let req = request(args);
    let format = output::resolve_format(g.format);
    let sink = g.sink(false);
    let mut listed = Listed::new(out, format, req.sort, req.limit);
    let report = threads::run(&req, &g.ctx(), &sink, &mut listed)?;
    let written = listed.finish()?;
    output::threads::notes(&report, written.flagged, format, g.quiet);
    crate::jobs::report_unreadable(
        &report.unreadable,
        report.total,
        "are listed without their state",
    )
}

/// The job's request for `args`.
fn request(args: &ThreadsListArgs) -> Request {
    Request {
        sort: match args.sort {
            ThreadSort::Updated => Sort::Updated,
            ThreadSort::Size => Sort::Size,
            ThreadSort::Messages => Sort::Messages,
            ThreadSort::Checkpoints => Sort::Checkpoints,
            ThreadSort::Tokens => Sort::Tokens,
            ThreadSort::Thread => Sort::Thread,
        },
        limit: args.limit,
        min_tokens: args.min_tokens,
        meta: args.meta.clone(),
        jobs: args.jobs,
    }
}
