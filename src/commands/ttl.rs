//! `memctl ttl --config langgraph.json`: the retention a LangGraph deployment declares applied
//! to a self-hosted database, from cron ([`crate::jobs::ttl`]). Exit codes as the parts': the
//! worst.

use std::io::Write;

use anyhow::Result;

use crate::cli::{GlobalArgs, TtlArgs};
use crate::jobs::ttl::{self, CheckpointerPart, Request};
use crate::output::{self};

/// Runs `ttl`.
pub fn run(g: &GlobalArgs, args: &TtlArgs, out: &mut dyn Write) -> Result<()> {
    let req = Request {
        config: args.config.clone(),
        dry_run: args.dry_run,
    };
    // On a terminal the prune / gc part asks its own question, unless --yes.
    let sink = g.sink(args.yes);
    let report = ttl::run(&req, &g.ctx(), &sink)?;
    output::ttl::render(out, output::resolve_format(g.format), &report)?;
    if g.quiet {
        // The report is hidden: the threads an operator must act on are still named.
        match &report.checkpointer {
            Some(CheckpointerPart::Prune { prune: Some(p), .. }) => {
                for p in &p.problems {
                    output::quiet_problem(&p.thread_id, p.status, &p.why);
                }
            }
            Some(CheckpointerPart::Gc { threads, .. }) => {
                for gc in threads.iter().filter_map(|(_, r)| r.as_ref()) {
                    for (thread, status, why) in gc.problems()? {
                        output::quiet_problem(&thread, status, &why);
                    }
                }
            }
            _ => {}
        }
    }
    report.finish()
}
