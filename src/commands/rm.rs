//! `memctl rm`: remove messages from a thread; `--purge` scrubs them from its history too.

use std::io::Write;

use anyhow::{Context, Result};

use crate::cli::{GlobalArgs, KindArg, RmArgs, TargetArgs};
use crate::model::Kind;
use crate::ops::remove::{select_with, Selector};

use super::rewrite;

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
    let target = TargetArgs {
        thread: Some(args.thread.thread.clone()),
        thread_id: None,
        all: false,
        idle: None,
        min_messages: None,
    };
    rewrite::run_batch(g, &target, &args.rewrite, "rm", out, &|ed| {
        // Outlines read in place; a message's full view only for --match, one at a time.
        let removal = select_with(&ed.outline, &selector, |i| {
            Ok(ed.message(i)?.searchable_text())
        })?;
        let keep: Vec<usize> = (0..ed.outline.len())
            .filter(|i| !removal.remove.contains(i))
            .collect();
        rewrite::plan(ed, &keep, removal.notes, args.rewrite.dry_run, args.purge)
    })
}
