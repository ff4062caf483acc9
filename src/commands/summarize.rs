//! `memctl summarize`: older messages become one summary through a model endpoint; the
//! newest stay verbatim. The engine is [`crate::jobs::summarize`], the report
//! `output::rewrite`'s.

use std::io::Write;

use anyhow::Result;

use crate::cli::{CounterArgs, GlobalArgs, SummarizeArgs};
use crate::jobs::summarize::{self, Request};
use crate::output::{self, rewrite::Stream};

/// Runs `summarize`.
pub fn run(g: &GlobalArgs, args: &SummarizeArgs, out: &mut dyn Write) -> Result<()> {
    let counter = super::resolve_counter(&CounterArgs {
        counter: args.counter,
        model: None,
    })?;
    let req = Request {
        threads: args.target.threads(),
        min_tokens: args.min_tokens,
        keep: args.keep,
        keep_tokens: args.keep_tokens,
        counter,
        endpoint: args.endpoint.clone(),
        model: args.model.clone(),
        api_key_env: args.api_key_env.clone(),
        concurrency: args.concurrency,
        timeout: args.timeout,
        retries: args.retries,
        max_input_tokens: args.max_input_tokens,
        prompt_file: args.prompt_file.clone(),
        summary_key: args.summary_key.clone(),
        new_key: args.new_key,
        rewrite: args.rewrite.rewrite(),
    };
    let sink = g.sink(false);
    let single = req.threads.thread.is_some();
    let format = output::resolve_format(g.format);
    let mut stream = Stream::new(format, req.rewrite.dry_run, g.quiet && !single, out);
    summarize::run(&req, &g.ctx(), &sink, &mut stream)?.verdict
}
