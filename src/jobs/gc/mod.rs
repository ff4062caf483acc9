//! The `gc` job: delete old checkpoints inside threads, keeping each one resumable as before.
//!
//! the request → the threads to look at (asked first) → per thread, a plan (DeltaChannel
//! snapshots when they leave fewer bytes) checked readable → the deletions applied a chunk at
//! a time → the report ([`GcReport`], rendered by `crate::output::gc`).

use std::collections::HashMap;

use anyhow::{Context, Result};

use crate::codec::aes::Keyring;
use crate::model::delta::{self, Reducer};
use crate::ops::activity::idle_seconds;
use crate::ops::duration::parse_seconds;
use crate::ops::gc::{
    is_delta, plan, plan_without_seeds, prefer_snapshots, with_snapshots, CheckpointInfo, GcPlan,
};
use crate::read::LoadedCheckpoint;
use crate::storage::{CheckpointRewrite, CheckpointStore, Deleted, ThreadSummary};
use crate::text::human;

use super::{Ctx, Question, Sink};

mod readable;
mod report;

pub use report::{DeltaWay, GcReport, GcRows, GcRowsReader, GcStatus, GcThread};

/// What to collect.
#[derive(Debug, Clone)]
pub struct Request {
    /// The one thread to collect (`--thread`; `None`: every thread, `--all`).
    pub thread: Option<String>,
    /// Checkpoints to keep per thread and namespace, newest first (at least 1).
    pub keep_checkpoints: u64,
    /// Leave alone threads written more recently than this (`--min-idle`, e.g. `5m`).
    pub min_idle: String,
    /// Delete nothing, report what would go.
    pub dry_run: bool,
    /// VACUUM afterwards (`--vacuum`).
    pub vacuum: bool,
}

/// What a gc run did: the report, and the error the run ends with once the report is shown
/// (a partial success, an interruption, the vacuum's error).
pub struct Report {
    /// The report.
    pub gc: GcReport,
    /// How the run ends after its report: `None` for success.
    pub end: Option<anyhow::Error>,
}

impl Report {
    /// The run's result once the report is shown.
    pub fn finish(self) -> Result<()> {
        self.end.map_or(Ok(()), Err)
    }

    /// The threads an operator must act on (unreadable ones, and ones that moved while
    /// memctl worked), as (thread, status, why): named on stderr when `--quiet` hides the
    /// report.
    pub fn problems(&self) -> Result<Vec<(String, &'static str, String)>> {
        let rows = &self.gc.threads;
        let mut out = Vec::new();
        for i in 0..rows.len() {
            let r = rows.get(i)?;
            let why = r.reason.as_deref().unwrap_or("");
            match r.status {
                GcStatus::Failed => {
                    out.push((r.thread_id, "failed", format!("{why}; left untouched")))
                }
                GcStatus::Skipped if why.starts_with("got a new checkpoint") => {
                    out.push((r.thread_id.clone(), "skipped", why.to_owned()))
                }
                _ => {}
            }
        }
        Ok(out)
    }
}

/// What [`snapshots`] found.
enum Snapshots {
    /// The rewrites, and the bytes they add.
    Written(Vec<CheckpointRewrite>, u64),
    /// memctl cannot write them, and why (the thread is left alone).
    Cannot(String),
    /// The rows are not plain msgpack (encrypted, or LangGraph.js's `json`): memctl writes
    /// snapshots into plain msgpack rows only, and keeps the chain instead (why).
    Encrypted(String),
}

/// What gc does with one thread's history, decided before anything is written.
enum Decision {
    /// Nothing to collect (not reported).
    Nothing,
    /// Left alone or unreadable: reported with this status and why.
    Report(GcStatus, String),
    /// The checkpoints it would keep do not decode: left untouched, reported failed with
    /// why (and the way a DeltaChannel thread was to stay exact, as planned).
    Unreadable {
        /// Why.
        why: String,
        /// How a DeltaChannel thread was to stay exact.
        way: Option<(DeltaWay, Option<String>)>,
        /// Checkpoints that were to be rewritten with DeltaChannel snapshots.
        rewritten: u64,
    },
    /// Delete what `plan` says, after writing `rewrites` (DeltaChannel snapshots).
    Collect {
        /// What goes.
        plan: GcPlan,
        /// Kept checkpoints rewritten with DeltaChannel snapshots.
        rewrites: Vec<CheckpointRewrite>,
        /// How a DeltaChannel thread stays exact, and why it keeps the chain.
        way: Option<(DeltaWay, Option<String>)>,
        /// What stays (checked readable before anything goes).
        kept: Vec<CheckpointInfo>,
    },
}

/// The outcome of the pass over the threads.
#[derive(Default)]
struct Pass {
    /// The rows of the threads being decided and applied (a chunk), in order: a row is
    /// final once its chunk's deletions are applied ([`Pass::settle_rows`]).
    rows: Vec<GcThread>,
    /// The final rows, in order, out of memory until the report is written.
    reported: GcRows,
    /// What the final rows delete (would delete, in a dry run).
    would: Deleted,
    /// A final row is `collected`.
    collected: bool,
    /// What was deleted over all threads.
    total: Deleted,
    /// Threads that could not be read.
    failed: usize,
    /// Threads not reached (interrupted).
    not_processed: usize,
    /// The error that stopped the pass; the rows before it stand (their transactions were
    /// committed).
    failure: Option<anyhow::Error>,
}

impl Pass {
    /// Moves the rows of the current chunk, final now (its deletions applied, or stopped),
    /// to the report. A real run's row still planned was not reached before an error: not
    /// done, not reported.
    fn settle_rows(&mut self, dry_run: bool) -> Result<()> {
        for row in std::mem::take(&mut self.rows) {
            if !dry_run && row.status == GcStatus::WouldDelete {
                continue;
            }
            self.would.add(row.deleted());
            self.collected |= row.status == GcStatus::Collected;
            self.reported.push(&row)?;
        }
        Ok(())
    }
}

/// Runs `gc`: asks `sink` first (not on a dry run), then decides and collects thread by
/// thread, and shrinks the file. An error before anything was deleted is returned as the
/// error; one after some threads were collected ends the [`Report`].
pub fn run(req: &Request, ctx: &Ctx, sink: &dyn Sink) -> Result<Report> {
    let store = ctx.open_for_writing(req.dry_run)?;
    let keys = ctx.keys();
    let now = human::now(ctx.now.as_deref())?;
    let min_idle = parse_seconds(&req.min_idle)?;
    let only = one_thread(&*store, req.thread.as_deref())?;
    if !req.dry_run {
        confirm(&*store, req, sink, only.as_deref(), now, min_idle)?;
    }
    let mut pass = collect(&*store, &keys, req, sink, only.as_deref(), now, min_idle);
    let failure = pass.failure.take();
    if let Some(e) = failure {
        if !pass.collected {
            // Nothing was deleted: the error alone.
            return Err(e);
        }
        pass.failure = Some(e);
    }
    let failure = pass.failure.take();
    let interrupted = pass.not_processed > 0 || failure.is_some();
    let (before, after, vacuum) = store
        .maintenance()
        .ok_or_else(|| store.lacks("shrink"))?
        .shrink(req.vacuum && !req.dry_run && !interrupted)?;
    let would = pass.would;
    let gc = GcReport {
        dry_run: req.dry_run,
        keep_checkpoints: req.keep_checkpoints,
        would_delete: req.dry_run.then_some(would),
        threads: pass.reported.reader()?,
        deleted: pass.total,
        bytes_reclaimed: pass.total.bytes,
        file_bytes_before: before,
        file_bytes_after: after,
        vacuumed: matches!(vacuum, Some(Ok(()))),
    };
    let end = match vacuum {
        _ if failure.is_some() => Some(
            crate::exit::Partial(format!(
                "the threads reported were collected, then a transaction failed and the rest \
                 were left untouched: {:#}",
                failure.unwrap_or_else(|| anyhow::anyhow!("unknown error"))
            ))
            .into(),
        ),
        _ if interrupted => Some(crate::interrupt::Interrupted(pass.not_processed).into()),
        Some(Err(e)) => Some(super::partial_if_busy(e)),
        _ if pass.failed > 0 => Some(
            crate::exit::Partial(format!(
                "{} threads could not be read and were left untouched ({})",
                pass.failed,
                if ctx.quiet {
                    "listed above"
                } else {
                    "see their status"
                }
            ))
            .into(),
        ),
        _ => None,
    };
    Ok(Report { gc, end })
}

/// The summary of the one thread `--thread` names (which must exist); `None` without
/// `--thread` (every thread, streamed: [`for_each_page`]).
fn one_thread(
    store: &dyn CheckpointStore,
    only: Option<&str>,
) -> Result<Option<Vec<ThreadSummary>>> {
    let Some(t) = only else {
        return Ok(None);
    };
    let threads: Vec<ThreadSummary> = store
        .summaries_of(&[t.to_owned()])?
        .into_iter()
        .filter(|s| s.thread_id == t)
        .collect();
    if threads.is_empty() {
        return Err(crate::read::unknown_thread(store, t));
    }
    Ok(Some(threads))
}

/// Hands `take` the threads gc looks at a page at a time, in thread-id order: `only`, or
/// every thread, never all held ([`crate::read::stream::threads_for_run`]; a real run on a
/// file pages on `store` itself between its transactions). Stops when `take` returns false.
fn for_each_page(
    store: &dyn CheckpointStore,
    only: Option<&[ThreadSummary]>,
    writing: bool,
    take: &mut dyn FnMut(Vec<ThreadSummary>) -> Result<bool>,
) -> Result<()> {
    match only {
        Some(threads) => take(threads.to_vec()).map(|_| ()),
        None => crate::read::stream::threads_for_run(store, writing, take),
    }
}

/// Asks first (never on a dry run). gc decides per thread as it goes; the question names the
/// threads it looks at and what it keeps of each (threads with no more than that are left
/// as they are). Only when the question is asked are the threads read for it (a pass of
/// their own; the candidates' ids are held for the question).
fn confirm(
    store: &dyn CheckpointStore,
    req: &Request,
    sink: &dyn Sink,
    only: Option<&[ThreadSummary]>,
    now: jiff::Timestamp,
    min_idle: i64,
) -> Result<()> {
    if !sink.asks() {
        return Ok(());
    }
    let mut candidates: Vec<String> = Vec::new();
    let mut checkpoints = 0u64;
    for_each_page(store, only, !req.dry_run, &mut |page| {
        for t in page {
            if t.checkpoints > req.keep_checkpoints
                && idle_seconds(&t.latest_id, None, now).is_none_or(|a| a >= min_idle)
            {
                checkpoints += t.checkpoints;
                candidates.push(t.thread_id);
            }
        }
        Ok(true)
    })?;
    if candidates.is_empty() {
        return Ok(());
    }
    sink.confirm(&Question {
        command: "gc",
        action: format!(
            "delete all but the newest {} of each namespace in {} ({} now)",
            human::count(req.keep_checkpoints, "checkpoint"),
            human::count(candidates.len() as u64, "thread"),
            human::count(checkpoints, "checkpoint"),
        ),
        threads: candidates,
    })
}

/// The pass over the threads: each one decided, a dry run's figures recorded, a real run's
/// deletions applied a chunk of threads at a time. Ctrl-C stops before the next thread (see
/// crate::interrupt).
fn collect(
    store: &dyn CheckpointStore,
    keys: &Keyring,
    req: &Request,
    sink: &dyn Sink,
    only: Option<&[ThreadSummary]>,
    now: jiff::Timestamp,
    min_idle: i64,
) -> Pass {
    let dry_run = req.dry_run;
    let mut pass = Pass::default();
    // The threads are read a page at a time as the pass goes: the bar grows with them.
    let pb = sink.bar(2, "gc");
    pb.set_length(0);
    let _batch = crate::interrupt::Batch::enter();
    // The last thread of the page Ctrl-C stopped in.
    let mut stopped_in: Option<String> = None;
    let listed = for_each_page(store, only, !dry_run, &mut |page| {
        pb.inc_length(page.len() as u64);
        let walked = walk(store, keys, req, &page, now, min_idle, &mut pass, &pb);
        let settled = pass.settle_rows(dry_run);
        match walked.and(settled) {
            Ok(()) if pass.not_processed > 0 => {
                stopped_in = page.last().map(|t| t.thread_id.clone());
                Ok(false)
            }
            Ok(()) => Ok(true),
            Err(e) => {
                pass.failure = Some(e);
                Ok(false)
            }
        }
    });
    // Interrupted: the threads after that page are counted, not read (reading the rest of
    // the list took 31 s at a million threads on SQLite).
    let rest = match (&stopped_in, only) {
        (Some(last), None) => store.count_threads_after(last),
        _ => Ok(0),
    };
    let rest = rest.map(|n| pass.not_processed += usize::try_from(n).unwrap_or(usize::MAX));
    if let Err(e) = listed.and(rest).and_then(|()| pass.settle_rows(dry_run)) {
        pass.failure.get_or_insert(e);
    }
    pb.finish_and_clear();
    pass
}

/// [`collect`]'s pass over one page of `threads`, into `pass`; an error stops it (the
/// chunks applied before stand). The page's rows are final when it returns (the caller
/// moves them to the report).
#[allow(clippy::too_many_arguments)]
fn walk(
    store: &dyn CheckpointStore,
    keys: &Keyring,
    req: &Request,
    threads: &[ThreadSummary],
    now: jiff::Timestamp,
    min_idle: i64,
    pass: &mut Pass,
    pb: &indicatif::ProgressBar,
) -> Result<()> {
    let keep = usize::try_from(req.keep_checkpoints).unwrap_or(usize::MAX);
    // The checkpoint lists are read for a chunk of threads at a time (one round trip to a
    // server per chunk, memory bounded by the chunk).
    let mut infos_of = HashMap::new();
    // The deletions planned in the current chunk, applied together at its end.
    let mut pending: Vec<Pending> = Vec::new();
    // The threads decided since, waiting for their chunk's readability check.
    let mut decided = Decided::default();
    for (i, t) in threads.iter().enumerate() {
        if crate::interrupt::requested() {
            pass.not_processed = threads.len() - i;
            break;
        }
        if i % INFO_CHUNK == 0 {
            decided.record(store, keys, req.dry_run, pass, &mut pending);
            apply_pending(store, &mut pending, &mut pass.rows, &mut pass.total)?;
            pass.settle_rows(req.dry_run)?;
            let chunk: Vec<&str> = threads[i..threads.len().min(i + INFO_CHUNK)]
                .iter()
                .map(|t| t.thread_id.as_str())
                .collect();
            infos_of = chunk
                .iter()
                .copied()
                .zip(store.checkpoint_infos_of(&chunk)?)
                .collect();
        }
        pb.inc(1);
        pb.inc(1);
        let age = idle_seconds(&t.latest_id, None, now);
        let decision = if age.is_some_and(|a| a < min_idle) {
            Decision::Report(
                GcStatus::Skipped,
                format!(
                    "written {} ago (--min-idle {})",
                    human::age(age.unwrap_or(0)),
                    req.min_idle
                ),
            )
        } else {
            let infos = match infos_of.remove(t.thread_id.as_str()) {
                Some(infos) => Ok(infos),
                None => store.checkpoint_infos(&t.thread_id),
            };
            match infos {
                Ok(infos) => decide(store, keys, &t.thread_id, &infos, keep),
                Err(e) => {
                    // The threads decided before it are reported.
                    decided.record(store, keys, req.dry_run, pass, &mut pending);
                    return Err(e);
                }
            }
        };
        decided.items.push((t, decision));
        // DeltaChannel snapshots can be large: they are not held past a few MiB.
        let held: usize = pending
            .iter()
            .flat_map(|p| &p.rewrites)
            .chain(decided.rewrites())
            .map(|r| r.checkpoint.len())
            .sum();
        if held > PENDING_BYTES {
            decided.record(store, keys, req.dry_run, pass, &mut pending);
            apply_pending(store, &mut pending, &mut pass.rows, &mut pass.total)?;
            pass.settle_rows(req.dry_run)?;
        }
    }
    decided.record(store, keys, req.dry_run, pass, &mut pending);
    apply_pending(store, &mut pending, &mut pass.rows, &mut pass.total)
}

/// Threads decided (in order) whose rows wait for the readability check of what they keep,
/// made for all of them at once ([`readable::check_many`]).
#[derive(Default)]
struct Decided<'t> {
    items: Vec<(&'t ThreadSummary, Decision)>,
}

impl Decided<'_> {
    /// The DeltaChannel snapshots held.
    fn rewrites(&self) -> impl Iterator<Item = &CheckpointRewrite> {
        self.items.iter().flat_map(|(_, d)| match d {
            Decision::Collect { rewrites, .. } => rewrites.as_slice(),
            _ => &[],
        })
    }

    /// Checks what the threads to collect keep (a thread whose kept checkpoints do not
    /// decode is reported and left alone: its older history may be all that is left of
    /// it), then records every thread's row in order ([`record`]); empties the list.
    fn record(
        &mut self,
        store: &dyn CheckpointStore,
        keys: &Keyring,
        dry_run: bool,
        pass: &mut Pass,
        pending: &mut Vec<Pending>,
    ) {
        let items = std::mem::take(&mut self.items);
        let wanted: Vec<readable::Wanted<'_>> = items
            .iter()
            .filter_map(|(t, d)| match d {
                Decision::Collect { kept, .. } => {
                    Some((t.thread_id.as_str(), kept.iter().collect()))
                }
                _ => None,
            })
            .collect();
        let mut checked = readable::check_many(store, keys, &wanted).into_iter();
        for (t, decision) in items {
            let decision = match decision {
                Decision::Collect {
                    rewrites,
                    way,
                    plan,
                    kept,
                } => match checked.next() {
                    Some(Err(e)) => Decision::Unreadable {
                        why: format!("{e:#}"),
                        way,
                        rewritten: rewrites.len() as u64,
                    },
                    _ => Decision::Collect {
                        plan,
                        rewrites,
                        way,
                        kept,
                    },
                },
                d => d,
            };
            record(t, decision, dry_run, pass, pending);
        }
    }
}

/// Records a decided thread: its row in the report (not for [`Decision::Nothing`]), and a real
/// run's deletion in `pending`.
fn record(
    t: &ThreadSummary,
    decision: Decision,
    dry_run: bool,
    pass: &mut Pass,
    pending: &mut Vec<Pending>,
) {
    let (plan, rewrites, way) = match decision {
        Decision::Nothing => return,
        Decision::Report(status, why) => {
            pass.failed += usize::from(status == GcStatus::Failed);
            let mut row = GcThread::new(&t.thread_id, t.checkpoints, status);
            row.reason = Some(why);
            pass.rows.push(row);
            return;
        }
        Decision::Unreadable {
            why,
            way,
            rewritten,
        } => {
            pass.failed += 1;
            let mut row = GcThread::new(&t.thread_id, t.checkpoints, GcStatus::Failed);
            row.reason = Some(why);
            row.set_way(way);
            row.rewritten_checkpoints = rewritten;
            pass.rows.push(row);
            return;
        }
        Decision::Collect {
            plan,
            rewrites,
            way,
            ..
        } => (plan, rewrites, way),
    };
    // Set when the deletion is applied (see apply_pending); a dry run's stands.
    let mut row = GcThread::new(&t.thread_id, t.checkpoints, GcStatus::WouldDelete);
    row.set_way(way);
    row.rewritten_checkpoints = rewrites.len() as u64;
    if dry_run {
        row.set_deleted(Deleted {
            checkpoints: plan.delete.len() as u64,
            writes: plan.writes,
            bytes: plan.bytes,
            ..Deleted::default()
        });
    } else {
        pending.push(Pending {
            row: pass.rows.len(),
            plan,
            rewrites,
            expected_latest: t.latest_id.clone(),
        });
    }
    pass.rows.push(row);
}

/// What gc does with a thread whose checkpoints are `infos`, keeping `keep` per namespace:
/// the plan (on a DeltaChannel thread, the one with snapshots when they leave fewer bytes),
/// to be checked readable ([`readable::check_many`], for a chunk of threads at once: see
/// [`Decided::record`]).
fn decide(
    store: &dyn CheckpointStore,
    keys: &Keyring,
    thread: &str,
    infos: &[CheckpointInfo],
    keep: usize,
) -> Decision {
    let mut p = plan(infos, keep);
    let mut rewrites: Vec<CheckpointRewrite> = Vec::new();
    let mut way = None;
    if is_delta(infos) {
        let snap = plan_without_seeds(infos, keep);
        if snap.delete.len() > p.delete.len() {
            match snapshots(store, keys, thread, infos, &snap) {
                Ok(Snapshots::Written(r, added)) => {
                    if prefer_snapshots(&p, &snap, added) {
                        p = snap;
                        rewrites = r;
                        way = Some((DeltaWay::Snapshot, None));
                    } else {
                        way = Some((
                            DeltaWay::Chain,
                            Some("it leaves fewer bytes than snapshots".into()),
                        ));
                    }
                }
                Ok(Snapshots::Encrypted(why)) => way = Some((DeltaWay::Chain, Some(why))),
                Ok(Snapshots::Cannot(why)) => return Decision::Report(GcStatus::Skipped, why),
                Err(e) => return Decision::Report(GcStatus::Failed, format!("{e:#}")),
            }
        }
    }
    if p.delete.is_empty() {
        return Decision::Nothing;
    }
    Decision::Collect {
        kept: p.kept(infos).into_iter().cloned().collect(),
        plan: p,
        rewrites,
        way,
    }
}

/// A thread's planned deletion, waiting for the end of its chunk.
struct Pending {
    /// Its row in the report.
    row: usize,
    /// What goes.
    plan: GcPlan,
    /// Kept checkpoints rewritten with DeltaChannel snapshots.
    rewrites: Vec<CheckpointRewrite>,
    /// The thread's newest checkpoint when it was planned.
    expected_latest: String,
}

/// Applies the `pending` deletions (one transaction for them all on a server; see
/// [`CheckpointStore::apply_gc_many`]) and records each outcome in its row.
///
/// DeltaChannel snapshots go in first, and the rows they make unnecessary go only
/// [`SNAPSHOT_GRACE`] later. LangGraph rebuilds a DeltaChannel in two statements (the chain of
/// checkpoints back to a seed, then the writes of that chain: `get_delta_channel_history`), so
/// an app that read the chain just before the snapshot was written still needs the rows below
/// it for its second statement. Deleted in the same transaction, they were gone, and the app
/// went on from a message list missing its history (seen by
/// `tests/delta.rs::gc_beside_a_live_app_on_delta_threads_loses_nothing`). A thread that
/// moves in between keeps its older rows (the snapshots hold the same state; the next gc
/// collects them).
fn apply_pending(
    store: &dyn CheckpointStore,
    pending: &mut Vec<Pending>,
    rows: &mut [GcThread],
    total: &mut Deleted,
) -> Result<()> {
    fn item<'a>(
        rows: &'a [GcThread],
        p: &'a Pending,
        rewrites: bool,
        deletes: bool,
    ) -> crate::storage::GcItem<'a> {
        crate::storage::GcItem {
            thread_id: &rows[p.row].thread_id,
            delete: if deletes { &p.plan.delete } else { &[] },
            orphaned: if deletes { &p.plan.orphaned } else { &[] },
            rewrites: if rewrites { &p.rewrites } else { &[] },
            expected_latest: &p.expected_latest,
        }
    }
    // 1. The snapshots, nothing deleted.
    let snapshotting: Vec<usize> = (0..pending.len())
        .filter(|&i| !pending[i].rewrites.is_empty())
        .collect();
    let mut moved = vec![false; pending.len()];
    if !snapshotting.is_empty() {
        let items: Vec<_> = snapshotting
            .iter()
            .map(|&i| item(rows, &pending[i], true, false))
            .collect();
        let done = store
            .gc()
            .ok_or_else(|| store.lacks("apply_gc_many"))?
            .apply_gc_many(&items)?;
        for (&i, d) in snapshotting.iter().zip(done) {
            moved[i] = d.is_none();
        }
        std::thread::sleep(SNAPSHOT_GRACE);
    }
    // 2. The deletions.
    let go: Vec<usize> = (0..pending.len()).filter(|&i| !moved[i]).collect();
    let items: Vec<_> = go
        .iter()
        .map(|&i| item(rows, &pending[i], false, true))
        .collect();
    // Stopped part-way: the threads applied before the error are reported, the rest stay
    // planned (not reported), then the error.
    let gc = store.gc().ok_or_else(|| store.lacks("apply_gc_many"))?;
    let (done, stopped) = match gc.apply_gc_many(&items) {
        Ok(done) => (done, None),
        Err(e) => match e.downcast::<crate::storage::GcStopped>() {
            Ok(s) => (s.done, Some(s.error)),
            Err(e) => return Err(e),
        },
    };
    let mut outcome: Vec<Option<Option<Deleted>>> = vec![None; pending.len()];
    for (&i, d) in go.iter().zip(done) {
        outcome[i] = Some(d);
    }
    for (i, (p, d)) in pending.drain(..).zip(outcome).enumerate() {
        let row = &mut rows[p.row];
        match d {
            // Not reached before the error: still planned, left out of the report.
            None if stopped.is_some() && !moved[i] => continue,
            Some(Some(d)) => {
                row.set(GcStatus::Collected, None);
                row.set_deleted(d);
                total.add(d);
            }
            Some(None) if !p.rewrites.is_empty() => row.set(
                GcStatus::Skipped,
                Some(
                    "got a new checkpoint while memctl worked (its DeltaChannel snapshots were \
                     written, its older rows kept)"
                        .into(),
                ),
            ),
            Some(None) | None => row.set(
                GcStatus::Skipped,
                Some("got a new checkpoint while memctl worked".into()),
            ),
        }
    }
    stopped.map_or(Ok(()), Err)
}

/// How long DeltaChannel snapshots stand before the rows below them are deleted (see
/// [`apply_pending`]): far longer than the gap between LangGraph's two reads.
const SNAPSHOT_GRACE: std::time::Duration = std::time::Duration::from_secs(1);

/// Bytes of DeltaChannel snapshots that wait for the end of a chunk before the pending
/// deletions are applied early.
const PENDING_BYTES: usize = 16 << 20;

/// Threads whose checkpoint lists are read at once.
const INFO_CHUNK: usize = 64;

/// The rewrites that let `snap` delete every older checkpoint of a DeltaChannel thread: each
/// kept checkpoint whose parent goes gets a `_DeltaSnapshot` of every DeltaChannel it does
/// not store, holding the value LangGraph rebuilds there (`channels_from_checkpoint`: the
/// seed and the writes of the checkpoints between, not its own pending writes, which its
/// children replay onto it and `get_state` applies on top). A channel it has no version of
/// is empty there and needs none, provided no older row would have fed it. Also the bytes
/// the rewrites add. A thread memctl cannot rebuild (a reducer it does not know, an
/// encrypted row without the key) is [`Snapshots::Cannot`]; an unreadable row an error.
fn snapshots(
    store: &dyn CheckpointStore,
    keys: &Keyring,
    thread: &str,
    infos: &[CheckpointInfo],
    snap: &GcPlan,
) -> Result<Snapshots> {
    let mut rewrites = Vec::new();
    let mut added = 0u64;
    for (ns, id) in &snap.orphaned {
        let channels = crate::ops::gc::delta_channels(infos, Some(ns));
        if channels.is_empty() {
            continue;
        }
        let Some(row) = store.checkpoint(thread, ns, Some(id))? else {
            anyhow::bail!("checkpoint {id} of thread '{thread}' is gone");
        };
        if row.type_name != "msgpack" {
            return Ok(Snapshots::Encrypted(format!(
                "stored as '{}'{}: memctl writes snapshots into plain msgpack checkpoints only",
                row.type_name,
                if row.type_name == "json" {
                    " (LangGraph.js)"
                } else {
                    ""
                }
            )));
        }
        let cp = LoadedCheckpoint::open(keys, row.clone())?;
        let root = crate::codec::msgpack::decode(&row.checkpoint)
            .with_context(|| format!("cannot decode checkpoint {id} of thread '{thread}'"))?;
        let has = |key: &str, ch: &str| {
            root.get(key)
                .and_then(|m| m.as_map())
                .is_some_and(|m| m.iter().any(|(k, _)| k.as_str() == Some(ch)))
        };
        let to_walk: Vec<String> = channels
            .into_iter()
            .filter(|ch| !has("channel_values", ch))
            .collect();
        if to_walk.is_empty() {
            continue;
        }
        let mut fetch = |at: &str, chs: &[String]| {
            crate::read::replay::ancestor(store, keys, thread, ns, at, chs)
        };
        let found = delta::walk(cp.row.parent_checkpoint_id.as_deref(), &to_walk, &mut fetch)
            .with_context(|| format!("thread '{thread}', checkpoint {id}"))?;
        let mut values = Vec::new();
        for ch in &to_walk {
            let Some(history) = found.get(ch) else {
                continue;
            };
            if !has("channel_versions", ch) {
                if history.seed.is_some() || !history.writes.is_empty() {
                    anyhow::bail!(
                        "checkpoint {id} of thread '{thread}' has no version of DeltaChannel \
                         '{ch}', yet older checkpoints hold a value or writes of it"
                    );
                }
                continue;
            }
            let reducer = Reducer::for_channel(ch);
            if reducer == Reducer::Unknown && !history.writes.is_empty() {
                return Ok(Snapshots::Cannot(format!(
                    "DeltaChannel '{ch}' has a reducer memctl does not know: its value cannot be \
                     rebuilt to snapshot it"
                )));
            }
            let value = match (&history.seed, reducer) {
                (Some(seed), Reducer::Unknown) => seed.value.clone(),
                (None, Reducer::Unknown) => {
                    return Ok(Snapshots::Cannot(format!(
                        "DeltaChannel '{ch}' has a reducer memctl does not know: its empty value \
                         is of a type memctl does not know"
                    )))
                }
                _ => history.rebuild(reducer).with_context(|| {
                    format!(
                        "thread '{thread}', checkpoint {id}: rebuilding DeltaChannel '{ch}' from \
                         {} writes",
                        history.writes.len()
                    )
                })?,
            };
            values.push((ch.clone(), value));
        }
        if values.is_empty() {
            continue;
        }
        let (checkpoint, metadata) =
            with_snapshots(&row.checkpoint, row.metadata.as_deref(), values)?;
        let old = row.checkpoint.len() + row.metadata.as_ref().map_or(0, Vec::len);
        let metadata = metadata.or(row.metadata).unwrap_or_else(|| b"{}".to_vec());
        added += (checkpoint.len() + metadata.len()).saturating_sub(old) as u64;
        rewrites.push(CheckpointRewrite {
            ns: ns.clone(),
            id: id.clone(),
            checkpoint,
            metadata,
        });
    }
    Ok(Snapshots::Written(rewrites, added))
}
