//! `memctl gc`: delete old checkpoints inside threads, keeping each one resumable as before.

use std::io::Write;

use anyhow::{Context, Result};

use crate::cli::{Format, GcArgs, GlobalArgs};
use crate::codec::aes::{self, Keyring};
use crate::ops::duration::parse_seconds;
use crate::ops::edit::open_checkpoint;
use crate::ops::gc::{plan, CheckpointInfo};
use crate::ops::update::id_time;
use crate::output::{self, human, progress, table};
use crate::storage::{CheckpointStore, Deleted, ThreadSummary};

use super::batch::open_for_writing;
use super::LoadedCheckpoint;

/// What gc did to a thread.
#[derive(Debug, Clone)]
enum GcStatus {
    /// Nothing to collect (not reported).
    Pending,
    /// Dry run: these checkpoints would go.
    WouldDelete,
    /// The old checkpoints were deleted.
    Collected,
    /// Left alone, and why.
    Skipped(String),
    /// Unreadable: left untouched, and why.
    Failed(String),
}

impl std::fmt::Display for GcStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GcStatus::Pending => f.write_str(""),
            GcStatus::WouldDelete => f.write_str("would delete"),
            GcStatus::Collected => f.write_str("collected"),
            GcStatus::Skipped(why) => write!(f, "skipped: {why}"),
            GcStatus::Failed(why) => write!(f, "failed: {why}; left untouched"),
        }
    }
}

impl serde::Serialize for GcStatus {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// One thread's result.
struct Row {
    thread_id: String,
    status: GcStatus,
    checkpoints: u64,
    deleted: Deleted,
}

/// Runs `gc`.
pub fn run(g: &GlobalArgs, args: &GcArgs, out: &mut dyn Write) -> Result<()> {
    let m = &args.maintenance;
    let store = open_for_writing(g, m.dry_run)?;
    let keys = super::keys(g);
    let now = human::now(g.now.as_deref())?;
    let min_idle = parse_seconds(&m.min_idle)?;
    let mut threads: Vec<ThreadSummary> = Vec::new();
    store.for_each_thread(&mut |t| {
        if args.thread.as_ref().is_none_or(|only| *only == t.thread_id) {
            threads.push(t);
        }
        Ok(())
    })?;
    if let Some(t) = &args.thread {
        if threads.is_empty() {
            return Err(super::no_thread(t));
        }
    }
    let keep = usize::try_from(args.keep_checkpoints).unwrap_or(usize::MAX);
    let mut rows = Vec::new();
    let mut total = Deleted::default();
    let mut failed = 0;
    let pb = progress::bar(threads.len() as u64, "gc");
    for t in &threads {
        pb.inc(1);
        let age = id_time(&t.latest_id).map(|ts| now.as_second() - ts.as_second());
        let mut row = Row {
            thread_id: t.thread_id.clone(),
            status: GcStatus::Pending,
            checkpoints: t.checkpoints,
            deleted: Deleted::default(),
        };
        if age.is_some_and(|a| a < min_idle) {
            row.status = GcStatus::Skipped(format!(
                "written {} ago (--min-idle {})",
                human::age(age.unwrap_or(0)),
                m.min_idle
            ));
            rows.push(row);
            continue;
        }
        let infos = store.checkpoint_infos(&t.thread_id)?;
        // LangGraph.js's DeltaChannel threads carry no counters to find their seeds by.
        if infos.iter().any(|c| {
            crate::model::Metadata::parse(c.metadata.as_deref())
                .is_ok_and(|m| m.fields.contains_key(crate::model::delta::JS_DELTA_MARKER))
        }) {
            row.status = GcStatus::Skipped(
                "LangGraph.js DeltaChannel thread (its value is rebuilt from older checkpoints)"
                    .into(),
            );
            rows.push(row);
            continue;
        }
        let p = plan(&infos, keep);
        if p.delete.is_empty() {
            continue;
        }
        // What stays must be readable: a thread whose kept checkpoints do not decode is
        // reported and left alone (its older history may be all that is left of it).
        if let Err(e) = check_readable(&*store, &keys, &t.thread_id, &p.kept(&infos)) {
            row.status = GcStatus::Failed(format!("{e:#}"));
            failed += 1;
            rows.push(row);
            continue;
        }
        if m.dry_run {
            row.status = GcStatus::WouldDelete;
            row.deleted = Deleted {
                checkpoints: p.delete.len() as u64,
                writes: p.writes,
                bytes: p.bytes,
                ..Deleted::default()
            };
        } else {
            match store.apply_gc(&t.thread_id, &p.delete, &p.orphaned, &t.latest_id)? {
                Some(d) => {
                    row.status = GcStatus::Collected;
                    row.deleted = d;
                    total.add(d);
                }
                None => {
                    row.status =
                        GcStatus::Skipped("got a new checkpoint while memctl worked".into())
                }
            }
        }
        rows.push(row);
    }
    pb.finish_and_clear();
    let (before, after, vacuum) = store.shrink(m.vacuum && !m.dry_run)?;

    match output::resolve_format(g.format) {
        Format::Table => {
            let mut t =
                table::new_table(&["thread_id", "checkpoints", "deleted", "bytes", "status"]);
            table::align_right(&mut t, &[1, 2, 3]);
            for r in &rows {
                t.add_row(vec![
                    human::id(&r.thread_id),
                    r.checkpoints.to_string(),
                    r.deleted.checkpoints.to_string(),
                    human::bytes(r.deleted.bytes),
                    r.status.to_string(),
                ]);
            }
            if !rows.is_empty() {
                writeln!(out, "{}", table::render(&t))?;
            }
            if m.dry_run {
                let n: u64 = rows.iter().map(|r| r.deleted.checkpoints).sum();
                let w: u64 = rows.iter().map(|r| r.deleted.writes).sum();
                let b: u64 = rows.iter().map(|r| r.deleted.bytes).sum();
                writeln!(
                    out,
                    "dry run: would delete {} and {} ({}); nothing was written",
                    human::count(n, "checkpoint"),
                    human::count(w, "write"),
                    human::bytes(b)
                )?;
            } else {
                writeln!(
                    out,
                    "deleted {} and {} ({}); file {} → {}",
                    human::count(total.checkpoints, "checkpoint"),
                    human::count(total.writes, "write"),
                    human::bytes(total.bytes),
                    human::bytes(before),
                    human::bytes(after)
                )?;
            }
        }
        format => {
            let would = rows.iter().fold(Deleted::default(), |mut d, r| {
                if m.dry_run {
                    d.add(r.deleted);
                }
                d
            });
            let doc = GcReport {
                dry_run: m.dry_run,
                keep_checkpoints: args.keep_checkpoints,
                would_delete: m.dry_run.then_some(would),
                threads: rows
                    .iter()
                    .map(|r| GcThread {
                        thread_id: &r.thread_id,
                        status: &r.status,
                        checkpoints: r.checkpoints,
                        deleted_checkpoints: r.deleted.checkpoints,
                        deleted_writes: r.deleted.writes,
                        bytes: r.deleted.bytes,
                    })
                    .collect(),
                deleted: total,
                bytes_reclaimed: total.bytes,
                file_bytes_before: before,
                file_bytes_after: after,
                vacuumed: matches!(vacuum, Some(Ok(()))),
            };
            output::write_document(out, format, &doc)?;
        }
    }
    match vacuum {
        Some(Err(e)) => Err(super::partial_if_busy(e)),
        _ if failed > 0 => Err(crate::exit::Partial(format!(
            "{failed} threads could not be read and were left untouched (see their status)"
        ))
        .into()),
        _ => Ok(()),
    }
}

/// Checks that the checkpoints gc keeps decode (blob and metadata), with the pending writes
/// of the latest root one: what the thread will be after the gc. Encrypted rows are checked
/// when a key is given (decrypted with it); without one they are left to their AES tag, as
/// gc needs no key.
fn check_readable(
    store: &dyn CheckpointStore,
    keys: &Keyring,
    thread: &str,
    kept: &[&CheckpointInfo],
) -> Result<()> {
    let latest_root = kept
        .iter()
        .filter(|c| c.ns.is_empty())
        .map(|c| c.id.as_str())
        .max();
    let unreadable = |type_name: &str| aes::split_type(type_name).1.is_some() && !keys.has_key();
    for c in kept {
        let Some(row) = store.checkpoint(thread, &c.ns, Some(&c.id))? else {
            continue;
        };
        if unreadable(&row.type_name) {
            continue; // encrypted and no key: its AES tag guards it
        }
        let (row, _) = open_checkpoint(keys, row)?;
        let is_latest = c.ns.is_empty() && Some(c.id.as_str()) == latest_root;
        if row.type_name == "msgpack" {
            // Checked in place (what a full decode refuses, without building the value: a
            // checkpoint of 100,000 messages is not held twice).
            crate::codec::lazy::check(&row.checkpoint).with_context(|| {
                format!(
                    "cannot decode checkpoint {} of thread '{thread}'",
                    row.checkpoint_id
                )
            })?;
            crate::model::Metadata::parse(row.metadata.as_deref()).with_context(|| {
                format!(
                    "bad metadata on checkpoint {} of thread '{thread}'",
                    row.checkpoint_id
                )
            })?;
        } else {
            LoadedCheckpoint::decode(row.clone())?;
        }
        if is_latest {
            let writes = store.writes(thread, &row.checkpoint_ns, &row.checkpoint_id)?;
            let writes = writes
                .into_iter()
                .filter(|w| !unreadable(&w.type_name))
                .collect();
            super::decode_writes(keys, writes, thread, &row.checkpoint_id)?;
        }
    }
    Ok(())
}

/// The JSON report of `gc`.
#[derive(serde::Serialize)]
struct GcReport<'a> {
    dry_run: bool,
    keep_checkpoints: u64,
    would_delete: Option<Deleted>,
    threads: Vec<GcThread<'a>>,
    deleted: Deleted,
    bytes_reclaimed: u64,
    file_bytes_before: u64,
    file_bytes_after: u64,
    vacuumed: bool,
}

/// One thread of the `gc` report.
#[derive(serde::Serialize)]
struct GcThread<'a> {
    thread_id: &'a str,
    status: &'a GcStatus,
    checkpoints: u64,
    deleted_checkpoints: u64,
    deleted_writes: u64,
    bytes: u64,
}
