//! Which messages a removal takes.
//!
//! A selection (ids, indices, kinds, a text pattern, or everything) is widened so the result
//! stays valid for model providers: removing an AI message with tool calls also removes the
//! ToolMessages that answer them, and removing a ToolMessage also removes the AI message that
//! made the call (and with it that message's other tool answers). Each widening is reported.

use std::collections::BTreeSet;

use anyhow::{bail, Result};
use regex::Regex;

use crate::model::{Kind, Message};

/// What to remove.
#[derive(Debug, Default)]
pub struct Selector {
    /// Message ids.
    pub ids: Vec<String>,
    /// Positions; negative counts from the end (-1 is the last message).
    pub indices: Vec<i64>,
    /// Message kinds.
    pub kinds: Vec<Kind>,
    /// A pattern matched against what a person calls the message: its text, and its tool
    /// calls' names and arguments.
    pub pattern: Option<Regex>,
    /// Every message.
    pub all: bool,
}

/// The removal decided for one thread.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Removal {
    /// Indices removed, sorted.
    pub remove: BTreeSet<usize>,
    /// What was added to keep tool-call pairs whole, for the user.
    pub notes: Vec<String>,
}

/// Resolves a selector against a message list. Unknown ids and out-of-range indices are errors.
pub fn select(msgs: &[Message], sel: &Selector) -> Result<Removal> {
    let n = msgs.len();
    let mut remove = BTreeSet::new();
    if sel.all {
        remove.extend(0..n);
    }
    for id in &sel.ids {
        match msgs.iter().position(|m| m.id() == Some(id.as_str())) {
            Some(i) => {
                remove.insert(i);
            }
            None => bail!("no message with id '{id}' in this thread (see `memctl dump`)"),
        }
    }
    for &idx in &sel.indices {
        let i = if idx < 0 { n as i64 + idx } else { idx };
        if i < 0 || i >= n as i64 {
            bail!("message index {idx} is out of range: the thread has {n} messages");
        }
        remove.insert(i as usize);
    }
    for (i, m) in msgs.iter().enumerate() {
        if sel.kinds.contains(&m.kind)
            || sel
                .pattern
                .as_ref()
                .is_some_and(|re| re.is_match(&m.searchable_text()))
        {
            remove.insert(i);
        }
    }
    let notes = close_tool_pairs(msgs, &mut remove);
    Ok(Removal { remove, notes })
}

/// Widens `remove` until no tool call is left without its answer and no answer without its call.
fn close_tool_pairs(msgs: &[Message], remove: &mut BTreeSet<usize>) -> Vec<String> {
    let mut notes = Vec::new();
    let label = |i: usize| {
        let m = &msgs[i];
        format!("#{i} {} {}", m.kind.type_str(), m.id().unwrap_or("(no id)"))
    };
    loop {
        let mut added = Vec::new();
        for &i in remove.iter() {
            let m = &msgs[i];
            if m.kind == Kind::Ai {
                let calls = m.tool_call_ids();
                for (j, other) in msgs.iter().enumerate() {
                    if other.kind == Kind::Tool
                        && !remove.contains(&j)
                        && other.tool_call_id().is_some_and(|c| calls.contains(&c))
                    {
                        added.push((
                            j,
                            format!(
                                "removed {} too: it answers a tool call of {}",
                                label(j),
                                label(i)
                            ),
                        ));
                    }
                }
            }
            if m.kind == Kind::Tool {
                if let Some(call) = m.tool_call_id() {
                    for (j, other) in msgs.iter().enumerate() {
                        if other.kind == Kind::Ai
                            && !remove.contains(&j)
                            && other.tool_call_ids().contains(&call)
                        {
                            added.push((
                                j,
                                format!(
                                    "removed {} too: it made the tool call {} answers",
                                    label(j),
                                    label(i)
                                ),
                            ));
                        }
                    }
                }
            }
        }
        if added.is_empty() {
            return notes;
        }
        for (j, note) in added {
            if remove.insert(j) {
                notes.push(note);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn thread() -> Vec<Message> {
        [
            json!({"role": "user", "content": "weather and sum?", "id": "h1"}),
            json!({"role": "assistant", "content": "", "id": "a1", "tool_calls": [
                {"name": "w", "args": {}, "id": "c1"}, {"name": "s", "args": {}, "id": "c2"}]}),
            json!({"role": "tool", "content": "sunny", "id": "t1", "tool_call_id": "c1"}),
            json!({"role": "tool", "content": "5", "id": "t2", "tool_call_id": "c2"}),
            json!({"role": "assistant", "content": "Sunny; 5. My password is hunter2", "id": "a2"}),
        ]
        .iter()
        .map(|j| Message::from_json(j).expect("message"))
        .collect()
    }

    #[test]
    fn removing_a_tool_answer_takes_the_whole_exchange() {
        let r = select(
            &thread(),
            &Selector {
                ids: vec!["t1".into()],
                ..Default::default()
            },
        )
        .expect("ok");
        assert_eq!(r.remove.into_iter().collect::<Vec<_>>(), vec![1, 2, 3]);
        assert_eq!(r.notes.len(), 2);
    }

    #[test]
    fn pattern_index_and_kind() {
        let msgs = thread();
        let sel = Selector {
            pattern: Some(Regex::new("hunter2").expect("re")),
            ..Default::default()
        };
        assert_eq!(
            select(&msgs, &sel)
                .expect("ok")
                .remove
                .into_iter()
                .collect::<Vec<_>>(),
            vec![4]
        );
        let sel = Selector {
            indices: vec![-1, 0],
            ..Default::default()
        };
        assert_eq!(
            select(&msgs, &sel)
                .expect("ok")
                .remove
                .into_iter()
                .collect::<Vec<_>>(),
            vec![0, 4]
        );
        let sel = Selector {
            kinds: vec![Kind::Tool],
            ..Default::default()
        };
        assert_eq!(select(&msgs, &sel).expect("ok").remove.len(), 3);
    }

    #[test]
    fn unknown_ids_and_indices_are_errors() {
        let msgs = thread();
        assert!(select(
            &msgs,
            &Selector {
                ids: vec!["zz".into()],
                ..Default::default()
            }
        )
        .is_err());
        assert!(select(
            &msgs,
            &Selector {
                indices: vec![5],
                ..Default::default()
            }
        )
        .is_err());
        assert!(select(
            &msgs,
            &Selector {
                indices: vec![-6],
                ..Default::default()
            }
        )
        .is_err());
    }
}
