//! `memctl import FILE`: threads of another database copied into `--db`
//! ([`crate::jobs::import`]).

use std::io::Write;

use anyhow::Result;

use crate::cli::{GlobalArgs, ImportArgs};
use crate::jobs::import::{self, Request};
use crate::output::copy::write_copies;

/// Runs `import`.
pub fn run(g: &GlobalArgs, args: &ImportArgs, out: &mut dyn Write) -> Result<()> {
    let req = Request {
        file: args.file.clone(),
        threads: args.thread.clone(),
        to_thread: args.to_thread.clone(),
        replace: args.replace,
        dry_run: args.dry_run,
        changes: args.changes.value_changes(),
    };
    let sink = g.sink(false);
    let copies = import::run(&req, &g.ctx(), &sink)?;
    write_copies(out, crate::output::resolve_format(g.format), &copies.report)?;
    copies.finish()
}
