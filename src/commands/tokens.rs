//! `memctl tokens`: flags -> [`crate::jobs::tokens`] -> [`crate::output::tokens`].

use std::io::Write;

use anyhow::Result;

use crate::cli::{Format, GlobalArgs, TokensArgs, TokensSort};
use crate::jobs::tokens::{self, Report, Request};
use crate::model::Message;
use crate::output::listing::{Listing, Order};
use crate::output::tokens::Listed;
use crate::output::{self, human};

/// Runs `tokens`.
pub fn run(g: &GlobalArgs, args: &TokensArgs, out: &mut dyn Write) -> Result<()> {
    let ctx = g.ctx();
    let format = output::resolve_format(g.format);
    let sink = g.sink(false);
    let preview = |m: &Message| human::preview(&m.summary_text(), 50);
    let preview: Option<&tokens::Preview> = (format == Format::Table).then_some(&preview);
    let req = Request {
        thread: args.thread.clone(),
        counter: args.counter.choice(),
        jobs: args.jobs,
    };
    let order = match args.sort {
        TokensSort::Tokens => Order::Descending,
        TokensSort::Thread => Order::AsRead,
    };
    // The name the rows give the counter (an unknown model is the job's error).
    let counter_name = req.counter.counter().ok().flatten().map(|c| c.name());
    let mut listed = Listed::new(
        Listing::new(out, format, order, args.limit),
        counter_name.as_deref(),
    );
    match tokens::run(&req, &ctx, &sink, preview, &mut listed)? {
        Report::Messages(r) => {
            output::tokens::write_messages(listed.listing.into_writer(), format, &r)
        }
        Report::Usage(r) => output::tokens::write_usage(listed.listing.into_writer(), format, &r),
        Report::Threads { total, unreadable } => {
            let header = output::tokens::threads_tokens_header(counter_name.as_deref());
            let (written, out) =
                listed
                    .listing
                    .finish_then(&["thread_id", "messages", &header], &[1, 2], None)?;
            if format == Format::Table {
                output::tokens::write_threads_total(out, counter_name.as_deref(), &written)?;
            }
            crate::jobs::report_unreadable(&unreadable, total, "are left out")
        }
    }
}
