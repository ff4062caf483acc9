//! `memctl rm`: remove messages from a thread; `--purge` scrubs them from its history too.

use std::io::Write;

use anyhow::{Context, Result};

use crate::cli::{GlobalArgs, KindArg, RmArgs};
use crate::model::Kind;
use crate::ops::edit::plan;
use crate::ops::remove::{select_with, Selector};

use super::batch::{self, Options, Target};

/// Runs `rm`.
pub fn run(g: &GlobalArgs, args: &RmArgs, out: &mut dyn Write) -> Result<()> {
    let pattern = args
        .pattern
        .as_deref()
        .map(regex::Regex::new)
        .transpose()
        .context("--match is not a valid regular expression")?;
    let selector = Selector {
        ids: args.id.clone(),
        indices: args.index.clone(),
        kinds: args
            .kind
            .iter()
            .map(|k| match k {
                KindArg::Human => Kind::Human,
                KindArg::Ai => Kind::Ai,
                KindArg::Tool => Kind::Tool,
                KindArg::System => Kind::System,
            })
            .collect(),
        pattern,
        all: args.all_messages,
    };
    let target = Target::thread(&args.thread.thread);
    let opts = Options::from_args(g, &args.rewrite, "rm")?;
    let store = batch::open_for_writing(g, opts.dry_run)?;
    let edit = |ed: &crate::ops::edit::Editable| {
        // Outlines read in place; a message's full view only for --match, one at a time.
        let removal = select_with(&ed.outline, &selector, |i| {
            Ok(ed.message(i)?.searchable_text())
        })?;
        let keep: Vec<usize> = (0..ed.outline.len())
            .filter(|i| !removal.remove.contains(i))
            .collect();
        let planned = plan(
            ed,
            &keep,
            removal.notes,
            opts.dry_run,
            args.purge.then(Default::default),
        )?;
        // --purge rewrites the thread's history: on a terminal, asked first.
        if args.purge && (planned.update.is_some() || planned.scrub_at.is_some()) {
            crate::output::confirm::confirm(
                &crate::output::confirm::Question {
                    command: "rm",
                    action: format!(
                        "remove {} and scrub {} from every older checkpoint and write of the thread",
                        crate::output::human::count(planned.outcome.removed.len() as u64, "message"),
                        if planned.outcome.removed.len() == 1 { "it" } else { "them" }
                    ),
                    threads: vec![ed.thread_id.clone()],
                },
                args.yes,
                opts.dry_run,
            )?;
        }
        Ok(planned)
    };
    let (_, verdict) = batch::run_and_report(g, &*store, &target, &opts, &edit, out)?;
    verdict
}
