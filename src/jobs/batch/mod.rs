//! The one batch driver of the rewrites (trim, rm, summarize, forget's scrub): choosing
//! threads, reading them, planning their edits on worker threads, writing each batch in one
//! transaction, and noticing edits a live app superseded. The edits themselves are pure
//! (`ops::edit`); the report is rendered by `output::rewrite`.

pub mod report;
pub mod seal;
pub mod settle;
pub mod write;

use std::time::Duration;

use anyhow::{bail, Context, Result};

use crate::codec::aes::Keyring;
use crate::ops::edit::{is_key_error, prepare, Editable, Filters, Planned, Refusal};
use crate::ops::outcome::Outcome;
use crate::read::latest::{load_editable, read_latest_batch};
use crate::storage::{CheckpointStore, ThreadMoved};
use crate::text::human;
use crate::tokens::Counter;

pub use report::{run_reported, Batches, Done, Tally};
pub use seal::AppSeal;
pub use settle::mark_superseded;
pub use write::write;

use super::{Ctx, Sink};
use settle::Settling;

/// The threads a rewrite is asked to work on (`--thread` / `--all` and their filters).
#[derive(Debug, Clone, Default)]
pub struct Threads {
    /// One thread, or every thread when `None`.
    pub thread: Option<String>,
    /// Only threads idle at least this long (`--idle`, a duration such as `30d`).
    pub idle: Option<String>,
    /// Only threads with at least this many messages.
    pub min_messages: Option<usize>,
}

/// How a rewrite is asked to run (`--dry-run`, `--force`, `--settle`).
#[derive(Debug, Clone, Default)]
pub struct Rewrite {
    /// Plan and report only; nothing is written.
    pub dry_run: bool,
    /// Edit threads that are waiting (interrupts, scheduled work, pending writes).
    pub force: bool,
    /// How long to wait after writing for a live app's commit (`--settle`, a duration).
    pub settle: String,
}

/// Which threads a rewrite works on, typed.
#[derive(Debug, Clone, Default)]
pub struct Target {
    /// One thread (a refusal or failure is then an error), or every thread when `None`.
    pub thread: Option<String>,
    /// With no `thread`: only these of every thread (`forget`: the threads that hold a
    /// match).
    pub among: Option<std::collections::HashSet<String>>,
    /// Only threads idle at least this long (seconds) at `now`.
    pub idle: Option<(i64, jiff::Timestamp)>,
    /// Only threads with at least this many messages.
    pub min_messages: Option<usize>,
    /// Only threads with at least this many tokens by this counter.
    pub min_tokens: Option<(u64, Counter)>,
}

impl Target {
    /// One thread.
    pub fn thread(id: &str) -> Target {
        Target {
            thread: Some(id.to_owned()),
            ..Target::default()
        }
    }

    /// The target `--thread` / `--all` with its filters name, at `--now`.
    pub fn of(ctx: &Ctx, target: &Threads) -> Result<Target> {
        let now = human::now(ctx.now.as_deref())?;
        let idle = target
            .idle
            .as_deref()
            .map(crate::ops::duration::parse_seconds)
            .transpose()?;
        Ok(Target {
            thread: target.thread.clone(),
            among: None,
            idle: idle.map(|secs| (secs, now)),
            min_messages: target.min_messages,
            min_tokens: None,
        })
    }

    fn filters(&self) -> Filters {
        Filters {
            idle: self.idle,
            min_messages: self.min_messages,
            min_tokens: self.min_tokens,
        }
    }
}

/// How a rewrite runs, typed.
#[derive(Debug, Clone)]
pub struct Options {
    /// Plan and report only; nothing is written (the database is opened read-only).
    pub dry_run: bool,
    /// Edit threads that are waiting (interrupts, scheduled work, pending writes).
    pub force: bool,
    /// How long to wait after writing before checking for app commits that queued behind
    /// memctl's (see [`settle::mark_superseded`]).
    pub settle: Duration,
    /// Threads edited at once (the edit of a thread may wait on a model endpoint).
    pub workers: usize,
    /// The progress bar's label.
    pub verb: &'static str,
    /// The key of encrypted threads (`--key-env`): what they are read with, and new rows are
    /// written with when the thread or the database holds encrypted rows (see [`seal::AppSeal`]).
    pub keys: Keyring,
}

impl Options {
    /// The options `--dry-run`, `--force`, `--settle` and `--key-env` give, editing on every
    /// core.
    pub fn of(ctx: &Ctx, rw: &Rewrite, verb: &'static str) -> Result<Options> {
        Ok(Options {
            dry_run: rw.dry_run,
            force: rw.force,
            settle: settle_time(rw)?,
            workers: crate::par::cores(),
            verb,
            keys: ctx.keys(),
        })
    }
}

/// Hands `take` the threads `target` names among every thread that has a root checkpoint,
/// with its latest root checkpoint id, a page at a time in thread-id order
/// ([`crate::read::stream::latest_root_ids_for_run`]: never all of them at once; a write run
/// on a file pages on `store` itself between its transactions). Stops when `take` returns
/// false.
fn for_each_target_page(
    store: &dyn CheckpointStore,
    target: &Target,
    writing: bool,
    take: &mut dyn FnMut(Vec<(String, Option<String>)>) -> Result<bool>,
) -> Result<()> {
    crate::read::stream::latest_root_ids_for_run(store, writing, &mut |page| {
        take(
            page.into_iter()
                .filter(|(t, _)| target.among.as_ref().is_none_or(|among| among.contains(t)))
                .map(|(t, id)| (t, Some(id)))
                .collect(),
        )
    })
}

/// Runs `edit` on the targeted threads and returns what happened to each, in thread order
/// (see [`run_with`]; [`run_reported`] hands the outcomes over as the threads are done
/// instead).
pub fn run(
    store: &dyn CheckpointStore,
    target: &Target,
    opts: &Options,
    edit: &(dyn Fn(&Editable) -> Result<Planned> + Sync),
    sink: &dyn Sink,
) -> Result<Vec<Outcome>> {
    let mut all = Vec::new();
    run_with(store, target, opts, edit, sink, &mut |done| {
        all.extend(done);
        Ok(())
    })?;
    Ok(all)
}

/// Runs `edit` on the targeted threads and hands `report` what happened to each, in thread
/// order, a batch at a time once it is final (committed, and checked for a live app's
/// commit `opts.settle` after it: see [`mark_superseded`]). On an error, the batches
/// committed before it are still handed over (when they can be checked) before the error
/// is returned.
/// With one thread, a refusal or failure is an error; in a batch it is that thread's outcome.
/// A thread that moved before its edit was written is `skipped` either way.
/// A key problem (encrypted threads and no key, or a key that does not decrypt them) fails
/// those threads; when nothing else was (or would be) written, it is the run's error, one
/// line, rather than a report of failures (nothing is handed over until a thread is or would
/// be written, so that error comes with no report).
/// Threads are read on this thread, prepared and edited on `opts.workers` threads, and
/// written here, a batch per transaction (each thread a savepoint, so one failure leaves the
/// others written). The progress bar is the `sink`'s.
pub fn run_with(
    store: &dyn CheckpointStore,
    target: &Target,
    opts: &Options,
    edit: &(dyn Fn(&Editable) -> Result<Planned> + Sync),
    sink: &dyn Sink,
    report: &mut dyn FnMut(Vec<Outcome>) -> Result<()>,
) -> Result<()> {
    let run = Run {
        keys: &opts.keys,
        opts,
        edit,
        app_seal: AppSeal::of(store, &opts.keys)?,
        key_problems: std::sync::Mutex::new((None, 0)),
    };
    if let Some(thread) = &target.thread {
        return run.one(store, thread, report);
    }
    let filters = target.filters();
    // Ctrl-C from here on stops after the thread being written (see crate::interrupt; a
    // batch's plain appends are written together: after them).
    let _batch = crate::interrupt::Batch::enter();
    let handed = std::cell::Cell::new(0usize);
    let outer = report;
    let report = &mut |done: Vec<Outcome>| {
        handed.set(handed.get() + done.len());
        outer(done)
    };
    // The threads are listed a page at a time as the run goes: the bar grows with them.
    let pb = sink.bar(2, opts.verb);
    pb.set_length(0);
    // Threads listed so far (those not handed over when Ctrl-C stops the run were not
    // processed).
    let mut listed = 0usize;
    let mut settling = Settling::new(store, opts.settle, &run.app_seal);
    let mut wrote = false; // a batch was begun: end_batches is due (see finish)
    let mut result: Result<()> = Ok(());
    let pages = for_each_target_page(store, target, !opts.dry_run, &mut |ids| {
        listed += ids.len();
        if result.is_err() {
            // Stopped: the rest of the list is only counted (after Ctrl-C, to say how many
            // threads were not processed).
            return Ok(result
                .as_ref()
                .is_err_and(|e| e.is::<crate::interrupt::Interrupted>()));
        }
        pb.inc_length(ids.len() as u64);
        result = crate::par::pipeline_batches(
            &ids,
            opts.workers,
            |batch| {
                // The thread being read, escaped like every string from the database.
                if let Some((thread, _)) = batch.first() {
                    pb.set_message(human::id(thread));
                }
                Ok(read_latest_batch(store, run.keys, batch))
            },
            |(thread, rows)| run.plan(thread, rows, &filters, &pb),
            |batch| {
                let (done, interrupted) = run.write_batch(store, batch, &mut wrote)?;
                settling.push(done);
                // (A batch its workers left unplanned after Ctrl-C has no item to notice it.)
                if interrupted || crate::interrupt::requested() {
                    return Err(crate::interrupt::Interrupted(0).into());
                }
                pb.suspend(|| settling.hand_over_due(report))
            },
        );
        Ok(true)
    });
    // An error listing the threads ends the run as an error of its own would.
    let result = result.and(pages);
    pb.finish_and_clear();
    run.finish(store, result, settling, wrote, listed, &handed, report)
}

/// One run of the batch driver: what each thread is read, planned and written with.
struct Run<'a> {
    keys: &'a Keyring,
    opts: &'a Options,
    edit: &'a (dyn Fn(&Editable) -> Result<Planned> + Sync),
    app_seal: AppSeal,
    /// The first key problem, and how many threads had one.
    key_problems: std::sync::Mutex<(Option<String>, usize)>,
}

impl Run<'_> {
    /// The run of one thread named: a refusal or failure is the run's error; a thread that
    /// moved while memctl worked is reported skipped, as in a batch.
    fn one(
        &self,
        store: &dyn CheckpointStore,
        thread: &str,
        report: &mut dyn FnMut(Vec<Outcome>) -> Result<()>,
    ) -> Result<()> {
        let (keys, opts) = (self.keys, self.opts);
        let ed = self
            .app_seal
            .apply(load_editable(store, keys, thread, opts.force)?);
        let planned = (self.edit)(&ed)?;
        self.app_seal.check_planned(&ed, &planned)?;
        let outcome = match write(store, keys, planned) {
            Err(e) if e.is::<ThreadMoved>() => Outcome::skipped(thread, e.to_string()),
            other => other?,
        };
        let mut outcomes = vec![outcome];
        mark_superseded(store, &mut outcomes, opts.settle)?;
        report(outcomes)
    }

    /// A thread that failed, as its outcome (a key problem is counted for the run's error).
    fn failed(&self, thread: &str, e: anyhow::Error) -> Outcome {
        let why = format!("{e:#}");
        if is_key_error(&e) {
            let mut k = self
                .key_problems
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            k.0.get_or_insert_with(|| why.clone());
            k.1 += 1;
        }
        Outcome::failed(thread, why)
    }

    /// A thread of a batch, read: prepared and its edit planned (on a worker thread). `None`
    /// for a thread the filters leave out, and after Ctrl-C (no new edit is begun: a
    /// summary's request is not sent; the threads left are reported not processed).
    fn plan(
        &self,
        thread: String,
        rows: Result<crate::ops::edit::LatestRows>,
        filters: &Filters,
        pb: &indicatif::ProgressBar,
    ) -> Option<Step> {
        if crate::interrupt::requested() {
            return None;
        }
        // The bar moves as each thread is edited (for summarize: as each thread's summary
        // request is answered), not a write batch at a time.
        let _tick = Tick(pb);
        let (keys, app_seal) = (self.keys, &self.app_seal);
        let prepared = rows
            .map_or_else(
                |e| Some(Err(e)),
                |r| prepare(r, keys, self.opts.force, filters),
            )
            .map(|ed| ed.map(|ed| app_seal.apply(ed)));
        prepared.map(|item| match item {
            Err(e) if e.is::<Refusal>() => Step::Done(Outcome::skipped(&thread, e.to_string())),
            Err(e) => Step::Done(self.failed(&thread, e)),
            Ok(ed) => match (self.edit)(&ed)
                .and_then(|p| app_seal.check_planned(&ed, &p).map(|()| p))
            {
                Ok(p) => Step::Write(Box::new(p)),
                Err(e) if e.is::<Refusal>() => Step::Done(Outcome::skipped(&thread, e.to_string())),
                Err(e) => Step::Done(self.failed(&thread, e)),
            },
        })
    }

    /// Writes a planned batch in one transaction (each thread a savepoint; the plain appends
    /// first, together) and returns its outcomes, and whether Ctrl-C left some of it
    /// unwritten (the threads written so far are committed and reported; the rest are not
    /// processed). `wrote` is set when a batch was begun (`end_batches` is then due).
    fn write_batch(
        &self,
        store: &dyn CheckpointStore,
        batch: Vec<Option<Step>>,
        wrote: &mut bool,
    ) -> Result<(Vec<Outcome>, bool)> {
        let keys = self.keys;
        let writing = !self.opts.dry_run
            && batch.iter().any(
                |p| matches!(p, Some(Step::Write(p)) if p.update.is_some() || p.scrub_at.is_some()),
            );
        if writing {
            if let Some(b) = store.batches() {
                b.begin_batch()?;
            }
            *wrote = true;
        }
        let items: Vec<Step> = batch.into_iter().flatten().collect();
        // The plain appends go first, together (a few statements on a server instead of
        // a few per thread); each still has its own outcome.
        let appended = match writing && !crate::interrupt::requested() {
            true => write::append_plain(store, &items),
            false => items.iter().map(|_| None).collect(),
        };
        let mut done = Vec::with_capacity(items.len());
        let mut interrupted = false;
        for (item, appended) in items.into_iter().zip(appended) {
            if appended.is_none() && crate::interrupt::requested() {
                // The threads written so far are committed below (and reported); the
                // rest are not processed.
                interrupted = true;
                continue;
            }
            done.push(match item {
                Step::Done(o) => o,
                Step::Write(planned) => {
                    let thread = planned.outcome.thread_id.clone();
                    let written = match appended {
                        Some(r) => r.map(|_| {
                            let mut o = planned.outcome;
                            o.status = planned.on_write;
                            o
                        }),
                        None => write(store, keys, *planned),
                    };
                    match written {
                        Ok(o) => o,
                        Err(e) if e.is::<ThreadMoved>() => Outcome::skipped(&thread, e.to_string()),
                        // No thread can be written: one line for the run, not one failed
                        // row per thread (the open transaction ends with the run).
                        Err(e) if crate::storage::NotWritable::is_in(&e) => return Err(e),
                        Err(e) => self.failed(&thread, e),
                    }
                }
            });
        }
        if let (true, Some(b)) = (writing, store.batches()) {
            b.commit_batch()?;
        }
        Ok((done, interrupted))
    }

    /// Ends a batch run: what was committed is handed over; an error (Ctrl-C: how many
    /// threads were not processed, of the `listed`, `handed` over) or a key problem with
    /// nothing else to show is the run's error.
    #[allow(clippy::too_many_arguments)]
    fn finish(
        self,
        store: &dyn CheckpointStore,
        result: Result<()>,
        mut settling: Settling<'_>,
        wrote: bool,
        listed: usize,
        handed: &std::cell::Cell<usize>,
        report: &mut dyn FnMut(Vec<Outcome>) -> Result<()>,
    ) -> Result<()> {
        if let Err(e) = result {
            if let (true, Some(b)) = (wrote, store.batches()) {
                let _ = b.end_batches();
            }
            // What was committed before the error is reported (when it can still be checked).
            let _ = settling.hand_over_all(report);
            if e.is::<crate::interrupt::Interrupted>() {
                return match listed.saturating_sub(handed.get()) {
                    // Ctrl-C after the last thread: the run is whole.
                    0 => Ok(()),
                    n => Err(crate::interrupt::Interrupted(n).into()),
                };
            }
            return Err(e);
        }
        let (first_key_problem, n) = self
            .key_problems
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(why) = first_key_problem {
            if !settling.seen_something {
                if let (true, Some(b)) = (wrote, store.batches()) {
                    b.end_batches()?;
                }
                let others = match n {
                    1 => String::new(),
                    n => format!(" ({n} threads stopped for this reason)"),
                };
                bail!("{why}{others}; nothing was written");
            }
        }
        settling.hand_over_all(report)
    }
}

/// Moves a progress bar by one when dropped: when a thread's edit is done, however it ends.
struct Tick<'a>(&'a indicatif::ProgressBar);

impl Drop for Tick<'_> {
    fn drop(&mut self) {
        self.0.inc(1);
    }
}

/// A planned thread in a batch: written on the main thread, or already decided.
pub(super) enum Step {
    /// Nothing to write (skipped, failed, or filtered in planning).
    Done(Outcome),
    /// To be written.
    Write(Box<Planned>),
}

/// `--settle` as a duration.
pub fn settle_time(rw: &Rewrite) -> Result<Duration> {
    let secs = crate::ops::duration::parse_seconds(&rw.settle).context("--settle")?;
    if secs > 3600 {
        bail!("--settle {} is longer than an hour", rw.settle);
    }
    Ok(Duration::from_secs(secs.max(0) as u64))
}
