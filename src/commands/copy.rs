//! `memctl copy`: a thread (or a fork of it) to a new thread id, here or in another database
//! ([`crate::jobs::copy`]).

use std::io::Write;

use anyhow::Result;

use crate::cli::{CopyArgs, GlobalArgs};
use crate::jobs::copy::{self, Report, Request};
use crate::output::copy::{write_copies, write_copy};

/// Runs `copy`.
pub fn run(g: &GlobalArgs, args: &CopyArgs, out: &mut dyn Write) -> Result<()> {
    let req = Request {
        thread: args.thread.clone().or_else(|| args.thread_id.clone()),
        all: args.all,
        idle: args.idle.clone(),
        meta: args.meta.clone(),
        to_thread: args.to_thread.clone(),
        to: args.to.clone(),
        at: args.at.clone(),
        replace: args.replace,
        dry_run: args.dry_run,
        changes: args.changes.value_changes(),
    };
    let sink = g.sink(false);
    let format = crate::output::resolve_format(g.format);
    match copy::run(&req, &g.ctx(), &sink)? {
        Report::One(r) => write_copy(out, format, &r),
        Report::All(copies) => {
            write_copies(out, format, &copies.report)?;
            copies.finish()
        }
    }
}
