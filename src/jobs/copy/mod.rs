//! The `copy` job: a thread (or a fork of it) to a new thread id, here or in another
//! database; or every selected thread into another database. Its pieces ([`changes`],
//! [`target`], [`threads`]) are shared with the `import`, `export` and `migrate` jobs.

use std::path::PathBuf;

use anyhow::{anyhow, Result};

use crate::exit::{Partial, Usage};
use crate::storage::{self, Access, CheckpointStore, Location};
use crate::text::human;

use super::{Ctx, Sink};

pub mod changes;
pub mod report;
pub mod target;
pub mod threads;

pub use changes::{Changed, Changes, ValueChanges};
pub use report::{CopiesReport, CopyReport, LeftOut, SaverSetup, SharedVersion};
use target::{check_schema_flag, open_target, setup_noted, Target};
use threads::{
    can_hold_all, copy_threads, left_out_partial, remove_created, same_database, Copied,
};

/// What to copy.
#[derive(Debug, Clone, Default)]
pub struct Request {
    /// The thread to copy (`--thread`; not with [`Request::all`]).
    pub thread: Option<String>,
    /// Every thread [`Request::idle`] and [`Request::meta`] select, each under its own id,
    /// into [`Request::to`] (`--all`).
    pub all: bool,
    /// Only threads idle at least this long (`--idle`, with `--all`).
    pub idle: Option<String>,
    /// Only threads whose metadata has these `KEY=VALUE` (`--meta`, with `--all`).
    pub meta: Vec<String>,
    /// The new thread id (`--to-thread`; by default the same id, in another database).
    pub to_thread: Option<String>,
    /// Another database (`--to`; `None`: the source database).
    pub to: Option<PathBuf>,
    /// Fork at this root checkpoint (its id or a prefix of it, `--at`).
    pub at: Option<String>,
    /// Replace a target thread that exists (`--replace`).
    pub replace: bool,
    /// Write nothing, report what would be.
    pub dry_run: bool,
    /// What changes in the values on the way.
    pub changes: ValueChanges,
}

/// What a copy did.
#[derive(Debug)]
pub enum Report {
    /// One thread.
    One(CopyReport),
    /// `--all`: every thread selected.
    All(Copies),
}

/// What a copy of several threads did, and how the run ends once the report is shown.
#[derive(Debug)]
pub struct Copies {
    /// The report.
    pub report: CopiesReport,
    /// Threads were left out (exit code 3), when some were.
    pub partial: Option<Partial>,
}

impl Copies {
    /// The run's result once the report is shown.
    pub fn finish(self) -> Result<()> {
        self.partial.map_or(Ok(()), |p| Err(p.into()))
    }
}

/// Runs `copy`: one thread (or a fork of it) to a new id, here or in another database; or,
/// with [`Request::all`], every thread [`Request::idle`] / [`Request::meta`] select into
/// another database.
pub fn run(req: &Request, ctx: &Ctx, _sink: &dyn Sink) -> Result<Report> {
    if req.all {
        return run_all(req, ctx).map(Report::All);
    }
    let Some(thread) = &req.thread else {
        return Err(Usage("copy needs --thread ID (or --all with --to)".into()).into());
    };
    let to_thread = match (&req.to_thread, &req.to) {
        (Some(t), _) => t.clone(),
        (None, Some(_)) => thread.clone(),
        (None, None) => return Err(Usage(
            "copy needs --to-thread NEW (a new id in this database) or --to DB (another database)"
                .into(),
        )
        .into()),
    };
    let source_path = ctx
        .db
        .as_deref()
        .ok_or_else(|| anyhow!("no database given: pass --db PATH or set MEMCTL_DB"))?;
    if let Some(to) = &req.to {
        check_schema_flag(ctx, to)?;
    }
    let same_db = match &req.to {
        None => true,
        Some(to) => same_database(source_path, to)?,
    };
    if same_db && to_thread == *thread {
        return Err(Usage(format!(
            "the copy of thread '{thread}' would be the thread itself (same database, same id): give --to-thread or --to"
        ))
        .into());
    }
    let access = match same_db && !req.dry_run {
        true => Access::ReadWrite,
        false => Access::ReadOnly,
    };
    let changes = Changes::new(ctx, &req.changes)?;
    let source = ctx.open(access)?;
    let mut rows = source.read_thread(thread)?;
    if rows.checkpoints.is_empty() {
        return Err(crate::read::unknown_thread(&*source, thread));
    }
    // --at names a root checkpoint by its id or a prefix of it, as show --checkpoint does.
    let at = req
        .at
        .as_deref()
        .map(|given| crate::read::resolve_checkpoint_id(&*source, thread, "", given))
        .transpose()?;
    // A fork takes the rows up to --at: those are what must be readable (a thread damaged
    // after that checkpoint forks whole up to it).
    if let Some(at) = &at {
        rows = crate::ops::copy::cut(rows, at)?;
    }
    changes.check_thread(thread, &rows)?;
    let changed = changes.apply(&*source, thread, &mut rows)?;
    let mut plan = crate::ops::copy::plan(rows, thread, &to_thread, at.as_deref())?;
    changed.add_to(&mut plan.counts);
    let busy = ctx.busy_timeout;
    let mut created = false;
    let mut opened: Option<Target> = None;
    // A Postgres database seals what it writes with its store's key: a copy into the source
    // database under a new key writes through a second connection that has that key.
    let same_pg_recrypted = same_db
        && changes.recrypts()
        && matches!(storage::locate(source_path), Ok(Location::Postgres(_)));
    let access = match req.dry_run {
        true => Access::ReadOnly,
        false => Access::ReadWrite,
    };
    let target: Option<Box<dyn CheckpointStore>> = match &req.to {
        _ if same_pg_recrypted => Some(storage::open(
            source_path,
            ctx.schema.as_deref(),
            access,
            busy,
            &changes.target_keys(),
        )?),
        _ if same_db => None,
        None => None,
        Some(to) => {
            let mut t = open_target(to, access, !req.dry_run, busy, &changes.target_keys())?;
            created = t.new_file;
            let store = t.store.take();
            opened = Some(t);
            store
        }
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
    if exists && !req.replace {
        return Err(storage::TargetExists(to_thread).into());
    }
    if let (true, Some(t)) = (req.dry_run, target_store) {
        // What the real run's writer would refuse, refused here too.
        can_hold_all(t, &to_thread, &plan.rows)?;
    }
    let written = match (req.dry_run, target_store) {
        (true, _) | (false, None) => storage::WrittenThread {
            replaced: exists,
            shared_versions: vec![],
        },
        (false, Some(t)) => {
            let written = t.write_thread(&to_thread, &plan.rows, req.replace);
            match (written, created, &req.to) {
                (Ok(w), _, _) => w,
                (Err(e), true, Some(to)) => {
                    drop(target);
                    remove_created(to);
                    return Err(e);
                }
                (Err(e), _, _) => return Err(setup_noted(e, opened.as_ref())),
            }
        }
    };
    Ok(Report::One(CopyReport {
        thread: thread.clone(),
        to_thread,
        to: match same_db {
            true => None,
            false => req.to.as_deref().map(storage::shown_path),
        },
        at,
        dry_run: req.dry_run,
        created,
        replaced: written.replaced,
        counts: plan.counts,
        shared_versions: SharedVersion::list(written.shared_versions),
        saver_setup: opened.and_then(|t| t.saver_setup(req.dry_run, true)),
    }))
}

/// `copy --all --to DB`: every thread `--idle` / `--meta` select, each under its own id, one
/// transaction per thread (an interrupted run leaves whole threads), a report per thread and
/// the totals. Target threads that exist are refused before anything is written, unless
/// `--replace`.
fn run_all(req: &Request, ctx: &Ctx) -> Result<Copies> {
    let Some(to) = &req.to else {
        return Err(Usage("copy --all needs --to DB (another database)".into()).into());
    };
    let source_path = ctx
        .db
        .as_deref()
        .ok_or_else(|| anyhow!("no database given: pass --db PATH or set MEMCTL_DB"))?;
    check_schema_flag(ctx, to)?;
    if same_database(source_path, to)? {
        return Err(Usage(
            "copy --all copies into another database: --to names --db itself".into(),
        )
        .into());
    }
    let conditions = req
        .meta
        .iter()
        .map(|m| crate::ops::find::MetaCondition::parse(m))
        .collect::<Result<Vec<_>>>()?;
    let idle = req
        .idle
        .as_deref()
        .map(crate::ops::duration::parse_seconds)
        .transpose()?;
    let now = human::now(ctx.now.as_deref())?;
    let keys = ctx.keys();
    let changes = Changes::new(ctx, &req.changes)?;
    let source = ctx.open(Access::ReadOnly)?;
    let mut all = Vec::new();
    source.for_each_thread(&mut |t| {
        all.push(t);
        Ok(())
    })?;
    let idle_enough: Vec<&str> = all
        .iter()
        .filter(|t| match idle {
            None => true,
            Some(limit) => crate::ops::activity::idle_seconds(&t.latest_id, None, now)
                .is_some_and(|a| a >= limit),
        })
        .map(|t| t.thread_id.as_str())
        .collect();
    let readers = crate::read::Readers::one(&*source);
    let mut pairs = Vec::new();
    // --meta's selection a batch of threads at a time (a few queries per batch); the first
    // thread it cannot check stops the copy.
    for chunk in idle_enough.chunks(crate::read::stream::BATCH) {
        let selects = match conditions.is_empty() {
            true => chunk.iter().map(|_| Ok(true)).collect(),
            false => crate::read::meta_select(&readers, &keys, chunk, &conditions)?,
        };
        for (thread, selected) in chunk.iter().zip(selects) {
            if selected? {
                pairs.push((thread.to_string(), thread.to_string()));
            }
        }
    }
    let busy = ctx.busy_timeout;
    let access = match req.dry_run {
        true => Access::ReadOnly,
        false => Access::ReadWrite,
    };
    let create = !req.dry_run && !pairs.is_empty();
    let mut opened = open_target(to, access, create, busy, &changes.target_keys())?;
    let (target, new_file) = (opened.store.take(), opened.new_file);
    let shown = Some(storage::shown_path(to));
    let copied = copy_threads(
        &*source,
        target.as_deref(),
        &pairs,
        &changes,
        req.replace,
        req.dry_run,
        shown,
    );
    let Copied {
        mut reports,
        left_out,
    } = match copied {
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
            return Err(setup_noted(e, Some(&opened)));
        }
    };
    // A file this run created for threads that were all left out goes again.
    let created = new_file && !reports.is_empty();
    if new_file && !created {
        drop(target);
        remove_created(to);
    }
    reports.iter_mut().for_each(|r| r.created = created);
    let partial = left_out_partial(&left_out, reports.len());
    let mut report = CopiesReport::new(reports, left_out);
    report.saver_setup = opened.saver_setup(req.dry_run, !report.threads.is_empty());
    Ok(Copies { report, partial })
}
