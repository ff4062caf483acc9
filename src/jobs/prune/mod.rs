//! The `prune` job: delete whole threads — idle ones, or named ones — in short batches beside
//! a live app.

use anyhow::Result;
use serde::Serialize;

use crate::ops::duration::parse_seconds;
use crate::storage::{CheckpointStore, Deleted};
use crate::text::human;

use super::{Ctx, Question, Sink};
use select::{select, Filters, Selection};

mod select;

/// What to prune.
#[derive(Debug, Clone)]
pub struct Request {
    /// Delete every thread idle at least this long (`--idle`, e.g. `30d`); with
    /// [`Request::threads`], only the named threads that are this idle.
    pub idle: Option<String>,
    /// The threads to delete (`--thread`; empty: every thread [`Request::idle`] selects).
    pub threads: Vec<String>,
    /// Threads per transaction (`--batch`).
    pub batch: usize,
    /// Leave alone threads written more recently than this (`--min-idle`, e.g. `5m`).
    pub min_idle: String,
    /// Delete nothing, report what would go.
    pub dry_run: bool,
    /// VACUUM afterwards (`--vacuum`).
    pub vacuum: bool,
}

/// The report of `prune`.
#[derive(Debug, Clone, Serialize)]
pub struct PruneReport {
    /// Nothing was written.
    pub dry_run: bool,
    /// The threads it deleted (would delete, in a dry run), not those it left alone.
    pub threads: Vec<PrunedThread>,
    /// The threads it left alone, and why.
    pub skipped: Vec<SkippedThread>,
    /// What was deleted over all threads.
    pub deleted: Deleted,
    /// The bytes of the deleted rows.
    pub bytes_reclaimed: u64,
    /// A dry run: the bytes the threads hold (`null` for a real run).
    pub would_reclaim: Option<u64>,
    /// The database's size before the run.
    pub file_bytes_before: u64,
    /// Its size after (and after the vacuum, with `--vacuum`).
    pub file_bytes_after: u64,
    /// `--vacuum` ran and succeeded.
    pub vacuumed: bool,
    /// `--min-idle` as given (the table says once what it left alone).
    #[serde(skip)]
    pub min_idle: String,
}

/// A thread `prune` selected.
#[derive(Debug, Clone, Serialize)]
pub struct PrunedThread {
    /// The thread.
    pub thread_id: String,
    /// Its checkpoints.
    pub checkpoints: u64,
    /// Its stored bytes.
    pub bytes: u64,
    /// Seconds since the app last wrote it (`null`: unknown).
    pub age_seconds: Option<i64>,
}

/// A thread `prune` left alone, and why.
#[derive(Debug, Clone, Serialize)]
pub struct SkippedThread {
    /// The thread.
    pub thread_id: String,
    /// Why.
    pub reason: String,
    /// Left alone for `--min-idle` (written too recently): a table counts these in one
    /// line; JSON lists each with its reason.
    #[serde(skip)]
    pub recent: bool,
}

/// A thread an operator must act on (unreadable, or moved while memctl worked), named on
/// stderr even with `--quiet`.
#[derive(Debug, Clone)]
pub struct Problem {
    /// The thread.
    pub thread_id: String,
    /// `failed` or `skipped`.
    pub status: &'static str,
    /// Why.
    pub why: String,
}

/// What a prune run did: the report, the threads to name even when the report is hidden, and
/// the error the run ends with once the report is shown (a partial success, an interruption).
#[derive(Debug)]
pub struct Report {
    /// The report.
    pub prune: PruneReport,
    /// The threads an operator must act on (not the ones `--min-idle` left alone on purpose).
    pub problems: Vec<Problem>,
    /// How the run ends after its report: `None` for success; exit code 3 (partial),
    /// interrupted, or the vacuum's error.
    pub end: Option<anyhow::Error>,
}

impl Report {
    /// The run's result once the report is shown.
    pub fn finish(self) -> Result<()> {
        self.end.map_or(Ok(()), Err)
    }
}

/// Runs `prune`: selects the threads, asks `sink` (not on a dry run), deletes them in
/// batches and shrinks the file. An error before anything was deleted is returned as the
/// error; one after some batches were committed ends the [`Report`].
pub fn run(req: &Request, ctx: &Ctx, sink: &dyn Sink) -> Result<Report> {
    let store = ctx.open_for_writing(req.dry_run)?;
    let keys = ctx.keys();
    let now = human::now(ctx.now.as_deref())?;
    let idle = req.idle.as_deref().map(parse_seconds).transpose()?;
    let min_idle = parse_seconds(&req.min_idle)?;
    let filters = Filters {
        threads: &req.threads,
        min_idle_text: &req.min_idle,
        now,
        idle,
        min_idle,
    };
    let mut sel = select(&*store, &keys, &filters)?;
    if !req.dry_run {
        confirm(sink, &sel.selected)?;
    }
    // Ctrl-C from here on stops before the next transaction, and the report is written whole
    // (see crate::interrupt).
    let _batch = crate::interrupt::Batch::enter();
    let (deleted, not_processed, failure) = match req.dry_run {
        true => (Deleted::default(), 0, None),
        false => delete(&*store, req.batch, &mut sel, sink),
    };
    if let Some(e) = failure {
        if not_processed == sel.selected.len() {
            // Nothing was deleted (a batch is one transaction): the error alone.
            return Err(e);
        }
        // Batches before it were committed: they are reported, then the error (exit 3).
        sel.selected.truncate(sel.selected.len() - not_processed);
        drop_moved(&mut sel);
        let prune = report(req.dry_run, &sel, deleted, (0, 0), None, &req.min_idle);
        let end = crate::exit::Partial(format!(
            "{} threads were deleted, then a transaction failed and {not_processed} were left \
             untouched: {e:#}",
            sel.selected.len()
        ));
        return Ok(Report {
            prune,
            problems: Vec::new(),
            end: Some(end.into()),
        });
    }
    let interrupted = not_processed > 0;
    // The threads not processed are not reported as deleted.
    sel.selected.truncate(sel.selected.len() - not_processed);
    drop_moved(&mut sel);
    let (before, after, vacuum) = store
        .maintenance()
        .ok_or_else(|| store.lacks("shrink"))?
        .shrink(req.vacuum && !req.dry_run && !interrupted)?;
    let prune = report(
        req.dry_run,
        &sel,
        deleted,
        (before, after),
        vacuum.as_ref(),
        &req.min_idle,
    );
    let end = match vacuum {
        _ if interrupted => Some(crate::interrupt::Interrupted(not_processed).into()),
        Some(Err(e)) => Some(super::partial_if_busy(e)),
        _ if sel.failed > 0 => Some(
            crate::exit::Partial(format!(
                "{} threads could not be read and were left untouched ({})",
                sel.failed,
                if ctx.quiet {
                    "listed above"
                } else {
                    "see the skipped lines"
                }
            ))
            .into(),
        ),
        _ => None,
    };
    let problems = sel
        .problems
        .into_iter()
        .map(|(thread_id, status, why)| Problem {
            thread_id,
            status,
            why,
        })
        .collect();
    Ok(Report {
        prune,
        problems,
        end,
    })
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

/// Asks first (when any thread is selected; never on a dry run).
fn confirm(sink: &dyn Sink, selected: &[select::Chosen]) -> Result<()> {
    if selected.is_empty() {
        return Ok(());
    }
    let bytes: u64 = selected.iter().map(|t| t.bytes).sum();
    sink.confirm(&Question {
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
    })
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
    sink: &dyn Sink,
) -> (Deleted, usize, Option<anyhow::Error>) {
    let mut deleted = Deleted::default();
    let pb = sink.bar(sel.selected.len() as u64, "prune");
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
