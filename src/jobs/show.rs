//! `show --thread T`: a checkpoint's state (the latest, or the one named), read for the
//! chat transcript, the other channels and what the thread waits on.

use anyhow::Result;

use super::{Ctx, Sink};

/// Which checkpoint.
#[derive(Debug, Clone, Default)]
pub struct Request {
    /// The thread.
    pub thread: String,
    /// The checkpoint (an id or a prefix; `None`: the latest).
    pub checkpoint: Option<String>,
}

/// The state of the checkpoint `req` names, in `ctx.ns` (as `get_state` shows it:
/// DeltaChannels rebuilt).
pub fn run(req: &Request, ctx: &Ctx, _sink: &dyn Sink) -> Result<crate::read::State> {
    let store = ctx.open_read_only()?;
    let keys = ctx.keys();
    crate::read::load_state(
        &*store,
        &keys,
        &req.thread,
        &ctx.ns,
        req.checkpoint.as_deref(),
    )
}
