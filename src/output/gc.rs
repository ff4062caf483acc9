//! The report of `gc`: a table of the threads it looked at with a totals line, or one JSON
//! document with the threads and the totals.

use std::cell::RefCell;
use std::io::Write;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use crate::storage::Deleted;

use super::tape::{Tape, TapeReader};
use super::{human, table, Format};

/// What gc did to a thread (JSON: the words in quotes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum GcStatus {
    /// Dry run: its old checkpoints would go.
    #[serde(rename = "would delete")]
    WouldDelete,
    /// Its old checkpoints were deleted.
    #[serde(rename = "collected")]
    Collected,
    /// Left alone (the reason says why).
    #[serde(rename = "skipped")]
    Skipped,
    /// Unreadable: left untouched (the reason says why).
    #[serde(rename = "failed")]
    Failed,
}

impl GcStatus {
    /// The status word.
    pub fn as_str(self) -> &'static str {
        match self {
            GcStatus::WouldDelete => "would delete",
            GcStatus::Collected => "collected",
            GcStatus::Skipped => "skipped",
            GcStatus::Failed => "failed",
        }
    }
}

/// How gc keeps a DeltaChannel thread's kept checkpoints exact (JSON: `snapshot`, `chain`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DeltaWay {
    /// The oldest kept checkpoints got snapshots of their DeltaChannels' values.
    Snapshot,
    /// Every older checkpoint they rebuild their values from stays (the reason says why).
    Chain,
}

/// One thread of the `gc` report.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct GcThread {
    /// The thread.
    pub thread_id: String,
    /// What gc did to it.
    pub status: GcStatus,
    /// Why it was skipped or failed (`null` otherwise).
    pub reason: Option<String>,
    /// Its checkpoints before the run.
    pub checkpoints: u64,
    /// Checkpoints deleted (would be, in a dry run).
    pub deleted_checkpoints: u64,
    /// Writes deleted with them.
    pub deleted_writes: u64,
    /// Their bytes.
    pub bytes: u64,
    /// A DeltaChannel thread: how its kept checkpoints stay exact (`null` for other threads).
    pub delta: Option<DeltaWay>,
    /// Why a DeltaChannel thread keeps the chain (`null` otherwise).
    pub delta_reason: Option<String>,
    /// Checkpoints rewritten with DeltaChannel snapshots (would be, in a dry run).
    pub rewritten_checkpoints: u64,
}

impl GcThread {
    /// A thread gc looked at and has not decided on yet (no deletion, no DeltaChannel way).
    pub fn new(thread_id: &str, checkpoints: u64, status: GcStatus) -> GcThread {
        GcThread {
            thread_id: thread_id.to_owned(),
            status,
            reason: None,
            checkpoints,
            deleted_checkpoints: 0,
            deleted_writes: 0,
            bytes: 0,
            delta: None,
            delta_reason: None,
            rewritten_checkpoints: 0,
        }
    }

    /// Sets the status and its reason.
    pub fn set(&mut self, status: GcStatus, reason: Option<String>) {
        self.status = status;
        self.reason = reason;
    }

    /// Records how a DeltaChannel thread stays exact, and why it keeps the chain.
    pub fn set_way(&mut self, way: Option<(DeltaWay, Option<String>)>) {
        if let Some((way, why)) = way {
            self.delta = Some(way);
            self.delta_reason = why;
        }
    }

    /// Records what was (or would be) deleted.
    pub fn set_deleted(&mut self, d: Deleted) {
        self.deleted_checkpoints = d.checkpoints;
        self.deleted_writes = d.writes;
        self.bytes = d.bytes;
    }

    /// What was (or would be) deleted.
    pub fn deleted(&self) -> Deleted {
        Deleted {
            checkpoints: self.deleted_checkpoints,
            writes: self.deleted_writes,
            bytes: self.bytes,
            ..Deleted::default()
        }
    }

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

/// The rows of a `gc` report as they become final, kept out of memory until the report is
/// written (issue #30: a dry run at a million threads held a million rows).
#[derive(Default)]
pub struct GcRows {
    tape: Tape,
}

impl GcRows {
    /// No rows yet.
    pub fn new() -> GcRows {
        GcRows::default()
    }

    /// Appends a final row.
    pub fn push(&mut self, row: &GcThread) -> Result<()> {
        self.tape.push(&serde_json::to_vec(row)?)
    }

    /// Rows pushed.
    pub fn len(&self) -> usize {
        self.tape.len()
    }

    /// True when there is no row.
    pub fn is_empty(&self) -> bool {
        self.tape.is_empty()
    }

    /// The rows, to write (in the order pushed).
    pub fn reader(self) -> Result<GcRowsReader> {
        Ok(GcRowsReader(RefCell::new(self.tape.reader()?)))
    }
}

/// The rows of a `gc` report read back in order ([`GcRows::reader`]); serialized as the list
/// of rows (what a `Vec<GcThread>` of them serializes to).
pub struct GcRowsReader(RefCell<TapeReader>);

impl GcRowsReader {
    /// Rows.
    pub fn len(&self) -> usize {
        self.0.borrow().len()
    }

    /// True when there is no row.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Row `i`: the one after the last read, or the first again.
    pub fn get(&self, i: usize) -> Result<GcThread> {
        let mut tape = self.0.borrow_mut();
        serde_json::from_slice(tape.get(i)?).context("a reported row does not read back")
    }
}

impl Serialize for GcRowsReader {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{Error, SerializeSeq};
        let n = self.len();
        let mut seq = s.serialize_seq(Some(n))?;
        for i in 0..n {
            let row = self
                .get(i)
                .map_err(|e| S::Error::custom(format!("{e:#}")))?;
            seq.serialize_element(&row)?;
        }
        seq.end()
    }
}

/// The report of `gc`: the threads it reported, then the totals.
#[derive(Serialize)]
pub struct GcReport {
    /// Nothing was written.
    pub dry_run: bool,
    /// `--keep-checkpoints`.
    pub keep_checkpoints: u64,
    /// A dry run: what would go over all threads (`null` for a real run).
    pub would_delete: Option<Deleted>,
    /// The threads gc collected, skipped or could not read (threads with nothing to collect
    /// are left out).
    pub threads: GcRowsReader,
    /// What was deleted over all threads.
    pub deleted: Deleted,
    /// The bytes of the deleted rows.
    pub bytes_reclaimed: u64,
    /// The database's size before the run.
    pub file_bytes_before: u64,
    /// Its size after (and after the vacuum, with `--vacuum`).
    pub file_bytes_after: u64,
    /// `--vacuum` ran and succeeded.
    pub vacuumed: bool,
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
