//! `store namespaces`: the Store's namespaces, with their items, bytes and expired items.

use anyhow::Result;

use super::{check_namespace, namespace_record, NamespaceRecord};
use crate::jobs::{Ctx, Sink};
use crate::ops::store::to_depth;
use crate::storage::Access;

/// Which namespaces.
#[derive(Debug, Clone, Default)]
pub struct Request {
    /// Only this namespace and those below it (labels joined with '.').
    pub prefix: Option<String>,
    /// Cut namespaces to their first N labels and add up what falls together.
    pub max_depth: Option<u32>,
}

/// Lists the namespaces `req` asks for.
pub fn run(req: &Request, ctx: &Ctx, _sink: &dyn Sink) -> Result<Vec<NamespaceRecord>> {
    if let Some(p) = &req.prefix {
        check_namespace(p)?;
    }
    let store = ctx.open_store(Access::ReadOnly)?;
    let mut rows = store.namespaces(req.prefix.as_deref())?;
    if let Some(d) = req.max_depth {
        rows = to_depth(rows, d as usize);
    }
    Ok(rows.into_iter().map(namespace_record).collect())
}
