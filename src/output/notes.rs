//! The one writer of stderr's notes: what a job, or a layer below, has to say while it runs,
//! escaped for the terminal at this one boundary.

use std::io::Write;

use anyhow::Result;
use indicatif::ProgressBar;

use crate::jobs::{Question, Sink};

/// Writes one note as `memctl: TEXT`, escaped (a stored id holding ESC cannot reach the
/// terminal).
pub fn stderr(text: &str) {
    let _ = writeln!(
        std::io::stderr(),
        "memctl: {}",
        super::sanitize::one_line(text)
    );
}

/// Writes one line of stderr as it is given, escaped: a note whose text names no program
/// (`threads list`'s `note: …` under its table).
pub fn line(text: &str) {
    let _ = writeln!(std::io::stderr(), "{}", super::sanitize::one_line(text));
}

/// The command line's sink: notes on stderr, the question on a terminal (not with `--yes`),
/// progress bars when stderr is a terminal and `--quiet` was not given.
#[derive(Debug, Clone, Copy, Default)]
pub struct Terminal {
    /// `--yes`: go ahead without asking.
    pub yes: bool,
    /// `--quiet`: no notes (errors still reach stderr as the run's closing line).
    pub quiet: bool,
}

impl Sink for Terminal {
    fn note(&self, text: &str) {
        if !self.quiet {
            stderr(text);
        }
    }

    fn confirm(&self, question: &Question) -> Result<()> {
        super::confirm::confirm(question, self.yes, false)
    }

    fn asks(&self) -> bool {
        super::confirm::asks(self.yes, false)
    }

    fn bar(&self, len: u64, what: &str) -> ProgressBar {
        super::progress::bar(len, what)
    }

    fn phase(&self, what: &str, message: &str) -> ProgressBar {
        super::progress::phase(what, message)
    }
}
