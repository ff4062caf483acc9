//! `memctl find PATTERN`: flags -> [`crate::jobs::find`] -> [`crate::output::find`].

use std::io::Write;

use anyhow::Result;

use crate::cli::{FindArgs, Format, GlobalArgs};
use crate::jobs::find::{self, Request};
use crate::jobs::Sink;
use crate::output::{self, find::Found, notes::Terminal};

/// Runs `find`.
pub fn run(g: &GlobalArgs, args: &FindArgs, out: &mut dyn Write) -> Result<()> {
    let req = Request {
        pattern: args.pattern.clone(),
        regex: args.regex,
        ignore_case: args.ignore_case,
        meta: args.meta.clone(),
        history: args.history,
        thread: args.thread.clone(),
        jobs: args.jobs,
    };
    let format = output::resolve_format(g.format);
    // The job's one note (a database with a store alone) is printed with --quiet too.
    let sink = Terminal {
        yes: false,
        quiet: false,
    };
    let mut found = Found::new(out, format, args.count);
    let report = find::run(&req, &g.ctx(), &sink, &mut |h| found.add(h))?;
    let hits = found.finish(&report.store_hits)?;
    report.check()?;
    if hits == 0 && report.store_hits.is_empty() {
        // Like grep: nothing matched is exit 1 (the empty result is the answer: no error
        // line); a table says it in a note on stderr, stdout stays empty.
        if !g.quiet && !args.count && format == Format::Table {
            sink.note("no hits");
        }
        return Err(crate::exit::NoMatch.into());
    }
    Ok(())
}
