//! `memctl store …`: the LangGraph Store (long-term memory) of a SQLite file or a Postgres
//! database: flags -> [`crate::storage::store`] -> [`crate::output::store`].

use std::io::Write;
use std::time::Duration;

use anyhow::{anyhow, Result};

use crate::cli::{GlobalArgs, StoreCommand};
use crate::exit::Usage;
use crate::ops::store::{labels, to_depth};
use crate::output::store::{
    self as report, ItemRecord, NamespaceRecord, RemovalReport, RemovedRecord,
};
use crate::output::{confirm, human, resolve_format, sanitize};
use crate::storage::open_store;
use crate::storage::store::{ItemStore, Removal, StoreItem};
use crate::storage::SchemaConflict;
use crate::storage::{postgres, sqlite, Access, CheckpointStore, Location};

/// Runs a `store` subcommand.
pub fn run(g: &GlobalArgs, cmd: &StoreCommand, out: &mut dyn Write) -> Result<()> {
    let format = resolve_format(g.format);
    match cmd {
        StoreCommand::Namespaces(a) => {
            if let Some(p) = &a.prefix {
                check_namespace(p)?;
            }
            let store = open(g, Access::ReadOnly)?;
            let mut rows = store.namespaces(a.prefix.as_deref())?;
            if let Some(d) = a.max_depth {
                rows = to_depth(rows, d as usize);
            }
            let records: Vec<NamespaceRecord> = rows.into_iter().map(namespace_record).collect();
            report::namespaces(out, format, &records)
        }
        StoreCommand::Ls(a) => {
            let store = open(g, Access::ReadOnly)?;
            if a.namespace.contains('/') && !a.namespace.contains('.') {
                return Err(no_namespace(&*store, &a.namespace));
            }
            check_namespace(&a.namespace)?;
            let records: Vec<ItemRecord> = store
                .items(&a.namespace, a.limit)?
                .into_iter()
                .map(item_record)
                .collect();
            if records.is_empty() {
                // No item in exactly that namespace: a prefix of others, or a name to correct.
                let under = store.namespaces(Some(&a.namespace))?;
                if under.is_empty() {
                    return Err(no_namespace(&*store, &a.namespace));
                }
                if !g.quiet {
                    eprintln!(
                        "memctl: '{}' holds no item itself; {} under it (store ls takes one of them)",
                        sanitize::one_line(&a.namespace),
                        human::count(under.len() as u64, "namespace")
                    );
                }
                if format == crate::cli::Format::Table {
                    let rows: Vec<NamespaceRecord> =
                        under.into_iter().map(namespace_record).collect();
                    return report::namespaces(out, format, &rows);
                }
            }
            report::items(out, format, &records)
        }
        StoreCommand::Get(a) => {
            check_namespace(&a.namespace)?;
            let store = open(g, Access::ReadOnly)?;
            let item = store.get(&a.namespace, &a.key)?.ok_or_else(|| {
                anyhow!(
                    "no item '{}' in namespace '{}'",
                    sanitize::one_line(&a.key),
                    sanitize::one_line(&a.namespace)
                )
            })?;
            let value = serde_json::from_slice::<serde_json::Value>(&item.value).map_err(|e| {
                anyhow!(
                    "the value of item '{}' in namespace '{}' is not JSON ({e}); it was left as it is",
                    sanitize::one_line(&a.key),
                    sanitize::one_line(&a.namespace)
                )
            })?;
            if item.expired {
                eprintln!(
                    "{}",
                    report::expired_note(&a.namespace, &a.key, item.expires_at.as_deref())
                );
            }
            report::value(out, format, &value)
        }
        StoreCommand::Rm(a) => {
            check_namespace(&a.namespace)?;
            let mut store = open_for_removal(g, a.dry_run)?;
            if confirm::asks(a.yes, a.dry_run) {
                // On a terminal: what would go (a dry run writes nothing), then the question.
                let would = store.delete(&a.namespace, &a.keys, true)?;
                if !would.items.is_empty() {
                    confirm::confirm(
                        &confirm::Question {
                            command: "store rm",
                            action: format!(
                                "delete {} of namespace '{}' ({} with their vectors)",
                                human::count(would.items.len() as u64, "item"),
                                sanitize::one_line(&a.namespace),
                                human::bytes(would.items.iter().map(|i| i.bytes).sum()),
                            ),
                            threads: Vec::new(),
                        },
                        a.yes,
                        a.dry_run,
                    )?;
                }
            }
            let removal = store.delete(&a.namespace, &a.keys, a.dry_run)?;
            let missing: Vec<String> = a
                .keys
                .iter()
                .filter(|k| !removal.items.iter().any(|i| &i.key == *k))
                .map(|k| format!("'{}'", sanitize::one_line(k)))
                .collect();
            if !missing.is_empty() {
                eprintln!(
                    "{}",
                    sanitize::for_terminal(&format!(
                        "memctl: note: no item {} in namespace '{}'",
                        missing.join(", "),
                        sanitize::one_line(&a.namespace)
                    ))
                );
            }
            report::removal(
                out,
                format,
                &removal_report(removal, a.dry_run),
                "Nothing to delete: no such item.",
            )
        }
        StoreCommand::Sweep(a) => {
            let mut store = open_for_removal(g, a.dry_run)?;
            let removal = store.sweep(a.dry_run)?;
            report::removal(
                out,
                format,
                &removal_report(removal, a.dry_run),
                "Nothing to sweep: no item has expired.",
            )
        }
    }
}

/// A NAMESPACE argument: labels joined with '.', none of them empty.
/// A namespace's row of `store namespaces`.
fn namespace_record(n: crate::storage::store::NamespaceSummary) -> NamespaceRecord {
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
                .map(|n| format!("'{}'", sanitize::one_line(n)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    anyhow!(
        "no namespace '{}' in the store{slash}{hint}",
        sanitize::one_line(given)
    )
}

fn check_namespace(ns: &str) -> Result<()> {
    if ns.is_empty() || ns.split('.').any(str::is_empty) {
        return Err(Usage(format!(
            "'{}' is not a namespace: give its labels joined with '.' (users.u-42.memories), none empty",
            sanitize::one_line(ns)
        ))
        .into());
    }
    Ok(())
}

/// Opens the store for `rm` / `sweep`: read-only for a dry run, else for writing at a
/// migration level memctl knows.
fn open_for_removal(g: &GlobalArgs, dry_run: bool) -> Result<Box<dyn ItemStore>> {
    if dry_run {
        return open(g, Access::ReadOnly);
    }
    let store = open(g, Access::ReadWrite)?;
    store.check_writable()?;
    Ok(store)
}

/// Opens the LangGraph Store of the database `--db` / `MEMCTL_DB` names, if it has one
/// (`None`: no `store` table, or no database given; then the commands that cover the store
/// when there is one — `find`, `forget`, `stats` — behave as they did before the store).
pub(super) fn open_if_any(g: &GlobalArgs, access: Access) -> Result<Option<Box<dyn ItemStore>>> {
    if g.db.is_none() {
        return Ok(None);
    }
    match open(g, access) {
        Ok(s) => Ok(Some(s)),
        Err(e) if e.is::<crate::storage::store::NoStore>() => Ok(None),
        Err(e) => Err(e),
    }
}

/// The checkpoint tables, when opening them (`open`) failed with `first`: a database that
/// holds a LangGraph store and no checkpoint tables (an app using `SqliteStore` or
/// `PostgresStore` alone) is read as a saver with no threads, with one note on stderr ("no
/// checkpoints in this database"), so `forget`, `stats`, `find` and `migrate` work on its
/// store; anything else (no store, some of the saver's tables, a usage error) fails with
/// `first`. Nothing is created in the database.
pub(super) fn checkpoints_or_store_only(
    g: &GlobalArgs,
    access: Access,
    first: anyhow::Error,
) -> Result<Box<dyn CheckpointStore>> {
    let Some(path) = g.db.as_deref() else {
        return Err(first);
    };
    if first.is::<Usage>() {
        return Err(first);
    }
    let busy = Duration::from_millis(g.busy_timeout);
    let saver: Option<Box<dyn CheckpointStore>> = match crate::storage::locate(path) {
        Ok(Location::File) if g.schema.is_none() => {
            sqlite::store::saver_of_store_only(path, access, busy)
                .ok()
                .flatten()
                .map(|s| Box::new(s) as _)
        }
        Ok(Location::Postgres(url)) if first.is::<postgres::NoSaverTable>() => {
            postgres::StoreOnly::find(url, g.schema.as_deref(), busy)
                .ok()
                .flatten()
                .map(|s| Box::new(s) as _)
        }
        _ => None,
    };
    let Some(saver) = saver else {
        return Err(first);
    };
    eprintln!(
        "memctl: '{}': no checkpoints in this database (a LangGraph store only)",
        sanitize::one_line(&crate::storage::shown_path(path))
    );
    Ok(saver)
}

/// Opens the store of the database `--db` / `MEMCTL_DB` names.
fn open(g: &GlobalArgs, access: Access) -> Result<Box<dyn ItemStore>> {
    let path = super::db_path(g)?;
    crate::storage::locate(path).map_err(|e| Usage(e.to_string()))?;
    let busy = Duration::from_millis(g.busy_timeout);
    open_store(path, g.schema.as_deref(), access, busy).map_err(|e| {
        match e.downcast::<SchemaConflict>() {
            Ok(c) => Usage(format!(
                "--schema '{}' (or MEMCTL_SCHEMA) disagrees with the URL '{}', which says schema={}: name the schema once",
                c.given, c.url, c.in_url
            ))
            .into(),
            Err(e) => e,
        }
    })
}

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
