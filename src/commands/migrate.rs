//! `memctl migrate --to DB`: every thread of `--db`, then its LangGraph Store, into another
//! database of either backend ([`crate::jobs::migrate`]).

use std::io::Write;

use anyhow::Result;

use crate::cli::{GlobalArgs, MigrateArgs};
use crate::jobs::migrate::{self, Request};
use crate::output::copy::write_migrate;
use crate::output::notes::Terminal;

/// Runs `migrate`.
pub fn run(g: &GlobalArgs, args: &MigrateArgs, out: &mut dyn Write) -> Result<()> {
    let req = Request {
        to: args.to.clone(),
        replace: args.replace,
        dry_run: args.dry_run,
        without_vectors: args.without_vectors,
        changes: args.changes.value_changes(),
    };
    // The one note migrate has ("no checkpoints in this database", a store-only source) was
    // always written, even with --quiet.
    let sink = Terminal {
        yes: false,
        quiet: false,
    };
    let report = migrate::run(&req, &g.ctx(), &sink)?;
    write_migrate(
        out,
        crate::output::resolve_format(g.format),
        &report.migrate,
    )?;
    report.finish()
}
