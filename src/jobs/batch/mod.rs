//! The one batch driver of the rewrites (trim, rm, summarize, forget's scrub): choosing
//! threads, reading them, planning their edits on worker threads, writing each batch in one
//! transaction, and noticing edits a live app superseded.

use anyhow::Result;

use crate::storage::{Access, CheckpointStore};

use super::Ctx;

/// Opens the database for a job that writes (never creating it); with `dry_run`, read-only,
/// so a dry run works on a file or directory memctl may not write and cannot change
/// anything.
pub fn open_for_writing(ctx: &Ctx, dry_run: bool) -> Result<Box<dyn CheckpointStore>> {
    if !ctx.ns.is_empty() {
        return Err(crate::exit::Usage(format!(
            "rewrites work on the root namespace; drop --ns '{}'",
            ctx.ns
        ))
        .into());
    }
    let access = if dry_run {
        Access::ReadOnly
    } else {
        Access::ReadWrite
    };
    ctx.open(access)
}
