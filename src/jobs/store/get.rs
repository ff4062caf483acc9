//! `store get`: one item's value.

use anyhow::{anyhow, Result};

use super::check_namespace;
use crate::jobs::{Ctx, Sink};
use crate::storage::Access;
use crate::text::escape::line_breaks;

/// Which item.
#[derive(Debug, Clone, Default)]
pub struct Request {
    /// The namespace: its labels joined with '.'.
    pub namespace: String,
    /// The item's key.
    pub key: String,
}

/// Reads the value of the item `req` names (an error when there is none, or when its value
/// is not JSON). An expired item is given anyway, with a note to `sink`.
pub fn run(req: &Request, ctx: &Ctx, sink: &dyn Sink) -> Result<serde_json::Value> {
    check_namespace(&req.namespace)?;
    let store = ctx.open_store(Access::ReadOnly)?;
    let item = store.get(&req.namespace, &req.key)?.ok_or_else(|| {
        anyhow!(
            "no item '{}' in namespace '{}'",
            line_breaks(&req.key),
            line_breaks(&req.namespace)
        )
    })?;
    let value = serde_json::from_slice::<serde_json::Value>(&item.value).map_err(|e| {
        anyhow!(
            "the value of item '{}' in namespace '{}' is not JSON ({e}); it was left as it is",
            line_breaks(&req.key),
            line_breaks(&req.namespace)
        )
    })?;
    if item.expired {
        sink.note(&format!(
            "note: item '{}' of '{}' expired at {} and is shown anyway; `memctl store sweep` deletes it (as the store's sweep_ttl would)",
            req.key,
            req.namespace,
            item.expires_at.as_deref().unwrap_or("?")
        ));
    }
    Ok(value)
}
