//! `memctl export`: threads into a new SQLite file in SqliteSaver's layout, optionally
//! redacted ([`crate::jobs::export`]).

use std::io::Write;

use anyhow::Result;

use crate::cli::{ExportArgs, GlobalArgs};
use crate::jobs::export::{self, Request};
use crate::output::copy::write_export;

/// Runs `export`.
pub fn run(g: &GlobalArgs, args: &ExportArgs, out: &mut dyn Write) -> Result<()> {
    let mut threads = args.thread.clone();
    threads.extend(args.thread_ids.iter().cloned());
    let req = Request {
        threads,
        all: args.all,
        output: args.output.clone(),
        force: args.force,
        redact: args.redact.clone(),
    };
    let sink = g.sink(false);
    let report = export::run(&req, &g.ctx(), &sink)?;
    write_export(out, crate::output::resolve_format(g.format), &report.export)?;
    report.finish()
}
