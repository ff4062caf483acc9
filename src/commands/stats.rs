//! `memctl stats`: what is taking the space ([`crate::jobs::stats`]).

use std::io::Write;

use anyhow::Result;

use crate::cli::{GlobalArgs, StatsArgs};
use crate::jobs::stats::{self, Request};
use crate::output::notes::Terminal;
use crate::output::stats::StatsReport;
use crate::output::{self};

/// Runs `stats`: the job's measures → report.
pub fn run(g: &GlobalArgs, args: &StatsArgs, out: &mut dyn Write) -> Result<()> {
    // The one note stats has ("no checkpoints in this database") was always written, even
    // with --quiet.
    let sink = Terminal {
        yes: false,
        quiet: false,
    };
    let report = stats::run(&Request { top: args.top }, &g.ctx(), &sink)?;
    output::stats::render(
        out,
        output::resolve_format(g.format),
        &StatsReport::new(&report),
    )?;
    report.finish()
}
