//! What an edit did to one thread: its status, counts before and after, the messages it
//! removed and notes, as data that `output` renders.

use serde::Serialize;

/// What an edit did to a thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Status {
    /// Nothing to change.
    Unchanged,
    /// Not safe to edit, or moved while memctl worked (see the notes); nothing written.
    Skipped,
    /// An error; nothing written for this thread.
    Failed,
    /// Planned, not yet written (never reported).
    Planned,
    /// Dry run: would be rewritten.
    WouldRewrite,
    /// Dry run: would be summarized.
    WouldSummarize,
    /// The new checkpoint was written.
    Rewritten,
    /// Written, and the removed messages scrubbed from the thread's history.
    Purged,
    /// Written, but a removed text is still somewhere in the database (a failure).
    PurgeIncomplete,
    /// Written with a summary in place of the older messages.
    Summarized,
    /// Written, but a live app committed a checkpoint after it: not in effect.
    Superseded,
}

impl Status {
    /// The word reports show.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Unchanged => "unchanged",
            Status::Skipped => "skipped",
            Status::Failed => "failed",
            Status::Planned => "planned",
            Status::WouldRewrite => "would rewrite",
            Status::WouldSummarize => "would summarize",
            Status::Rewritten => "rewritten",
            Status::Purged => "purged",
            Status::PurgeIncomplete => "purge incomplete",
            Status::Summarized => "summarized",
            Status::Superseded => "superseded",
        }
    }

    /// True when the edit failed (nothing, or not all of it, done).
    pub fn is_failure(self) -> bool {
        matches!(self, Status::Failed | Status::PurgeIncomplete)
    }

    /// True when memctl committed a new checkpoint for the thread.
    pub fn wrote(self) -> bool {
        matches!(
            self,
            Status::Rewritten | Status::Purged | Status::PurgeIncomplete | Status::Summarized
        )
    }
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Status {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// A message an edit removes, as reports show it.
#[derive(Debug, Clone, Serialize)]
pub struct Removed {
    /// Its position in the thread's message list.
    pub index: usize,
    /// Its kind (`human`, `ai`, …).
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// Its id.
    pub id: Option<String>,
    /// The head of its text, raw (the output layer cuts it to a safe one-line preview).
    pub text: String,
}

/// What happened to one thread.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The thread.
    pub thread_id: String,
    /// What happened.
    pub status: Status,
    /// Why it was skipped, or notes about the window.
    pub notes: Vec<String>,
    /// False for a thread skipped or failed before its messages were counted: its
    /// `messages` and `tokens` are unknown and shown as `-` (JSON: null).
    pub counted: bool,
    /// Messages before and after.
    pub messages: (usize, usize),
    /// Tokens before and after, by [`Outcome::counter`].
    pub tokens: (u64, u64),
    /// The counter of `tokens`: `None` for LangChain's approximate count; the name of the
    /// counter a token budget was applied with (`o200k`, `cl100k`) otherwise.
    pub counter: Option<String>,
    /// The removed messages.
    pub removed: Vec<Removed>,
    /// The new checkpoint, when one was written.
    pub checkpoint_id: Option<String>,
    /// Tokens sent to / received from a model endpoint, as it reported them.
    pub endpoint_tokens: Option<(u64, u64)>,
}

impl Outcome {
    /// A thread whose edit failed; nothing was written for it.
    pub fn failed(thread_id: &str, why: String) -> Outcome {
        Outcome {
            status: Status::Failed,
            ..Outcome::skipped(thread_id, why)
        }
    }

    /// A thread left alone, with the reason.
    pub fn skipped(thread_id: &str, why: String) -> Outcome {
        Outcome {
            thread_id: thread_id.to_owned(),
            status: Status::Skipped,
            notes: vec![why],
            counted: false,
            messages: (0, 0),
            tokens: (0, 0),
            removed: vec![],
            checkpoint_id: None,
            endpoint_tokens: None,
            counter: None,
        }
    }
}

impl Outcome {
    /// The name of the counter of [`Outcome::tokens`] (`approx`, `o200k`, `cl100k`).
    pub fn counter_name(&self) -> &str {
        self.counter.as_deref().unwrap_or("approx")
    }
}
