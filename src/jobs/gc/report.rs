//! The report of the `gc` job: one row per thread it looked at, kept out of memory until the
//! report is written, and the totals.

use std::cell::RefCell;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use crate::overflow::tape::{Tape, TapeReader};
use crate::storage::Deleted;

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
