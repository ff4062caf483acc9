//! The wording of [`crate::read::Missing`]: what the database does not have, with the
//! stored ids made terminal-safe ([`super::human::id`]) and what to run instead.

use std::fmt;

use super::human::id as shown_id;
use crate::read::Missing;

impl fmt::Display for Missing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Missing::Thread { thread, near } if near.is_empty() => write!(
                f,
                "no thread '{}' in this database (see `memctl threads list`)",
                shown_id(thread)
            ),
            Missing::Thread { thread, near } => {
                let named: Vec<String> =
                    near.iter().map(|t| format!("'{}'", shown_id(t))).collect();
                write!(
                    f,
                    "no thread '{}' in this database; did you mean {}? (see `memctl threads list`)",
                    shown_id(thread),
                    named.join(" or ")
                )
            }
            Missing::Namespace {
                thread,
                ns,
                namespaces,
            } => {
                let shown: Vec<String> = namespaces
                    .iter()
                    .map(|n| format!("'{}'", shown_id(n)))
                    .collect();
                write!(
                    f,
                    "thread '{}' has no checkpoints in namespace '{}' (it has: {})",
                    shown_id(thread),
                    shown_id(ns),
                    shown.join(", ")
                )
            }
            Missing::NoCheckpoints { thread } => {
                write!(f, "thread '{}' has no checkpoints", shown_id(thread))
            }
            Missing::Checkpoint { thread, given } => write!(
                f,
                "thread '{}' has no checkpoint '{}' (see `memctl history --thread {}`)",
                shown_id(thread),
                shown_id(given),
                shown_id(thread)
            ),
            Missing::Ambiguous {
                thread,
                given,
                candidates,
                count,
            } => {
                let shown: Vec<String> = candidates.iter().map(|c| shown_id(c)).collect();
                write!(
                    f,
                    "checkpoint id '{}' is ambiguous in thread '{}': {} checkpoints start with it ({}{}); give more characters",
                    shown_id(given),
                    shown_id(thread),
                    count,
                    shown.join(", "),
                    if *count > 10 { ", …" } else { "" }
                )
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The wording is the one every command gave before the read layer, ids made
    /// terminal-safe (an escape sequence in a stored id cannot reach the terminal).
    #[test]
    fn missing_things_are_worded_with_safe_ids() {
        let thread = |near: &[&str]| Missing::Thread {
            thread: "t\u{1b}[2J".into(),
            near: near.iter().map(|s| s.to_string()).collect(),
        };
        assert_eq!(
            thread(&[]).to_string(),
            "no thread 't\\u{1b}[2J' in this database (see `memctl threads list`)"
        );
        assert_eq!(
            thread(&["T", "u"]).to_string(),
            "no thread 't\\u{1b}[2J' in this database; did you mean 'T' or 'u'? (see `memctl threads list`)"
        );
        let ambiguous = |count: usize| Missing::Ambiguous {
            thread: "t".into(),
            given: "1f".into(),
            candidates: vec!["1f0a".into(), "1f0b".into()],
            count,
        };
        assert_eq!(
            ambiguous(2).to_string(),
            "checkpoint id '1f' is ambiguous in thread 't': 2 checkpoints start with it (1f0a, 1f0b); give more characters"
        );
        assert!(ambiguous(11).to_string().contains("(1f0a, 1f0b, …)"));
        let ns = Missing::Namespace {
            thread: "t".into(),
            ns: "x".into(),
            namespaces: vec!["".into(), "sub:1".into()],
        };
        assert_eq!(
            ns.to_string(),
            "thread 't' has no checkpoints in namespace 'x' (it has: '', 'sub:1')"
        );
    }
}
