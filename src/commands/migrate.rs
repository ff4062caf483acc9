//! `memctl migrate --to DB`: every thread of `--db` into another database of either backend,
//! one transaction per thread, in the target's own layout (`CheckpointStore::write_thread_from`).
//! A thread absent from the target is streamed a checkpoint at a time (`copy::stream_thread`):
//! what is held is about its largest checkpoint, not the whole thread. Resumable: a thread
//! already there and equal (`ops::copy::same_thread`) is skipped; one that differs is
//! reported and left alone unless `--replace` (these, and `--materialize`, read the whole
//! thread). Then the LangGraph Store, item by item in batches, the same way
//! (`super::migrate_store`).

use std::io::Write;
use std::time::Duration;

use anyhow::{anyhow, Result};

use super::copy::Changes;
use crate::cli::{GlobalArgs, MigrateArgs};
use crate::exit::{Partial, Usage};
use crate::output::copy::{write_migrate, MigrateReport, MigratedThread, SharedVersion};
use crate::storage::{self, Access, CheckpointStore};

/// Runs `migrate`.
pub fn run(g: &GlobalArgs, args: &MigrateArgs, out: &mut dyn Write) -> Result<()> {
    let source_path =
        g.db.as_deref()
            .ok_or_else(|| anyhow!("no database given: pass --db PATH or set MEMCTL_DB"))?;
    super::copy::check_schema_flag(g, &args.to)?;
    if super::copy::same_database(source_path, &args.to)? {
        return Err(Usage("--to names --db itself: nothing to migrate".into()).into());
    }
    let changes = Changes::new(g, &args.changes)?;
    // A database with a LangGraph store and no checkpoint tables: its store alone moves.
    let (source, store_only) = match super::open(g, Access::ReadOnly) {
        Ok(s) => (s, false),
        Err(e) => (
            super::store::checkpoints_or_store_only(g, Access::ReadOnly, e)?,
            true,
        ),
    };
    let mut threads = super::copy::thread_ids(&*source)?;
    threads.sort();
    // A wrong key stops the run before anything is written (or a file created).
    changes.check_keys(&*source, &threads)?;
    // The LangGraph Store's part, checked before anything is written.
    let store_plan = super::migrate_store::plan(g, args)?;
    let busy = Duration::from_millis(g.busy_timeout);
    let access = match args.dry_run {
        true => Access::ReadOnly,
        false => Access::ReadWrite,
    };
    // Without threads to write, the target's checkpoint tables are neither opened nor made:
    // the store's tables alone are (a new file is made with them, see `setup_store`).
    // A Postgres target without the saver's tables gets them with the first thread written
    // (see `open_target`).
    let opened = match store_only {
        true => super::copy::Target {
            store: None,
            new_file: super::copy::is_new_file(&args.to)?,
            setup: None,
        },
        false => super::copy::open_target(
            &args.to,
            access,
            !args.dry_run,
            busy,
            &changes.target_keys(),
        )?,
    };
    let mut report = MigrateReport {
        to: storage::shown_path(&args.to),
        dry_run: args.dry_run,
        created: opened.new_file,
        saver_setup: None,
        threads: Vec::new(),
        totals: Default::default(),
        store: None,
    };
    let mut failure = None;
    let mut left_out = Vec::new();
    for (i, t) in threads.iter().enumerate() {
        match migrate_thread(&*source, opened.store.as_deref(), t, &changes, args) {
            Ok(m) => report.add(m),
            // A thread memctl cannot read, or that the target cannot hold: left out, reported,
            // and the migration carries on (a rerun would meet it again).
            Err(e) => match super::copy::left_out(t, &e) {
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
    report.saver_setup = opened.saver_setup(args.dry_run, writes);
    if let (None, Some(plan)) = (&failure, store_plan) {
        match super::migrate_store::run(plan, &args.to, args, busy) {
            Ok(s) => report.store = Some(s),
            Err(e) => failure = Some(e.context(
                "the LangGraph Store: migrated in batches of 500 items, each whole; run migrate again to resume",
            )),
        }
    }
    write_migrate(out, crate::output::resolve_format(g.format), &report)?;
    if let Some(e) = failure {
        return Err(e);
    }
    let mut partial = Vec::new();
    if let Some(p) = super::copy::left_out_partial(&left_out, threads.len() - left_out.len()) {
        partial.push(p.0);
    }
    if let Some(p) = report
        .store
        .as_ref()
        .and_then(super::migrate_store::left_out_partial)
    {
        partial.push(p);
    }
    if report.totals.differing > 0 {
        partial.push(format!(
            "{} differ in the target and were left as they are (--replace overwrites them)",
            crate::output::human::count(report.totals.differing, "thread")
        ));
    }
    if let Some(st) = report.store.as_ref().filter(|s| s.differing > 0) {
        partial.push(format!(
            "{} of the LangGraph Store {} in the target and {} left as {} (--replace overwrites {})",
            crate::output::human::count(st.differing, "item"),
            if st.differing == 1 { "differs" } else { "differ" },
            if st.differing == 1 { "was" } else { "were" },
            if st.differing == 1 { "it is" } else { "they are" },
            if st.differing == 1 { "it" } else { "them" },
        ));
    }
    match partial.is_empty() {
        true => Ok(()),
        false => Err(Partial(partial.join("; ")).into()),
    }
}

/// One thread: copied, skipped (there and equal), replaced, or left (there and different).
fn migrate_thread(
    source: &dyn CheckpointStore,
    target: Option<&dyn CheckpointStore>,
    thread: &str,
    changes: &Changes,
    args: &MigrateArgs,
) -> Result<MigratedThread> {
    let there = match target {
        Some(t) => t.thread_exists(thread)?,
        None => false,
    };
    // Absent from the target: streamed, a checkpoint at a time, unless --materialize needs
    // the whole thread.
    if !there && changes.streams() {
        let (counts, written) = super::copy::stream_thread(
            source,
            target,
            thread,
            thread,
            changes,
            false,
            args.dry_run,
        )?;
        return Ok(MigratedThread {
            thread: thread.to_owned(),
            action: "copy".to_owned(),
            why: None,
            counts,
            shared_versions: SharedVersion::list(written.shared_versions),
        });
    }
    // There already (compared whole with what is there) or --materialize: the whole thread.
    let plan = super::copy::planned_whole(source, thread, thread, changes)?;
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
            super::copy::can_hold_all(t, thread, &plan.rows)?;
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
