//! The report of `prune`: a table of the threads it selected, the ones it left alone and a
//! totals line, or one JSON document with the threads, the skipped ones and the totals.

use std::io::Write;

use anyhow::Result;
use serde::Serialize;

use crate::storage::Deleted;

use super::{human, table, Format};

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

/// The most threads a table names in its one line about `--min-idle`.
const RECENT_NAMED: usize = 3;

/// Writes the `prune` report in `format`.
pub fn render(out: &mut dyn Write, format: Format, r: &PruneReport) -> Result<()> {
    if format != Format::Table {
        return super::write_document(out, format, r);
    }
    // A chunk of rows at a time (table::write_chunked): 100,000 threads make no 200 MB table.
    let skipped: std::collections::HashSet<&str> =
        r.skipped.iter().map(|s| s.thread_id.as_str()).collect();
    if !r.threads.is_empty() {
        table::write_chunked(
            out,
            &["thread_id", "checkpoints", "bytes", "age", "status"],
            &[1, 2],
            r.threads.len(),
            |i| {
                let th = &r.threads[i];
                let status = if r.dry_run {
                    "would delete"
                } else if skipped.contains(th.thread_id.as_str()) {
                    "skipped"
                } else {
                    "deleted"
                };
                Ok(vec![
                    human::id(&th.thread_id),
                    th.checkpoints.to_string(),
                    human::bytes(th.bytes),
                    th.age_seconds.map_or("-".into(), human::age),
                    status.to_owned(),
                ])
            },
        )?;
    }
    for s in r.skipped.iter().filter(|s| !s.recent) {
        writeln!(out, "skipped {}: {}", human::id(&s.thread_id), s.reason)?;
    }
    let recent: Vec<&str> = r
        .skipped
        .iter()
        .filter(|s| s.recent)
        .map(|s| s.thread_id.as_str())
        .collect();
    if !recent.is_empty() {
        let named: Vec<String> = recent
            .iter()
            .take(RECENT_NAMED)
            .map(|t| format!("'{}'", human::id(t)))
            .collect();
        let listed = match recent.len() > RECENT_NAMED {
            true => format!(
                "{} and {} more",
                named.join(", "),
                recent.len() - RECENT_NAMED
            ),
            false => named.join(", "),
        };
        writeln!(
            out,
            "skipped {} written within --min-idle {}, which wins over a shorter --idle: {listed} (the JSON report lists each)",
            human::count(recent.len() as u64, "thread"),
            r.min_idle,
        )?;
    }
    if r.dry_run {
        writeln!(
            out,
            "dry run: would delete {} ({}); nothing was written",
            human::count(r.threads.len() as u64, "thread"),
            human::bytes(r.would_reclaim.unwrap_or(0))
        )?;
    } else {
        writeln!(
            out,
            "deleted {}, {}, {} ({}); file {} → {}",
            human::count(r.deleted.threads, "thread"),
            human::count(r.deleted.checkpoints, "checkpoint"),
            human::count(r.deleted.writes, "write"),
            human::bytes(r.deleted.bytes),
            human::bytes(r.file_bytes_before),
            human::bytes(r.file_bytes_after)
        )?;
    }
    Ok(())
}
