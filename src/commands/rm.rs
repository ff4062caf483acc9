//! `memctl rm`: remove messages from a thread; `--purge` scrubs them from its history too.
//! The engine is [`crate::jobs::rm`], the report `output::rewrite`'s.

use std::io::Write;

use anyhow::Result;

use crate::cli::{GlobalArgs, KindArg, RmArgs};
use crate::jobs::rm::{self, Request};
use crate::model::Kind;
use crate::output::{self, rewrite::Stream};

/// Runs `rm`.
pub fn run(g: &GlobalArgs, args: &RmArgs, out: &mut dyn Write) -> Result<()> {
    let req = Request {
        thread: args.thread.thread.clone(),
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
        pattern: args.pattern.clone(),
        all_messages: args.all_messages,
        purge: args.purge,
        rewrite: args.rewrite.rewrite(),
    };
    let sink = g.sink(args.yes);
    let format = output::resolve_format(g.format);
    // One thread: its problems are the run's error, never named apart.
    let mut stream = Stream::new(format, req.rewrite.dry_run, false, out);
    rm::run(&req, &g.ctx(), &sink, &mut stream)?.verdict
}
