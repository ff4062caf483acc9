//! Ctrl-C (SIGINT) during a batch (trim/rm/summarize `--all`, forget's scrub, gc, prune): the
//! batch stops after the thread it is writing (each thread's change is one transaction or
//! savepoint, committed whole), reports the threads already done and ends with
//! "interrupted: N threads not processed", exit code 130 ([`crate::exit::INTERRUPTED`]).
//! Outside a batch (reading, planning), Ctrl-C ends the process at once with code 130, as
//! without memctl's handler: nothing is half-written there (SQLite and PostgreSQL roll an
//! open transaction back). Once a batch has begun, its report is always written whole: a
//! Ctrl-C after its last thread changes nothing.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Set by Ctrl-C while a batch runs.
static REQUESTED: AtomicBool = AtomicBool::new(false);
/// Batches running (nested: a command's and its driver's): while not 0, Ctrl-C asks them to
/// stop instead of ending the process.
static IN_BATCH: AtomicUsize = AtomicUsize::new(0);

/// The batch stopped on Ctrl-C; `0` threads of the run were not processed.
#[derive(Debug, thiserror::Error)]
#[error("interrupted: {0} threads not processed")]
pub struct Interrupted(pub usize);

extern "C" fn on_sigint(_: libc::c_int) {
    if IN_BATCH.load(Ordering::SeqCst) > 0 {
        REQUESTED.store(true, Ordering::SeqCst);
    } else {
        // SAFETY: _exit is async-signal-safe; it ends the process without unwinding.
        unsafe { libc::_exit(i32::from(crate::exit::INTERRUPTED)) }
    }
}

/// Installs the Ctrl-C handler (the binary does, once, at start).
pub fn install() {
    let handler: extern "C" fn(libc::c_int) = on_sigint;
    // SAFETY: the handler only touches atomics and calls _exit, both async-signal-safe.
    unsafe {
        libc::signal(libc::SIGINT, handler as libc::sighandler_t);
    }
}

/// Whether Ctrl-C asked the running batch to stop.
pub fn requested() -> bool {
    REQUESTED.load(Ordering::SeqCst)
}

/// While it lives, Ctrl-C asks the batch to stop ([`requested`]) rather than ending the
/// process.
pub struct Batch(());

impl Batch {
    /// A batch begins.
    pub fn enter() -> Batch {
        IN_BATCH.fetch_add(1, Ordering::SeqCst);
        Batch(())
    }
}

impl Drop for Batch {
    fn drop(&mut self) {
        IN_BATCH.fetch_sub(1, Ordering::SeqCst);
    }
}
