//! Jobs: one per command, a request in, a report out.
//!
//! A job knows no clap type and writes nothing: the command line (`commands/`), `browse`
//! (`tui/`) and the MCP server build a [`Ctx`] and a request, run the job, and hand its
//! report to `output/`. What a job has to say while it runs (a note, a question before a
//! destructive change, progress) goes through the [`Sink`] its caller gives it.

pub mod batch;
pub mod copy;
pub mod diff;
pub mod dump;
pub mod export;
pub mod find;
pub mod forget;
pub mod gc;
pub mod history;
pub mod import;
pub mod migrate;
mod open;
pub mod prune;
pub mod rekey;
pub mod rm;
pub mod show;
pub mod stats;
pub mod store;
pub mod summarize;
pub mod threads;
pub mod tokens;
pub mod trim;
pub mod ttl;

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Result;
use indicatif::ProgressBar;

/// What every job is run with: the database and the options that hold for every command.
#[derive(Debug, Clone, Default)]
pub struct Ctx {
    /// The database (`--db` / `MEMCTL_DB`): a SQLite file or a PostgreSQL URL / DSN.
    pub db: Option<PathBuf>,
    /// The PostgreSQL schema (`--schema` / `MEMCTL_SCHEMA`).
    pub schema: Option<String>,
    /// The checkpoint namespace (`--ns`; empty: the root graph).
    pub ns: String,
    /// How long to wait for a lock the app holds (`--busy-timeout`).
    pub busy_timeout: Duration,
    /// The variable that holds the AES key (`--key-env`; `LANGGRAPH_AES_KEY` by default).
    pub key_env: Option<String>,
    /// `--quiet`: nothing but errors and the data asked for.
    pub quiet: bool,
    /// The clock's reading, for tests (`--now`, hidden).
    pub now: Option<String>,
}

/// What a command that needs a database says without one (a usage error, exit 2).
pub const NO_DB: &str = "no database given: pass --db PATH or set MEMCTL_DB";

/// What a destructive job is about to do, for the question its caller may ask first.
#[derive(Debug, Clone)]
pub struct Question {
    /// The command's own name (`prune`).
    pub command: &'static str,
    /// What it will do, counts included: `delete 14 threads (2.1 MiB)`.
    pub action: String,
    /// The threads concerned (a front end names the first few).
    pub threads: Vec<String>,
}

/// The answer to a [`Question`] was not yes: nothing was written (exit code 1).
#[derive(Debug, thiserror::Error)]
#[error("nothing done (the question was not answered yes)")]
pub struct Declined;

/// Where a running job's notes, questions and progress go. The command line writes notes to
/// stderr (escaped), asks on a terminal and draws bars; `browse` shows notes in its status
/// line; the MCP server puts them in the tool's result.
pub trait Sink: Sync {
    /// A note or a warning for the person running the job: one line, unescaped.
    fn note(&self, text: &str);

    /// Asks before a destructive change: `Ok(())` goes ahead, [`Declined`] writes nothing.
    /// Never called on a dry run.
    fn confirm(&self, question: &Question) -> Result<()>;

    /// Whether [`Sink::confirm`] would stop to ask (a job that must gather more to ask
    /// skips that work when no one is asked).
    fn asks(&self) -> bool {
        false
    }

    /// A progress bar for `len` items of `what` (hidden where nothing is drawn).
    fn bar(&self, len: u64, what: &str) -> ProgressBar {
        let _ = (len, what);
        ProgressBar::hidden()
    }

    /// A spinner for one phase of unknown length (hidden where nothing is drawn).
    fn phase(&self, what: &str, message: &str) -> ProgressBar {
        let _ = (what, message);
        ProgressBar::hidden()
    }
}

/// A sink that keeps its notes and goes ahead without asking (a front end that has no one to
/// ask, or a job run inside another).
#[derive(Debug, Default)]
pub struct Collect {
    notes: std::sync::Mutex<Vec<String>>,
}

impl Collect {
    /// The notes received so far, in order.
    pub fn notes(&self) -> Vec<String> {
        self.notes.lock().map(|n| n.clone()).unwrap_or_default()
    }
}

impl Sink for Collect {
    fn note(&self, text: &str) {
        if let Ok(mut n) = self.notes.lock() {
            n.push(text.to_owned());
        }
    }

    fn confirm(&self, _question: &Question) -> Result<()> {
        Ok(())
    }
}

/// A vacuum that found the database busy makes the run a partial success (exit code 3):
/// the work before it is committed. Other errors pass as they are.
pub fn partial_if_busy(e: anyhow::Error) -> anyhow::Error {
    match e.downcast::<crate::storage::VacuumBusy>() {
        Ok(busy) => crate::exit::Partial(busy.0).into(),
        Err(e) => e,
    }
}

/// Ends a whole-file read whose `failed` threads (thread, why) could not be read: the
/// others were listed; exit code 3 with one line naming them and saying `how` they were shown
/// (exit 1 when no thread could be read).
pub fn report_unreadable(failed: &[(String, String)], total: usize, how: &str) -> Result<()> {
    if failed.is_empty() {
        return Ok(());
    }
    let named: Vec<String> = failed
        .iter()
        .map(|(thread, why)| format!("thread '{}': {why}", crate::text::human::id(thread)))
        .collect();
    if failed.len() == total {
        // Nothing could be read: not a partial success, an error (exit 1).
        anyhow::bail!("{}", named.join("; "));
    }
    Err(crate::exit::Partial(format!(
        "{} of {total} threads could not be read and {how}: {}",
        failed.len(),
        named.join("; ")
    ))
    .into())
}
