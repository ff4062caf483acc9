//! `memctl diff --thread T`: messages added / removed / changed and channels changed between
//! two checkpoints (default: the latest against its parent).

use std::io::Write;

use anyhow::Result;
use serde_json::{json, Value as Json};

use crate::cli::{DiffArgs, Format, GlobalArgs};
use crate::codec::{json::to_json, msgpack};
use crate::model::checkpoint::{brief_value, MESSAGES};
use crate::model::Message;
use crate::output::{self, human, sanitize::for_terminal};

use super::show::is_internal_channel;

/// What changed in the message list.
#[derive(Default)]
struct MessageDiff {
    added: Vec<Message>,
    removed: Vec<Message>,
    changed: Vec<(Message, Message)>,
}

/// A changed channel: name, brief before / after, full JSON before / after.
type ChannelChange = (String, Option<String>, Option<String>, Json, Json);

/// Runs `diff`.
pub fn run(g: &GlobalArgs, args: &DiffArgs, out: &mut dyn Write) -> Result<()> {
    let store = super::open_read_only(g)?;
    let thread = &args.thread.thread;
    let to = super::load_checkpoint(&store, thread, &g.ns, args.to.as_deref())?;
    let from_id = match &args.from {
        Some(id) => Some(id.clone()),
        None => to.row.parent_checkpoint_id.clone(),
    };
    let from = match &from_id {
        Some(id) => Some(super::load_checkpoint(&store, thread, &g.ns, Some(id))?),
        None => None,
    };
    let to_msgs = to.message_list()?;
    let from_msgs = match &from {
        Some(f) => f.message_list()?,
        None => Vec::new(),
    };
    let md = diff_messages(&from_msgs, &to_msgs);

    // Channels other than messages: compare encoded bytes.
    let mut channels: Vec<ChannelChange> = Vec::new();
    let to_values = to.checkpoint.channel_values();
    let from_values = from
        .as_ref()
        .map(|f| f.checkpoint.channel_values())
        .unwrap_or_default();
    let mut names: Vec<&str> = from_values
        .iter()
        .chain(to_values.iter())
        .map(|(k, _)| *k)
        .collect();
    names.dedup();
    let mut seen = std::collections::HashSet::new();
    for name in names {
        if name == MESSAGES || is_internal_channel(name) || !seen.insert(name) {
            continue;
        }
        let before = from_values
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| *v);
        let after = to_values.iter().find(|(k, _)| *k == name).map(|(_, v)| *v);
        let same = match (before, after) {
            (Some(a), Some(b)) => msgpack::encode(a) == msgpack::encode(b),
            (None, None) => true,
            _ => false,
        };
        if !same {
            channels.push((
                name.to_owned(),
                before.map(|v| brief_value(v, 120)),
                after.map(|v| brief_value(v, 120)),
                before.map_or(Json::Null, to_json),
                after.map_or(Json::Null, to_json),
            ));
        }
    }

    match output::resolve_format(g.format) {
        Format::Table => {
            let step = |c: Option<i64>| c.map_or("-".into(), |s| s.to_string());
            writeln!(
                out,
                "--- {} (step {})\n+++ {} (step {})",
                from_id.as_deref().unwrap_or("(nothing: first checkpoint)"),
                step(from.as_ref().and_then(|f| f.metadata.step())),
                to.row.checkpoint_id,
                step(to.metadata.step()),
            )?;
            let line = |m: &Message| {
                format!(
                    "[{}] {}{}",
                    m.kind.type_str(),
                    m.id()
                        .map(|i| format!("{} ", for_terminal(i)))
                        .unwrap_or_default(),
                    human::preview(&m.summary_text(), 70)
                )
            };
            if md.added.is_empty() && md.removed.is_empty() && md.changed.is_empty() {
                writeln!(out, "messages: unchanged ({})", to_msgs.len())?;
            } else {
                writeln!(out, "messages: {} → {}", from_msgs.len(), to_msgs.len())?;
            }
            for m in &md.removed {
                writeln!(out, "- {}", line(m))?;
            }
            for (a, b) in &md.changed {
                writeln!(
                    out,
                    "~ {}\n    was: {}",
                    line(b),
                    human::preview(&a.summary_text(), 70)
                )?;
            }
            for m in &md.added {
                writeln!(out, "+ {}", line(m))?;
            }
            for (name, before, after, _, _) in &channels {
                match (before, after) {
                    (None, Some(a)) => {
                        writeln!(out, "+ channel {}: {}", for_terminal(name), for_terminal(a))?
                    }
                    (Some(b), None) => {
                        writeln!(out, "- channel {}: {}", for_terminal(name), for_terminal(b))?
                    }
                    (Some(b), Some(a)) => writeln!(
                        out,
                        "~ channel {}: {} → {}",
                        for_terminal(name),
                        for_terminal(b),
                        for_terminal(a)
                    )?,
                    (None, None) => {}
                }
            }
        }
        format => {
            let dump = |m: &Message| Json::Object(m.fields.clone());
            let doc = json!({
                "thread_id": thread,
                "from": from_id,
                "to": to.row.checkpoint_id,
                "messages": {
                    "before": from_msgs.len(),
                    "after": to_msgs.len(),
                    "added": md.added.iter().map(dump).collect::<Vec<_>>(),
                    "removed": md.removed.iter().map(dump).collect::<Vec<_>>(),
                    "changed": md.changed.iter().map(|(a, b)| json!({"id": b.id(), "before": dump(a), "after": dump(b)})).collect::<Vec<_>>(),
                },
                "channels": channels.iter().map(|(name, _, _, b, a)| json!({"channel": name, "before": b, "after": a})).collect::<Vec<_>>(),
            });
            output::write_document(out, format, &doc)?;
        }
    }
    Ok(())
}

/// Messages are matched by id; messages without an id by position.
fn diff_messages(before: &[Message], after: &[Message]) -> MessageDiff {
    let key = |m: &Message, i: usize| m.id().map_or_else(|| format!("#{i}"), str::to_owned);
    let before_keys: Vec<String> = before.iter().enumerate().map(|(i, m)| key(m, i)).collect();
    let after_keys: Vec<String> = after.iter().enumerate().map(|(i, m)| key(m, i)).collect();
    let mut d = MessageDiff::default();
    for (i, m) in before.iter().enumerate() {
        match after_keys.iter().position(|k| *k == before_keys[i]) {
            None => d.removed.push(m.clone()),
            Some(j) if Json::Object(after[j].fields.clone()) != Json::Object(m.fields.clone()) => {
                d.changed.push((m.clone(), after[j].clone()));
            }
            Some(_) => {}
        }
    }
    for (j, m) in after.iter().enumerate() {
        if !before_keys.contains(&after_keys[j]) {
            d.added.push(m.clone());
        }
    }
    d
}
