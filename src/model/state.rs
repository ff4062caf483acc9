//! What a thread is waiting on: next tasks and pending interrupts (LangGraph's
//! `_prepare_state_snapshot`, read from the latest checkpoint and its pending writes).

use serde_json::Value as Json;

use crate::codec::{ext, json::to_json, Decoded, Value};

use super::checkpoint::Checkpoint;

/// Channels whose writes do not make a task "finished" (`read_task_statuses`).
const NON_OUTPUT_CHANNELS: [&str; 4] = [
    "__error__",
    "__error_source_node__",
    "__interrupt__",
    "__resume__",
];

/// One decoded row of the `writes` table.
#[derive(Debug, Clone)]
pub struct PendingWrite {
    /// The task that made the write.
    pub task_id: String,
    /// The task's path (`~__pregel_pull, node`); empty in the 2.x schema.
    pub task_path: String,
    /// Position within the task (negative for special channels).
    pub idx: i64,
    /// The channel written.
    pub channel: String,
    /// The decoded value.
    pub value: Decoded,
}

/// An interrupt a thread is paused on.
#[derive(Debug, Clone, PartialEq)]
pub struct PendingInterrupt {
    /// The interrupt id (what `Command(resume={id: …})` names).
    pub id: Option<String>,
    /// The value passed to `interrupt()`, as JSON.
    pub value: Json,
    /// The node that raised it, when the write's task path says.
    pub node: Option<String>,
}

/// The work a thread's latest checkpoint still has to do.
#[derive(Debug, Clone, Default)]
pub struct PendingWork {
    /// Nodes that run on the next `invoke` (LangGraph's `StateSnapshot.next`).
    pub next: Vec<String>,
    /// Interrupts the thread is paused on.
    pub interrupts: Vec<PendingInterrupt>,
    /// How many write rows the checkpoint has.
    pub writes: usize,
}

impl PendingWork {
    /// True when the thread can be edited like `update_state` on a finished run: nothing
    /// scheduled, no interrupt, no writes.
    pub fn is_idle(&self) -> bool {
        self.next.is_empty() && self.interrupts.is_empty() && self.writes == 0
    }
}

/// The node a pull task path names (`~__pregel_pull, node`).
fn pull_node(task_path: &str) -> Option<&str> {
    task_path
        .strip_prefix("~__pregel_pull, ")
        .map(|rest| rest.split(", ").next().unwrap_or(rest))
}

/// Computes the next tasks and pending interrupts of a checkpoint.
pub fn pending_work(cp: &Checkpoint, writes: &[PendingWrite]) -> PendingWork {
    let versions = cp.channel_versions();
    let mut next: Vec<String> = Vec::new();
    // PUSH tasks: one per Send waiting in __pregel_tasks.
    next.extend(cp.pending_sends());
    // PULL tasks: a trigger channel holds a value newer than the node has seen.
    for (channel, _) in cp.channel_values() {
        let node = if channel == "__start__" {
            "__start__"
        } else if let Some(n) = channel.strip_prefix("branch:to:") {
            n
        } else {
            continue;
        };
        let version = versions
            .iter()
            .find(|(k, _)| k == channel)
            .map(|(_, v)| v.as_str());
        let runs = match cp.versions_seen(node) {
            None => true,
            Some(seen) => {
                let seen_v = seen
                    .iter()
                    .find(|(k, _)| k == channel)
                    .map_or("", |(_, v)| v.as_str());
                version.is_some_and(|v| version_gt(v, seen_v))
            }
        };
        if runs && !next.iter().any(|n| n == node) {
            next.push(node.to_owned());
        }
    }
    // Tasks with an output write are finished: they are not in `next`.
    let finished_tasks: Vec<&str> = writes
        .iter()
        .filter(|w| !NON_OUTPUT_CHANNELS.contains(&w.channel.as_str()))
        .map(|w| w.task_id.as_str())
        .collect();
    let finished_nodes: Vec<&str> = writes
        .iter()
        .filter(|w| finished_tasks.contains(&w.task_id.as_str()))
        .filter_map(|w| pull_node(&w.task_path))
        .collect();
    next.retain(|n| !finished_nodes.contains(&n.as_str()));

    let mut interrupts = Vec::new();
    for w in writes.iter().filter(|w| w.channel == "__interrupt__") {
        if finished_tasks.contains(&w.task_id.as_str()) {
            continue;
        }
        let Some(value) = w.value.as_msgpack() else {
            continue;
        };
        let items: Vec<&Value> = match value {
            Value::Array(a) => a.items.iter().collect(),
            other => vec![other],
        };
        for item in items {
            interrupts.push(interrupt_of(item, pull_node(&w.task_path)));
        }
    }
    PendingWork {
        next,
        interrupts,
        writes: writes.len(),
    }
}

fn interrupt_of(item: &Value, node: Option<&str>) -> PendingInterrupt {
    let node = node.map(str::to_owned);
    let Some(fields) = item.as_ext().and_then(ext::argument) else {
        return PendingInterrupt {
            id: None,
            value: to_json(item),
            node,
        };
    };
    let id = fields.get("id").and_then(Value::as_str).map(str::to_owned);
    let value = fields.get("value").map_or(Json::Null, to_json);
    PendingInterrupt { id, value, node }
}

/// LangGraph compares SqliteSaver versions as strings; ints compare as numbers.
fn version_gt(a: &str, b: &str) -> bool {
    match (a.parse::<i64>(), b.parse::<i64>()) {
        (Ok(x), Ok(y)) => x > y,
        _ => a > b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_compare_like_langgraph() {
        assert!(version_gt(
            "00000000000000000000000000000003.0.5",
            "00000000000000000000000000000002.0.9"
        ));
        assert!(version_gt("00000000000000000000000000000002.0.1", ""));
        assert!(version_gt("10", "9"));
        assert!(!version_gt("2", "2"));
    }

    #[test]
    fn pull_paths_name_their_node() {
        assert_eq!(pull_node("~__pregel_pull, ask"), Some("ask"));
        assert_eq!(pull_node("~__pregel_push, 0, False"), None);
    }
}
