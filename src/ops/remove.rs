//! Which messages a removal takes.
//!
//! A selection (ids, indices, kinds, a text pattern, or everything) is widened so the result
//! stays valid for model providers: removing an AI message with tool calls also removes the
//! ToolMessages that answer them, and removing a ToolMessage also removes the AI message that
//! made the call (and with it that message's other tool answers). Each widening is reported.

use std::collections::{BTreeSet, HashMap, HashSet};

use anyhow::{bail, Result};

use crate::model::outline::Shape;
use crate::model::{Kind, Message};
use crate::ops::patterns::Patterns;

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
    /// calls' names and arguments (a message any of the patterns matches is taken).
    pub pattern: Option<Patterns>,
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
    select_with(msgs, sel, |i| Ok(msgs[i].searchable_text()))
}

/// Resolves a selector against messages known by their [`Shape`] (outlines read in place, or
/// full views): `searchable(i)` gives what `--match` is matched against for message `i` (see
/// [`Message::searchable_text`]); it is asked only with a pattern, and only for messages not
/// already taken by their kind. Linear in the number of messages and tool calls.
pub fn select_with<M: Shape>(
    msgs: &[M],
    sel: &Selector,
    mut searchable: impl FnMut(usize) -> Result<String>,
) -> Result<Removal> {
    let n = msgs.len();
    let mut remove = BTreeSet::new();
    if sel.all {
        remove.extend(0..n);
    }
    if !sel.ids.is_empty() {
        // The first message with each id, as a scan from the start finds it.
        let mut first: HashMap<&str, usize> = HashMap::with_capacity(n);
        for (i, m) in msgs.iter().enumerate() {
            if let Some(id) = m.id() {
                first.entry(id).or_insert(i);
            }
        }
        for id in &sel.ids {
            match first.get(id.as_str()) {
                Some(&i) => {
                    remove.insert(i);
                }
                None => bail!("no message with id '{id}' in this thread (see `memctl dump`)"),
            }
        }
    }
    for &idx in &sel.indices {
        let i = if idx < 0 { n as i64 + idx } else { idx };
        if i < 0 || i >= n as i64 {
            bail!("message index {idx} is out of range: the thread has {n} messages");
        }
        remove.insert(i as usize);
    }
    if !sel.kinds.is_empty() || sel.pattern.is_some() {
        for (i, m) in msgs.iter().enumerate() {
            let taken = sel.kinds.contains(&m.kind())
                || match &sel.pattern {
                    Some(p) => p.is_match(&searchable(i)?),
                    None => false,
                };
            if taken {
                remove.insert(i);
            }
        }
    }
    let notes = close_tool_pairs(msgs, &mut remove);
    Ok(Removal { remove, notes })
}

/// Widens `remove` until no tool call is left without its answer and no answer without its call.
///
/// The widening runs in rounds, as a fixed point: each round looks at the messages the
/// previous round added (the selection itself in the first), in order, and takes the tool
/// answers of a removed AI message's calls and the AI messages that made a removed answer's
/// call. The notes say why each message was added, in that order (the first reason found
/// wins). Tool-call ids are looked up in hash maps, and each call id is followed at most once
/// from each side: once its answers (or makers) are taken they are all removed, so following
/// it again finds nothing new.
fn close_tool_pairs<M: Shape>(msgs: &[M], remove: &mut BTreeSet<usize>) -> Vec<String> {
    let label = |i: usize| {
        let m = &msgs[i];
        format!(
            "#{i} {} {}",
            m.kind().type_str(),
            m.id().unwrap_or("(no id)")
        )
    };
    // Who made and who answers each tool call, in message order.
    let mut makers: HashMap<&str, Vec<usize>> = HashMap::new();
    let mut answers: HashMap<&str, Vec<usize>> = HashMap::new();
    for (j, m) in msgs.iter().enumerate() {
        match m.kind() {
            Kind::Ai => {
                for call in m.tool_call_ids() {
                    let list = makers.entry(call).or_default();
                    if list.last() != Some(&j) {
                        list.push(j);
                    }
                }
            }
            Kind::Tool => {
                if let Some(call) = m.tool_call_id() {
                    answers.entry(call).or_default().push(j);
                }
            }
            _ => {}
        }
    }
    let mut answers_taken: HashSet<&str> = HashSet::new();
    let mut makers_taken: HashSet<&str> = HashSet::new();
    let mut notes = Vec::new();
    let mut frontier: Vec<usize> = remove.iter().copied().collect();
    while !frontier.is_empty() {
        let mut added: Vec<(usize, String)> = Vec::new();
        for &i in &frontier {
            let m = &msgs[i];
            if m.kind() == Kind::Ai {
                let mut found: Vec<usize> = Vec::new();
                for call in m.tool_call_ids() {
                    if answers_taken.insert(call) {
                        found.extend(answers.get(call).into_iter().flatten());
                    }
                }
                found.sort_unstable();
                found.dedup();
                for j in found.into_iter().filter(|j| !remove.contains(j)) {
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
            if m.kind() == Kind::Tool {
                let Some(call) = m.tool_call_id() else {
                    continue;
                };
                if !makers_taken.insert(call) {
                    continue;
                }
                for &j in makers.get(call).into_iter().flatten() {
                    if !remove.contains(&j) {
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
        frontier.clear();
        for (j, note) in added {
            if remove.insert(j) {
                notes.push(note);
                frontier.push(j);
            }
        }
        frontier.sort_unstable();
    }
    notes
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
            pattern: Some(Patterns::one(regex::Regex::new("hunter2").expect("re"))),
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

    /// The widening as it was first written (every round rescans every removed message
    /// against every message): the reference the linear version must equal, notes included.
    fn close_tool_pairs_reference(msgs: &[Message], remove: &mut BTreeSet<usize>) -> Vec<String> {
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

    /// The pairing check as it was first written (quadratic), for comparison.
    fn check_reference(msgs: &[&Message]) -> std::result::Result<(), String> {
        for (i, m) in msgs.iter().enumerate() {
            if m.kind == Kind::Tool {
                let call = m.tool_call_id().unwrap_or("");
                if !msgs[..i]
                    .iter()
                    .any(|a| a.kind == Kind::Ai && a.tool_call_ids().contains(&call))
                {
                    return Err(format!(
                        "the result would leave a ToolMessage without the AI tool call '{call}'"
                    ));
                }
            }
            if m.kind == Kind::Ai {
                for call in m.tool_call_ids() {
                    if !msgs[i + 1..]
                        .iter()
                        .any(|t| t.kind == Kind::Tool && t.tool_call_id() == Some(call))
                    {
                        return Err(format!(
                            "the result would leave the tool call '{call}' without its ToolMessage"
                        ));
                    }
                }
            }
        }
        Ok(())
    }

    /// Random threads with shared, repeated, missing and dangling call ids and messages
    /// without ids.
    fn random_thread(seed: u64, n: usize) -> Vec<Message> {
        let mut state = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        let mut next = move |k: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % k
        };
        (0..n)
            .map(|i| {
                let id = if next(10) == 0 {
                    serde_json::Value::Null
                } else {
                    json!(format!("m{}", next(n as u64 + 3)))
                };
                let j = match next(4) {
                    0 => json!({"role": "user", "content": "q", "id": id}),
                    1 => {
                        let calls: Vec<serde_json::Value> = (0..next(4))
                            .map(
                                |_| json!({"name": "f", "args": {}, "id": format!("c{}", next(8))}),
                            )
                            .collect();
                        json!({"role": "assistant", "content": "", "id": id, "tool_calls": calls})
                    }
                    2 => json!({"role": "tool", "content": "r", "id": id,
                                "tool_call_id": format!("c{}", next(9))}),
                    _ => json!({"role": "assistant", "content": format!("a{i}"), "id": id}),
                };
                Message::from_json(&j).expect("message")
            })
            .collect()
    }

    #[test]
    fn linear_widening_equals_the_reference() {
        for seed in 1..400u64 {
            let msgs = random_thread(seed, 1 + (seed as usize % 40));
            let n = msgs.len();
            for pick in [0usize, 1, 2, 3] {
                let start: BTreeSet<usize> = (0..n).filter(|i| (i * 7 + pick) % 5 == 0).collect();
                let mut a = start.clone();
                let mut b = start.clone();
                let notes_a = close_tool_pairs(&msgs, &mut a);
                let notes_b = close_tool_pairs_reference(&msgs, &mut b);
                assert_eq!(a, b, "seed {seed} pick {pick}");
                assert_eq!(notes_a, notes_b, "seed {seed} pick {pick}");
            }
            let refs: Vec<&Message> = msgs.iter().collect();
            assert_eq!(
                crate::ops::edit::check_tool_pairs(&refs).map_err(|e| e.to_string()),
                check_reference(&refs),
                "seed {seed}"
            );
            // Checked after each kind of removal, as rm does.
            for kind in [Kind::Tool, Kind::Ai] {
                let sel = Selector {
                    kinds: vec![kind],
                    ..Default::default()
                };
                let r = select(&msgs, &sel).expect("ok");
                let kept: Vec<&Message> = (0..n)
                    .filter(|i| !r.remove.contains(i))
                    .map(|i| &msgs[i])
                    .collect();
                assert_eq!(
                    crate::ops::edit::check_tool_pairs(&kept).map_err(|e| e.to_string()),
                    check_reference(&kept),
                    "seed {seed}"
                );
            }
        }
    }

    #[test]
    fn ids_find_the_first_message_with_that_id() {
        let msgs: Vec<Message> = [
            json!({"role": "user", "content": "a", "id": "x"}),
            json!({"role": "user", "content": "b", "id": "x"}),
        ]
        .iter()
        .map(|j| Message::from_json(j).expect("message"))
        .collect();
        let sel = Selector {
            ids: vec!["x".into()],
            ..Default::default()
        };
        assert_eq!(
            select(&msgs, &sel)
                .expect("ok")
                .remove
                .into_iter()
                .collect::<Vec<_>>(),
            vec![0]
        );
    }
}
