//! A rewrite's outcomes handed to its report as they are final, counted for the verdict.

use anyhow::{bail, Result};

use crate::ops::edit::{Editable, Planned};
use crate::ops::outcome::{Outcome, Status};
use crate::storage::CheckpointStore;
use crate::text::human;

use super::{run_with, Options, Target};
use crate::jobs::Sink;

/// What a reported run did, counted as its outcomes went by: what the exit code and a
/// command's closing line need, without holding the outcomes.
#[derive(Debug, Default)]
pub struct Tally {
    /// Threads reported.
    pub threads: usize,
    /// Threads per status.
    pub statuses: std::collections::HashMap<Status, usize>,
    /// Tokens sent to and received from a model endpoint, over all threads.
    pub endpoint_tokens: (u64, u64),
    /// Why each failed thread failed (`thread 'T': status: note`), for the one-thread error.
    failures: Vec<String>,
}

impl Tally {
    /// Threads with `status`.
    pub fn count(&self, status: Status) -> usize {
        self.statuses.get(&status).copied().unwrap_or(0)
    }

    pub(super) fn add(&mut self, outcomes: &[Outcome], single: bool) {
        for o in outcomes {
            self.threads += 1;
            *self.statuses.entry(o.status).or_default() += 1;
            if let Some((sent, received)) = o.endpoint_tokens {
                self.endpoint_tokens.0 += sent;
                self.endpoint_tokens.1 += received;
            }
            if single && o.status.is_failure() {
                self.failures.push(format!(
                    "thread '{}': {}: {}",
                    o.thread_id,
                    o.status,
                    o.notes.last().map_or("", String::as_str)
                ));
            }
        }
    }

    fn failed(&self) -> usize {
        self.statuses
            .iter()
            .filter(|(s, _)| s.is_failure())
            .map(|(_, n)| n)
            .sum()
    }
}

/// Where a reported run's outcomes go, a batch at a time as they are final (`output::rewrite`
/// streams them as a table or JSON).
pub trait Batches {
    /// A batch of final outcomes, in thread order.
    fn add(&mut self, done: Vec<Outcome>) -> Result<()>;
    /// The run is over: no batch follows (the report's closing lines).
    fn end(&mut self) -> Result<()>;
}

/// What a reported run did, and its verdict (see [`run_reported`]).
#[derive(Debug)]
pub struct Done {
    /// What was done, counted.
    pub tally: Tally,
    /// The run's exit once its report is written.
    pub verdict: Result<()>,
}

/// Runs `edit` on the targeted threads ([`super::run_with`]) and hands `batches` the outcomes
/// as the threads are done. Returns what was done and the run's verdict: with one thread
/// asked for, a failure is an error (exit 1, the reason on stderr); in a batch, failed
/// threads and superseded edits make the run a partial success (exit code 3). A superseded
/// edit is exit 3 either way: nothing failed, but the edit is not in effect. An error of the
/// run itself (the outer `Err`) comes after the report of the batches committed before it.
/// The report is ended before the store's batch housekeeping ends (the last WAL checkpoint
/// runs meanwhile: everything is committed). With `quiet`, the verdict says the problems
/// were listed (the front end names them, the report being hidden).
pub fn run_reported(
    store: &dyn CheckpointStore,
    target: &Target,
    opts: &Options,
    edit: &(dyn Fn(&Editable) -> Result<Planned> + Sync),
    quiet: bool,
    sink: &dyn Sink,
    batches: &mut dyn Batches,
) -> Result<Done> {
    let single = target.thread.is_some();
    // The report is written whole even if Ctrl-C comes after the last thread.
    let _batch = (!single).then(crate::interrupt::Batch::enter);
    let mut tally = Tally::default();
    let ran = run_with(store, target, opts, edit, sink, &mut |done| {
        tally.add(&done, single);
        batches.add(done)
    });
    // A run that ends in an error still ends the report of what it handed over, if anything.
    let ran = match ran {
        Err(e) if tally.threads == 0 => {
            let _ = store.batches().map(|b| b.end_batches());
            return Err(e);
        }
        ran => ran,
    };
    let ended = batches.end();
    let housekept = store.batches().map_or(Ok(()), |b| b.end_batches());
    ran?;
    ended?;
    housekept?;
    let verdict = verdict(&tally, single, opts.dry_run, quiet);
    Ok(Done { tally, verdict })
}

/// The exit status a run's outcomes call for (see [`run_reported`]).
fn verdict(tally: &Tally, single: bool, dry_run: bool, quiet: bool) -> Result<()> {
    let failed = tally.failed();
    let superseded = tally.count(Status::Superseded);
    if single && failed > 0 {
        bail!("{}", tally.failures.join("; "));
    }
    if failed + superseded > 0 {
        let n = tally.threads;
        let mut what = Vec::new();
        if failed > 0 {
            what.push(format!("{failed} of {n} threads failed"));
        }
        if superseded > 0 {
            what.push(format!(
                "{superseded} of {n} edits were superseded by a live app"
            ));
        }
        // What was written, said as it is: never "the other threads were written" when none
        // was (threads skipped or unchanged were not).
        let done = tally.count(Status::Rewritten)
            + tally.count(Status::Purged)
            + tally.count(Status::Summarized);
        let wrote_any = done + superseded + tally.count(Status::PurgeIncomplete) > 0 && !dry_run;
        let rest = if dry_run {
            "; dry run: nothing was written".to_owned()
        } else if done > 0 {
            format!("; {} written", human::count(done as u64, "thread"))
        } else if wrote_any {
            String::new()
        } else {
            "; nothing was written".to_owned()
        };
        let see = if quiet {
            "listed above"
        } else {
            "see the notes"
        };
        let line = format!("{} ({see}){rest}", what.join(" and "));
        // Failures and nothing written: not a partial success but an error (exit 1).
        if !wrote_any && !dry_run {
            bail!("{line}");
        }
        return Err(crate::exit::Partial(line).into());
    }
    Ok(())
}
