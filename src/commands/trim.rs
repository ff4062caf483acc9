//! `memctl trim`: keep the newest messages of threads (LangChain's trim_messages rules).

use std::io::Write;

use anyhow::Result;

use crate::cli::{GlobalArgs, TrimArgs};
use crate::ops::edit::{plan, Editable};
use crate::ops::window::{trim_window, Limit};

use super::batch::{self, Options, Target};

/// Runs `trim`.
pub fn run(g: &GlobalArgs, args: &TrimArgs, out: &mut dyn Write) -> Result<()> {
    let counter = super::resolve_counter(&args.counter)?;
    let limit = match (args.keep, args.max_tokens) {
        (Some(n), _) => Limit::Messages(n),
        (None, Some(t)) => Limit::Tokens {
            max: t,
            overhead: counter.list_overhead(),
        },
        (None, None) => anyhow::bail!("give --keep N or --max-tokens N"),
    };
    let target = Target::from_args(g, &args.target)?;
    let opts = Options::from_args(g, &args.rewrite, "trim")?;
    let store = batch::open_for_writing(g, opts.dry_run)?;
    let edit = |ed: &Editable| {
        let costs = window_costs(ed, limit, counter)?;
        let window = trim_window(&ed.outline, &costs, limit, args.keep_first);
        let mut planned = plan(ed, &window.keep, window.notes, opts.dry_run, None)?;
        // A budget applied in another counter than the approximate one: the report counts in
        // it too (the list overhead included, as `tokens` counts a list).
        if let Limit::Tokens { overhead, .. } = limit {
            if !matches!(counter, crate::tokens::Counter::Approx) {
                let kept: u64 = window.keep.iter().filter_map(|&i| costs.get(i)).sum();
                planned.outcome.tokens = (overhead + costs.iter().sum::<u64>(), overhead + kept);
                planned.outcome.counter = Some(counter.name());
            }
        }
        Ok(planned)
    };
    let (_, verdict) = batch::run_and_report(g, &*store, &target, &opts, &edit, out)?;
    verdict
}

/// Per-message token counts a window needs (none for a message-count limit): the approximate
/// counts read in place, or the chosen counter over the full messages.
pub fn window_costs(
    ed: &Editable,
    limit: Limit,
    counter: crate::tokens::Counter,
) -> Result<Vec<u64>> {
    match (limit, counter) {
        (Limit::Messages(_), _) => Ok(vec![]),
        (Limit::Tokens { .. }, crate::tokens::Counter::Approx) => {
            Ok(ed.outline.iter().map(|m| m.approx_tokens).collect())
        }
        // One message view at a time (a chunk per core).
        (Limit::Tokens { .. }, c) => {
            crate::par::par_in_order(ed.outline.len(), |i| c.count_message(&ed.message(i)?))
                .collect()
        }
    }
}
