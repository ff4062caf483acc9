//! `memctl prune`: delete whole threads — idle ones, or named ones — in short batches beside a
//! live app.

use std::io::Write;

use anyhow::Result;

use crate::cli::{GlobalArgs, PruneArgs};
use crate::ops::duration::parse_seconds;
use crate::output::prune::{PruneReport, PrunedThread, SkippedThread};
use crate::output::{self, human, progress};
use crate::storage::{CheckpointStore, Deleted};

use super::batch::open_for_writing;
use select::{select, Filters, Selection};

mod select;

/// Runs `prune`.
pub fn run(g: &GlobalArgs, args: &PruneArgs, out: &mut dyn Write) -> Result<()> {
    let m = &args.maintenance;
    let store = open_for_writing(g, m.dry_run)?;
    let keys = super::keys(g);
    let now = human::now(g.now.as_deref())?;
    let idle = args.idle.as_deref().map(parse_seconds).transpose()?;
    let min_idle = parse_seconds(&m.min_idle)?;
    let filters = Filters {
        args,
        now,
        idle,
        min_idle,
    };
    let mut sel = select(&*store, &keys, &filters)?;
    confirm(args, &sel.selected)?;
    // Ctrl-C from here on stops before the next transaction, and the report is written whole
    // (see crate::interrupt).
    let _batch = crate::interrupt::Batch::enter();
    let (deleted, not_processed, failure) = match m.dry_run {
        true => (Deleted::default(), 0, None),
        false => delete(&*store, args.batch, &mut sel),
    };
    if let Some(e) = failure {
        if not_processed == sel.selected.len() {
            // Nothing was deleted (a batch is one transaction): the error alone.
            return Err(e);
        }
        // Batches before it were committed: they are reported, then the error (exit 3).
        sel.selected.truncate(sel.selected.len() - not_processed);
        drop_moved(&mut sel);
        let report = report(m.dry_run, &sel, deleted, (0, 0), None, &m.min_idle);
        output::prune::render(out, output::resolve_format(g.format), &report)?;
        return Err(crate::exit::Partial(format!(
            "{} threads were deleted, then a transaction failed and {not_processed} were left \
             untouched: {e:#}",
            sel.selected.len()
        ))
        .into());
    }
    let interrupted = not_processed > 0;
    // The threads not processed are not reported as deleted.
    sel.selected.truncate(sel.selected.len() - not_processed);
    drop_moved(&mut sel);
    let (before, after, vacuum) = store
        .maintenance()
        .ok_or_else(|| store.lacks("shrink"))?
        .shrink(m.vacuum && !m.dry_run && !interrupted)?;
    let report = report(
        m.dry_run,
        &sel,
        deleted,
        (before, after),
        vacuum.as_ref(),
        &m.min_idle,
    );
    output::prune::render(out, output::resolve_format(g.format), &report)?;
    if g.quiet {
        // The report is hidden: the threads an operator must act on are still named (not
        // the ones --min-idle left alone on purpose).
        for (id, status, why) in &sel.problems {
            output::quiet_problem(id, status, why);
        }
    }
    match vacuum {
        _ if interrupted => Err(crate::interrupt::Interrupted(not_processed).into()),
        Some(Err(e)) => Err(super::partial_if_busy(e)),
        _ if sel.failed > 0 => Err(crate::exit::Partial(format!(
            "{} threads could not be read and were left untouched ({})",
            sel.failed,
            if g.quiet {
                "listed above"
            } else {
                "see the skipped lines"
            }
        ))
        .into()),
        _ => Ok(()),
    }
}

/// The report of what was done: `sel.selected` holds the threads deleted (or, in a dry run,
/// that would be).
fn report(
    dry_run: bool,
    sel: &Selection,
    deleted: Deleted,
    (before, after): (u64, u64),
    vacuum: Option<&Result<()>>,
    min_idle: &str,
) -> PruneReport {
    let would: u64 = sel.selected.iter().map(|t| t.bytes).sum();
    PruneReport {
        dry_run,
        threads: sel
            .selected
            .iter()
            .map(|t| PrunedThread {
                thread_id: t.thread_id.clone(),
                checkpoints: t.checkpoints,
                bytes: t.bytes,
                age_seconds: t.age,
            })
            .collect(),
        skipped: sel
            .skipped
            .iter()
            .map(|(id, why)| SkippedThread {
                thread_id: id.clone(),
                reason: why.clone(),
                recent: sel.recent.contains(id),
            })
            .collect(),
        min_idle: min_idle.to_owned(),
        deleted,
        bytes_reclaimed: deleted.bytes,
        would_reclaim: dry_run.then_some(would),
        file_bytes_before: before,
        file_bytes_after: after,
        vacuumed: matches!(vacuum, Some(Ok(()))),
    }
}

/// Takes the threads that moved while memctl worked (left alone, and listed as skipped) out
/// of the selected ones: the report's `threads` are the ones deleted.
fn drop_moved(sel: &mut Selection) {
    let skipped: std::collections::HashSet<&str> =
        sel.skipped.iter().map(|(id, _)| id.as_str()).collect();
    sel.selected
        .retain(|t| !skipped.contains(t.thread_id.as_str()));
}

/// On a terminal, asks first (when any thread is selected).
fn confirm(args: &PruneArgs, selected: &[select::Chosen]) -> Result<()> {
    if selected.is_empty() {
        return Ok(());
    }
    let bytes: u64 = selected.iter().map(|t| t.bytes).sum();
    output::confirm::confirm(
        &output::confirm::Question {
            command: "prune",
            action: format!(
                "delete {} ({}, {})",
                human::count(selected.len() as u64, "thread"),
                human::count(
                    selected.iter().map(|t| t.checkpoints).sum::<u64>(),
                    "checkpoint"
                ),
                human::bytes(bytes)
            ),
            threads: selected.iter().map(|t| t.thread_id.clone()).collect(),
        },
        args.maintenance.yes,
        args.maintenance.dry_run,
    )
}

/// How long one prune transaction should hold the write lock an app's commit waits on: the
/// batch shrinks (down to one thread) while transactions take longer, and grows back (up to
/// `--batch`) while they are much shorter.
const TARGET_TRANSACTION: std::time::Duration = std::time::Duration::from_millis(40);

/// Deletes the selected threads, at most `per_batch` per transaction (fewer while a
/// transaction takes longer than [`TARGET_TRANSACTION`]), leaving the database to a live app
/// between two transactions when another process has the file open
/// ([`crate::ops::batch::pause_after`]; a server queues the app's wait instead); a thread that moved while memctl worked is left alone
/// (skipped, and a problem). Returns what was deleted, how many selected threads were not
/// reached (interrupted, or after a failed transaction) and the failure, if any.
fn delete(
    store: &dyn CheckpointStore,
    per_batch: usize,
    sel: &mut Selection,
) -> (Deleted, usize, Option<anyhow::Error>) {
    let mut deleted = Deleted::default();
    let pb = progress::bar(sel.selected.len() as u64, "prune");
    let max = per_batch.max(1);
    let mut per = crate::ops::batch::first_size(max);
    let pause = store
        .sharing()
        .is_none_or(|s| s.might_be_shared() && !s.queues_waiting_writers());
    let mut not_processed = 0;
    let mut i = 0;
    while i < sel.selected.len() {
        if crate::interrupt::requested() {
            not_processed = sel.selected.len() - i;
            break;
        }
        let batch = &sel.selected[i..sel.selected.len().min(i + per)];
        let ids: Vec<(String, String)> = batch
            .iter()
            .map(|t| (t.thread_id.clone(), t.latest_id.clone()))
            .collect();
        let started = std::time::Instant::now();
        let (d, moved) = match store.delete_threads(&ids) {
            Ok(done) => done,
            Err(e) => {
                // This batch's transaction was rolled back: it and the rest are untouched.
                pb.finish_and_clear();
                return (deleted, sel.selected.len() - i, Some(e));
            }
        };
        let took = started.elapsed();
        per = crate::ops::batch::next_size(per, max, took, TARGET_TRANSACTION);
        if pause {
            std::thread::sleep(crate::ops::batch::pause_after(took));
        }
        i += batch.len();
        deleted.add(d);
        pb.inc(batch.len() as u64);
        for t in moved {
            let why = "got a new checkpoint while memctl worked; left alone".to_owned();
            sel.problems.push((t.clone(), "skipped", why.clone()));
            sel.skipped.push((t, why));
        }
    }
    pb.finish_and_clear();
    (deleted, not_processed, None)
}
