//! What `gc` and `prune` still take from here: [`open_for_writing`]. The batch driver of the
//! rewrites is [`crate::jobs::batch`].

use anyhow::Result;

use crate::cli::GlobalArgs;
use crate::storage::CheckpointStore;

/// Opens the database for a command that writes ([`crate::jobs::batch::open_for_writing`]).
pub fn open_for_writing(g: &GlobalArgs, dry_run: bool) -> Result<Box<dyn CheckpointStore>> {
    crate::jobs::batch::open_for_writing(&g.ctx(), dry_run)
}
