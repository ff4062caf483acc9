//! After a batch is committed: noticing a live app's commit that superseded memctl's edit.

use std::time::Duration;

use anyhow::Result;

use crate::ops::outcome::{Outcome, Status};
use crate::storage::CheckpointStore;

use super::seal::AppSeal;

/// The batches of a run that are committed but not yet final: each is checked for a live
/// app's commit `settle` after its own commit (at once when no app had the file open), then
/// handed to the report, in order.
pub(super) struct Settling<'a> {
    store: &'a dyn CheckpointStore,
    settle: Duration,
    /// Committed batches with the time of their commit, oldest first.
    pending: std::collections::VecDeque<(std::time::Instant, Vec<Outcome>)>,
    /// A thread was (or in a dry run would be) written: until then nothing is handed over,
    /// so that a run that fails on its key reports no partial list. Set from the start when
    /// the database held no encrypted row (no key can fail: nothing is held, however many
    /// threads there are).
    pub(super) seen_something: bool,
}

impl<'a> Settling<'a> {
    pub(super) fn new(
        store: &'a dyn CheckpointStore,
        settle: Duration,
        seal: &AppSeal,
    ) -> Settling<'a> {
        // No app had the file open when memctl started (WAL mode, no -wal file): nothing can
        // be queued behind memctl's commits, so there is nothing to wait for.
        let settle = match store.sharing().is_none_or(|s| s.might_be_shared()) {
            true => settle,
            false => Duration::ZERO,
        };
        Settling {
            store,
            settle,
            pending: Default::default(),
            seen_something: matches!(seal, AppSeal::Plain),
        }
    }

    /// A batch just committed (or decided, in a dry run).
    pub(super) fn push(&mut self, done: Vec<Outcome>) {
        let something = |o: &Outcome| {
            o.status.wrote() || matches!(o.status, Status::WouldRewrite | Status::WouldSummarize)
        };
        self.seen_something |= done.iter().any(something);
        self.pending.push_back((std::time::Instant::now(), done));
    }

    /// Hands over the batches whose settle time has passed.
    pub(super) fn hand_over_due(
        &mut self,
        report: &mut dyn FnMut(Vec<Outcome>) -> Result<()>,
    ) -> Result<()> {
        while self.seen_something
            && self
                .pending
                .front()
                .is_some_and(|(at, _)| at.elapsed() >= self.settle)
        {
            if let Some((_, mut done)) = self.pending.pop_front() {
                check_superseded(self.store, &mut done)?;
                report(done)?;
            }
        }
        Ok(())
    }

    /// Waits for the last batches' settle time and hands over everything left.
    pub(super) fn hand_over_all(
        &mut self,
        report: &mut dyn FnMut(Vec<Outcome>) -> Result<()>,
    ) -> Result<()> {
        while let Some((at, mut done)) = self.pending.pop_front() {
            let written = done
                .iter()
                .any(|o| o.checkpoint_id.is_some() && o.status.wrote());
            if written {
                std::thread::sleep(self.settle.saturating_sub(at.elapsed()));
                check_superseded(self.store, &mut done)?;
            }
            report(done)?;
        }
        Ok(())
    }
}

/// After the edits are committed: waits `settle` (an app commit that queued behind memctl's
/// lands within it), then marks `superseded` every written edit whose thread's latest root
/// checkpoint is no longer memctl's. memctl's ids sort just after their parent (see
/// `ops::update`), so a checkpoint the app made from the same parent wins: the app's turn is
/// kept and memctl's edit is not in effect. That must be reported, never counted as done.
pub fn mark_superseded(
    store: &dyn CheckpointStore,
    outcomes: &mut [Outcome],
    settle: Duration,
) -> Result<()> {
    let written = |o: &Outcome| o.checkpoint_id.is_some() && o.status.wrote();
    if !outcomes.iter().any(written) {
        return Ok(());
    }
    // No app had the file open when memctl started (WAL mode, no -wal file): nothing can be
    // queued behind memctl's commit, so there is nothing to wait for.
    if store.sharing().is_none_or(|s| s.might_be_shared()) {
        std::thread::sleep(settle);
    }
    check_superseded(store, outcomes)
}

/// Marks `superseded` every written edit whose thread's latest root checkpoint is no longer
/// memctl's (see [`mark_superseded`]), now.
fn check_superseded(store: &dyn CheckpointStore, outcomes: &mut [Outcome]) -> Result<()> {
    let written = |o: &Outcome| o.checkpoint_id.is_some() && o.status.wrote();
    let threads: Vec<&str> = outcomes
        .iter()
        .filter(|o| written(o))
        .map(|o| o.thread_id.as_str())
        .collect();
    let latest_ids = store.latest_checkpoint_ids(&threads, "")?;
    anyhow::ensure!(
        latest_ids.len() == threads.len(),
        "the database answered for {} of {} threads",
        latest_ids.len(),
        threads.len()
    );
    let mut latest_ids = latest_ids.into_iter();
    for o in outcomes.iter_mut().filter(|o| written(o)) {
        let latest = latest_ids.next().flatten();
        if latest.is_some() && latest != o.checkpoint_id {
            o.status = Status::Superseded;
            o.notes.push(format!(
                "a live app committed checkpoint {} after memctl's edit: LangGraph continues from the app's checkpoint (its turn is kept) and this edit is not in effect; run memctl again",
                latest.unwrap_or_default()
            ));
        }
    }
    Ok(())
}
