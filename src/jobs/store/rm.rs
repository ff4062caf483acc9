//! `store rm`: deletes items of one namespace (all of them, or the keys given).

use anyhow::Result;

use super::{check_namespace, open_for_removal, removal_report, RemovalReport};
use crate::jobs::{Ctx, Question, Sink};
use crate::text::human::{bytes, count};

/// Which items.
#[derive(Debug, Clone, Default)]
pub struct Request {
    /// The namespace: its labels joined with '.' (only it, not those below it).
    pub namespace: String,
    /// Keys to delete; none deletes every item of the namespace.
    pub keys: Vec<String>,
    /// Delete nothing: report what would be deleted.
    pub dry_run: bool,
}

/// Deletes the items `req` names (after `sink`'s question, when it asks and there is
/// something to delete); a key the namespace does not have is noted to `sink`.
pub fn run(req: &Request, ctx: &Ctx, sink: &dyn Sink) -> Result<RemovalReport> {
    check_namespace(&req.namespace)?;
    let mut store = open_for_removal(ctx, req.dry_run)?;
    if !req.dry_run && sink.asks() {
        // On a terminal: what would go (a dry run writes nothing), then the question.
        let would = store.delete(&req.namespace, &req.keys, true)?;
        if !would.items.is_empty() {
            sink.confirm(&Question {
                command: "store rm",
                action: format!(
                    "delete {} of namespace '{}' ({} with their vectors)",
                    count(would.items.len() as u64, "item"),
                    req.namespace,
                    bytes(would.items.iter().map(|i| i.bytes).sum()),
                ),
                threads: Vec::new(),
            })?;
        }
    }
    let removal = store.delete(&req.namespace, &req.keys, req.dry_run)?;
    let missing: Vec<String> = req
        .keys
        .iter()
        .filter(|k| !removal.items.iter().any(|i| &i.key == *k))
        .map(|k| format!("'{k}'"))
        .collect();
    if !missing.is_empty() {
        sink.note(&format!(
            "note: no item {} in namespace '{}'",
            missing.join(", "),
            req.namespace
        ));
    }
    Ok(removal_report(removal, req.dry_run))
}
