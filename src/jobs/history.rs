//! `history --thread T`: a thread's checkpoints, newest first.

use anyhow::Result;

use super::{Ctx, Sink};
use crate::read::history::{HistoryRecord, Selection};

/// Which checkpoints of which thread.
#[derive(Debug, Clone, Default)]
pub struct Request {
    /// The thread.
    pub thread: String,
    /// At most this many checkpoints.
    pub limit: Option<usize>,
    /// Only those whose `metadata.source` is this (`input`, `loop`, `update`, `fork`).
    pub source: Option<String>,
    /// Only those before this checkpoint (an id).
    pub before: Option<String>,
}

/// The checkpoints of `req.thread` in `ctx.ns`, newest first, as `history` lists them.
pub fn run(req: &Request, ctx: &Ctx, _sink: &dyn Sink) -> Result<Vec<HistoryRecord>> {
    let store = ctx.open_read_only()?;
    let keys = ctx.keys();
    let select = Selection {
        before: req.before.as_deref(),
        source: req.source.as_deref(),
        limit: req.limit,
    };
    crate::read::history::checkpoints(&*store, &keys, &req.thread, &ctx.ns, &select)
}
