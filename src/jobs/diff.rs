//! `diff --thread T`: messages added / removed / changed and channels changed between
//! two checkpoints (default: the latest against its parent).
//!
//! Messages are matched by id (by position when they have none) from their stored bytes: a
//! matched pair whose bytes are equal is unchanged; only messages that were added, removed or
//! whose bytes differ are decoded, one at a time, so a long thread is never held as views.

use std::collections::{HashMap, HashSet};
use std::ops::Range;

use anyhow::Result;
use serde_json::Value as Json;

use super::{Ctx, Sink};
use crate::codec::{json::to_json, msgpack};
use crate::model::checkpoint::{brief_value, StoredList, StoredMessages, MESSAGES};
use crate::model::Message;

use crate::model::channels::is_internal_channel;
use crate::par::par_in_order;
use crate::read::LoadedCheckpoint;

/// One side of the diff: a stored message list and where each message is.
struct Side<'a> {
    list: Option<&'a StoredList>,
    spans: Vec<Range<usize>>,
}

impl<'a> Side<'a> {
    /// The message list of a checkpoint (loaded shallow) and where each message is.
    fn of(cp: &LoadedCheckpoint, stored: &'a StoredMessages) -> Result<Side<'a>> {
        let list = crate::read::message_list(cp, stored)?;
        let spans = match list {
            Some(l) => l.spans()?,
            None => vec![],
        };
        Ok(Side { list, spans })
    }

    /// The stored bytes of message `i`.
    fn bytes(&self, i: usize) -> &[u8] {
        self.list
            .and_then(|l| l.bytes().get(self.spans[i].clone()))
            .unwrap_or_default()
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

/// One side of a diff: its messages, decoded on demand (from any thread).
pub trait MessageSource: Sync {
    /// How many messages.
    fn len(&self) -> usize;
    /// True when there are none.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Message `i`, decoded.
    fn message(&self, i: usize) -> Result<Message>;
}

/// What changed in the message list: positions in the old and new lists.
#[derive(Default)]
pub struct MessageDiff {
    /// Positions in the new list of the messages added.
    pub added: Vec<usize>,
    /// Positions in the old list of the messages removed.
    pub removed: Vec<usize>,
    /// Positions (old, new) of the messages whose content changed.
    pub changed: Vec<(usize, usize)>,
}

/// A channel (other than messages) whose value changed.
pub struct ChannelChange {
    /// The channel.
    pub name: String,
    /// One-line renderings of the values before and after (`None`: not set).
    pub brief: (Option<String>, Option<String>),
    /// The value before as JSON (null: not set).
    pub before: Json,
    /// The value after as JSON (null: not set).
    pub after: Json,
}

/// The report of `diff`.
pub struct DiffReport<'a> {
    /// The thread.
    pub thread_id: &'a str,
    /// The older checkpoint (`None`: the newer one is the first).
    pub from: Option<&'a str>,
    /// Its step.
    pub from_step: Option<i64>,
    /// The newer checkpoint.
    pub to: &'a str,
    /// Its step.
    pub to_step: Option<i64>,
    /// The older checkpoint's messages.
    pub before: &'a dyn MessageSource,
    /// The newer checkpoint's messages.
    pub after: &'a dyn MessageSource,
    /// What changed between them.
    pub messages: MessageDiff,
    /// The other channels that changed.
    pub channels: Vec<ChannelChange>,
}

/// Which checkpoints to compare.
#[derive(Debug, Clone, Default)]
pub struct Request {
    /// The thread.
    pub thread: String,
    /// The older checkpoint (an id or a prefix; `None`: the newer one's parent).
    pub from: Option<String>,
    /// The newer checkpoint (an id or a prefix; `None`: the latest).
    pub to: Option<String>,
}

/// What [`run`] hands its report to (the report borrows the checkpoints read, which live
/// while it runs): `output::diff::render`, or the browser's buffer.
pub type Render<'r> = dyn FnMut(&DiffReport<'_>) -> Result<()> + 'r;

/// Compares the checkpoints `req` names (in `ctx.ns`), handing the report to `render`.
pub fn run(req: &Request, ctx: &Ctx, _sink: &dyn Sink, render: &mut Render<'_>) -> Result<()> {
    let store = ctx.open_read_only()?;
    run_on(&*store, req, ctx, render)
}

/// [`run`] on a database already open (read-only; the browser keeps one open).
pub fn run_on(
    store: &dyn crate::storage::CheckpointStore,
    req: &Request,
    ctx: &Ctx,
    render: &mut Render<'_>,
) -> Result<()> {
    let keys = ctx.keys();
    let thread = &req.thread;
    let (to, to_stored, to_deltas) =
        crate::read::load_shallow(store, &keys, thread, &ctx.ns, req.to.as_deref())?;
    let to = Loaded {
        cp: &to,
        messages: &to_stored,
        deltas: &to_deltas,
    };
    run_against(store, ctx, req.from.as_deref(), to, render)
}

/// A checkpoint already read (shallow, as [`crate::read::load_shallow`] gives it).
#[derive(Clone, Copy)]
pub struct Loaded<'a> {
    /// The checkpoint.
    pub cp: &'a LoadedCheckpoint,
    /// Its message list, stored.
    pub messages: &'a StoredMessages,
    /// Its DeltaChannels' values.
    pub deltas: &'a [crate::read::DeltaValue],
}

/// `diff` of `to`, a checkpoint already read (the browser's shown one), against `from` (a
/// checkpoint id or prefix; `to`'s parent when `None`), read from `store`.
pub fn run_against(
    store: &dyn crate::storage::CheckpointStore,
    ctx: &Ctx,
    from: Option<&str>,
    to: Loaded<'_>,
    render: &mut Render<'_>,
) -> Result<()> {
    let keys = ctx.keys();
    let thread = &to.cp.row.thread_id;
    // `--from` may be a prefix: the checkpoint read names its whole id.
    let from = match from.or(to.cp.row.parent_checkpoint_id.as_deref()) {
        Some(id) => Some(crate::read::load_shallow(
            store,
            &keys,
            thread,
            &ctx.ns,
            Some(id),
        )?),
        None => None,
    };
    let from_id = from.as_ref().map(|(cp, _, _)| cp.row.checkpoint_id.clone());
    let after = Side::of(to.cp, to.messages)?;
    let before = match &from {
        Some((cp, stored, _)) => Side::of(cp, stored)?,
        None => Side {
            list: None,
            spans: vec![],
        },
    };
    let md = diff_messages(&before, &after)?;
    let to_values = crate::read::state_values(to.cp, to.deltas);
    let from_values = from
        .as_ref()
        .map(|(f, _, deltas)| crate::read::state_values(f, deltas))
        .unwrap_or_default();
    let channels = changed_channels(&from_values, &to_values);
    let from_cp = from.as_ref().map(|(cp, _, _)| cp);

    let report = DiffReport {
        thread_id: thread,
        from: from_id.as_deref(),
        from_step: from_cp.and_then(|f| f.metadata.step()),
        to: &to.cp.row.checkpoint_id,
        to_step: to.cp.metadata.step(),
        before: &before,
        after: &after,
        messages: md,
        channels,
    };
    render(&report)
}

impl MessageSource for Side<'_> {
    fn len(&self) -> usize {
        self.spans.len()
    }

    fn message(&self, i: usize) -> Result<Message> {
        match self.list {
            Some(l) => l.message(i, &self.spans[i]),
            None => anyhow::bail!("no message {i}"),
        }
    }
}

/// The channels other than messages whose values differ between two states (as the state
/// shows them: DeltaChannels rebuilt), compared by their encoded bytes, in the order they
/// first appear (the older state's first).
fn changed_channels(
    from_values: &[(&str, Option<&crate::codec::Value>)],
    to_values: &[(&str, Option<&crate::codec::Value>)],
) -> Vec<ChannelChange> {
    let mut channels: Vec<ChannelChange> = Vec::new();
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
        let (before, after) = (value_in(from_values, name), value_in(to_values, name));
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
    channels
}

/// The value of channel `name` among a state's `values` (`None`: not set).
fn value_in<'v>(
    values: &[(&str, Option<&'v crate::codec::Value>)],
    name: &str,
) -> Option<&'v crate::codec::Value> {
    values
        .iter()
        .find(|(k, _)| *k == name)
        .and_then(|(_, v)| *v)
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
