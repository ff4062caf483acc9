//! WAL checkpoints beside a batch of commits: copying committed pages from the `-wal` file
//! back into the database is SQLite's own work after a commit (`wal_autocheckpoint`); for a
//! batch rewrite it runs on a thread of its own, with its own connection, while the batch goes
//! on writing.

use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

use anyhow::Result;
use rusqlite::{Connection, OpenFlags};

use super::SqliteStore;

/// SQLite's default `wal_autocheckpoint` (pages), restored when a batch ends.
const AUTOCHECKPOINT_PAGES: u32 = 1000;

/// Runs `PRAGMA wal_checkpoint(PASSIVE)` on another thread each time it is nudged.
pub struct WalCheckpointer {
    nudge: Option<mpsc::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl SqliteStore {
    /// For a batch of commits on this connection: turns its automatic checkpoints off and
    /// returns a checkpointer to nudge after each commit. `None` unless the file is in WAL
    /// mode (then commits checkpoint as usual).
    pub(super) fn wal_checkpointer(&self) -> Result<Option<WalCheckpointer>> {
        let mode: String = self
            .connection()
            .query_row("PRAGMA journal_mode", [], |r| r.get(0))
            .map_err(|e| self.sql_error(e))?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Ok(None);
        }
        self.connection()
            .pragma_update(None, "wal_autocheckpoint", 0)
            .map_err(|e| self.sql_error(e))?;
        let (nudge, nudges) = mpsc::channel::<()>();
        let path = self.path().to_owned();
        let busy = self.busy_timeout();
        let thread = std::thread::spawn(move || checkpoint_on_nudge(&path, busy, &nudges));
        Ok(Some(WalCheckpointer {
            nudge: Some(nudge),
            thread: Some(thread),
        }))
    }
}

impl WalCheckpointer {
    /// Asks for a checkpoint of what is committed so far (returns at once).
    pub(super) fn nudge(&self) {
        if let Some(n) = &self.nudge {
            let _ = n.send(());
        }
    }

    /// Waits for the last checkpoint and gives `store`'s connection its automatic
    /// checkpoints back.
    pub(super) fn finish(mut self, store: &SqliteStore) -> Result<()> {
        self.stop();
        store
            .connection()
            .pragma_update(None, "wal_autocheckpoint", AUTOCHECKPOINT_PAGES)
            .map_err(|e| store.sql_error(e))
    }

    fn stop(&mut self) {
        self.nudge = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for WalCheckpointer {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The checkpointer thread: a checkpoint per nudge (nudges that queued up while one ran count
/// once), until the sender is gone. A failed checkpoint is left to SQLite: the pages stay in
/// the WAL, which the next checkpoint (at the latest when the last connection closes) copies.
fn checkpoint_on_nudge(path: &std::path::Path, busy: Duration, nudges: &mpsc::Receiver<()>) {
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let Ok(conn) = Connection::open_with_flags(path, flags) else {
        return;
    };
    let _ = conn.busy_timeout(busy);
    while nudges.recv().is_ok() {
        while nudges.try_recv().is_ok() {}
        let _ = conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()));
    }
}
