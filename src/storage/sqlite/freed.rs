//! Freed space in a SQLite file, without locking a live app out of it.
//!
//! `VACUUM` rebuilds the whole file under the write lock: about 12 s per GB on a 2-core
//! machine (measured on the 1 GB realistic benchmark file). An app whose write waits longer
//! than its busy timeout (Python's `sqlite3` default is 5 s) fails that write, and with it the
//! user's turn. So:
//! - a purge (`rm --purge`, `forget`) zeroes the free pages in short transactions instead
//!   (`SqliteStore::zero_free_pages`); memctl's own deletes there run with `secure_delete`,
//!   so the freed cells inside pages are zeroed as they go. Only when the byte search still
//!   finds a removed text outside every row does the caller fall back to `VACUUM`;
//! - a `VACUUM` (`gc`/`prune`/`rekey --vacuum`, or that fallback) runs while another process
//!   has the file open only when the file is small ([`VACUUM_BESIDE_APP_MAX_BYTES`]);
//!   otherwise it is refused as [`VacuumBusy`]: the deletions are committed and SQLite reuses
//!   their pages for new checkpoints.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use super::SqliteStore;
use crate::storage::VacuumBusy;

/// Free pages taken by one short transaction of [`SqliteStore::zero_free_pages`] (8 MiB at
/// SQLite's default 4 KiB pages: tens of milliseconds of the write lock).
const PAGES_PER_TRANSACTION: u64 = 2048;

/// Free pages one scratch row takes (its zero-filled blob spills over this many overflow
/// pages).
const PAGES_PER_ROW: u64 = 16;

/// The scratch table whose zero-filled rows take the free pages over.
const SCRATCH: &str = "memctl_zero_free_pages";

/// The largest database (bytes in use) memctl rebuilds with `VACUUM` while another process
/// has it open: under a second of the write lock at the rate measured here, well inside a
/// 5 s busy timeout.
pub const VACUUM_BESIDE_APP_MAX_BYTES: u64 = 64 << 20;

impl SqliteStore {
    /// Overwrites every free page of the file with zeros, in short `BEGIN IMMEDIATE`
    /// transactions a live app can write between: scratch rows of zero-filled blobs take the
    /// free pages over (SQLite allocates from the free list before it grows the file), then
    /// are deleted, which hands the zeroed pages back. Then the WAL is checkpointed and
    /// truncated, so its old frames are gone too. Returns how many pages were zeroed. A
    /// reader that keeps the WAL from being truncated is a [`VacuumBusy`] error.
    pub(super) fn zero_free_pages(&self) -> Result<u64> {
        let conn = self.connection();
        let sql = |e| self.sql_error(e);
        let page_size = self.pragma_u64("page_size")?;
        // The app may free pages while this runs; its own pages are not what a purge erases,
        // so the pages present at the start (and a margin) bound the work.
        let budget = self.pragma_u64("freelist_count")? + PAGES_PER_TRANSACTION;
        let secure: i64 = conn
            .query_row("PRAGMA secure_delete", [], |r| r.get(0))
            .map_err(sql)?;
        // FAST: cells freed inside pages are zeroed, whole freed pages are not rewritten
        // (the scratch pages hold zeros already).
        conn.execute_batch("PRAGMA secure_delete = FAST")
            .map_err(sql)?;
        let run = || -> Result<u64> {
            let mut zeroed = 0;
            while zeroed < budget {
                let mut taken = 0;
                self.in_short_transaction(|| {
                    conn.execute_batch(&format!("CREATE TABLE IF NOT EXISTS {SCRATCH} (b BLOB)"))?;
                    while taken < PAGES_PER_TRANSACTION {
                        let free: i64 =
                            conn.query_row("PRAGMA freelist_count", [], |r| r.get(0))?;
                        if free <= 0 {
                            break;
                        }
                        let pages = (free as u64).min(PAGES_PER_ROW);
                        let bytes = pages * page_size.saturating_sub(4).max(1);
                        conn.execute(
                            &format!("INSERT INTO {SCRATCH} (b) VALUES (zeroblob(?))"),
                            [bytes as i64],
                        )?;
                        taken += pages;
                    }
                    Ok(())
                })?;
                zeroed += taken;
                if taken < PAGES_PER_TRANSACTION {
                    break;
                }
            }
            // Hand the pages back a few rows at a time (a DROP reads every page it frees).
            loop {
                let mut deleted = 0;
                self.in_short_transaction(|| {
                    deleted = conn.execute(
                        &format!(
                            "DELETE FROM {SCRATCH} WHERE rowid IN (SELECT rowid FROM {SCRATCH} LIMIT ?)"
                        ),
                        [(PAGES_PER_TRANSACTION / PAGES_PER_ROW) as i64],
                    )?;
                    Ok(())
                })?;
                if deleted == 0 {
                    break;
                }
            }
            self.in_short_transaction(|| conn.execute_batch(&format!("DROP TABLE {SCRATCH}")))?;
            Ok(zeroed)
        };
        let zeroed = run();
        let restored = conn
            .execute_batch(&format!("PRAGMA secure_delete = {secure}"))
            .map_err(sql);
        let zeroed =
            zeroed.context("zeroing the free pages failed (nothing the app wrote was touched)")?;
        restored?;
        if !self.truncate_wal()? {
            return Err(VacuumBusy(format!(
                "the WAL of '{}' could not be truncated within the busy timeout (an app is reading it); \
                 the rewrite is committed, run the purge again later to erase the WAL's old pages",
                crate::storage::shown_path(self.path())
            ))
            .into());
        }
        Ok(zeroed)
    }

    /// `f` in its own `BEGIN IMMEDIATE` transaction (rolled back on an error).
    fn in_short_transaction(&self, f: impl FnOnce() -> rusqlite::Result<()>) -> Result<()> {
        let conn = self.connection();
        conn.execute_batch("BEGIN IMMEDIATE")
            .map_err(|e| self.sql_error(e))?;
        match f().and_then(|()| conn.execute_batch("COMMIT")) {
            Ok(()) => Ok(()),
            Err(e) => {
                let _ = conn.execute_batch("ROLLBACK");
                Err(self.sql_error(e))
            }
        }
    }

    /// `PRAGMA wal_checkpoint(TRUNCATE)`: false when a reader kept it from finishing.
    pub(super) fn truncate_wal(&self) -> Result<bool> {
        let busy: i64 = self
            .connection()
            .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| r.get(0))
            .map_err(|e| self.sql_error(e))?;
        Ok(busy == 0)
    }

    /// Refuses a `VACUUM` that would lock an app out for long: another process has the file
    /// open and more than [`VACUUM_BESIDE_APP_MAX_BYTES`] are in use. Files not in WAL mode
    /// (where open connections hold no lock to see) are not refused.
    pub(super) fn check_vacuum_beside_app(&self) -> Result<()> {
        let in_use = (self.pragma_u64("page_count")?)
            .saturating_sub(self.pragma_u64("freelist_count")?)
            * self.pragma_u64("page_size")?;
        if in_use <= VACUUM_BESIDE_APP_MAX_BYTES || opened_elsewhere(self.path()) != Some(true) {
            return Ok(());
        }
        Err(VacuumBusy(format!(
            "vacuum skipped: another process (an app) has '{}' open, and VACUUM would lock it out \
             while it rebuilds all {} MiB (about 12 s per GB), long enough for the app's writes to \
             time out; the deletions are committed and new checkpoints reuse their space: run \
             with --vacuum again while the app is stopped",
            crate::storage::shown_path(self.path()),
            in_use >> 20
        ))
        .into())
    }
}

/// Whether a process other than this one has the WAL-mode database `db` open (`None`: cannot
/// tell, e.g. not in WAL mode). Every SQLite connection to a WAL database holds a shared
/// `fcntl` lock on byte 128 of the `-shm` file (its "DMS" slot) for as long as it is open;
/// `F_GETLK` reports a lock of another process there (this process's own locks never
/// conflict with it). The `-shm` is opened through [`super::kept_open`], never closed.
#[cfg(unix)]
pub fn opened_elsewhere(db: &Path) -> Option<bool> {
    use std::os::fd::AsRawFd;
    let shm = super::kept_open::open(&PathBuf::from(format!("{}-shm", db.display()))).ok()?;
    // SAFETY: a zeroed `flock` is a valid value of this plain C struct; `fcntl(F_GETLK)` only
    // writes into the struct passed, and the descriptor is open (it is never closed).
    let mut lock: libc::flock = unsafe { std::mem::zeroed() };
    lock.l_type = libc::F_WRLCK as _;
    lock.l_whence = libc::SEEK_SET as _;
    lock.l_start = 128;
    lock.l_len = 1;
    let rc = unsafe { libc::fcntl(shm.as_raw_fd(), libc::F_GETLK, &mut lock) };
    (rc == 0).then(|| i32::from(lock.l_type) != libc::F_UNLCK)
}

/// Whether another process has `db` open: cannot tell on this platform.
#[cfg(not(unix))]
pub fn opened_elsewhere(_db: &Path) -> Option<bool> {
    None
}
