//! `memctl diff --thread T`: flags -> [`crate::jobs::diff`] -> [`crate::output::diff`].

use std::io::Write;

use anyhow::Result;

use crate::cli::{DiffArgs, GlobalArgs};
use crate::jobs::diff::{self, Request};
use crate::output::{self};

/// Runs `diff`.
pub fn run(g: &GlobalArgs, args: &DiffArgs, out: &mut dyn Write) -> Result<()> {
    let req = Request {
        thread: args.thread.thread.clone(),
        from: args.from.clone(),
        to: args.to.clone(),
    };
    let format = output::resolve_format(g.format);
    let sink = g.sink(false);
    diff::run(&req, &g.ctx(), &sink, &mut |report| {
        output::diff::render(out, format, report)
    })
}
