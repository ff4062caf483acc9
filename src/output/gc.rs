//! The report of `gc`: a table of the threads it looked at with a totals line, or one JSON
//! document with the threads and the totals.

use std::io::Write;

use anyhow::Result;

use super::{human, table, Format};

pub use crate::jobs::gc::{DeltaWay, GcReport, GcRows, GcRowsReader, GcStatus, GcThread};

impl GcThread {
    /// The status as the table shows it: with its reason, and how a DeltaChannel thread stays
    /// exact.
    pub fn status_text(&self) -> String {
        let why = self.reason.as_deref().unwrap_or("");
        let status = match self.status {
            GcStatus::Skipped => format!("skipped: {why}"),
            GcStatus::Failed => format!("failed: {why}; left untouched"),
            s => s.as_str().to_owned(),
        };
        match (self.delta, self.status) {
            (Some(DeltaWay::Snapshot), GcStatus::WouldDelete | GcStatus::Collected) => format!(
                "{status} ({} rewritten with DeltaChannel snapshots)",
                human::count(self.rewritten_checkpoints, "checkpoint")
            ),
            (Some(DeltaWay::Chain), GcStatus::WouldDelete | GcStatus::Collected) => format!(
                "{status} (kept the checkpoints DeltaChannels replay from: {})",
                self.delta_reason.as_deref().unwrap_or("")
            ),
            _ => status,
        }
    }
}

/// Writes the `gc` report in `format`; the table's layout is the whole table's
/// ([`table::write_chunked`]: the rows are read twice, never all held).
pub fn render(out: &mut dyn Write, format: Format, r: &GcReport) -> Result<()> {
    if format != Format::Table {
        return super::write_document(out, format, r);
    }
    let n = r.threads.len();
    if n > 0 {
        table::write_chunked(
            out,
            &["thread_id", "checkpoints", "deleted", "bytes", "status"],
            &[1, 2, 3],
            n,
            |i| {
                let row = r.threads.get(i)?;
                Ok(vec![
                    human::id(&row.thread_id),
                    row.checkpoints.to_string(),
                    row.deleted_checkpoints.to_string(),
                    human::bytes(row.bytes),
                    row.status_text(),
                ])
            },
        )?;
    }
    if r.dry_run {
        let would = r.would_delete.unwrap_or_default();
        writeln!(
            out,
            "dry run: would delete {} and {} ({}); nothing was written",
            human::count(would.checkpoints, "checkpoint"),
            human::count(would.writes, "write"),
            human::bytes(would.bytes)
        )?;
    } else {
        writeln!(
            out,
            "deleted {} and {} ({}); file {} → {}",
            human::count(r.deleted.checkpoints, "checkpoint"),
            human::count(r.deleted.writes, "write"),
            human::bytes(r.deleted.bytes),
            human::bytes(r.file_bytes_before),
            human::bytes(r.file_bytes_after)
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::Deleted;
    use serde::Serialize;

    /// A report whose rows were kept out of memory renders as the same report with every
    /// row held did (the table in one piece, JSON and JSON lines through serde), past the
    /// table's chunk and the tape's memory.
    #[test]
    fn a_report_from_kept_rows_is_the_report_of_held_rows() {
        #[derive(Serialize)]
        struct Held<'a> {
            dry_run: bool,
            keep_checkpoints: u64,
            would_delete: Option<Deleted>,
            threads: &'a [GcThread],
            deleted: Deleted,
            bytes_reclaimed: u64,
            file_bytes_before: u64,
            file_bytes_after: u64,
            vacuumed: bool,
        }
        for n in [0usize, 1, 3, 3000, 40_000] {
            let rows: Vec<GcThread> = (0..n)
                .map(|i| {
                    let mut r = GcThread::new(
                        &format!("thread-{i}"),
                        3 + i as u64 % 5,
                        GcStatus::WouldDelete,
                    );
                    r.set_deleted(Deleted {
                        checkpoints: 1,
                        writes: 2,
                        bytes: 800 + i as u64,
                        ..Deleted::default()
                    });
                    if i % 7 == 3 {
                        r.set(GcStatus::Skipped, Some(format!("written {i}s ago")));
                    }
                    if i % 11 == 5 {
                        r.set_way(Some((DeltaWay::Chain, Some("stored as 'json'".into()))));
                    }
                    r
                })
                .collect();
            for format in [Format::Table, Format::Json, Format::Jsonl] {
                let mut kept = GcRows::new();
                for r in &rows {
                    kept.push(r).expect("keeps");
                }
                let would = Some(Deleted {
                    checkpoints: n as u64,
                    ..Deleted::default()
                });
                let report = GcReport {
                    dry_run: true,
                    keep_checkpoints: 2,
                    would_delete: would,
                    threads: kept.reader().expect("reads"),
                    deleted: Deleted::default(),
                    bytes_reclaimed: 0,
                    file_bytes_before: 10,
                    file_bytes_after: 10,
                    vacuumed: false,
                };
                let mut got = Vec::new();
                render(&mut got, format, &report).expect("renders");
                let mut expected = Vec::new();
                if format == Format::Table {
                    let mut t = table::new_table(&[
                        "thread_id",
                        "checkpoints",
                        "deleted",
                        "bytes",
                        "status",
                    ]);
                    table::align_right(&mut t, &[1, 2, 3]);
                    for row in &rows {
                        t.add_row(vec![
                            human::id(&row.thread_id),
                            row.checkpoints.to_string(),
                            row.deleted_checkpoints.to_string(),
                            human::bytes(row.bytes),
                            row.status_text(),
                        ]);
                    }
                    if !rows.is_empty() {
                        writeln!(expected, "{}", table::render(&t)).expect("writes");
                    }
                    writeln!(
                        expected,
                        "dry run: would delete {} and {} ({}); nothing was written",
                        human::count(n as u64, "checkpoint"),
                        human::count(0u64, "write"),
                        human::bytes(0)
                    )
                    .expect("writes");
                } else {
                    let held = Held {
                        dry_run: true,
                        keep_checkpoints: 2,
                        would_delete: would,
                        threads: &rows,
                        deleted: Deleted::default(),
                        bytes_reclaimed: 0,
                        file_bytes_before: 10,
                        file_bytes_after: 10,
                        vacuumed: false,
                    };
                    super::super::write_document(&mut expected, format, &held).expect("writes");
                }
                assert!(got == expected, "{n} rows, {format:?}");
            }
        }
    }

    /// The status is a word and its reason a field of its own, in JSON; the table keeps the
    /// one-column text.
    #[test]
    fn status_and_reason_are_apart_in_json_and_together_in_the_table() {
        let mut skipped = GcThread::new("t1", 4, GcStatus::Collected);
        skipped.set(
            GcStatus::Skipped,
            Some("written 2m ago (--min-idle 5m)".into()),
        );
        let mut failed = GcThread::new("t2", 3, GcStatus::Collected);
        failed.set(GcStatus::Failed, Some("cannot decode".into()));
        let mut chain = GcThread::new("t3", 9, GcStatus::WouldDelete);
        chain.delta = Some(DeltaWay::Chain);
        chain.delta_reason = Some("stored as 'json'".into());
        let mut snap = GcThread::new("t4", 9, GcStatus::Collected);
        snap.delta = Some(DeltaWay::Snapshot);
        snap.rewritten_checkpoints = 1;
        let v = serde_json::to_value([&skipped, &failed, &chain, &snap]).expect("serializes");
        assert_eq!(v[0]["status"], "skipped");
        assert_eq!(v[0]["reason"], "written 2m ago (--min-idle 5m)");
        assert_eq!(v[1]["status"], "failed");
        assert_eq!(v[1]["reason"], "cannot decode");
        assert_eq!(v[2]["status"], "would delete");
        assert_eq!(v[2]["reason"], serde_json::Value::Null);
        assert_eq!(v[2]["delta"], "chain");
        assert_eq!(v[2]["delta_reason"], "stored as 'json'");
        assert_eq!(v[3]["delta"], "snapshot");
        assert_eq!(
            skipped.status_text(),
            "skipped: written 2m ago (--min-idle 5m)"
        );
        assert_eq!(
            failed.status_text(),
            "failed: cannot decode; left untouched"
        );
        assert_eq!(
            chain.status_text(),
            "would delete (kept the checkpoints DeltaChannels replay from: stored as 'json')"
        );
        assert_eq!(
            snap.status_text(),
            "collected (1 checkpoint rewritten with DeltaChannel snapshots)"
        );
    }
}
