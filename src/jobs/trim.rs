//! The `trim` job: keep the newest messages of threads (LangChain's trim_messages rules).

use anyhow::Result;

use crate::ops::edit::{plan, Editable};
use crate::ops::window::{trim_window, Limit};
use crate::tokens::Counter;

use super::batch::{self, Batches, Done, Options, Rewrite, Target, Threads};
use super::{Ctx, Sink};

/// What `trim` is asked to do.
#[derive(Debug, Clone)]
pub struct Request {
    /// The threads.
    pub threads: Threads,
    /// Keep the newest this many messages (`--keep`).
    pub keep: Option<u64>,
    /// Keep the newest messages within this many tokens (`--max-tokens`).
    pub max_tokens: Option<u64>,
    /// The counter a token budget is counted with.
    pub counter: Counter,
    /// Keep the first message too (`--keep-first`).
    pub keep_first: bool,
    /// How the rewrite runs.
    pub rewrite: Rewrite,
}

/// Runs `trim`, handing `batches` the outcomes as the threads are done.
pub fn run(req: &Request, ctx: &Ctx, sink: &dyn Sink, batches: &mut dyn Batches) -> Result<Done> {
    let counter = req.counter;
    let limit = match (req.keep, req.max_tokens) {
        (Some(n), _) => Limit::Messages(n),
        (None, Some(t)) => Limit::Tokens {
            max: t,
            overhead: counter.list_overhead(),
        },
        (None, None) => anyhow::bail!("give --keep N or --max-tokens N"),
    };
    let target = Target::of(ctx, &req.threads)?;
    let opts = Options::of(ctx, &req.rewrite, "trim")?;
    let store = ctx.open_for_writing(opts.dry_run)?;
    let edit = |ed: &Editable| {
        let costs = window_costs(ed, limit, counter)?;
        let window = trim_window(&ed.outline, &costs, limit, req.keep_first);
        let mut planned = plan(ed, &window.keep, window.notes, opts.dry_run, None)?;
        // A budget applied in another counter than the approximate one: the report counts in
        // it too (the list overhead included, as `tokens` counts a list).
        if let Limit::Tokens { overhead, .. } = limit {
            if !matches!(counter, Counter::Approx) {
                let kept: u64 = window.keep.iter().filter_map(|&i| costs.get(i)).sum();
                planned.outcome.tokens = (overhead + costs.iter().sum::<u64>(), overhead + kept);
                planned.outcome.counter = Some(counter.name());
            }
        }
        Ok(planned)
    };
    batch::run_reported(&*store, &target, &opts, &edit, ctx.quiet, sink, batches)
}

/// Per-message token counts a window needs (none for a message-count limit): the approximate
/// counts read in place, or the chosen counter over the full messages.
pub fn window_costs(ed: &Editable, limit: Limit, counter: Counter) -> Result<Vec<u64>> {
    match (limit, counter) {
        (Limit::Messages(_), _) => Ok(vec![]),
        (Limit::Tokens { .. }, Counter::Approx) => {
            Ok(ed.outline.iter().map(|m| m.approx_tokens).collect())
        }
        // One message view at a time (a chunk per core).
        (Limit::Tokens { .. }, c) => {
            crate::par::par_in_order(ed.outline.len(), |i| c.count_message(&ed.message(i)?))
                .collect()
        }
    }
}
