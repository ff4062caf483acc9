//! The `migrate` job's LangGraph Store part: every item of the source's Store into the target's, in
//! the target's own form (`ops::migrate_store::to_backend`) with the source's `created_at`,
//! `updated_at`, `expires_at` and `ttl_minutes` kept (a migration neither refreshes a
//! timestamp nor un-expires an item). The source is read in pages of [`BATCH`] items, each
//! page written in one transaction. Resumable as threads are: an item there and equal is
//! skipped, one that differs is reported and left unless `--replace`.
//!
//! Embedding vectors (`store_vectors`) move as they are between SQLite files (into a store
//! with an embedding index, or a new one); anywhere else the source's vectors make the
//! migration refuse, before anything is written, unless `--without-vectors` leaves them behind.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use anyhow::Result;

use super::Request;
use crate::exit::Usage;
use crate::jobs::copy::report::{
    left_out_reasons, StoreItemLeftOut, StoreItemName, StoreMigration,
};
use crate::jobs::Ctx;
use crate::ops::migrate_store::{same_item, to_backend};
use crate::storage::store::{Backend, ItemStore, StoreRow, StoreShape, VectorRow, BATCH};
use crate::storage::{self, Access, Location};
use crate::storage::{open_store, setup_store, store_shape};
use crate::text::human::count;

/// What was checked before a migration writes anything.
pub struct Plan {
    source: Box<dyn ItemStore>,
    /// The target's Store tables, if it has them.
    target: Option<StoreShape>,
    to: Backend,
    /// Vectors move with their items.
    copy_vectors: bool,
    /// The target store gets the vector tables (a new SQLite store, the source has them).
    create_vectors: bool,
    vectors_left_behind: u64,
}

/// Checks the Store part of a migration before anything is written: `None` when the source
/// has no Store. Refuses (one line) a source or target store at a migration level memctl does
/// not know, and a source with vectors that the target cannot hold (unless
/// `--without-vectors`).
pub fn plan(ctx: &Ctx, args: &Request) -> Result<Option<Plan>> {
    let Some(source) = ctx.open_store_if_any(Access::ReadOnly)? else {
        return Ok(None);
    };
    let busy = ctx.busy_timeout;
    let shown_to = storage::shown_path(&args.to);
    if let Some(v) = source.migration().filter(|v| *v > source.known_migration()) {
        anyhow::bail!(
            "'{}': the source's store is at migration level {v} (store_migrations), newer than memctl knows (up to {}): nothing migrated",
            source.shown(),
            source.known_migration()
        );
    }
    let to = match storage::locate_as(&args.to, "--to").map_err(|e| Usage(e.to_string()))? {
        Location::File => Backend::Sqlite,
        _ => Backend::Postgres,
    };
    let target = store_shape(&args.to, busy)?;
    if let Some(t) = target {
        let known = match to {
            Backend::Sqlite => crate::storage::sqlite::store::KNOWN_MIGRATION,
            Backend::Postgres => crate::storage::postgres::store::KNOWN_MIGRATION,
        };
        match t.migration {
            Some(v) if v <= known => {}
            Some(v) => {
                anyhow::bail!(
                    "'{shown_to}': the target's store is at migration level {v} (store_migrations), newer than memctl knows (up to {known}): nothing migrated"
                );
            }
            None => {
                anyhow::bail!(
                    "'{shown_to}': the target has a store table without a store_migrations level: nothing migrated"
                );
            }
        }
    }
    let (vectors, _) = source.vectors().map_or(Ok((0, 0)), |v| v.vector_space())?;
    let sqlite_both = source.backend() == Backend::Sqlite && to == Backend::Sqlite;
    let target_holds_vectors = target.is_none_or(|t| t.has_vectors);
    let mut plan = Plan {
        create_vectors: sqlite_both
            && target.is_none()
            && source.shape().has_vectors
            && !args.without_vectors,
        source,
        target,
        to,
        copy_vectors: false,
        vectors_left_behind: 0,
    };
    if vectors > 0 {
        if args.without_vectors {
            plan.vectors_left_behind = vectors;
        } else if sqlite_both && target_holds_vectors {
            if plan.target.is_some() {
                same_dimensions(&*plan.source, &args.to, busy)?;
            }
            plan.copy_vectors = true;
        } else {
            let why = if sqlite_both {
                "the target's store has no embedding index (store_vectors)"
            } else {
                "memctl moves vectors only between SQLite files (pgvector's are another format)"
            };
            anyhow::bail!(
                "the source's store has {} (store_vectors) and {why}: nothing migrated; pass --without-vectors to migrate the items without them (the app's vector search finds an item again once the app writes it again)",
                count(vectors, "embedding vector")
            );
        }
    }
    Ok(Some(plan))
}

/// Refuses (one line) vectors for a target whose embedding index has vectors of another
/// size (another `dims`): its searches could not compare them.
fn same_dimensions(source: &dyn ItemStore, to: &Path, busy: Duration) -> Result<()> {
    let target = open_store(to, None, Access::ReadOnly, busy)?;
    let size = |(n, bytes): (u64, u64)| (n > 0).then(|| bytes / n);
    let space = |s: &dyn ItemStore| s.vectors().map_or(Ok((0, 0)), |v| v.vector_space());
    if let (Some(a), Some(b)) = (size(space(source)?), size(space(&*target)?)) {
        if a != b {
            anyhow::bail!(
                "the source's embedding vectors have {} dimensions, those of '{}' {}: another embedding index; nothing migrated (--without-vectors migrates the items without them)",
                a / 4,
                storage::shown_path(to),
                b / 4
            );
        }
    }
    Ok(())
}

/// An item as the report names it: its namespace's labels and its key.
fn name(prefix: &str, key: &str, action: &str) -> StoreItemName {
    StoreItemName {
        namespace: crate::ops::store::labels(prefix),
        key: key.to_owned(),
        action: action.to_owned(),
    }
}

/// An item (`prefix`, `key`) left out of the migration because of `e`, when `e` concerns that
/// item only: memctl cannot read it ([`storage::Unreadable`]) or the target cannot hold it
/// ([`storage::Refused`]). `None` for any other error, which stops the run.
fn item_left_out(prefix: &str, key: &str, e: &anyhow::Error) -> Option<StoreItemLeftOut> {
    let (reason, why) = storage::left_out_reason(e)?;
    Some(StoreItemLeftOut {
        namespace: crate::ops::store::labels(prefix),
        key: key.to_owned(),
        reason: reason.to_owned(),
        why,
    })
}

/// What [`write_each_whole`] did not write: the items the target's app wrote meanwhile
/// (`(prefix, key)`), and those the target refused.
type NotWritten = (Vec<(String, String)>, Vec<StoreItemLeftOut>);

/// Writes `rows` (one transaction, see [`ItemStore::write_rows`]): the items the target's app
/// wrote meanwhile (left as they are), and none refused. When the target refuses the batch
/// (a data exception: an item it cannot hold, [`storage::Refused`]), the batch is written
/// again an item at a time, each whole, so that the items it holds are written and those it
/// refuses are named and left out (their vectors with them).
fn write_each_whole(
    target: &mut dyn ItemStore,
    rows: &[StoreRow],
    overwrite: bool,
    vectors: &[VectorRow],
) -> Result<NotWritten> {
    let refused_whole = match target.write_rows(rows, overwrite, vectors) {
        Ok(there) => return Ok((there, vec![])),
        Err(e) if e.is::<storage::Refused>() => e,
        Err(e) => return Err(e),
    };
    if let [r] = rows {
        let l = item_left_out(&r.prefix, &r.key, &refused_whole);
        return Ok((vec![], l.into_iter().collect()));
    }
    let (mut there, mut refused) = (Vec::new(), Vec::new());
    for r in rows {
        let own: Vec<VectorRow> = vectors
            .iter()
            .filter(|v| v.prefix == r.prefix && v.key == r.key)
            .cloned()
            .collect();
        match target.write_rows(std::slice::from_ref(r), overwrite, &own) {
            Ok(t) => there.extend(t),
            Err(e) => match item_left_out(&r.prefix, &r.key, &e) {
                Some(l) if e.is::<storage::Refused>() => refused.push(l),
                _ => return Err(e),
            },
        }
    }
    Ok((there, refused))
}

/// The run's outcome when Store items were left out (exit 3): how many and why, with what the
/// user can do; `None` when none was.
pub fn left_out_partial(st: &StoreMigration) -> Option<String> {
    if st.left_out == 0 {
        return None;
    }
    let n = |reason: &str| {
        st.left_out_items
            .iter()
            .filter(|i| i.reason == reason)
            .count() as u64
    };
    let why = left_out_reasons(
        n("unreadable"),
        n("refused"),
        |it| {
            format!("LangGraph could not read {it} back (a value that is not JSON, a timestamp it does not write: the app can write {it} again with store.put; `memctl store rm` deletes {it})")
        },
        |it| {
            format!("the target cannot hold {it} (PostgreSQL stores no NUL character in a text nor \\u0000 in JSONB, for the app's PostgresStore either: the app can write {it} again without it, or migrate the Store into a SQLite file, which holds {it})")
        },
    );
    let first = st.left_out_items.first().map_or(String::new(), |i| {
        format!(" ('{}' / '{}'", i.namespace.joined(), i.key)
            + &match st.left_out_items.len() {
                1 => ")".to_owned(),
                k => format!(" and {} more)", k - 1),
            }
    });
    Some(format!(
        "{} of the LangGraph Store left out, not written{first}: {}; the others were migrated",
        count(st.left_out, "item"),
        why
    ))
}

/// Moves every item (after the threads: the target file exists unless this is a dry run).
pub fn run(plan: Plan, to_db: &Path, args: &Request, busy: Duration) -> Result<StoreMigration> {
    let mut target: Option<Box<dyn ItemStore>> = match (args.dry_run, plan.target) {
        (false, _) => Some(setup_store(to_db, plan.create_vectors, busy)?),
        (true, Some(_)) => Some(open_store(to_db, None, Access::ReadOnly, busy)?),
        (true, None) => None,
    };
    let from = plan.source.backend();
    let mut report = StoreMigration {
        vectors_left_behind: plan.vectors_left_behind,
        ..Default::default()
    };
    let mut last: Option<(String, String)> = None;
    let mut last_prefix: Option<String> = None;
    loop {
        let page = plan
            .source
            .page(last.as_ref().map(|(p, k)| (p.as_str(), k.as_str())), BATCH)?;
        let Some(end) = page.last() else {
            break;
        };
        last = Some((end.prefix.clone(), end.key.clone()));
        // The target's rows of this page's items, namespace by namespace.
        let mut by_prefix: BTreeMap<&str, Vec<String>> = BTreeMap::new();
        for r in &page {
            by_prefix.entry(&r.prefix).or_default().push(r.key.clone());
        }
        let mut theirs = std::collections::HashMap::new();
        if let Some(t) = target.as_deref() {
            for (prefix, keys) in &by_prefix {
                for row in t.rows(prefix, keys)? {
                    theirs.insert((row.prefix.clone(), row.key.clone()), row);
                }
            }
        }
        let (mut copies, mut replaces) = (Vec::new(), Vec::new());
        for r in &page {
            report.items += 1;
            if last_prefix.as_deref() != Some(r.prefix.as_str()) {
                report.namespaces += 1;
                last_prefix = Some(r.prefix.clone());
            }
            // An item memctl cannot read, or that the target cannot hold: left out, reported,
            // and the migration carries on.
            let ours = match to_backend(r, from, plan.to) {
                Ok(o) => o,
                Err(e) => match item_left_out(&r.prefix, &r.key, &e) {
                    Some(l) => {
                        report.left_out += 1;
                        report.left_out_items.push(l);
                        continue;
                    }
                    None => return Err(e),
                },
            };
            match theirs.get(&(r.prefix.clone(), r.key.clone())) {
                None => copies.push(ours),
                Some(t) if same_item(&ours, t) => report.skipped += 1,
                Some(_) => {
                    let action = match args.replace {
                        true => {
                            replaces.push(ours);
                            "replace"
                        }
                        false => {
                            report.differing += 1;
                            "differs"
                        }
                    };
                    report.differing_items.push(name(&r.prefix, &r.key, action));
                }
            }
        }
        for (rows, overwrite) in [(copies, false), (replaces, true)] {
            if rows.is_empty() {
                continue;
            }
            let vectors = match plan.copy_vectors {
                true => {
                    let items: Vec<(String, String)> = rows
                        .iter()
                        .map(|r| (r.prefix.clone(), r.key.clone()))
                        .collect();
                    plan.source
                        .vector_copy()
                        .ok_or_else(|| plan.source.lacks("vector_rows"))?
                        .vector_rows(&items)?
                }
                false => vec![],
            };
            let (there, refused) = match (args.dry_run, target.as_deref_mut()) {
                (false, Some(t)) => write_each_whole(t, &rows, overwrite, &vectors)?,
                _ => (vec![], vec![]),
            };
            // An item the target's app wrote between the read and this write: left as it is.
            for (prefix, key) in &there {
                report.differing += 1;
                report.differing_items.push(name(prefix, key, "differs"));
            }
            // An item the target refused: left out (and not replaced).
            for l in &refused {
                report
                    .differing_items
                    .retain(|i| !(i.namespace == l.namespace && i.key == l.key));
            }
            let not_written = |p: &str, k: &str| {
                there.iter().any(|(tp, tk)| tp == p && tk == k)
                    || refused
                        .iter()
                        .any(|l| l.key == k && l.namespace == crate::ops::store::labels(p))
            };
            let written = (rows.len() - there.len() - refused.len()) as u64;
            match overwrite {
                true => report.replaced += written,
                false => report.copied += written,
            }
            report.vectors_copied += vectors
                .iter()
                .filter(|v| !not_written(&v.prefix, &v.key))
                .count() as u64;
            report.left_out += refused.len() as u64;
            report.left_out_items.extend(refused);
        }
    }
    Ok(report)
}
