//! `store ls`: the items of one namespace (or, when it holds none itself, the namespaces
//! under it).

use anyhow::Result;

use super::{check_namespace, item_record, namespace_record, no_namespace};
use super::{ItemRecord, NamespaceRecord};
use crate::jobs::{Ctx, Sink};
use crate::storage::Access;

/// Which namespace.
#[derive(Debug, Clone, Default)]
pub struct Request {
    /// The namespace: its labels joined with '.'.
    pub namespace: String,
    /// At most this many items (in key order).
    pub limit: Option<usize>,
}

/// What the listing found besides its items: how many, and when there were none, the
/// namespaces under the one asked for.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// The items handed on.
    pub items: usize,
    /// With no item: the namespaces under the one asked for (never empty then).
    pub under: Vec<NamespaceRecord>,
}

/// Lists the items of `req.namespace` into `rows` (in key order). A namespace with no item
/// and none under it is an error naming the namespaces meant; one with namespaces under it
/// is noted to `sink` and they come back in the report.
pub fn run(
    req: &Request,
    ctx: &Ctx,
    sink: &dyn Sink,
    rows: &mut dyn FnMut(ItemRecord) -> Result<()>,
) -> Result<Report> {
    let store = ctx.open_store(Access::ReadOnly)?;
    if req.namespace.contains('/') && !req.namespace.contains('.') {
        return Err(no_namespace(&*store, &req.namespace));
    }
    check_namespace(&req.namespace)?;
    let mut items = 0;
    for item in store.items(&req.namespace, req.limit)? {
        rows(item_record(item))?;
        items += 1;
    }
    let mut under = Vec::new();
    if items == 0 {
        // No item in exactly that namespace: a prefix of others, or a name to correct.
        let found = store.namespaces(Some(&req.namespace))?;
        if found.is_empty() {
            return Err(no_namespace(&*store, &req.namespace));
        }
        sink.note(&format!(
            "'{}' holds no item itself; {} under it (store ls takes one of them)",
            req.namespace,
            crate::text::human::count(found.len() as u64, "namespace")
        ));
        under = found.into_iter().map(namespace_record).collect();
    }
    Ok(Report { items, under })
}
