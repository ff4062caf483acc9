//! How LangGraph rebuilds a `DeltaChannel`'s value, as pure functions over decoded values.
//!
//! A DeltaChannel (langgraph ≥ 1.2) leaves its value out of most checkpoints. LangGraph's
//! `channels_from_checkpoint` rebuilds it for a checkpoint that stores none: the nearest
//! ancestor (following `parent_checkpoint_id`, starting at the parent) that stores a value
//! seeds it — a `_DeltaSnapshot` (ext 7) or a plain value written before the graph switched
//! to a DeltaChannel; none at all means "start empty" — and the channel's pending writes of
//! every checkpoint from that ancestor down to the parent are replayed, oldest checkpoint
//! first and, within one, in `writes_sort_key` order `(task_path, task_id, idx)`
//! (`DeltaChannel.replay_writes`: the last `Overwrite` becomes the base, the writes after it
//! go through the reducer in one call). `get_state` then applies the checkpoint's own
//! `NULL_TASK_ID` writes (`DeltaChannel.update`).
//!
//! The checkpoint does not say which reducer function a channel has. memctl knows two, by the
//! channel's name: `messages` (langgraph's and deepagents' `_messages_delta_reducer`: dedup by
//! id, `RemoveMessage`, `REMOVE_ALL_MESSAGES`) and `files` (deepagents'
//! `_file_data_delta_reducer`: a dict merge where `None` deletes). Any other channel's value
//! is not guessed: [`Reducer::Unknown`] keeps the seed and the writes for the caller to show.
//!
//! Where to find the rows is the caller's business (commands read them through storage);
//! nothing here reads a database.

use std::collections::HashMap;

use anyhow::{anyhow, bail, Result};

use crate::codec::msgpack::encode;
use crate::codec::{ext, Value};

pub use super::channels::{counted_channels, marks_delta, JS_DELTA_MARKER};
use super::channels::{DELTA_COUNTERS, MESSAGES};
use super::message::{Kind, Message};
use super::metadata::Metadata;

/// `counters_since_delta_snapshot` of one checkpoint: `(channel, (updates, supersteps))`.
pub type Counters = Vec<(String, (u64, u64))>;

/// The id of the `RemoveMessage` that clears the whole list (`REMOVE_ALL_MESSAGES`).
pub const REMOVE_ALL_MESSAGES: &str = "__remove_all__";

/// The task id of writes that are input to a step rather than a task's output
/// (`NULL_TASK_ID`): `get_state` applies a checkpoint's own writes under it to its values.
pub const NULL_TASK_ID: &str = "00000000-0000-0000-0000-000000000000";

/// The channel deepagents' filesystem middleware keeps its files in.
pub const FILES: &str = "files";

/// The reducer of a DeltaChannel, as far as memctl can tell from the channel's name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reducer {
    /// `_messages_delta_reducer` (langgraph's and deepagents'): a list of messages.
    Messages,
    /// deepagents' `_file_data_delta_reducer`: a dict of path → file data, `None` deletes.
    Files,
    /// A reducer function memctl does not know: the value is not rebuilt.
    Unknown,
}

impl Reducer {
    /// The reducer memctl assumes for a DeltaChannel called `channel`.
    pub fn for_channel(channel: &str) -> Reducer {
        match channel {
            MESSAGES => Reducer::Messages,
            FILES => Reducer::Files,
            _ => Reducer::Unknown,
        }
    }

    /// The name shown to people (`messages`, `files`, `unknown`).
    pub fn name(self) -> &'static str {
        match self {
            Reducer::Messages => "messages",
            Reducer::Files => "files",
            Reducer::Unknown => "unknown",
        }
    }

    /// The value of a channel that was never written (`DeltaChannel.typ()`): `[]` or `{}`.
    pub fn empty(self) -> Option<Value> {
        match self {
            Reducer::Messages => Some(Value::array(vec![])),
            Reducer::Files => Some(Value::map(vec![])),
            Reducer::Unknown => None,
        }
    }
}

/// The value an `Overwrite` write carries, when `v` is one (`_get_overwrite`: the
/// `langgraph.types.Overwrite` object, `{"__overwrite__": v}`, or
/// `{"type": "__overwrite__", "value": v}`). `Some(None)` is `Overwrite(None)`.
pub fn overwrite(v: &Value) -> Option<Option<&Value>> {
    fn inner(fields: &Value) -> Option<Option<&Value>> {
        if let Some(entries) = fields.as_map() {
            if entries.len() == 1 && entries[0].0.as_str() == Some("__overwrite__") {
                return Some(Some(&entries[0].1).filter(|v| !v.is_nil()));
            }
            if fields.get("type").and_then(Value::as_str) == Some("__overwrite__") {
                if let Some(value) = fields.get("value") {
                    return Some(Some(value).filter(|v| !v.is_nil()));
                }
            }
        }
        None
    }
    match v {
        Value::Ext(e) if ext::is_object(v, "langgraph.types", "Overwrite") => {
            let fields = ext::argument(e)?;
            match fields.get("value") {
                Some(value) => Some(Some(value).filter(|v| !v.is_nil())),
                None => Some(None),
            }
        }
        Value::Map(_) => inner(v),
        _ => None,
    }
}

/// `DeltaChannel.replay_writes`: the value after replaying `writes` (oldest first, in
/// LangGraph's order) onto `seed` (`None`: the walk found no stored value, start empty).
/// Writes before the last `Overwrite` are dropped and its value becomes the base.
pub fn replay(reducer: Reducer, seed: Option<&Value>, writes: &[&Value]) -> Result<Value> {
    replay_onto(reducer, seed_value(reducer, seed)?, writes)
}

/// [`replay`] onto a value already made from the seed (taken, not copied).
fn replay_onto(reducer: Reducer, base: Value, writes: &[&Value]) -> Result<Value> {
    let mut base = base;
    let mut start = 0;
    for (i, w) in writes.iter().enumerate() {
        if let Some(value) = overwrite(w) {
            base = match value {
                Some(v) => v.clone(),
                None => empty(reducer)?,
            };
            start = i + 1;
        }
    }
    let rest = &writes[start..];
    if rest.is_empty() {
        return Ok(base);
    }
    reduce(reducer, base, rest)
}

/// `DeltaChannel.update`: one step's `values` applied at once (how `get_state` applies a
/// checkpoint's own `NULL_TASK_ID` writes). An `Overwrite` among them replaces the value and
/// the others are dropped; two are an error, as in LangGraph.
pub fn update(reducer: Reducer, base: Value, values: &[&Value]) -> Result<Value> {
    if values.is_empty() {
        return Ok(base);
    }
    let overwrites: Vec<Option<&Value>> = values.iter().filter_map(|v| overwrite(v)).collect();
    match overwrites.as_slice() {
        [] => reduce(reducer, base, values),
        [one] => match one {
            Some(v) => Ok((*v).clone()),
            None => empty(reducer),
        },
        _ => {
            bail!("a step wrote more than one Overwrite to the channel (LangGraph refuses it too)")
        }
    }
}

/// What `from_checkpoint` makes of a stored value: `None` (and nil) start empty.
fn seed_value(reducer: Reducer, seed: Option<&Value>) -> Result<Value> {
    match seed {
        None | Some(Value::Nil) => empty(reducer),
        Some(v) => Ok(v.clone()),
    }
}

fn empty(reducer: Reducer) -> Result<Value> {
    reducer
        .empty()
        .ok_or_else(|| anyhow!("memctl does not know this channel's reducer"))
}

/// One call of the channel's reducer: `reducer(base, writes)`.
pub fn reduce(reducer: Reducer, base: Value, writes: &[&Value]) -> Result<Value> {
    match reducer {
        Reducer::Messages => messages(base, writes),
        Reducer::Files => files(base, writes),
        Reducer::Unknown => bail!("memctl does not know this channel's reducer"),
    }
}

/// What the messages reducer needs of one message-like item: whether it is a
/// `RemoveMessage`, and its id.
fn message_key(item: &Value) -> Result<(bool, Option<String>)> {
    // The common case, read without building the message's view: a LangChain message
    // object whose fields are a map.
    if let Value::Ext(e) = item {
        if let (Some((module, class)), Some(fields)) = (ext::type_path(e), ext::argument(e)) {
            if module.starts_with("langchain_core.messages")
                && fields.as_map().is_some()
                && Kind::from_class(class).is_some()
            {
                let remove = Kind::from_class(class).is_some_and(|(k, _)| k == Kind::Remove);
                let id = match fields.get("id") {
                    Some(Value::Str(s)) => Some(s.text.clone()),
                    Some(Value::Nil) | None => None,
                    Some(_) => return slow_key(item),
                };
                return Ok((remove, id));
            }
        }
    }
    slow_key(item)
}

fn slow_key(item: &Value) -> Result<(bool, Option<String>)> {
    let m = Message::from_value(item).ok_or_else(|| {
        anyhow!("a write to 'messages' holds an item that is not a LangChain message")
    })?;
    Ok((m.kind == Kind::Remove, m.id().map(str::to_owned)))
}

/// The items `convert_to_messages` turns into messages, as values [`Message::from_value`]
/// reads: a string is a human message, a `(role, content)` pair a dict message; messages and
/// dicts stay as they are.
fn message_item(item: Value) -> Value {
    match item {
        Value::Str(_) => Value::map(vec![
            (Value::str("role"), Value::str("user")),
            (Value::str("content"), item),
        ]),
        Value::Array(a) if a.items.len() == 2 && a.items[0].as_str().is_some() => {
            let mut pair = a.items.into_iter();
            let (role, content) = (pair.next(), pair.next());
            Value::map(vec![
                (Value::str("role"), role.unwrap_or(Value::Nil)),
                (Value::str("content"), content.unwrap_or(Value::Nil)),
            ])
        }
        other => other,
    }
}

/// `_messages_delta_reducer(state, writes)`: each write is a list of message-likes (flattened)
/// or one; the last `RemoveMessage(REMOVE_ALL_MESSAGES)` clears the state and the items
/// before it; then items are added in order: one without an id is appended, a
/// `RemoveMessage` removes the message with its id (if there is one), a message whose id is
/// already there replaces it in place, any other is appended.
fn messages(state: Value, writes: &[&Value]) -> Result<Value> {
    let mut list = MessageList::new(state)?;
    list.add(writes)?;
    Ok(list.into_value())
}

/// A message list kept with its index by id, so that writes are added to it without
/// rebuilding it (what `_messages_delta_reducer` computes, one batch after another: the
/// reducer is batching-invariant).
#[derive(Debug, Clone, Default)]
pub struct MessageList {
    /// The messages in order; a removed one leaves `None`.
    items: Vec<Option<Value>>,
    /// Where the (last) message with each id is.
    index: HashMap<String, usize>,
    /// How many messages are there.
    live: usize,
}

impl MessageList {
    /// The list a stored value holds (nil: empty).
    pub fn new(state: Value) -> Result<MessageList> {
        let items = match state {
            Value::Array(a) => a.items,
            Value::Nil => vec![],
            _ => bail!("the 'messages' value is not a list"),
        };
        let mut list = MessageList::default();
        for item in items {
            let item = message_item(item);
            if let (_, Some(id)) = message_key(&item)? {
                list.index.insert(id, list.items.len());
            }
            list.items.push(Some(item));
            list.live += 1;
        }
        Ok(list)
    }

    /// Adds one batch of writes, as the reducer does.
    pub fn add(&mut self, writes: &[&Value]) -> Result<()> {
        let mut flat: Vec<Value> = Vec::new();
        for w in writes {
            match w {
                Value::Array(a) => flat.extend(a.items.iter().cloned().map(message_item)),
                other => flat.push(message_item((*other).clone())),
            }
        }
        let mut keys = flat.iter().map(message_key).collect::<Result<Vec<_>>>()?;
        if let Some(last) = keys
            .iter()
            .rposition(|(remove, id)| *remove && id.as_deref() == Some(REMOVE_ALL_MESSAGES))
        {
            *self = MessageList::default();
            flat.drain(..=last);
            keys.drain(..=last);
        }
        for (item, (remove, id)) in flat.into_iter().zip(keys) {
            match id {
                None => {
                    self.items.push(Some(item));
                    self.live += 1;
                }
                Some(id) if remove => {
                    if let Some(at) = self.index.remove(&id) {
                        if self.items[at].take().is_some() {
                            self.live -= 1;
                        }
                    }
                }
                Some(id) => match self.index.get(&id) {
                    Some(&at) => {
                        if self.items[at].replace(item).is_none() {
                            self.live += 1;
                        }
                    }
                    None => {
                        self.index.insert(id, self.items.len());
                        self.items.push(Some(item));
                        self.live += 1;
                    }
                },
            }
        }
        Ok(())
    }

    /// How many messages the list holds.
    pub fn len(&self) -> usize {
        self.live
    }

    /// True when the list holds no message.
    pub fn is_empty(&self) -> bool {
        self.live == 0
    }

    /// The list as a value (the messages copied).
    pub fn to_value(&self) -> Value {
        Value::array(self.items.iter().flatten().cloned().collect())
    }

    /// The messages in order, by reference.
    pub fn iter(&self) -> impl Iterator<Item = &Value> {
        self.items.iter().flatten()
    }

    /// The list as a value.
    pub fn into_value(self) -> Value {
        Value::array(self.items.into_iter().flatten().collect())
    }
}

/// A DeltaChannel's value as [`fold`] carries it from a checkpoint to its children: a message
/// list kept indexed (each checkpoint adds its writes instead of rebuilding the list), or any
/// other value.
#[derive(Debug, Clone)]
pub enum Carried {
    /// The messages reducer's list.
    Messages(MessageList),
    /// Any other reducer's value.
    Value(Value),
}

impl Carried {
    fn new(reducer: Reducer, v: Value) -> Result<Carried> {
        Ok(match reducer {
            Reducer::Messages => Carried::Messages(MessageList::new(v)?),
            _ => Carried::Value(v),
        })
    }

    /// How many items the value holds (messages of a list, entries of a dict).
    pub fn count(&self) -> Option<usize> {
        match self {
            Carried::Messages(l) => Some(l.len()),
            Carried::Value(v) => v
                .as_array()
                .map(<[Value]>::len)
                .or_else(|| v.as_map().map(<[(Value, Value)]>::len)),
        }
    }

    /// The value.
    pub fn to_value(&self) -> Value {
        match self {
            Carried::Messages(l) => l.to_value(),
            Carried::Value(v) => v.clone(),
        }
    }

    /// The items of a list value, by reference (none for any other value).
    pub fn items(&self) -> Box<dyn Iterator<Item = &Value> + '_> {
        match self {
            Carried::Messages(l) => Box::new(l.iter()),
            Carried::Value(v) => Box::new(v.as_array().unwrap_or_default().iter()),
        }
    }

    /// `replay_writes`: the last `Overwrite` becomes the value, the writes after it are added.
    fn replay(&mut self, reducer: Reducer, writes: &[&Value]) -> Result<()> {
        let mut start = 0;
        let mut reset = None;
        for (i, w) in writes.iter().enumerate() {
            if let Some(v) = overwrite(w) {
                reset = Some(v);
                start = i + 1;
            }
        }
        if let Some(v) = reset {
            let v = match v {
                Some(v) => v.clone(),
                None => empty(reducer)?,
            };
            *self = Carried::new(reducer, v)?;
        }
        self.add(reducer, &writes[start..])
    }

    /// `update`: one step's writes; an `Overwrite` among them replaces the value.
    fn update(&mut self, reducer: Reducer, values: &[&Value]) -> Result<()> {
        let overwrites: Vec<Option<&Value>> = values.iter().filter_map(|v| overwrite(v)).collect();
        match overwrites.as_slice() {
            [] => self.add(reducer, values),
            [one] => {
                let v = match one {
                    Some(v) => (*v).clone(),
                    None => empty(reducer)?,
                };
                *self = Carried::new(reducer, v)?;
                Ok(())
            }
            _ => bail!(
                "a step wrote more than one Overwrite to the channel (LangGraph refuses it too)"
            ),
        }
    }

    fn add(&mut self, reducer: Reducer, writes: &[&Value]) -> Result<()> {
        if writes.is_empty() {
            return Ok(());
        }
        match self {
            Carried::Messages(l) => l.add(writes),
            Carried::Value(v) => {
                *v = reduce(reducer, std::mem::replace(v, Value::Nil), writes)?;
                Ok(())
            }
        }
    }
}

/// A dict key as Python compares it: strings by text, anything else by its encoding.
fn key_of(k: &Value) -> Vec<u8> {
    match k.as_str() {
        Some(s) => {
            let mut b = vec![0];
            b.extend_from_slice(s.as_bytes());
            b
        }
        None => {
            let mut b = vec![1];
            b.extend(encode(k));
            b
        }
    }
}

/// deepagents' `_file_data_delta_reducer(left, writes)`: a copy of `left` (empty when
/// `None`), then each write's entries in order: `None` deletes the path, any other value
/// sets it (in place when the path is there, at the end when it is new).
fn files(state: Value, writes: &[&Value]) -> Result<Value> {
    let mut entries: Vec<Option<(Value, Value)>> = match state {
        Value::Map(m) => m.entries.into_iter().map(Some).collect(),
        Value::Nil => vec![],
        _ => bail!("the 'files' value is not a dict"),
    };
    let mut index: HashMap<Vec<u8>, usize> = entries
        .iter()
        .enumerate()
        .filter_map(|(i, e)| e.as_ref().map(|(k, _)| (key_of(k), i)))
        .collect();
    for w in writes {
        let Some(items) = w.as_map() else {
            bail!("a write to 'files' is not a dict of path → file data");
        };
        for (k, v) in items {
            let key = key_of(k);
            if v.is_nil() {
                if let Some(at) = index.remove(&key) {
                    entries[at] = None;
                }
            } else if let Some(&at) = index.get(&key) {
                entries[at] = Some((k.clone(), v.clone()));
            } else {
                index.insert(key, entries.len());
                entries.push(Some((k.clone(), v.clone())));
            }
        }
    }
    Ok(Value::map(entries.into_iter().flatten().collect()))
}

/// Where a rebuilt value started: the checkpoint whose stored value seeded it.
#[derive(Debug, Clone)]
pub struct Seed {
    /// The checkpoint that stores the seed.
    pub checkpoint_id: String,
    /// True for a `_DeltaSnapshot` (ext 7), false for a plain value (a thread written before
    /// its graph switched to a DeltaChannel).
    pub snapshot: bool,
    /// The seed value (the snapshot's inner value).
    pub value: Value,
}

/// What the ancestor walk found for one channel (`DeltaChannelHistory`): the seed, if an
/// ancestor stores one, and the writes to replay onto it, oldest first in LangGraph's order,
/// each with the checkpoint it is a pending write of.
#[derive(Debug, Clone, Default)]
pub struct ChannelHistory {
    /// The nearest stored value; `None` when the walk reached the first checkpoint.
    pub seed: Option<Seed>,
    /// `(checkpoint id, value)` of each write, oldest first.
    pub writes: Vec<(String, Value)>,
}

impl ChannelHistory {
    /// The value LangGraph rebuilds from this history (`_replay`).
    pub fn rebuild(&self, reducer: Reducer) -> Result<Value> {
        let writes: Vec<&Value> = self.writes.iter().map(|(_, v)| v).collect();
        replay(reducer, self.seed.as_ref().map(|s| &s.value), &writes)
    }
}

/// One ancestor checkpoint as the walk reads it.
#[derive(Debug, Clone, Default)]
pub struct Ancestor {
    /// Its parent checkpoint id.
    pub parent: Option<String>,
    /// The values it stores of the channels asked for: `(channel, is a snapshot, value)`.
    pub stored: Vec<(String, bool, Value)>,
    /// Its pending writes to the channels asked for, `(channel, value)`, in LangGraph's
    /// order (`task_path`, `task_id`, `idx`).
    pub writes: Vec<(String, Value)>,
}

/// Reads one ancestor for [`walk`]: `(checkpoint id, channels still looked for)` → the
/// ancestor, or `None` when no such checkpoint is stored.
pub type Fetch<'a> = dyn FnMut(&str, &[String]) -> Result<Option<Ancestor>> + 'a;

/// LangGraph's ancestor walk (`get_delta_channel_history`) for `channels` of a checkpoint
/// whose parent is `parent`: `fetch(id, channels still looked for)` gives an ancestor (or
/// `None` when no such checkpoint is stored). Each ancestor's writes are collected, then a
/// channel it stores a value of is seeded there and no longer looked for. A missing
/// ancestor or a chain that comes back to itself is an error (LangGraph would silently start
/// such a value empty).
pub fn walk(
    parent: Option<&str>,
    channels: &[String],
    fetch: &mut Fetch<'_>,
) -> Result<HashMap<String, ChannelHistory>> {
    let mut found: HashMap<String, ChannelHistory> = channels
        .iter()
        .map(|c| (c.clone(), ChannelHistory::default()))
        .collect();
    // Newest first while walking; reversed at the end.
    let mut collected: HashMap<String, Vec<Vec<(String, Value)>>> = HashMap::new();
    let mut remaining: Vec<String> = channels.to_vec();
    let mut seen = std::collections::HashSet::new();
    let mut cursor = parent.map(str::to_owned);
    let mut child: Option<String> = None;
    while let Some(id) = cursor.take() {
        if remaining.is_empty() {
            break;
        }
        if !seen.insert(id.clone()) {
            bail!("the parent chain comes back to checkpoint {id}: the value cannot be rebuilt");
        }
        let Some(a) = fetch(&id, &remaining)? else {
            bail!(
                "checkpoint {id}{} is missing: the DeltaChannel value of {} cannot be rebuilt \
                 without it (its seed and writes are in older checkpoints)",
                child
                    .as_deref()
                    .map(|c| format!(" (the parent of {c})"))
                    .unwrap_or_default(),
                remaining.join(", "),
            );
        };
        for ch in &remaining {
            let writes: Vec<(String, Value)> = a
                .writes
                .iter()
                .filter(|(c, _)| c == ch)
                .map(|(_, v)| (id.clone(), v.clone()))
                .collect();
            collected.entry(ch.clone()).or_default().push(writes);
        }
        for (ch, snapshot, value) in a.stored {
            if let Some(pos) = remaining.iter().position(|c| *c == ch) {
                remaining.remove(pos);
                if let Some(h) = found.get_mut(&ch) {
                    h.seed = Some(Seed {
                        checkpoint_id: id.clone(),
                        snapshot,
                        value,
                    });
                }
            }
        }
        child = Some(id);
        cursor = a.parent;
    }
    for (ch, per_checkpoint) in collected {
        if let Some(h) = found.get_mut(&ch) {
            h.writes = per_checkpoint.into_iter().rev().flatten().collect();
        }
    }
    Ok(found)
}

/// One checkpoint of a thread for [`fold`]: what it stores of one DeltaChannel and its
/// pending writes to it.
#[derive(Debug, Clone)]
pub struct Node {
    /// The checkpoint id.
    pub id: String,
    /// Its parent.
    pub parent: Option<String>,
    /// The value it stores (a snapshot's inner value or a plain value), if any.
    pub stored: Option<Value>,
    /// True when `channel_versions` names the channel (else it was never written there and
    /// LangGraph does not replay it: the value is empty).
    pub has_version: bool,
    /// Its pending writes to the channel in LangGraph's order, with their task ids.
    pub writes: Vec<(String, Value)>,
}

/// The value of one DeltaChannel at every checkpoint of a thread (as `get_state_history`
/// shows it), computed in one pass: each checkpoint's replay continues from its parent's
/// instead of walking back to the seed again, and a message list is extended, not rebuilt.
/// `visit(i, value)` is called once for each of `nodes` (in no particular order), so that a
/// caller keeps only what it needs of each value. A checkpoint whose parent is missing from
/// `nodes` (or whose value cannot be rebuilt) gets its error, and so do its descendants.
pub fn fold(reducer: Reducer, nodes: &[Node], visit: &mut dyn FnMut(usize, Result<&Carried>)) {
    let position: HashMap<&str, usize> = nodes
        .iter()
        .enumerate()
        .map(|(i, n)| (n.id.as_str(), i))
        .collect();
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); nodes.len()];
    let mut roots = Vec::new();
    for (i, n) in nodes.iter().enumerate() {
        match n.parent.as_deref().map(|p| position.get(p)) {
            Some(Some(&p)) => children[p].push(i),
            _ => roots.push(i),
        }
    }
    let fresh = |v: Result<Value>| -> Result<Carried, String> {
        v.and_then(|v| Carried::new(reducer, v))
            .map_err(|e| format!("{e:#}"))
    };
    let mut visited = vec![false; nodes.len()];
    // Depth first from each root, carrying the parent's value after its writes (what a child
    // replays onto), or why it cannot be known.
    let mut stack: Vec<(usize, Result<Carried, String>)> = Vec::new();
    for r in roots {
        let from_parent = match nodes[r].parent.as_deref() {
            None => fresh(empty(reducer)),
            Some(p) => Err(format!(
                "checkpoint {p} (the parent of {}) is missing: the DeltaChannel value cannot be \
                 rebuilt without it",
                nodes[r].id
            )),
        };
        stack.push((r, from_parent));
    }
    while let Some((i, from_parent)) = stack.pop() {
        visited[i] = true;
        let n = &nodes[i];
        let base: Result<Carried, String> = match (&n.stored, n.has_version) {
            (Some(v), _) => fresh(seed_value(reducer, Some(v)))
                .map_err(|e| format!("the value stored in checkpoint {}: {e}", n.id)),
            (None, false) => fresh(empty(reducer)),
            (None, true) => from_parent,
        };
        let null: Vec<&Value> = n
            .writes
            .iter()
            .filter(|(task, _)| task == NULL_TASK_ID)
            .map(|(_, v)| v)
            .collect();
        match &base {
            Ok(b) if null.is_empty() => visit(i, Ok(b)),
            Ok(b) => {
                let mut own = b.clone();
                match own.update(reducer, &null) {
                    Ok(()) => visit(i, Ok(&own)),
                    Err(e) => visit(i, Err(e)),
                }
            }
            Err(e) => visit(i, Err(anyhow!("{e}"))),
        }
        let Some((&last, others)) = children[i].split_last() else {
            continue;
        };
        let after = base.and_then(|mut b| {
            let writes: Vec<&Value> = n.writes.iter().map(|(_, v)| v).collect();
            b.replay(reducer, &writes).map_err(|e| format!("{e:#}"))?;
            Ok(b)
        });
        for &c in others {
            stack.push((c, after.clone()));
        }
        stack.push((last, after));
    }
    for (i, seen) in visited.into_iter().enumerate() {
        if !seen {
            visit(
                i,
                Err(anyhow!(
                    "the parent chain of checkpoint {} comes back to itself",
                    nodes[i].id
                )),
            );
        }
    }
}

/// LangGraph's bound on the supersteps between two snapshots of a DeltaChannel
/// (`DELTA_MAX_SUPERSTEPS_SINCE_SNAPSHOT`, its default: an app may change it with the
/// environment variable of that name).
pub const MAX_SUPERSTEPS_SINCE_SNAPSHOT: u64 = 5000;

/// `counters_since_delta_snapshot` of a checkpoint: `(channel, (updates, supersteps))` in
/// stored order (a channel snapshotted at the checkpoint is not named: its counters are 0).
pub fn counters(metadata: &Metadata) -> Counters {
    metadata
        .fields
        .get(DELTA_COUNTERS)
        .and_then(serde_json::Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, v)| {
                    let n = |i: usize| v.get(i).and_then(serde_json::Value::as_u64).unwrap_or(0);
                    (k.clone(), (n(0), n(1)))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The `versions_seen` key under which LangGraph records the snapshot bumps
/// (`SNAPSHOT_BUMPS` in `langgraph._internal._constants`).
pub const SNAPSHOT_BUMPS: &str = "__snapshot_bumps__";

/// A DeltaChannel whose version a checkpoint moves only to store a snapshot of it
/// (`create_checkpoint`: `put` stores a blob only for a channel whose version moved):
/// `old` is its version before (`None`: it had none), `new` the one it gets.
#[derive(Debug, Clone)]
pub struct Bump {
    /// The channel.
    pub channel: String,
    /// Its version in the parent checkpoint, if it had one.
    pub old: Option<Value>,
    /// Its new version.
    pub new: Value,
}

/// Two stored channel versions are the same (Python `==` of two `str`, or of two `int`).
fn same_version(a: Option<&Value>, b: Option<&Value>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(Value::Str(x)), Some(Value::Str(y))) => x.text == y.text,
        (Some(x), Some(y)) => x.as_i64().is_some() && x.as_i64() == y.as_i64(),
        _ => false,
    }
}

/// LangGraph's `_mark_bumps_seen` (pregel/_checkpoint.py): the `versions_seen` of a
/// checkpoint that bumps `bumps`. Every node that had seen a bumped channel's old version
/// (for a channel that had none: every node that has not seen it) now sees the new one, and
/// `__snapshot_bumps__` records `"{node}|{channel}"` → the new version and, unless an earlier
/// bump already did, `"{node}:{channel}"` → the version the node really read. The nodes a
/// never-written channel triggers get an entry first; in a `StateGraph` no state channel
/// triggers a node (nodes are triggered by `__start__`, `branch:to:…` and `join:…`), so
/// there are none. Maps left as they were keep their bytes; changed ones are rebuilt.
pub fn mark_bumps_seen(versions_seen: &Value, bumps: &[Bump]) -> Result<Value> {
    if bumps.is_empty() {
        return Ok(versions_seen.clone());
    }
    let Value::Map(outer) = versions_seen else {
        bail!("versions_seen is not a map");
    };
    let mut out = outer.clone();
    let mut marks: Vec<(Value, Value)> = match versions_seen.get(SNAPSHOT_BUMPS) {
        Some(m) => m
            .as_map()
            .ok_or_else(|| anyhow!("versions_seen.{SNAPSHOT_BUMPS} is not a map"))?
            .to_vec(),
        None => Vec::new(),
    };
    let set = |entries: &mut Vec<(Value, Value)>, key: String, value: Value| match entries
        .iter_mut()
        .find(|(k, _)| k.as_str() == Some(key.as_str()))
    {
        Some((_, v)) => *v = value,
        None => entries.push((Value::str(key), value)),
    };
    for (node, seen) in &mut out.entries {
        let Some(name) = node.as_str() else {
            bail!("versions_seen has a key that is not a node name");
        };
        if name == SNAPSHOT_BUMPS {
            continue;
        }
        let Value::Map(seen_map) = seen else {
            bail!("versions_seen.{name} is not a map");
        };
        let original = seen_map.clone();
        let mut changed = false;
        for b in bumps {
            let had = original
                .entries
                .iter()
                .find(|(k, _)| k.as_str() == Some(b.channel.as_str()))
                .map(|(_, v)| v);
            if !same_version(had, b.old.as_ref()) {
                continue;
            }
            let advanced = format!("{name}|{}", b.channel);
            let read = format!("{name}:{}", b.channel);
            if let Some(old) = &b.old {
                let marked = marks
                    .iter()
                    .find(|(k, _)| k.as_str() == Some(advanced.as_str()))
                    .map(|(_, v)| v);
                if !same_version(marked, Some(old)) {
                    set(&mut marks, read, old.clone());
                }
            }
            set(&mut marks, advanced, b.new.clone());
            set(&mut seen_map.entries, b.channel.clone(), b.new.clone());
            changed = true;
        }
        if changed {
            seen_map.marker = None;
        }
    }
    if !marks.is_empty() {
        set(
            &mut out.entries,
            SNAPSHOT_BUMPS.to_owned(),
            Value::map(marks),
        );
        out.marker = None;
    }
    Ok(Value::Map(out))
}

/// The counters of the checkpoint `update_state` appends after `head`
/// (`create_metadata_for_update_state_api`): every DeltaChannel's supersteps go up by one,
/// its updates too when the update writes it. `channels` are the graph's DeltaChannels in
/// the graph's order; `head` the head's counters (a channel it does not name is at 0, 0).
pub fn next_counters(
    channels: &[String],
    head: &[(String, (u64, u64))],
    written: &[&str],
) -> Counters {
    channels
        .iter()
        .map(|ch| {
            let (u, s) = head
                .iter()
                .find(|(k, _)| k == ch)
                .map_or((0, 0), |(_, c)| *c);
            let u = if written.contains(&ch.as_str()) {
                u + 1
            } else {
                u
            };
            (ch.clone(), (u, s + 1))
        })
        .collect()
}

/// A DeltaChannel's `snapshot_frequency` (not stored anywhere) as a thread's counters show
/// it, when they do: `pairs` are the counters of each checkpoint with its parent's. The
/// loop snapshots a channel in the step its update count reaches the frequency, so a thread
/// that snapshotted right when the count went one past the largest count any checkpoint
/// keeps shows the frequency: that count. `None` when no snapshot says so (then the
/// frequency is above every count seen, and no more is known).
pub fn inferred_frequency(channel: &str, pairs: &[(Counters, Counters)]) -> Option<u64> {
    let named = |c: &[(String, (u64, u64))]| c.iter().find(|(k, _)| k == channel).map(|(_, v)| *v);
    let max_u = pairs
        .iter()
        .filter_map(|(c, _)| named(c).map(|(u, _)| u))
        .max()?;
    let reached = pairs
        .iter()
        .any(|(c, p)| named(c).is_none() && named(p).is_some_and(|(u, _)| u + 1 == max_u + 1));
    reached.then_some(max_u + 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::message::message_ext;

    /// A msgpack map tree of strings from JSON (the shape of `versions_seen`).
    fn tree(j: &serde_json::Value) -> Value {
        match j {
            serde_json::Value::Object(m) => Value::map(
                m.iter()
                    .map(|(k, v)| (Value::str(k.clone()), tree(v)))
                    .collect(),
            ),
            serde_json::Value::String(s) => Value::str(s.clone()),
            other => panic!("not a map or string: {other}"),
        }
    }

    fn bump(channel: &str, old: Option<&str>, new: &str) -> Bump {
        Bump {
            channel: channel.into(),
            old: old.map(Value::str),
            new: Value::str(new),
        }
    }

    /// The expected values are what langgraph 1.2.24's `_mark_bumps_seen` returns for the
    /// same input (run by hand in .venv/new; key order as Python's dicts keep it).
    #[test]
    fn bumps_are_marked_seen_as_langgraph_marks_them() {
        let (v1, v2, v3, v5) = (
            "00000000000000000000000000000001.0.1",
            "00000000000000000000000000000002.0.2",
            "00000000000000000000000000000003.0.3",
            "00000000000000000000000000000005.0.5",
        );
        let (b3, b4) = (
            "00000000000000000000000000000003.0.9",
            "00000000000000000000000000000004.0.1",
        );
        let seen = serde_json::json!({
            "__start__": {"__start__": v1},
            "model": {"branch:to:model": v3, "files": v2},
            "tools": {"files": v5},
        });
        let once = mark_bumps_seen(&tree(&seen), &[bump("files", Some(v2), b3)]).expect("ok");
        let want = serde_json::json!({
            "__start__": {"__start__": v1},
            "model": {"branch:to:model": v3, "files": b3},
            "tools": {"files": v5},
            "__snapshot_bumps__": {"model:files": v2, "model|files": b3},
        });
        assert_eq!(encode(&once), encode(&tree(&want)));
        // A second bump keeps the version the node really read.
        let twice = mark_bumps_seen(&once, &[bump("files", Some(b3), b4)]).expect("ok");
        let want = serde_json::json!({
            "__start__": {"__start__": v1},
            "model": {"branch:to:model": v3, "files": b4},
            "tools": {"files": v5},
            "__snapshot_bumps__": {"model:files": v2, "model|files": b4},
        });
        assert_eq!(encode(&twice), encode(&tree(&want)));
        // A channel that had no version: every node that has not seen it.
        let none = serde_json::json!({"model": {"x": "1"}});
        let got = mark_bumps_seen(&tree(&none), &[bump("notes", None, v1)]).expect("ok");
        let want = serde_json::json!({
            "model": {"x": "1", "notes": v1},
            "__snapshot_bumps__": {"model|notes": v1},
        });
        assert_eq!(encode(&got), encode(&tree(&want)));
        // Nobody saw it: nothing changes, bytes included.
        let empty = tree(&serde_json::json!({}));
        let got = mark_bumps_seen(&empty, &[bump("files", Some("2"), "3")]).expect("ok");
        assert_eq!(encode(&got), encode(&empty));
        assert!(mark_bumps_seen(&Value::str("x"), &[bump("files", None, "1")]).is_err());
    }

    fn msg(class: &str, id: Option<&str>, content: &str) -> Value {
        let kind = Kind::from_class(class).expect("class").0;
        let mut fields = vec![
            (Value::str("content"), Value::str(content)),
            (Value::str("type"), Value::str(kind.type_str())),
        ];
        fields.push((Value::str("id"), id.map_or(Value::Nil, Value::str)));
        message_ext(kind.module(), class, Value::map(fields))
    }

    fn human(id: &str, text: &str) -> Value {
        msg("HumanMessage", Some(id), text)
    }

    fn remove(id: &str) -> Value {
        msg("RemoveMessage", Some(id), "")
    }

    fn ids(v: &Value) -> Vec<String> {
        v.as_array()
            .expect("list")
            .iter()
            .map(|m| {
                let m = Message::from_value(m).expect("message");
                format!("{}={}", m.id().unwrap_or("-"), m.text())
            })
            .collect()
    }

    fn list(items: Vec<Value>) -> Value {
        Value::array(items)
    }

    #[test]
    fn messages_dedup_by_id_and_remove() {
        let seed = list(vec![human("a", "1"), human("b", "2")]);
        let w1 = list(vec![human("c", "3"), human("a", "1 again")]);
        let w2 = remove("b");
        let w3 = list(vec![msg("AIMessage", None, "no id"), remove("zz")]);
        let got = replay(Reducer::Messages, Some(&seed), &[&w1, &w2, &w3]).expect("replays");
        assert_eq!(ids(&got), ["a=1 again", "c=3", "-=no id"]);
    }

    #[test]
    fn remove_all_clears_the_state_and_earlier_writes() {
        let seed = list(vec![human("a", "1")]);
        let w1 = list(vec![human("b", "2")]);
        let w2 = list(vec![remove(REMOVE_ALL_MESSAGES), human("c", "3")]);
        let w3 = human("d", "4");
        let got = replay(Reducer::Messages, Some(&seed), &[&w1, &w2, &w3]).expect("replays");
        assert_eq!(ids(&got), ["c=3", "d=4"]);
    }

    #[test]
    fn the_last_overwrite_is_the_base() {
        let ow = |items: Vec<Value>| {
            Value::ext(
                ext::CONSTRUCTOR_KW_ARGS,
                list(vec![
                    Value::str("langgraph.types"),
                    Value::str("Overwrite"),
                    Value::map(vec![
                        (Value::str("value"), list(items)),
                        (Value::str("type"), Value::str("__overwrite__")),
                    ]),
                ]),
            )
        };
        let seed = list(vec![human("a", "1")]);
        let w1 = ow(vec![human("x", "x")]);
        let w2 = list(vec![human("b", "2")]);
        let w3 = ow(vec![human("y", "y")]);
        let w4 = list(vec![human("c", "3")]);
        let got = replay(Reducer::Messages, Some(&seed), &[&w1, &w2, &w3, &w4]).expect("replays");
        assert_eq!(ids(&got), ["y=y", "c=3"]);
        // update(): the Overwrite wins over the other writes of its step.
        let got = update(Reducer::Messages, seed.clone(), &[&w2, &w1]).expect("updates");
        assert_eq!(ids(&got), ["x=x"]);
        assert!(update(Reducer::Messages, seed, &[&w1, &w3]).is_err());
        // The dict forms.
        let dict = Value::map(vec![(Value::str("__overwrite__"), Value::Nil)]);
        assert_eq!(overwrite(&dict).map(|v| v.is_none()), Some(true));
    }

    #[test]
    fn no_seed_starts_empty_and_plain_inputs_become_messages() {
        let w1 = Value::str("hello");
        let w2 = list(vec![list(vec![Value::str("assistant"), Value::str("hi")])]);
        let got = replay(Reducer::Messages, None, &[&w1, &w2]).expect("replays");
        let kinds: Vec<Kind> = got
            .as_array()
            .expect("list")
            .iter()
            .map(|m| Message::from_value(m).expect("message").kind)
            .collect();
        assert_eq!(kinds, [Kind::Human, Kind::Ai]);
        assert!(replay(Reducer::Messages, None, &[&Value::int(3)]).is_err());
    }

    #[test]
    fn batching_does_not_change_the_result() {
        let seed = list(vec![human("a", "1")]);
        let writes = [
            list(vec![human("b", "2")]),
            remove("a"),
            list(vec![human("b", "2'"), human("c", "3")]),
        ];
        let all: Vec<&Value> = writes.iter().collect();
        let once = replay(Reducer::Messages, Some(&seed), &all).expect("replays");
        let mut step = seed;
        for w in &writes {
            step = replay(Reducer::Messages, Some(&step), &[w]).expect("replays");
        }
        assert_eq!(encode(&once), encode(&step));
    }

    #[test]
    fn files_merge_in_place_and_none_deletes() {
        let f = |text: &str| Value::map(vec![(Value::str("content"), Value::str(text))]);
        let seed = Value::map(vec![(Value::str("/a"), f("a")), (Value::str("/b"), f("b"))]);
        let w1 = Value::map(vec![
            (Value::str("/c"), f("c")),
            (Value::str("/a"), f("a2")),
        ]);
        let w2 = Value::map(vec![
            (Value::str("/b"), Value::Nil),
            (Value::str("/zz"), Value::Nil),
        ]);
        let got = replay(Reducer::Files, Some(&seed), &[&w1, &w2]).expect("replays");
        let paths: Vec<(&str, &str)> = got
            .as_map()
            .expect("dict")
            .iter()
            .map(|(k, v)| {
                (
                    k.as_str().expect("path"),
                    v.get("content").and_then(Value::as_str).expect("text"),
                )
            })
            .collect();
        assert_eq!(paths, [("/a", "a2"), ("/c", "c")]);
        assert!(replay(Reducer::Files, None, &[&Value::int(1)]).is_err());
    }

    #[test]
    fn unknown_reducers_are_not_guessed() {
        assert_eq!(Reducer::for_channel("notes"), Reducer::Unknown);
        assert!(replay(Reducer::Unknown, None, &[&Value::int(1)]).is_err());
        // A seed with no writes needs no reducer.
        let seed = Value::int(1);
        assert_eq!(
            encode(&replay(Reducer::Unknown, Some(&seed), &[]).expect("seed")),
            encode(&seed)
        );
    }

    /// A chain 0 ← 1 ← 2 ← 3 ← 4 (snapshot at 2), each with one write; checkpoint 4 has a
    /// NULL_TASK_ID write of its own.
    fn chain() -> Vec<Node> {
        (0..5)
            .map(|i| Node {
                id: format!("c{i}"),
                parent: (i > 0).then(|| format!("c{}", i - 1)),
                stored: (i == 2).then(|| list(vec![human("s", "snap")])),
                has_version: i > 0,
                writes: vec![(
                    if i == 4 {
                        NULL_TASK_ID.into()
                    } else {
                        format!("t{i}")
                    },
                    human(&format!("m{i}"), "x"),
                )],
            })
            .collect()
    }

    #[test]
    fn the_walk_stops_at_the_nearest_seed_and_keeps_writes_oldest_first() {
        let nodes = chain();
        let mut fetched = Vec::new();
        let mut fetch = |id: &str, _: &[String]| -> Result<Option<Ancestor>> {
            fetched.push(id.to_owned());
            let n = nodes.iter().find(|n| n.id == id);
            Ok(n.map(|n| Ancestor {
                parent: n.parent.clone(),
                stored: n
                    .stored
                    .clone()
                    .map(|v| ("messages".to_owned(), true, v))
                    .into_iter()
                    .collect(),
                writes: n
                    .writes
                    .iter()
                    .map(|(_, v)| ("messages".to_owned(), v.clone()))
                    .collect(),
            }))
        };
        let h = walk(Some("c3"), &["messages".to_owned()], &mut fetch).expect("walks");
        let h = &h["messages"];
        assert_eq!(
            h.seed.as_ref().map(|s| s.checkpoint_id.as_str()),
            Some("c2")
        );
        let from: Vec<&str> = h.writes.iter().map(|(c, _)| c.as_str()).collect();
        assert_eq!(from, ["c2", "c3"]);
        assert_eq!(fetched, ["c3", "c2"]);
        assert_eq!(
            ids(&h.rebuild(Reducer::Messages).expect("rebuilds")),
            ["s=snap", "m2=x", "m3=x"]
        );
        // A missing ancestor is an error that names it.
        let mut gone = |id: &str, _: &[String]| -> Result<Option<Ancestor>> {
            Ok((id == "c3").then(|| Ancestor {
                parent: Some("c2".into()),
                ..Ancestor::default()
            }))
        };
        let err = walk(Some("c3"), &["messages".to_owned()], &mut gone).expect_err("broken");
        assert!(format!("{err:#}").contains("checkpoint c2 (the parent of c3) is missing"));
    }

    #[test]
    fn the_fold_gives_every_checkpoint_what_the_walk_gives_it() {
        let nodes = chain();
        let mut got: Vec<Vec<String>> = vec![vec![]; nodes.len()];
        fold(Reducer::Messages, &nodes, &mut |i, v| {
            got[i] = ids(&v.expect("value").to_value());
        });
        assert_eq!(got[0], Vec::<String>::new());
        assert_eq!(got[1], ["m0=x"]);
        assert_eq!(got[2], ["s=snap"]);
        assert_eq!(got[3], ["s=snap", "m2=x"]);
        // c4 applies its own NULL_TASK_ID write, as get_state does.
        assert_eq!(got[4], ["s=snap", "m2=x", "m3=x", "m4=x"]);
        // Without c1, c2 still has its snapshot; c1's children below a missing parent fail.
        let mut broken = nodes.clone();
        broken.remove(1);
        broken[1].stored = None;
        let mut errors = 0;
        fold(Reducer::Messages, &broken, &mut |_, v| {
            errors += usize::from(v.is_err())
        });
        assert_eq!(errors, 3);
    }

    #[test]
    fn the_snapshot_frequency_shows_where_counts_reached_it() {
        let c = |u, s| vec![("messages".to_owned(), (u, s))];
        let none = Vec::new;
        // 1,1 → 2,2 → snapshot (counts reset) → 1,1: frequency 3.
        let pairs = vec![
            (c(1, 1), none()),
            (c(2, 2), c(1, 1)),
            (none(), c(2, 2)),
            (c(1, 1), none()),
        ];
        assert_eq!(inferred_frequency("messages", &pairs), Some(3));
        // No snapshot yet: only a lower bound.
        assert_eq!(inferred_frequency("messages", &pairs[..2]), None);
        let next = next_counters(
            &["messages".to_owned(), "files".to_owned()],
            &c(2, 4),
            &["messages"],
        );
        assert_eq!(
            next,
            [
                ("messages".to_owned(), (3, 5)),
                ("files".to_owned(), (0, 1))
            ]
        );
    }
}
