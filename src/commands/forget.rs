//! `memctl forget`: erase a person's data from the whole database, with proof. The engine is
//! [`crate::jobs::forget`], the report `output::forget`'s.

use std::io::Write;

use anyhow::Result;

use crate::cli::{ForgetArgs, GlobalArgs};
use crate::jobs::forget::{self, Request};
use crate::output::notes::Terminal;

/// Runs `forget`.
pub fn run(g: &GlobalArgs, args: &ForgetArgs, out: &mut dyn Write) -> Result<()> {
    let req = Request {
        threads: args.thread.clone(),
        meta: args.meta.clone(),
        pattern: args.pattern.clone(),
        regex: args.regex,
        ignore_case: args.ignore_case,
        receipt: args.receipt.clone(),
        rewrite: args.rewrite.rewrite(),
    };
    // forget's one note ("a LangGraph store only") has always been written with --quiet too:
    // kept so (the sink's other uses, the question and the bars, do not depend on `quiet`).
    let sink = Terminal {
        yes: args.yes,
        quiet: false,
    };
    let report = forget::run(&req, &g.ctx(), &sink)?;
    crate::output::forget::render(g.format, &report.receipt, &report.planned, out)?;
    report.verdict()
}
