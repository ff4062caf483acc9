//! `memctl copy`: a thread (or a fork of it) to a new thread id, here or in another database.

use std::io::Write;
use std::path::Path;
use std::time::Duration;

use anyhow::{anyhow, Context, Result};

use crate::cli::{CopyArgs, GlobalArgs};
use crate::exit::Usage;
use crate::output::copy::{write_copy, CopyReport, SharedVersion};
use crate::storage::{self, Access, CheckpointStore, Location, SqliteStore};

/// Runs `copy`.
pub fn run(g: &GlobalArgs, args: &CopyArgs, out: &mut dyn Write) -> Result<()> {
    if args.all {
        return run_all(g, args, out);
    }
    let Some(thread) = &args.thread else {
        return Err(Usage("copy needs --thread ID (or --all with --to)".into()).into());
    };
    let to_thread = match (&args.to_thread, &args.to) {
        (Some(t), _) => t.clone(),
        (None, Some(_)) => thread.clone(),
        (None, None) => return Err(Usage(
            "copy needs --to-thread NEW (a new id in this database) or --to DB (another database)"
                .into(),
        )
        .into()),
    };
    let source_path =
        g.db.as_deref()
            .ok_or_else(|| anyhow!("no database given: pass --db PATH or set MEMCTL_DB"))?;
    let same_db = match &args.to {
        None => true,
        Some(to) => same_database(source_path, to)?,
    };
    if same_db && to_thread == *thread {
        return Err(Usage(format!(
            "the copy of thread '{thread}' would be the thread itself (same database, same id): give --to-thread or --to"
        ))
        .into());
    }
    let access = match same_db && !args.dry_run {
        true => Access::ReadWrite,
        false => Access::ReadOnly,
    };
    let source = super::open(g, access)?;
    let rows = source.read_thread(thread)?;
    if rows.checkpoints.is_empty() {
        return Err(anyhow!("no thread '{thread}' in the database"));
    }
    let plan = crate::ops::copy::plan(rows, thread, &to_thread, args.at.as_deref())?;
    let busy = Duration::from_millis(g.busy_timeout);
    let mut created = false;
    let target: Option<Box<dyn CheckpointStore>> = match &args.to {
        _ if same_db => None,
        None => None,
        Some(to) => match storage::locate(to).map_err(|e| Usage(e.to_string()))? {
            Location::Postgres(_) => {
                let access = match args.dry_run {
                    true => Access::ReadOnly,
                    false => Access::ReadWrite,
                };
                Some(storage::open(to, None, access, busy, &super::keys(g))?)
            }
            Location::File if to.exists() => {
                let access = match args.dry_run {
                    true => Access::ReadOnly,
                    false => Access::ReadWrite,
                };
                Some(storage::open(to, None, access, busy, &super::keys(g))?)
            }
            Location::File => {
                created = true;
                match args.dry_run {
                    true => None,
                    false => Some(Box::new(SqliteStore::create_new(to, busy)?)),
                }
            }
        },
    };
    let target_store: Option<&dyn CheckpointStore> = match (&target, same_db) {
        (Some(t), _) => Some(&**t),
        (None, true) => Some(&*source),
        (None, false) => None,
    };
    let exists = match target_store {
        Some(t) => t.thread_exists(&to_thread)?,
        None => false,
    };
    if exists && !args.replace {
        return Err(storage::TargetExists(to_thread).into());
    }
    let written = match (args.dry_run, target_store) {
        (true, _) | (false, None) => storage::WrittenThread {
            replaced: exists,
            shared_versions: vec![],
        },
        (false, Some(t)) => {
            let written = t.write_thread(&to_thread, &plan.rows, args.replace);
            match (written, created, &args.to) {
                (Ok(w), _, _) => w,
                (Err(e), true, Some(to)) => {
                    drop(target);
                    remove_created(to);
                    return Err(e);
                }
                (Err(e), _, _) => return Err(e),
            }
        }
    };
    let report = CopyReport {
        thread: thread.clone(),
        to_thread,
        to: match same_db {
            true => None,
            false => args.to.as_deref().map(storage::shown_path),
        },
        at: args.at.clone(),
        dry_run: args.dry_run,
        created,
        replaced: written.replaced,
        counts: plan.counts,
        shared_versions: SharedVersion::list(written.shared_versions),
    };
    write_copy(out, crate::output::resolve_format(g.format), &report)
}

/// `copy --all --to DB`: every thread `--idle` / `--meta` select, each under its own id, one
/// transaction per thread (an interrupted run leaves whole threads), a report per thread and
/// the totals. Target threads that exist are refused before anything is written, unless
/// `--replace`.
fn run_all(g: &GlobalArgs, args: &CopyArgs, out: &mut dyn Write) -> Result<()> {
    let Some(to) = &args.to else {
        return Err(Usage("copy --all needs --to DB (another database)".into()).into());
    };
    let source_path =
        g.db.as_deref()
            .ok_or_else(|| anyhow!("no database given: pass --db PATH or set MEMCTL_DB"))?;
    if same_database(source_path, to)? {
        return Err(Usage(
            "copy --all copies into another database: --to names --db itself".into(),
        )
        .into());
    }
    let conditions = args
        .meta
        .iter()
        .map(|m| crate::ops::find::MetaCondition::parse(m))
        .collect::<Result<Vec<_>>>()?;
    let idle = args
        .idle
        .as_deref()
        .map(crate::ops::duration::parse_seconds)
        .transpose()?;
    let now = crate::output::human::now(g.now.as_deref())?;
    let keys = super::keys(g);
    let source = super::open(g, Access::ReadOnly)?;
    let mut all = Vec::new();
    source.for_each_thread(&mut |t| {
        all.push(t);
        Ok(())
    })?;
    let mut pairs = Vec::new();
    for t in &all {
        let idle_enough = match idle {
            None => true,
            Some(limit) => crate::ops::activity::idle_seconds(&t.latest_id, None, now)
                .is_some_and(|a| a >= limit),
        };
        let selected = idle_enough
            && (conditions.is_empty()
                || crate::read::meta_selects_thread(&*source, &keys, &t.thread_id, &conditions)?);
        if selected {
            pairs.push((t.thread_id.clone(), t.thread_id.clone()));
        }
    }
    let busy = Duration::from_millis(g.busy_timeout);
    let access = match args.dry_run {
        true => Access::ReadOnly,
        false => Access::ReadWrite,
    };
    let location = storage::locate(to).map_err(|e| Usage(e.to_string()))?;
    let new_file = location == Location::File && !to.exists();
    let target: Option<Box<dyn CheckpointStore>> =
        match (new_file, args.dry_run || pairs.is_empty()) {
            (false, _) => Some(storage::open(to, None, access, busy, &keys)?),
            (true, true) => None,
            (true, false) => Some(Box::new(SqliteStore::create_new(to, busy)?)),
        };
    let shown = Some(storage::shown_path(to));
    let copied = copy_threads(
        &*source,
        target.as_deref(),
        &pairs,
        args.replace,
        args.dry_run,
        shown,
    );
    let mut reports = match copied {
        Ok(r) => r,
        Err(e) => {
            // A file this run created and wrote no thread into goes again.
            let empty = target.as_deref().map(|t| {
                pairs
                    .iter()
                    .all(|(_, to)| !t.thread_exists(to).unwrap_or(true))
            });
            drop(target);
            if new_file && empty != Some(false) {
                remove_created(to);
            }
            return Err(e);
        }
    };
    reports.iter_mut().for_each(|r| r.created = new_file);
    crate::output::copy::write_copies(
        out,
        crate::output::resolve_format(g.format),
        &crate::output::copy::CopiesReport::new(reports),
    )
}

/// The id of every thread of `store`, in its listing order.
pub fn thread_ids(store: &dyn CheckpointStore) -> Result<Vec<String>> {
    let mut all = Vec::new();
    store.for_each_thread(&mut |t| {
        all.push(t.thread_id);
        Ok(())
    })?;
    Ok(all)
}

/// True when `to` names the database `db` names: the same file, or the same connection
/// string. (Two spellings of one server database are two databases here; a copy between them
/// still never loses a row: the target is written whole in one transaction.)
pub fn same_database(db: &Path, to: &Path) -> Result<bool> {
    let a = storage::locate(db).map_err(|e| Usage(e.to_string()))?;
    let b = storage::locate(to).map_err(|e| Usage(e.to_string()))?;
    Ok(match (a, b) {
        (Location::Postgres(x), Location::Postgres(y)) => x == y,
        (Location::File, Location::File) => match (db.canonicalize(), to.canonicalize()) {
            (Ok(x), Ok(y)) => x == y,
            _ => false,
        },
        _ => false,
    })
}

/// Removes a SQLite file a failed copy created (and its `-wal` / `-shm`): nothing written.
fn remove_created(path: &Path) {
    for suffix in ["", "-wal", "-shm", "-journal"] {
        let mut p = path.as_os_str().to_owned();
        p.push(suffix);
        let _ = std::fs::remove_file(Path::new(&p));
    }
}

/// Copies threads from `source` into `target` (`pairs`: the source id and the id it gets),
/// one transaction per thread, as `copy --to` copies one. Without `replace`, a target id that
/// exists is a [`storage::TargetExists`] error before anything is written; a source thread
/// with no checkpoint is an error before anything is written too. `to` is the target as
/// reports show it. With `dry_run` (and a target that may not exist yet: `None`) nothing is
/// written.
pub fn copy_threads(
    source: &dyn CheckpointStore,
    target: Option<&dyn CheckpointStore>,
    pairs: &[(String, String)],
    replace: bool,
    dry_run: bool,
    to: Option<String>,
) -> Result<Vec<CopyReport>> {
    let mut exists = Vec::with_capacity(pairs.len());
    for (from, to_thread) in pairs {
        if !source.thread_exists(from)? {
            return Err(anyhow!(
                "no thread '{from}' in the source database; nothing written"
            ));
        }
        let there = match target {
            Some(t) => t.thread_exists(to_thread)?,
            None => false,
        };
        if there && !replace {
            return Err(storage::TargetExists(to_thread.clone()).into());
        }
        exists.push(there);
    }
    let mut reports = Vec::with_capacity(pairs.len());
    for (i, ((from, to_thread), there)) in pairs.iter().zip(exists).enumerate() {
        let done = || {
            format!(
                "thread '{from}': nothing of it written ({i} of {} threads copied before it, each whole)",
                pairs.len()
            )
        };
        let rows = source.read_thread(from).with_context(done)?;
        let plan = crate::ops::copy::plan(rows, from, to_thread, None).with_context(done)?;
        let written = match (dry_run, target) {
            (false, Some(t)) => t
                .write_thread(to_thread, &plan.rows, replace)
                .with_context(done)?,
            _ => storage::WrittenThread {
                replaced: there,
                shared_versions: vec![],
            },
        };
        reports.push(CopyReport {
            thread: from.clone(),
            to_thread: to_thread.clone(),
            to: to.clone(),
            at: None,
            dry_run,
            created: false,
            replaced: written.replaced,
            counts: plan.counts,
            shared_versions: SharedVersion::list(written.shared_versions),
        });
    }
    Ok(reports)
}
