//! The report of `prune`: a table of the threads it selected, the ones it left alone and a
//! totals line, or one JSON document with the threads, the skipped ones and the totals.

use std::io::Write;

use super::{human, table, Format};
use anyhow::Result;

pub use crate::jobs::prune::{PruneReport, PrunedThread, SkippedThread};

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
