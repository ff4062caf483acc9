//! The question a destructive command asks on a terminal before it writes (`prune`, `gc`, `store rm`,
//! `forget`, `rm --purge`, `rekey`).
//!
//! The rule: when stdin and stdout are both a terminal, the command shows what it will do
//! (counts, the first few thread ids) and asks `[y/N]`; only `y` or `yes` goes ahead.
//! `--yes` skips the question, `--dry-run` never asks, and a command not on a terminal (cron,
//! a pipe, a script) never asks and goes ahead as before. Anything else, an empty line or the
//! end of input included, writes nothing: the run ends with [`Declined`] (exit code 1, one
//! line "nothing done").

use std::io::{BufRead, IsTerminal, Write};

use anyhow::Result;

use super::human;

/// How many thread ids the question names before "and N more".
pub const SHOWN_IDS: usize = 5;

pub use crate::jobs::{Declined, Question};

impl Question {
    /// The text shown above the prompt: the action and the first ids, escaped for the terminal.
    pub fn text(&self) -> String {
        // The action may quote a stored name (a job writes it unescaped).
        let action = super::sanitize::one_line(&self.action);
        let mut text = format!("memctl {} will {action}", self.command);
        if !self.threads.is_empty() {
            let shown: Vec<String> = self
                .threads
                .iter()
                .take(SHOWN_IDS)
                .map(|t| human::id(t))
                .collect();
            text.push_str(": ");
            text.push_str(&shown.join(", "));
            if self.threads.len() > SHOWN_IDS {
                text.push_str(&format!(" and {} more", self.threads.len() - SHOWN_IDS));
            }
        }
        text
    }
}

/// Whether the question is asked at all: not with `--yes` or `--dry-run`, and only when
/// stdin and stdout are both a terminal.
pub fn asks(yes: bool, dry_run: bool) -> bool {
    !yes && !dry_run && std::io::stdin().is_terminal() && std::io::stdout().is_terminal()
}

/// Asks `question` when [`asks`] says so and returns `Ok(())` to go ahead; a refusal is
/// [`Declined`]. The question goes to stderr when it is a terminal, else to stdout (which is
/// one, or no question is asked).
pub fn confirm(question: &Question, yes: bool, dry_run: bool) -> Result<()> {
    if !asks(yes, dry_run) {
        return Ok(());
    }
    let prompt = format!("{}\nProceed? [y/N] ", question.text());
    if std::io::stderr().is_terminal() {
        let mut err = std::io::stderr().lock();
        err.write_all(prompt.as_bytes())?;
        err.flush()?;
    } else {
        let mut out = std::io::stdout().lock();
        out.write_all(prompt.as_bytes())?;
        out.flush()?;
    }
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer)?;
    if is_yes(&answer) {
        Ok(())
    } else {
        Err(Declined.into())
    }
}

/// `y` or `yes`, in any case, with surrounding blanks: the only answers that go ahead.
pub fn is_yes(answer: &str) -> bool {
    matches!(answer.trim().to_lowercase().as_str(), "y" | "yes")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_y_and_yes_go_ahead() {
        for yes in ["y\n", "Y", " yes \n", "YES"] {
            assert!(is_yes(yes), "{yes:?}");
        }
        for no in ["", "\n", "n", "no", "yep", "y y", "ja"] {
            assert!(!is_yes(no), "{no:?}");
        }
    }

    #[test]
    fn the_question_names_the_first_ids_and_counts_the_rest() {
        let q = Question {
            command: "prune",
            action: "delete 7 threads".into(),
            threads: (1..=7).map(|i| format!("t{i}")).collect(),
        };
        assert_eq!(
            q.text(),
            "memctl prune will delete 7 threads: t1, t2, t3, t4, t5 and 2 more"
        );
        let q = Question {
            threads: vec!["a\u{1b}[2Jb".into()],
            ..q
        };
        assert!(!q.text().contains('\u{1b}'), "{}", q.text());
    }

    #[test]
    fn a_dry_run_or_yes_never_asks() {
        assert!(!asks(true, false));
        assert!(!asks(false, true));
    }
}
