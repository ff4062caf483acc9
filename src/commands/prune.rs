//! `memctl prune`: delete whole threads — idle ones, or named ones — in short batches beside a
//! live app.

use std::io::Write;

use anyhow::Result;

use crate::cli::{Format, GlobalArgs, PruneArgs};
use crate::codec::aes::{self, Keyring};
use crate::ops::activity::idle_seconds;
use crate::ops::duration::parse_seconds;
use crate::output::{self, human, progress, table};
use crate::storage::{CheckpointStore, Deleted, ThreadSummary};

use super::batch::open_for_writing;
use crate::read::LoadedCheckpoint;

/// Runs `prune`.
pub fn run(g: &GlobalArgs, args: &PruneArgs, out: &mut dyn Write) -> Result<()> {
    let m = &args.maintenance;
    let store = open_for_writing(g, m.dry_run)?;
    let keys = super::keys(g);
    let now = human::now(g.now.as_deref())?;
    let idle = args.idle.as_deref().map(parse_seconds).transpose()?;
    let min_idle = parse_seconds(&m.min_idle)?;
    let mut all: Vec<ThreadSummary> = Vec::new();
    store.for_each_thread(&mut |t| {
        all.push(t);
        Ok(())
    })?;
    for t in &args.thread {
        if !all.iter().any(|s| &s.thread_id == t) {
            return Err(crate::read::no_thread_among(
                t,
                all.iter().map(|s| s.thread_id.as_str()),
            ));
        }
    }
    // The app's last activity (memctl's own edits keep their parent's time).
    let age_of = |t: &ThreadSummary| idle_seconds(&t.latest_id, None, now);
    let mut selected: Vec<(&ThreadSummary, Option<i64>)> = Vec::new();
    let mut skipped: Vec<(String, String)> = Vec::new();
    // The skipped threads an operator must act on (unreadable, or moved while memctl worked).
    let mut problems: Vec<(String, &str, String)> = Vec::new();
    let mut failed = 0;
    for t in &all {
        // The filters combine: a named thread is deleted only if it is also idle enough when
        // --idle is given too.
        let named = args.thread.is_empty() || args.thread.contains(&t.thread_id);
        let age = age_of(t);
        let idle_enough = match (idle, age) {
            (Some(limit), Some(a)) => a >= limit,
            (Some(_), None) => false,
            (None, _) => true,
        };
        if !(named && idle_enough) {
            continue;
        }
        if age.is_some_and(|a| a < min_idle) {
            skipped.push((
                t.thread_id.clone(),
                format!(
                    "written {} ago (--min-idle {})",
                    human::age(age.unwrap_or(0)),
                    m.min_idle
                ),
            ));
            continue;
        }
        // A thread found by age whose latest state does not decode is reported and left
        // alone: memctl does not "clean" what it cannot read. One named with --thread is
        // deleted as asked.
        if !args.thread.contains(&t.thread_id) {
            if let Err(e) = latest_is_readable(&*store, &keys, &t.thread_id) {
                problems.push((
                    t.thread_id.clone(),
                    "failed",
                    format!("{e:#}; left untouched"),
                ));
                skipped.push((
                    t.thread_id.clone(),
                    format!("failed: {e:#}; left untouched"),
                ));
                failed += 1;
                continue;
            }
        }
        selected.push((t, age));
    }

    if !selected.is_empty() {
        let bytes: u64 = selected.iter().map(|(t, _)| t.bytes).sum();
        output::confirm::confirm(
            &output::confirm::Question {
                command: "prune",
                action: format!(
                    "delete {} ({}, {})",
                    human::count(selected.len() as u64, "thread"),
                    human::count(
                        selected.iter().map(|(t, _)| t.checkpoints).sum::<u64>(),
                        "checkpoint"
                    ),
                    human::bytes(bytes)
                ),
                threads: selected.iter().map(|(t, _)| t.thread_id.clone()).collect(),
            },
            m.yes,
            m.dry_run,
        )?;
    }
    let mut deleted = Deleted::default();
    let mut not_processed = 0;
    // Ctrl-C from here on stops before the next transaction, and the report is written whole
    // (see crate::interrupt).
    let _batch = crate::interrupt::Batch::enter();
    if !m.dry_run {
        let pb = progress::bar(selected.len() as u64, "prune");
        let per = args.batch.max(1);
        for i in (0..selected.len()).step_by(per) {
            if crate::interrupt::requested() {
                not_processed = selected.len() - i;
                break;
            }
            let batch = &selected[i..selected.len().min(i + per)];
            let ids: Vec<(String, String)> = batch
                .iter()
                .map(|(t, _)| (t.thread_id.clone(), t.latest_id.clone()))
                .collect();
            let (d, moved) = store.delete_threads(&ids)?;
            deleted.add(d);
            for t in moved {
                let why = "got a new checkpoint while memctl worked; left alone".to_owned();
                problems.push((t.clone(), "skipped", why.clone()));
                skipped.push((t, why));
            }
            pb.inc(batch.len() as u64);
        }
        pb.finish_and_clear();
    }
    let interrupted = not_processed > 0;
    // The threads not processed are not reported as deleted.
    selected.truncate(selected.len() - not_processed);
    let (before, after, vacuum) = store.shrink(m.vacuum && !m.dry_run && !interrupted)?;
    let would: u64 = selected.iter().map(|(t, _)| t.bytes).sum();

    match output::resolve_format(g.format) {
        Format::Table => {
            let mut t = table::new_table(&["thread_id", "checkpoints", "bytes", "age", "status"]);
            table::align_right(&mut t, &[1, 2]);
            let moved: Vec<&String> = skipped.iter().map(|(id, _)| id).collect();
            for (th, age) in &selected {
                let status = if m.dry_run {
                    "would delete"
                } else if moved.contains(&&th.thread_id) {
                    "skipped"
                } else {
                    "deleted"
                };
                t.add_row(vec![
                    human::id(&th.thread_id),
                    th.checkpoints.to_string(),
                    human::bytes(th.bytes),
                    age.map_or("-".into(), human::age),
                    status.to_owned(),
                ]);
            }
            if !selected.is_empty() {
                writeln!(out, "{}", table::render(&t))?;
            }
            for (id, why) in &skipped {
                writeln!(out, "skipped {}: {why}", human::id(id))?;
            }
            if m.dry_run {
                writeln!(
                    out,
                    "dry run: would delete {} ({}); nothing was written",
                    human::count(selected.len() as u64, "thread"),
                    human::bytes(would)
                )?;
            } else {
                writeln!(
                    out,
                    "deleted {}, {}, {} ({}); file {} → {}",
                    human::count(deleted.threads, "thread"),
                    human::count(deleted.checkpoints, "checkpoint"),
                    human::count(deleted.writes, "write"),
                    human::bytes(deleted.bytes),
                    human::bytes(before),
                    human::bytes(after)
                )?;
            }
        }
        format => {
            let doc = PruneReport {
                dry_run: m.dry_run,
                threads: selected
                    .iter()
                    .map(|(t, age)| PrunedThread {
                        thread_id: &t.thread_id,
                        checkpoints: t.checkpoints,
                        bytes: t.bytes,
                        age_seconds: *age,
                    })
                    .collect(),
                skipped: skipped
                    .iter()
                    .map(|(id, why)| SkippedThread {
                        thread_id: id,
                        reason: why,
                    })
                    .collect(),
                deleted,
                bytes_reclaimed: deleted.bytes,
                would_reclaim: m.dry_run.then_some(would),
                file_bytes_before: before,
                file_bytes_after: after,
                vacuumed: matches!(vacuum, Some(Ok(()))),
            };
            output::write_document(out, format, &doc)?;
        }
    }
    if g.quiet {
        // The report is hidden: the threads an operator must act on are still named (not
        // the ones --min-idle left alone on purpose).
        for (id, status, why) in &problems {
            output::quiet_problem(id, status, why);
        }
    }
    match vacuum {
        _ if interrupted => Err(crate::interrupt::Interrupted(not_processed).into()),
        Some(Err(e)) => Err(super::partial_if_busy(e)),
        _ if failed > 0 => Err(crate::exit::Partial(format!(
            "{failed} threads could not be read and were left untouched ({})",
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

/// Checks that a thread's latest root checkpoint (or latest of any namespace, for a thread
/// without a root one) decodes; an encrypted one only when a key is given (prune needs none).
fn latest_is_readable(store: &dyn CheckpointStore, keys: &Keyring, thread: &str) -> Result<()> {
    let row = match store.checkpoint(thread, "", None)? {
        Some(row) => row,
        None => {
            let ns = store.namespaces(thread)?;
            match ns.first() {
                Some(ns) => match store.checkpoint(thread, ns, None)? {
                    Some(row) => row,
                    None => return Ok(()),
                },
                None => return Ok(()),
            }
        }
    };
    if aes::split_type(&row.type_name).1.is_some() && !keys.has_key() {
        return Ok(());
    }
    LoadedCheckpoint::open(keys, row).map(|_| ())
}

/// The JSON report of `prune`.
#[derive(serde::Serialize)]
struct PruneReport<'a> {
    dry_run: bool,
    threads: Vec<PrunedThread<'a>>,
    skipped: Vec<SkippedThread<'a>>,
    deleted: Deleted,
    bytes_reclaimed: u64,
    would_reclaim: Option<u64>,
    file_bytes_before: u64,
    file_bytes_after: u64,
    vacuumed: bool,
}

/// A thread `prune` selected.
#[derive(serde::Serialize)]
struct PrunedThread<'a> {
    thread_id: &'a str,
    checkpoints: u64,
    bytes: u64,
    age_seconds: Option<i64>,
}

/// A thread `prune` left alone, and why.
#[derive(serde::Serialize)]
struct SkippedThread<'a> {
    thread_id: &'a str,
    reason: &'a str,
}
