//! The LangGraph Store (long-term memory) of a SQLite file or a Postgres database: one job
//! per `store` subcommand ([`namespaces`], [`ls`], [`get`], [`rm`], [`sweep`]), the records
//! they report (the Store is opened by [`Ctx::open_store`] and its kin, in `jobs/open.rs`).

pub mod get;
pub mod ls;
pub mod namespaces;
pub mod rm;
pub mod sweep;

use anyhow::{anyhow, Result};
use serde::Serialize;

use super::Ctx;
use crate::exit::Usage;
use crate::ops::store::{labels, Labels};
use crate::storage::store::{ItemStore, NamespaceSummary, Removal, StoreItem};
use crate::storage::Access;
use crate::text::escape::line_breaks;

/// One namespace (`store namespaces`).
#[derive(Debug, Clone, Serialize)]
pub struct NamespaceRecord {
    /// Its labels.
    pub namespace: Labels,
    /// Items in it.
    pub items: u64,
    /// Bytes of their values (JSON text).
    pub bytes: u64,
    /// Items that have expired (a sweep would delete them).
    pub expired: u64,
    /// The newest `updated_at` (RFC 3339, UTC).
    pub updated_at: Option<String>,
}

/// One item (`store ls`).
#[derive(Debug, Clone, Serialize)]
pub struct ItemRecord {
    /// Its namespace's labels.
    pub namespace: Labels,
    /// Its key.
    pub key: String,
    /// Bytes of its stored value.
    pub size: u64,
    /// When it was first written (RFC 3339, UTC).
    pub created_at: Option<String>,
    /// When it was last written.
    pub updated_at: Option<String>,
    /// When it expires; null when it never does.
    pub expires_at: Option<String>,
    /// Its TTL in minutes, if any.
    pub ttl_minutes: Option<f64>,
    /// It has expired (a sweep would delete it; LangGraph may still return it).
    pub expired: bool,
    /// The value (null when the stored bytes are not JSON, see `value_error`).
    pub value: serde_json::Value,
    /// Why the stored value could not be read as JSON (left as it is in the database).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value_error: Option<String>,
}

/// An item a removal took (`store rm`, `store sweep`).
#[derive(Debug, Clone, Serialize)]
pub struct RemovedRecord {
    /// Its namespace's labels.
    pub namespace: Labels,
    /// Its key.
    pub key: String,
    /// Bytes of its value.
    pub bytes: u64,
}

/// What `store rm` or `store sweep` did (or, with `--dry-run`, would do).
#[derive(Debug, Clone, Serialize)]
pub struct RemovalReport {
    /// Nothing was written.
    pub dry_run: bool,
    /// Items deleted.
    pub items: u64,
    /// Bytes of their values.
    pub bytes: u64,
    /// Rows of `store_vectors` (embeddings) deleted with them.
    pub vectors: u64,
    /// The items, by namespace and key.
    pub removed: Vec<RemovedRecord>,
}

/// A namespace's row of `store namespaces`.
fn namespace_record(n: NamespaceSummary) -> NamespaceRecord {
    NamespaceRecord {
        namespace: n.prefix.into(),
        items: n.items,
        bytes: n.bytes,
        expired: n.expired,
        updated_at: n.newest_update,
    }
}

/// The error for a namespace the store does not have (exit 1, as for an unknown thread),
/// naming the namespaces it likely means: the same labels joined with `.` where `/` or `:`
/// joined them, and those that differ only by case or one character.
fn no_namespace(store: &dyn ItemStore, given: &str) -> anyhow::Error {
    let known: Vec<String> = store
        .namespaces(None)
        .map(|all| all.into_iter().map(|n| n.prefix).collect())
        .unwrap_or_default();
    let dotted = given.replace(['/', ':'], ".");
    let mut near: Vec<&str> = known
        .iter()
        .map(String::as_str)
        .filter(|k| dotted != given && *k == dotted)
        .collect();
    for k in crate::ops::suggest::near(&dotted, known.iter().map(String::as_str)) {
        if !near.contains(&k) && near.len() < 3 {
            near.push(k);
        }
    }
    let slash = match given.contains('/') {
        true => " (a namespace's labels are joined with '.', not '/')",
        false => "",
    };
    let hint = match near.as_slice() {
        [] => "; `memctl store namespaces` lists them".to_owned(),
        some => format!(
            "; did you mean {}?",
            some.iter()
                .map(|n| format!("'{}'", line_breaks(n)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    anyhow!(
        "no namespace '{}' in the store{slash}{hint}",
        line_breaks(given)
    )
}

/// A NAMESPACE argument: labels joined with '.', none of them empty.
fn check_namespace(ns: &str) -> Result<()> {
    if ns.is_empty() || ns.split('.').any(str::is_empty) {
        return Err(Usage(format!(
            "'{}' is not a namespace: give its labels joined with '.' (users.u-42.memories), none empty",
            line_breaks(ns)
        ))
        .into());
    }
    Ok(())
}

/// Opens the store for `rm` / `sweep`: read-only for a dry run, else for writing at a
/// migration level memctl knows.
fn open_for_removal(ctx: &Ctx, dry_run: bool) -> Result<Box<dyn ItemStore>> {
    if dry_run {
        return ctx.open_store(Access::ReadOnly);
    }
    let store = ctx.open_store(Access::ReadWrite)?;
    store.check_writable()?;
    Ok(store)
}

/// An item's record (its value read as JSON, or why it is not).
fn item_record(i: StoreItem) -> ItemRecord {
    let (value, value_error) = match serde_json::from_slice::<serde_json::Value>(&i.value) {
        Ok(v) => (v, None),
        Err(e) => (serde_json::Value::Null, Some(e.to_string())),
    };
    ItemRecord {
        namespace: labels(&i.prefix),
        size: i.value.len() as u64,
        key: i.key,
        created_at: i.created_at,
        updated_at: i.updated_at,
        expires_at: i.expires_at,
        ttl_minutes: i.ttl_minutes,
        expired: i.expired,
        value,
        value_error,
    }
}

/// What a removal did, as reported.
fn removal_report(r: Removal, dry_run: bool) -> RemovalReport {
    RemovalReport {
        dry_run,
        items: r.items.len() as u64,
        bytes: r.items.iter().map(|i| i.bytes).sum(),
        vectors: r.vectors,
        removed: r
            .items
            .into_iter()
            .map(|i| RemovedRecord {
                namespace: labels(&i.prefix),
                key: i.key,
                bytes: i.bytes,
            })
            .collect(),
    }
}
