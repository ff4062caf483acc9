//! `store sweep`: deletes the Store's expired items (as the store's `sweep_ttl` would).

use anyhow::Result;

use super::{open_for_removal, removal_report, RemovalReport};
use crate::jobs::{Ctx, Sink};

/// How to sweep.
#[derive(Debug, Clone, Default)]
pub struct Request {
    /// Delete nothing: report what would be deleted.
    pub dry_run: bool,
}

/// Deletes every expired item (none is asked about: the items had expired).
pub fn run(req: &Request, ctx: &Ctx, _sink: &dyn Sink) -> Result<RemovalReport> {
    let mut store = open_for_removal(ctx, req.dry_run)?;
    let removal = store.sweep(req.dry_run)?;
    Ok(removal_report(removal, req.dry_run))
}
