//! Which messages a trim keeps.
//!
//! The rule is LangChain's `trim_messages(strategy="last", start_on="human",
//! include_system=True)`: a leading SystemMessage always stays (and counts toward the limit),
//! then the newest messages that fit, cut so the window starts on a human message — which
//! keeps every ToolMessage with the AI message that called it. memctl adds two things:
//! `keep_first` keeps the first non-system message too (when it is a human message), and a
//! trim never leaves only the system message: if the rule would, it keeps from the latest
//! human message instead.

use crate::model::outline::Shape;
use crate::model::Kind;

/// How much to keep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// At most this many messages (`token_counter=len`).
    Messages(u64),
    /// At most `max` tokens by the given per-message counts, a list costing `overhead` more
    /// (3 for OpenAI's reply priming, 0 for the approximate counter).
    Tokens {
        /// The budget.
        max: u64,
        /// What any list costs on top of its messages.
        overhead: u64,
    },
}

/// The chosen window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Window {
    /// Indices of the kept messages, in order.
    pub keep: Vec<usize>,
    /// Things the user should know (fallbacks, ignored options).
    pub notes: Vec<String>,
}

impl Window {
    /// True when every message is kept (nothing to do).
    pub fn keeps_all(&self, len: usize) -> bool {
        self.keep.len() == len
    }
}

fn is_human(m: &impl Shape) -> bool {
    // start_on="human" matches `message.type == "human"`: not HumanMessageChunk.
    m.kind() == Kind::Human && !m.chunk()
}

/// Chooses the window. `costs[i]` is the token count of message `i` (ignored for
/// [`Limit::Messages`]).
pub fn trim_window<M: Shape>(msgs: &[M], costs: &[u64], limit: Limit, keep_first: bool) -> Window {
    let n = msgs.len();
    let (max, overhead, cost): (u64, u64, Box<dyn Fn(usize) -> u64>) = match limit {
        Limit::Messages(max) => (max, 0, Box::new(|_| 1)),
        Limit::Tokens { max, overhead } => (
            max,
            overhead,
            Box::new(|i| costs.get(i).copied().unwrap_or(0)),
        ),
    };
    let mut notes = Vec::new();
    let has_system = n > 0 && msgs[0].kind() == Kind::System;
    let start = usize::from(has_system);
    let budget = if has_system {
        max.saturating_sub(cost(0))
    } else {
        max
    };

    // The newest messages that fit, then cut forward to a human message.
    let total: u64 = (start..n).map(&cost).sum();
    let mut first_kept = if total + overhead <= budget {
        start
    } else {
        let mut used = overhead;
        let mut k = n;
        while k > start && used + cost(k - 1) <= budget {
            used += cost(k - 1);
            k -= 1;
        }
        k
    };
    while first_kept < n && !is_human(&msgs[first_kept]) {
        first_kept += 1;
    }

    if first_kept >= n && n > start {
        match (start..n).rev().find(|&i| is_human(&msgs[i])) {
            Some(last_human) => {
                notes.push(format!(
                    "the last messages within the limit hold no human message; kept from the latest \
                     human message instead ({} messages)",
                    n - last_human
                ));
                first_kept = last_human;
            }
            None => {
                notes.push("no human message to start a window on; nothing trimmed".into());
                first_kept = start;
            }
        }
    }

    let mut keep: Vec<usize> = Vec::with_capacity(n - first_kept + 2);
    if has_system {
        keep.push(0);
    }
    if keep_first && start < first_kept {
        if is_human(&msgs[start]) {
            keep.push(start);
        } else {
            notes.push("--keep-first ignored: the first message is not a human message".into());
        }
    }
    keep.extend(first_kept..n);
    Window { keep, notes }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Message;
    use serde_json::json;

    fn m(kind: &str, id: &str) -> Message {
        let j = match kind {
            "t" => json!({"role": "assistant", "content": "", "id": id,
                          "tool_calls": [{"name": "f", "args": {}, "id": format!("c{id}")}]}),
            "tm" => {
                json!({"role": "tool", "content": "r", "id": id, "tool_call_id": format!("c{id}")})
            }
            "h" => json!({"role": "user", "content": "x", "id": id}),
            "a" => json!({"role": "assistant", "content": "y", "id": id}),
            "s" => json!({"role": "system", "content": "z", "id": id}),
            _ => unreachable!(),
        };
        Message::from_json(&j).expect("message")
    }

    fn msgs(spec: &str) -> Vec<Message> {
        spec.split_whitespace()
            .map(|tok| {
                let kind = tok.trim_end_matches(|c: char| c.is_ascii_digit());
                m(kind, tok)
            })
            .collect()
    }

    fn ids(all: &[Message], w: &Window) -> String {
        w.keep
            .iter()
            .map(|&i| all[i].id().unwrap_or("?"))
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn matches_langchain_verified_runs() {
        // langgraph-format.md §2.5, token_counter=len.
        let a = msgs("h1 a2 h3 a4 h5");
        assert_eq!(
            ids(&a, &trim_window(&a, &[], Limit::Messages(4), false)),
            "h3 a4 h5"
        );
        let b = msgs("s0 h1 a2 h3 a4 h5");
        assert_eq!(
            ids(&b, &trim_window(&b, &[], Limit::Messages(4), false)),
            "s0 h3 a4 h5"
        );
        assert_eq!(
            ids(&b, &trim_window(&b, &[], Limit::Messages(100), false)),
            "s0 h1 a2 h3 a4 h5"
        );
        let t = msgs("s0 h1 t2 tm2 a3 h4 t5 tm5 a6");
        for max in 5..=7 {
            assert_eq!(
                ids(&t, &trim_window(&t, &[], Limit::Messages(max), false)),
                "s0 h4 t5 tm5 a6"
            );
        }
    }

    #[test]
    fn never_leaves_only_the_system_message() {
        // LangChain gives [s0] for max 1..4; memctl keeps back to the latest human message.
        let t = msgs("s0 h1 t2 tm2 a3 h4 t5 tm5 a6");
        let w = trim_window(&t, &[], Limit::Messages(2), false);
        assert_eq!(ids(&t, &w), "s0 h4 t5 tm5 a6");
        assert_eq!(w.notes.len(), 1);
    }

    #[test]
    fn token_budget_uses_per_message_costs() {
        // §2.5 with the approximate counter: [6,5,21,5,6,5,21,5,6], include_system, max 40 → [s0]
        // in LangChain (budget 34, h4 does not fit); memctl falls back to the latest human.
        let t = msgs("s0 h1 t2 tm2 a3 h4 t5 tm5 a6");
        let costs = [6, 5, 21, 5, 6, 5, 21, 5, 6];
        let w = trim_window(
            &t,
            &costs,
            Limit::Tokens {
                max: 40,
                overhead: 0,
            },
            false,
        );
        assert_eq!(ids(&t, &w), "s0 h4 t5 tm5 a6");
        let w = trim_window(
            &t,
            &costs,
            Limit::Tokens {
                max: 1000,
                overhead: 0,
            },
            false,
        );
        assert!(w.keeps_all(t.len()));
    }

    #[test]
    fn keep_first_keeps_the_seed_message() {
        let a = msgs("s0 h1 a2 h3 a4 h5 a6");
        let w = trim_window(&a, &[], Limit::Messages(3), true);
        assert_eq!(ids(&a, &w), "s0 h1 h5 a6");
        let b = msgs("a1 h2 a3 h4 a5");
        let w = trim_window(&b, &[], Limit::Messages(2), true);
        assert_eq!(ids(&b, &w), "h4 a5");
        assert!(w.notes[0].contains("--keep-first ignored"));
    }
}
