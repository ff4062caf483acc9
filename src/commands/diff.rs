//! `memctl diff --thread T`: messages added / removed / changed and channels changed between
//! two checkpoints (default: the latest against its parent).
//!
//! Messages are matched by id (by position when they have none) from their stored bytes: a
//! matched pair whose bytes are equal is unchanged; only messages that were added, removed or
//! whose bytes differ are decoded, one at a time, so a long thread is never held as views.

use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::ops::Range;

use anyhow::Result;
use serde_json::{json, Value as Json};

use crate::cli::{DiffArgs, Format, GlobalArgs};
use crate::codec::{json::to_json, msgpack};
use crate::model::checkpoint::{brief_value, StoredList, MESSAGES};
use crate::model::Message;
use crate::output::{
    self, human,
    sanitize::{for_terminal, one_line},
};

use super::dump::{element_bytes, placeholder, write_streamed};
use super::show::is_internal_channel;
use crate::par::par_in_order;

/// One side of the diff: a stored message list and where each message is.
struct Side<'a> {
    list: Option<&'a StoredList>,
    spans: Vec<Range<usize>>,
}

impl Side<'_> {
    fn len(&self) -> usize {
        self.spans.len()
    }

    /// The stored bytes of message `i`.
    fn bytes(&self, i: usize) -> &[u8] {
        self.list
            .and_then(|l| l.bytes().get(self.spans[i].clone()))
            .unwrap_or_default()
    }

    /// The view of message `i`.
    fn message(&self, i: usize) -> Result<Message> {
        match self.list {
            Some(l) => l.message(i, &self.spans[i]),
            None => anyhow::bail!("no message {i}"),
        }
    }

    /// What messages are matched by: the id, or `#i` for a message without one.
    fn keys(&self) -> Result<Vec<String>> {
        par_in_order(self.len(), |i| {
            let id = match self.list {
                Some(l) => l.id(i, &self.spans[i])?,
                None => None,
            };
            Ok(id.unwrap_or_else(|| format!("#{i}")))
        })
        .collect()
    }
}

/// What changed in the message list: positions in the old and new lists.
#[derive(Default)]
struct MessageDiff {
    added: Vec<usize>,
    removed: Vec<usize>,
    changed: Vec<(usize, usize)>,
}

/// A channel (other than messages) whose value changed.
struct ChannelChange {
    /// The channel.
    name: String,
    /// One-line renderings of the values before and after (`None`: not set).
    brief: (Option<String>, Option<String>),
    /// The values before and after as JSON (null: not set).
    before: Json,
    after: Json,
}

/// Runs `diff`.
pub fn run(g: &GlobalArgs, args: &DiffArgs, out: &mut dyn Write) -> Result<()> {
    let store = super::open_read_only(g)?;
    let keys = super::keys(g);
    let thread = &args.thread.thread;
    let (to, to_stored, to_deltas) =
        super::show::load_shallow(&*store, &keys, thread, &g.ns, args.to.as_deref())?;
    let from_id = match &args.from {
        Some(id) => Some(super::resolve_checkpoint_id(&*store, thread, &g.ns, id)?),
        None => to.row.parent_checkpoint_id.clone(),
    };
    let from = match &from_id {
        Some(id) => Some(super::show::load_shallow(
            &*store,
            &keys,
            thread,
            &g.ns,
            Some(id),
        )?),
        None => None,
    };
    let side = |cp, stored| -> Result<Side<'_>> {
        let list = super::dump::message_list(cp, stored)?;
        let spans = match list {
            Some(l) => l.spans()?,
            None => vec![],
        };
        Ok(Side { list, spans })
    };
    let after = side(&to, &to_stored)?;
    let before = match &from {
        Some((cp, stored, _)) => side(cp, stored)?,
        None => Side {
            list: None,
            spans: vec![],
        },
    };
    let md = diff_messages(&before, &after)?;

    // Channels other than messages (as the state shows them: DeltaChannels rebuilt): compare
    // encoded bytes.
    let from_cp = from.as_ref().map(|(cp, _, _)| cp);
    let mut channels: Vec<ChannelChange> = Vec::new();
    let to_values = super::show::state_values(&to, &to_deltas);
    let from_values = from
        .as_ref()
        .map(|(f, _, deltas)| super::show::state_values(f, deltas))
        .unwrap_or_default();
    let mut names: Vec<&str> = from_values
        .iter()
        .chain(to_values.iter())
        .map(|(k, _)| *k)
        .collect();
    names.dedup();
    let mut seen = HashSet::new();
    for name in names {
        if name == MESSAGES || is_internal_channel(name) || !seen.insert(name) {
            continue;
        }
        let before = from_values
            .iter()
            .find(|(k, _)| *k == name)
            .and_then(|(_, v)| *v);
        let after = to_values
            .iter()
            .find(|(k, _)| *k == name)
            .and_then(|(_, v)| *v);
        let same = match (before, after) {
            (Some(a), Some(b)) => msgpack::encode(a) == msgpack::encode(b),
            (None, None) => true,
            _ => false,
        };
        if !same {
            channels.push(ChannelChange {
                name: name.to_owned(),
                brief: (
                    before.map(|v| brief_value(v, 120)),
                    after.map(|v| brief_value(v, 120)),
                ),
                before: before.map_or(Json::Null, to_json),
                after: after.map_or(Json::Null, to_json),
            });
        }
    }

    match output::resolve_format(g.format) {
        Format::Table => {
            let step = |c: Option<i64>| c.map_or("-".into(), |s| s.to_string());
            writeln!(
                out,
                "--- {} (step {})\n+++ {} (step {})",
                from_id
                    .as_deref()
                    .map_or("(nothing: first checkpoint)".into(), one_line),
                step(from_cp.and_then(|f| f.metadata.step())),
                one_line(&to.row.checkpoint_id),
                step(to.metadata.step()),
            )?;
            let line = |m: &Message| {
                format!(
                    "[{}] {}{}",
                    m.kind.type_str(),
                    m.id()
                        .map(|i| format!("{} ", one_line(i)))
                        .unwrap_or_default(),
                    human::preview(&m.summary_text(), 70)
                )
            };
            if md.added.is_empty() && md.removed.is_empty() && md.changed.is_empty() {
                writeln!(out, "messages: unchanged ({})", after.len())?;
            } else {
                writeln!(out, "messages: {} → {}", before.len(), after.len())?;
            }
            let removed = par_in_order(md.removed.len(), |k| {
                before.message(md.removed[k]).map(|m| line(&m))
            });
            for l in removed {
                writeln!(out, "- {}", l?)?;
            }
            for &(i, j) in &md.changed {
                let (a, b) = (before.message(i)?, after.message(j)?);
                writeln!(
                    out,
                    "~ {}\n    was: {}",
                    line(&b),
                    human::preview(&a.summary_text(), 70)
                )?;
            }
            let added = par_in_order(md.added.len(), |k| {
                after.message(md.added[k]).map(|m| line(&m))
            });
            for l in added {
                writeln!(out, "+ {}", l?)?;
            }
            for ChannelChange {
                name,
                brief: (before, after),
                ..
            } in &channels
            {
                match (before, after) {
                    (None, Some(a)) => {
                        writeln!(out, "+ channel {}: {}", one_line(name), for_terminal(a))?
                    }
                    (Some(b), None) => {
                        writeln!(out, "- channel {}: {}", one_line(name), for_terminal(b))?
                    }
                    (Some(b), Some(a)) => writeln!(
                        out,
                        "~ channel {}: {} → {}",
                        one_line(name),
                        for_terminal(b),
                        for_terminal(a)
                    )?,
                    (None, None) => {}
                }
            }
        }
        format => {
            let doc = json!({
                "thread_id": thread,
                "from": from_id,
                "to": to.row.checkpoint_id,
                "messages": {
                    "before": before.len(),
                    "after": after.len(),
                    "added": placeholder(0),
                    "removed": placeholder(1),
                    "changed": placeholder(2),
                },
                "channels": channels.iter().map(|c| json!({"channel": c.name, "before": c.before, "after": c.after})).collect::<Vec<_>>(),
            });
            let dump = |m: Message| Json::Object(m.fields);
            let (before, after, md) = (&before, &after, &md);
            let added = par_in_order(md.added.len(), move |k| {
                element_bytes(format, &dump(after.message(md.added[k])?))
            });
            let removed = par_in_order(md.removed.len(), move |k| {
                element_bytes(format, &dump(before.message(md.removed[k])?))
            });
            let changed = par_in_order(md.changed.len(), move |k| {
                let (i, j) = md.changed[k];
                let b = after.message(j)?;
                let id = b.id().map(str::to_owned);
                element_bytes(
                    format,
                    &json!({"id": id, "before": dump(before.message(i)?), "after": dump(b)}),
                )
            });
            let arrays: Vec<Box<dyn Iterator<Item = Result<Vec<u8>>>>> =
                vec![Box::new(added), Box::new(removed), Box::new(changed)];
            write_streamed(out, format, &doc, arrays)?;
        }
    }
    Ok(())
}

/// Messages are matched by id; messages without an id by position. A message matches the
/// first message of the other list with its key; a matched pair is changed when its stored
/// bytes differ and its `model_dump()` dictionaries differ too (equal dictionaries can be
/// stored differently). Linear: keys are looked up in hash maps.
fn diff_messages(before: &Side<'_>, after: &Side<'_>) -> Result<MessageDiff> {
    let before_keys = before.keys()?;
    let after_keys = after.keys()?;
    let mut first_after: HashMap<&str, usize> = HashMap::with_capacity(after_keys.len());
    for (j, k) in after_keys.iter().enumerate() {
        first_after.entry(k.as_str()).or_insert(j);
    }
    let before_set: HashSet<&str> = before_keys.iter().map(String::as_str).collect();
    let mut d = MessageDiff::default();
    for (i, k) in before_keys.iter().enumerate() {
        match first_after.get(k.as_str()) {
            None => d.removed.push(i),
            Some(&j) => {
                if before.bytes(i) != after.bytes(j)
                    && before.message(i)?.fields != after.message(j)?.fields
                {
                    d.changed.push((i, j));
                }
            }
        }
    }
    for (j, k) in after_keys.iter().enumerate() {
        if !before_set.contains(k.as_str()) {
            d.added.push(j);
        }
    }
    Ok(d)
}
