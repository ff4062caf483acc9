//! `--match` over the threads `forget` does not delete: each searched, the ones it matches
//! scrubbed by the batch driver.

use std::collections::{HashMap, HashSet};

use anyhow::{Context, Result};

use crate::codec::aes::Keyring;
use crate::jobs::batch::{self, Options, Target};
use crate::jobs::Sink;
use crate::ops::find::Pattern;
use crate::ops::forget::{plan_match, Findings, Reported, Scrubbed};
use crate::ops::outcome::Status;
use crate::storage::{CheckpointStore, ThreadSummary};

use super::{Line, Tally};

/// What the scrub of `--match` over the other threads did.
#[derive(Default)]
pub(super) struct Scrub {
    /// Its counts.
    pub(super) scrubbed: Scrubbed,
    /// The threads scrubbed.
    pub(super) ids: Vec<String>,
}

/// `--match` over every thread not deleted: each searched, the ones it matches scrubbed by
/// the batch driver (one transaction per thread), the others reported.
pub(super) fn scrub_matches(
    store: &dyn CheckpointStore,
    opts: &Options,
    doomed: &[ThreadSummary],
    p: &Pattern,
    tally: &mut Tally,
    sink: &dyn Sink,
) -> Result<Scrub> {
    let keys = &opts.keys;
    let gone: HashSet<&str> = doomed.iter().map(|t| t.thread_id.as_str()).collect();
    let mut found: HashMap<String, Findings> = HashMap::new();
    let mut key_problem: Option<String> = None;
    let pb = sink.bar(2, "forget: search");
    pb.set_length(0);
    // The threads as they are now (the deleted ones gone), streamed beside this handle, which
    // searches them; the scrubs are written once the search has ended.
    crate::read::stream::threads_for_run(store, false, &mut |batch| {
        for t in batch
            .iter()
            .filter(|t| !gone.contains(t.thread_id.as_str()))
        {
            pb.inc_length(1);
            pb.inc(1);
            search_thread(store, keys, t, p, tally, &mut found, &mut key_problem);
        }
        Ok(true)
    })?;
    pb.finish_and_clear();
    scrub_found(store, opts, doomed, found, key_problem, tally, sink)
}

/// Searches thread `t` for `p`: its findings go to `found`, what cannot be searched or
/// rewritten to the tally (a key error also to `key_problem`).
pub(super) fn search_thread(
    store: &dyn CheckpointStore,
    keys: &Keyring,
    t: &ThreadSummary,
    p: &Pattern,
    tally: &mut Tally,
    found: &mut HashMap<String, Findings>,
    key_problem: &mut Option<String>,
) {
    match super::findings(store, keys, &t.thread_id, p) {
        Ok(f) if f.is_empty() => {}
        Ok(f) => {
            tally.pattern_matched = true;
            tally.untouched.extend(f.untouched.iter().cloned());
            let (m, r) = f.verify_strings();
            tally.must.extend(m);
            tally.removed.extend(r);
            if t.latest_root_id.is_none() {
                tally.reported.push(Reported {
                        thread_id: t.thread_id.clone(),
                        reason: "matches, but has no root namespace; memctl rewrites threads through their root state, so it was left as it is".into(),
                    });
                return;
            }
            found.insert(t.thread_id.clone(), f);
        }
        Err(e) => {
            tally.pattern_matched = true;
            if crate::ops::edit::is_key_error(&e) {
                key_problem.get_or_insert_with(|| format!("{e:#}"));
            }
            tally.reported.push(Reported {
                thread_id: t.thread_id.clone(),
                reason: format!("could not be searched: {e:#}"),
            });
        }
    }
}

/// Scrubs the threads `found` holds (the batch driver: one transaction per thread) and
/// reports what it did; `key_problem` with nothing found and nothing deleted is the run's
/// one line.
pub(super) fn scrub_found(
    store: &dyn CheckpointStore,
    opts: &Options,
    doomed: &[ThreadSummary],
    found: HashMap<String, Findings>,
    key_problem: Option<String>,
    tally: &mut Tally,
    sink: &dyn Sink,
) -> Result<Scrub> {
    let dry_run = opts.dry_run;
    let mut scrub = Scrub::default();
    // Encrypted threads and no key (or the wrong one), and nothing else to do: one line.
    if let (Some(why), true, true) = (&key_problem, found.is_empty(), doomed.is_empty()) {
        anyhow::bail!("{why}; nothing was written");
    }
    let target = Target {
        among: Some(found.keys().cloned().collect()),
        ..Target::default()
    };
    let outcomes = if found.is_empty() {
        vec![]
    } else {
        let outcomes = batch::run(
            store,
            &target,
            opts,
            &|ed| {
                let f = found
                    .get(&ed.thread_id)
                    .with_context(|| format!("thread '{}' was not searched", ed.thread_id))?;
                plan_match(ed, f, dry_run)
            },
            sink,
        );
        // The batches' housekeeping (SQLite: the WAL checkpointer) ends before the vacuum.
        let ended = store.batches().map_or(Ok(()), |b| b.end_batches());
        let outcomes = outcomes?;
        ended?;
        outcomes
    };
    for o in &outcomes {
        let f = found.get(&o.thread_id);
        let detail = o.notes.join("; ");
        match o.status {
            Status::Purged | Status::WouldRewrite | Status::Rewritten => {
                if o.status == Status::Purged {
                    let s = &mut scrub.scrubbed;
                    s.threads += 1;
                    scrub.ids.push(o.thread_id.clone());
                    s.checkpoints_appended += u64::from(o.checkpoint_id.is_some());
                    s.messages_removed_from_latest += o.removed.len() as u64;
                    if let Some(f) = f {
                        s.messages_matched += f.messages.len() as u64;
                        s.strings_redacted += f.strings as u64;
                        s.rows_with_matches += f.rows as u64;
                    }
                }
                let action = if dry_run { "would scrub" } else { "scrubbed" };
                let removed_here = format!(
                    "{} removed from its latest state; {detail}",
                    o.removed.len()
                );
                tally
                    .lines
                    .push(Line::new(&o.thread_id, action, &removed_here));
            }
            Status::Unchanged => {}
            _ => tally.reported.push(Reported {
                thread_id: o.thread_id.clone(),
                reason: format!("{}: {detail}", o.status),
            }),
        }
    }
    Ok(scrub)
}
