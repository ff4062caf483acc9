//! The `migrate` job: every thread of `--db` into another database of either backend,
//! one transaction per thread, in the target's own layout (`CheckpointStore::write_thread_from`).
//! A thread absent from the target is streamed a checkpoint at a time (`copy::threads::stream_thread`):
//! what is held is about its largest checkpoint, not the whole thread. Resumable: a thread
//! already there and equal (`ops::copy::same_thread`) is skipped; one that differs is
//! reported and left alone unless `--replace` (these, and `--materialize`, read the whole
//! thread). Then the LangGraph Store, item by item in batches, the same way
//! ([`store`]).

use std::path::PathBuf;

use anyhow::{anyhow, Result};

use super::copy::report::{MigrateReport, MigratedThread, SharedVersion};
use super::copy::target::{check_schema_flag, is_new_file, open_target, Target};
use super::copy::threads::{
    self, can_hold_all, left_out_partial, planned_whole, same_database, stream_thread, thread_ids,
};
use super::copy::{Changes, ValueChanges};
use super::{Ctx, Sink};
use crate::exit::{Partial, Usage};
use crate::storage::{self, Access, CheckpointStore};
use crate::text::human;

pub mod store;

/// What to migrate.
#[derive(Debug, Clone)]
pub struct Request {
    /// The target database (`--to`): a SQLite file (made when new) or a PostgreSQL URL.
    pub to: PathBuf,
    /// Overwrite threads and Store items that differ in the target (`--replace`).
    pub replace: bool,
    /// Write nothing, report what would be.
    pub dry_run: bool,
    /// Leave the Store's embedding vectors behind (`--without-vectors`).
    pub without_vectors: bool,
    /// What changes in the values on the way.
    pub changes: ValueChanges,
}

/// What a migration did, and how the run ends once the report is shown.
#[derive(Debug)]
pub struct Report {
    /// The report.
    pub migrate: MigrateReport,
    /// `None` for success; the error that stopped the run (the threads before it were
    /// migrated), or exit code 3 (threads or items left out or differing).
    pub end: Option<anyhow::Error>,
}

impl Report {
    /// The run's result once the report is shown.
    pub fn finish(self) -> Result<()> {
        self.end.map_or(Ok(()), Err)
    }
}

/// Runs `migrate`: every thread, then the LangGraph Store.
pub fn run(req: &Request, ctx: &Ctx, sink: &dyn Sink) -> Result<Report> {
    let source_path = ctx
        .db
        .as_deref()
        .ok_or_else(|| anyhow!("no database given: pass --db PATH or set MEMCTL_DB"))?;
    check_schema_flag(ctx, &req.to)?;
    if same_database(source_path, &req.to)? {
        return Err(Usage("--to names --db itself: nothing to migrate".into()).into());
    }
    let changes = Changes::new(ctx, &req.changes)?;
    // A database with a LangGraph store and no checkpoint tables: its store alone moves.
    let (source, store_only) = match ctx.open(Access::ReadOnly) {
        Ok(s) => (s, false),
        Err(e) => (
            ctx.checkpoints_or_store_only(Access::ReadOnly, e, sink)?,
            true,
        ),
    };
    let mut threads = thread_ids(&*source)?;
    threads.sort();
    // A wrong key stops the run before anything is written (or a file created).
    changes.check_keys(&*source, &threads)?;
    // The LangGraph Store's part, checked before anything is written.
    let store_plan = store::plan(ctx, req)?;
    let busy = ctx.busy_timeout;
    let access = match req.dry_run {
        true => Access::ReadOnly,
        false => Access::ReadWrite,
    };
    // Without threads to write, the target's checkpoint tables are neither opened nor made:
    // the store's tables alone are (a new file is made with them, see `setup_store`).
    // A Postgres target without the saver's tables gets them with the first thread written
    // (see `open_target`).
    let opened = match store_only {
        true => Target {
            store: None,
            new_file: is_new_file(&req.to)?,
            setup: None,
        },
        false => open_target(&req.to, access, !req.dry_run, busy, &changes.target_keys())?,
    };
    let mut report = MigrateReport {
        to: storage::shown_path(&req.to),
        dry_run: req.dry_run,
        created: opened.new_file,
        saver_setup: None,
        threads: Vec::new(),
        totals: Default::default(),
        store: None,
    };
    let mut failure = None;
    let mut left_out = Vec::new();
    for (i, t) in threads.iter().enumerate() {
        match migrate_thread(&*source, opened.store.as_deref(), t, &changes, req) {
            Ok(m) => report.add(m),
            // A thread memctl cannot read, or that the target cannot hold: left out, reported,
            // and the migration carries on (a rerun would meet it again).
            Err(e) => match threads::left_out(t, &e) {
                Some(l) => {
                    report.add(MigratedThread {
                        thread: t.clone(),
                        action: l.reason.clone(),
                        why: Some(l.why.clone()),
                        counts: Default::default(),
                        shared_versions: vec![],
                    });
                    left_out.push(l);
                }
                None => {
                    failure = Some(e.context(format!(
                        "thread '{t}': nothing of it written ({i} of {} threads done before it, each whole; run migrate again to resume)",
                        threads.len()
                    )));
                    break;
                }
            },
        }
    }
    let writes = report.totals.copied + report.totals.replaced > 0;
    report.saver_setup = opened.saver_setup(req.dry_run, writes);
    if let (None, Some(plan)) = (&failure, store_plan) {
        match store::run(plan, &req.to, req, busy) {
            Ok(s) => report.store = Some(s),
            Err(e) => failure = Some(e.context(
                "the LangGraph Store: migrated in batches of 500 items, each whole; run migrate again to resume",
            )),
        }
    }
    if let Some(e) = failure {
        return Ok(Report {
            migrate: report,
            end: Some(e),
        });
    }
    let mut partial = Vec::new();
    if let Some(p) = left_out_partial(&left_out, threads.len() - left_out.len()) {
        partial.push(p.0);
    }
    if let Some(p) = report.store.as_ref().and_then(store::left_out_partial) {
        partial.push(p);
    }
    if report.totals.differing > 0 {
        partial.push(format!(
            "{} differ in the target and were left as they are (--replace overwrites them)",
            human::count(report.totals.differing, "thread")
        ));
    }
    if let Some(st) = report.store.as_ref().filter(|s| s.differing > 0) {
        partial.push(format!(
            "{} of the LangGraph Store {} in the target and {} left as {} (--replace overwrites {})",
            human::count(st.differing, "item"),
            if st.differing == 1 { "differs" } else { "differ" },
            if st.differing == 1 { "was" } else { "were" },
            if st.differing == 1 { "it is" } else { "they are" },
            if st.differing == 1 { "it" } else { "them" },
        ));
    }
    let end = match partial.is_empty() {
        true => None,
        false => Some(Partial(partial.join("; ")).into()),
    };
    Ok(Report {
        migrate: report,
        end,
    })
}

/// One thread: copied, skipped (there and equal), replaced, or left (there and different).
fn migrate_thread(
    source: &dyn CheckpointStore,
    target: Option<&dyn CheckpointStore>,
    thread: &str,
    changes: &Changes,
    args: &Request,
) -> Result<MigratedThread> {
    let there = match target {
        Some(t) => t.thread_exists(thread)?,
        None => false,
    };
    // Absent from the target: streamed, a checkpoint at a time, unless --materialize needs
    // the whole thread.
    if !there && changes.streams() {
        let (counts, written) =
            stream_thread(source, target, thread, thread, changes, false, args.dry_run)?;
        return Ok(MigratedThread {
            thread: thread.to_owned(),
            action: "copy".to_owned(),
            why: None,
            counts,
            shared_versions: SharedVersion::list(written.shared_versions),
        });
    }
    // There already (compared whole with what is there) or --materialize: the whole thread.
    let plan = planned_whole(source, thread, thread, changes)?;
    let theirs = match (target, there) {
        (Some(t), true) => Some(changes.comparable(t.read_thread(thread)?)),
        _ => None,
    };
    let action = match theirs {
        None => "copy",
        Some(theirs)
            if match changes.encrypts() {
                true => {
                    crate::ops::copy::same_thread(&changes.comparable(plan.rows.clone()), &theirs)
                }
                false => crate::ops::copy::same_thread(&plan.rows, &theirs),
            } =>
        {
            "skip"
        }
        Some(_) if args.replace => "replace",
        Some(_) => "differs",
    };
    let shared = match (args.dry_run, target, action) {
        (false, Some(t), "copy" | "replace") => {
            t.write_thread(thread, &plan.rows, action == "replace")?
                .shared_versions
        }
        (true, Some(t), "copy" | "replace") => {
            can_hold_all(t, thread, &plan.rows)?;
            vec![]
        }
        _ => vec![],
    };
    Ok(MigratedThread {
        thread: thread.to_owned(),
        action: action.to_owned(),
        why: None,
        counts: plan.counts,
        shared_versions: SharedVersion::list(shared),
    })
}
