//! `memctl dump --thread T`: flags -> [`crate::jobs::dump`] -> [`crate::output::dump`]: the
//! messages of a state as `model_dump()` dictionaries, or with `--raw` the whole decoded
//! checkpoint.
//!
//! A thread's messages are written one by one (decoded and serialized a chunk at a time on
//! all cores) through the streaming JSON writer the read commands share
//! ([`crate::output::dump`], [`crate::output::stream`]).

use std::io::Write;

use anyhow::Result;

use crate::cli::{DumpArgs, Format, GlobalArgs};
use crate::jobs::dump::{self, Report, Request};
use crate::output::{self};

/// Runs `dump`.
pub fn run(g: &GlobalArgs, args: &DumpArgs, out: &mut dyn Write) -> Result<()> {
    let req = Request {
        thread: args.thread.thread.clone(),
        checkpoint: args.checkpoint.clone(),
        raw: args.raw,
    };
    let sink = g.sink(false);
    let report = dump::run(&req, &g.ctx(), &sink)?;
    // dump is for machines: JSON unless JSON lines were asked for.
    let format = match g.format {
        Some(Format::Jsonl) => Format::Jsonl,
        _ => Format::Json,
    };
    match &report {
        Report::Raw(doc) => output::write_document(out, format, doc),
        Report::Messages { .. } => output::dump::write_messages(out, format, report.list()?),
    }
}
