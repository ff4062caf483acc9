//! `memctl trim`: keep the newest messages of threads (LangChain's trim_messages rules); the
//! engine is [`crate::jobs::trim`], the report `output::rewrite`'s.

use std::io::Write;

use anyhow::Result;

use crate::cli::{GlobalArgs, TrimArgs};
use crate::jobs::trim::{self, Request};
use crate::output::{self, rewrite::Stream};

/// Runs `trim`.
pub fn run(g: &GlobalArgs, args: &TrimArgs, out: &mut dyn Write) -> Result<()> {
    let req = Request {
        threads: args.target.threads(),
        keep: args.keep,
        max_tokens: args.max_tokens,
        counter: super::resolve_counter(&args.counter)?,
        keep_first: args.keep_first,
        rewrite: args.rewrite.rewrite(),
    };
    let sink = g.sink(false);
    let single = req.threads.thread.is_some();
    let format = output::resolve_format(g.format);
    let mut stream = Stream::new(format, req.rewrite.dry_run, g.quiet && !single, out);
    trim::run(&req, &g.ctx(), &sink, &mut stream)?.verdict
}
