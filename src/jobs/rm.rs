//! The `rm` job: remove messages from a thread; `--purge` scrubs them from its history too.

use anyhow::{Context, Result};

use crate::model::Kind;
use crate::ops::edit::plan;
use crate::ops::forget::plan_history_purge;
use crate::ops::remove::{select_with, Selector};

use super::batch::{self, Batches, Done, Options, Rewrite, Target};
use super::{Ctx, Question, Sink};

/// What `rm` is asked to do.
#[derive(Debug, Clone, Default)]
pub struct Request {
    /// The thread.
    pub thread: String,
    /// Remove the messages with these ids (`--id`).
    pub ids: Vec<String>,
    /// Remove the messages at these positions (`--index`; negative from the end).
    pub indices: Vec<i64>,
    /// Remove the messages of these kinds (`--type`).
    pub kinds: Vec<Kind>,
    /// Remove the messages this regular expression matches (`--match`).
    pub pattern: Option<String>,
    /// Remove every message (`--all-messages`).
    pub all_messages: bool,
    /// Scrub the removed messages from the thread's history too (`--purge`).
    pub purge: bool,
    /// How the rewrite runs.
    pub rewrite: Rewrite,
}

/// Runs `rm`, handing `batches` the thread's outcome; with `--purge`, the sink is asked first.
pub fn run(args: &Request, ctx: &Ctx, sink: &dyn Sink, batches: &mut dyn Batches) -> Result<Done> {
    let pattern = args
        .pattern
        .as_deref()
        .map(regex::Regex::new)
        .transpose()
        .context("--match is not a valid regular expression")?;
    // An empty or all-matching pattern (`--match "$SECRET"` with the variable unset) would
    // remove every message: refused, as find and forget refuse it, before anything opens.
    if let Some(re) = pattern
        .as_ref()
        .filter(|re| crate::ops::find::matches_everything(re))
    {
        // The pattern is not echoed: it may be a secret.
        let what = match re.as_str() {
            "" => "is empty",
            _ => "matches the empty string",
        };
        return Err(crate::exit::Usage(format!(
            "--match {what}, so it matches every message; to remove every message on purpose, use --all-messages"
        ))
        .into());
    }
    let selector = Selector {
        ids: args.ids.clone(),
        indices: args.indices.clone(),
        kinds: args.kinds.clone(),
        pattern: pattern.map(crate::ops::patterns::Patterns::one),
        all: args.all_messages,
    };
    let target = Target::thread(&args.thread);
    let opts = Options::of(ctx, &args.rewrite, "rm")?;
    let store = ctx.open_for_writing(opts.dry_run)?;
    // --purge promises the text is gone from the thread: what the pattern matches anywhere in
    // its history (older checkpoints, writes, other channels, additional_kwargs) is found as
    // forget --match finds it, and scrubbed with the removed messages.
    let found = match (&args.pattern, args.purge) {
        (Some(p), true) => {
            let thread = &args.thread;
            crate::read::require_thread(&*store, thread, "")?;
            let pattern = crate::ops::find::Pattern::new(p, true, false)?;
            Some(super::forget::findings(
                &*store, &opts.keys, thread, &pattern,
            )?)
        }
        _ => None,
    };
    let edit = |ed: &crate::ops::edit::Editable| {
        // Outlines read in place; a message's full view only for --match, one at a time.
        // With --purge, a message the pattern matched anywhere in the history (by id) goes
        // from the latest state too, as forget --match takes it: the history scrub removes it
        // (and its tool-call partners) from every row, the new checkpoint included.
        let in_history: Vec<String> = match &found {
            Some(f) => ed
                .outline
                .iter()
                .filter_map(|m| m.id.clone())
                .filter(|id| f.scrub.ids.contains(id) && !selector.ids.contains(id))
                .collect(),
            None => vec![],
        };
        let widened;
        let selector = match in_history.is_empty() {
            true => &selector,
            false => {
                widened = Selector {
                    ids: selector.ids.iter().cloned().chain(in_history).collect(),
                    indices: selector.indices.clone(),
                    kinds: selector.kinds.clone(),
                    pattern: selector.pattern.clone(),
                    all: selector.all,
                };
                &widened
            }
        };
        let removal = select_with(&ed.outline, selector, |i| {
            Ok(ed.message(i)?.searchable_text())
        })?;
        let keep: Vec<usize> = (0..ed.outline.len())
            .filter(|i| !removal.remove.contains(i))
            .collect();
        let scrub = match &found {
            Some(f) => Some(f.scrub.clone()),
            None => args.purge.then(Default::default),
        };
        let planned = plan(ed, &keep, removal.notes, opts.dry_run, scrub)?;
        let planned = match &found {
            Some(f) => plan_history_purge(ed, planned, f, opts.dry_run),
            None => planned,
        };
        // --purge rewrites the thread's history: asked first (never on a dry run).
        if args.purge && !opts.dry_run && (planned.update.is_some() || planned.scrub_at.is_some()) {
            sink.confirm(&Question {
                command: "rm",
                action: format!(
                    "remove {} and scrub {} from every older checkpoint and write of the thread",
                    crate::text::human::count(planned.outcome.removed.len() as u64, "message"),
                    if planned.outcome.removed.len() == 1 {
                        "it"
                    } else {
                        "them"
                    }
                ),
                threads: vec![ed.thread_id.clone()],
            })?;
        }
        Ok(planned)
    };
    batch::run_reported(&*store, &target, &opts, &edit, ctx.quiet, sink, batches)
}
