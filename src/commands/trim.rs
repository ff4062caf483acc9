//! `memctl trim`: keep the newest messages of threads (LangChain's trim_messages rules); the
//! engine is [`crate::jobs::trim`], the report `output::rewrite`'s.

use std::io::Write;

use anyhow::Result;

use crate::cli::{GlobalArgs, TrimArgs};
use crate::jobs::batch::{Rewrite, Threads};
use crate::jobs::trim::{self, Request};
use crate::output::{self, notes::Terminal, rewrite::Stream};

/// Runs `trim`.
pub fn run(g: &GlobalArgs, args: &TrimArgs, out: &mut dyn Write) -> Result<()> {
    let req = Request {
        threads: Threads {
            thread: args.target.thread.clone(),
            idle: args.target.idle.clone(),
            min_messages: args.target.min_messages,
        },
        keep: args.keep,
        max_tokens: args.max_tokens,
        counter: super::resolve_counter(&args.counter)?,
        keep_first: args.keep_first,
        rewrite: Rewrite {
            dry_run: args.rewrite.dry_run,
            force: args.rewrite.force,
            settle: args.rewrite.settle.clone(),
        },
    };
    let sink = Terminal {
        yes: false,
        quiet: g.quiet,
    };
    let single = req.threads.thread.is_some();
    let format = output::resolve_format(g.format);
    let mut stream = Stream::new(format, req.rewrite.dry_run, g.quiet && !single, out);
    trim::run(&req, &g.ctx(), &sink, &mut stream)?.verdict
}
