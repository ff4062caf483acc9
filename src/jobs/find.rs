//! `find PATTERN`: which conversations mention something — message text (and tool-call
//! names and arguments, and string state channels such as a summary) across every thread, in
//! the latest state or the whole history, and the LangGraph Store's items; `--meta
//! KEY=VALUE` for the threads of one user. The threads' hits go to the caller as they are
//! found (a batch of threads at a time, in thread-id order); the Store's come in the report.

use std::collections::HashMap;

use anyhow::{anyhow, Result};
use serde::Serialize;

use super::{Ctx, Sink};
use crate::codec::aes::{self, Keyring};
use crate::codec::Value;
use crate::model::channels::{is_delta, Location};
use crate::model::checkpoint::StoredMessages;
use crate::model::Message;
use crate::ops::find::{excerpt, MetaCondition, Pattern};
use crate::read::LoadedCheckpoint;
use crate::storage::{CheckpointRow, CheckpointStore};

/// What to search for, and where.
#[derive(Debug, Clone, Default)]
pub struct Request {
    /// The text (or with `regex` the regular expression) to find.
    pub pattern: Option<String>,
    /// `pattern` is a regular expression.
    pub regex: bool,
    /// Case-insensitive.
    pub ignore_case: bool,
    /// Only the threads (and Store items) whose metadata matches each `KEY=VALUE`.
    pub meta: Vec<String>,
    /// Every root checkpoint, not only the latest.
    pub history: bool,
    /// Only this thread (then the Store is not searched).
    pub thread: Option<String>,
    /// Threads searched at once (`None`: one per core).
    pub jobs: Option<usize>,
}

/// What the search saw besides the threads' hits: the Store's hits, and the threads it could
/// not search.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// Threads searched (or tried).
    pub threads: usize,
    /// The threads not searched: (thread, why, the why is a missing or wrong key).
    pub failed: Vec<(String, String, bool)>,
    /// The Store's hits, in namespace and key order.
    pub store_hits: Vec<StoreHit>,
}

impl Report {
    /// `Ok` when every thread was searched; else the one line that says which were not
    /// (exit 1 when none was, 3 when some were).
    pub fn check(&self) -> Result<()> {
        not_searched(&self.failed, self.threads)
    }
}

/// Searches what `req` asks for: each thread hit goes to `hits` as found (in thread-id
/// order), the Store's come back in the report. A bad pattern or `--meta`, or neither
/// given, is an error before anything is read.
pub fn run(
    req: &Request,
    ctx: &Ctx,
    sink: &dyn Sink,
    hits: &mut dyn FnMut(Hit) -> Result<()>,
) -> Result<Report> {
    let pattern = req
        .pattern
        .as_deref()
        .map(|p| Pattern::new(p, req.regex, req.ignore_case))
        .transpose()?;
    let conditions = req
        .meta
        .iter()
        .map(|m| MetaCondition::parse(m))
        .collect::<Result<Vec<_>>>()?;
    if pattern.is_none() && conditions.is_empty() {
        return Err(crate::exit::Usage(
            "give a PATTERN to search for, or --meta KEY=VALUE (or both)".into(),
        )
        .into());
    }
    let store = ctx
        .open_read_only()
        .or_else(|e| ctx.checkpoints_or_store_only(crate::storage::Access::ReadOnly, e, sink))?;
    let keys = ctx.keys();
    let readers = crate::read::Readers::new(&*store, req.jobs);
    // (thread, why, the why is a missing or wrong key).
    let mut failed: Vec<(String, String, bool)> = Vec::new();
    let mut threads = 0;
    let mut search_threads = |latest: Vec<(String, String)>| {
        let batch = Batch {
            store: &*store,
            keys: &keys,
            readers: &readers,
            pattern: pattern.as_ref(),
            conditions: &conditions,
            history: req.history,
        };
        batch.search(latest, &mut *hits, &mut failed)
    };
    match &req.thread {
        Some(only) => {
            let Some(id) = store.latest_checkpoint_id(only, "")? else {
                return Err(crate::read::unknown_thread(&*store, only));
            };
            threads = 1;
            search_threads(vec![(only.clone(), id)])?;
        }
        // A batch of threads at a time, in thread-id order: the hits are handed on as they
        // come, never all held.
        None => crate::read::stream::latest_root_ids(&*store, &mut |latest| {
            threads += latest.len();
            search_threads(latest)?;
            Ok(true)
        })?,
    }
    // The LangGraph Store, when the database has one (not with --thread: one thread only).
    let store_hits = match ctx.open_store_if_any(crate::storage::Access::ReadOnly)? {
        Some(items) if req.thread.is_none() => {
            search_store(&*items, pattern.as_ref(), &conditions)?
        }
        _ => vec![],
    };
    Ok(Report {
        threads,
        failed,
        store_hits,
    })
}

/// One hit: a message (or a state channel) of a checkpoint that matches.
#[derive(Debug, Clone, Serialize)]
pub struct Hit {
    /// The thread.
    pub thread_id: String,
    /// The checkpoint searched.
    pub checkpoint_id: String,
    /// The message's position in the checkpoint's list (`None`: a state channel, or a thread
    /// found by `--meta` alone).
    pub index: Option<usize>,
    /// The message's id, if it has one.
    pub message_id: Option<String>,
    /// The message's type (`human`, `ai`, `tool`…), or `channel:NAME`, or `thread`.
    pub role: String,
    /// Text before the match.
    pub before: String,
    /// The matched text.
    #[serde(rename = "match")]
    pub matched: String,
    /// Text after the match.
    pub after: String,
}

/// One hit in the LangGraph Store: an item whose value matches (the text around the match in
/// one of its strings), or with `--meta` alone a namespace that carries the value as a label.
/// In JSON beside the thread hits, with the same fields (`thread_id`, `checkpoint_id`,
/// `index`, `message_id` null; `role` `store`) and `namespace` (the labels) and `key` (null
/// for a namespace).
#[derive(Debug, Clone, Serialize)]
pub struct StoreHit {
    /// Always null (the fields of a thread hit).
    pub thread_id: Option<String>,
    /// Always null.
    pub checkpoint_id: Option<String>,
    /// Always null.
    pub index: Option<usize>,
    /// Always null.
    pub message_id: Option<String>,
    /// `store`.
    pub role: &'static str,
    /// Text before the match.
    pub before: String,
    /// The matched text (with `--meta` alone: empty).
    #[serde(rename = "match")]
    pub matched: String,
    /// Text after the match.
    pub after: String,
    /// The item's namespace (its labels).
    pub namespace: crate::ops::store::Labels,
    /// The item's key (`None`: a namespace that carries the value as a label).
    pub key: Option<String>,
}

/// The store's hits: with a pattern, every string of every item's value (of the items
/// `--meta` selects, when given) that matches; with `--meta` alone, the namespaces that carry
/// each value as a label.
fn search_store(
    store: &dyn crate::storage::store::ItemStore,
    pattern: Option<&Pattern>,
    conditions: &[MetaCondition],
) -> Result<Vec<StoreHit>> {
    let mut hits = Vec::new();
    let mut namespaces: Vec<String> = Vec::new();
    store.for_each_item(&mut |prefix, key, value| {
        let Some(p) = pattern else {
            if crate::ops::store::namespace_carries(prefix, conditions)
                && !namespaces.iter().any(|n| n == prefix)
            {
                namespaces.push(prefix.to_owned());
            }
            return Ok(());
        };
        if !conditions.is_empty()
            && !crate::ops::store::meta_selects_item(prefix, value, conditions)
        {
            return Ok(());
        }
        if !p.maybe_in(value) && !value.contains(&b'\\') {
            return Ok(());
        }
        for text in crate::ops::store::value_texts(value) {
            if let Some(r) = p.find(&text) {
                let (before, matched, after) = excerpt(&text, r);
                hits.push(StoreHit {
                    thread_id: None,
                    checkpoint_id: None,
                    index: None,
                    message_id: None,
                    role: "store",
                    before,
                    matched,
                    after,
                    namespace: crate::ops::store::labels(prefix),
                    key: Some(key.to_owned()),
                });
            }
        }
        Ok(())
    })?;
    namespaces.sort();
    hits.extend(namespaces.iter().map(|n| StoreHit {
        thread_id: None,
        checkpoint_id: None,
        index: None,
        message_id: None,
        role: "store",
        before: String::new(),
        matched: String::new(),
        after: String::new(),
        namespace: crate::ops::store::labels(n),
        key: None,
    }));
    hits.sort_by(|a, b| (&a.namespace, &a.key).cmp(&(&b.namespace, &b.key)));
    Ok(hits)
}

/// What one batch of threads is searched with.
struct Batch<'a> {
    store: &'a dyn CheckpointStore,
    keys: &'a Keyring,
    readers: &'a crate::read::Readers<'a>,
    pattern: Option<&'a Pattern>,
    conditions: &'a [MetaCondition],
    history: bool,
}

impl Batch<'_> {
    /// Searches `latest` (threads and their latest root checkpoints, in thread-id order; a
    /// thread's checkpoints all in this batch) and hands the hits to `found` in that order;
    /// a thread that cannot be searched goes to `failed`.
    fn search(
        &self,
        latest: Vec<(String, String)>,
        found: &mut dyn FnMut(Hit) -> Result<()>,
        failed: &mut Vec<(String, String, bool)>,
    ) -> Result<()> {
        let fail = |thread: String, e: anyhow::Error| {
            let key = crate::ops::edit::is_key_error(&e);
            (thread, format!("{e:#}"), key)
        };
        // --meta selects whole threads, as forget --meta does (one selection for both).
        let latest = if self.conditions.is_empty() {
            latest
        } else {
            let threads: Vec<&str> = latest.iter().map(|(t, _)| t.as_str()).collect();
            let selects =
                crate::read::meta_select(self.readers, self.keys, &threads, self.conditions)?;
            let mut selected = Vec::with_capacity(latest.len());
            for ((thread, id), s) in latest.into_iter().zip(selects) {
                match s {
                    Ok(true) => selected.push((thread, id)),
                    Ok(false) => {}
                    Err(e) => failed.push(fail(thread, e)),
                }
            }
            selected
        };
        // The checkpoints searched: each thread's latest, or with --history all of its root ones.
        let ids: Vec<(String, String)> = if self.history {
            let mut all = Vec::new();
            for (thread, _) in &latest {
                for (id, _) in self.store.metadata(thread, "")? {
                    all.push((thread.clone(), id));
                }
            }
            all
        } else {
            latest
        };
        let (keys, pattern, conditions) = (self.keys, self.pattern, self.conditions);
        let results = crate::read::map_latest(self.readers, &ids, |row| {
            search(keys, row, pattern, conditions)
        })?;
        // DeltaChannel threads' states, rebuilt from their older rows (per thread for --history).
        #[allow(clippy::type_complexity)]
        let mut replayed: HashMap<
            String,
            Result<HashMap<String, Vec<Hit>>, (String, String, bool)>,
        > = HashMap::new();
        for ((thread, id), r) in ids.iter().zip(results) {
            let r = match r {
                Ok(Searched::Replay) if self.history => {
                    let found = replayed.entry(thread.clone()).or_insert_with(|| {
                        search_delta_history(self.store, keys, thread, pattern, conditions)
                            .map_err(|e| fail(thread.clone(), e))
                    });
                    match found {
                        Ok(found) => Ok(found.remove(id).unwrap_or_default()),
                        Err(e) => Err(e.clone()),
                    }
                }
                Ok(Searched::Replay) => {
                    search_delta_state(self.store, keys, thread, id, pattern, conditions)
                        .map_err(|e| fail(thread.clone(), e))
                }
                Ok(Searched::Hits(h)) => Ok(h),
                Err(e) => Err(fail(thread.clone(), e)),
            };
            match r {
                Ok(h) => h.into_iter().try_for_each(&mut *found)?,
                Err(f) if !failed.iter().any(|(t, _, _)| *t == f.0) => failed.push(f),
                Err(_) => {}
            }
        }
        Ok(())
    }
}

/// The threads that could not be searched, in one line: threads encrypted without the key
/// (or with the wrong one) are counted with the hint once, not named one per thread. Every
/// thread: an error (exit 1); some: partial (exit 3).
pub fn not_searched(failed: &[(String, String, bool)], total: usize) -> Result<()> {
    if failed.is_empty() {
        return Ok(());
    }
    let keyed: Vec<&(String, String, bool)> = failed.iter().filter(|f| f.2).collect();
    let mut parts = Vec::new();
    if let Some((_, why, _)) = keyed.first() {
        parts.push(format!(
            "{} encrypted and not searched without the key ({why})",
            crate::text::human::count(keyed.len() as u64, "thread")
        ));
    }
    for (thread, why, _) in failed.iter().filter(|f| !f.2) {
        parts.push(format!("thread '{thread}': {why}"));
    }
    if failed.len() == total {
        anyhow::bail!("no thread could be searched: {}", parts.join("; "));
    }
    Err(crate::exit::Partial(format!(
        "{} of {total} threads were not searched: {}",
        failed.len(),
        parts.join("; ")
    ))
    .into())
}

/// What [`search`] made of one checkpoint.
enum Searched {
    /// Its hits.
    Hits(Vec<Hit>),
    /// Its messages are a DeltaChannel's: its state needs the older rows (read by the caller,
    /// which holds the store).
    Replay,
}

/// The hits of one checkpoint, or [`Searched::Replay`] for a DeltaChannel thread's.
fn search(
    keys: &Keyring,
    row: CheckpointRow,
    pattern: Option<&Pattern>,
    conditions: &[MetaCondition],
) -> Result<Searched> {
    let metadata = crate::model::Metadata::parse(row.metadata.as_deref()).map_err(|e| {
        anyhow!(
            "bad metadata on checkpoint {} of thread '{}': {e}",
            row.checkpoint_id,
            row.thread_id
        )
    })?;
    // A DeltaChannel's messages are not (all) in the blob, or its snapshot may still take the
    // checkpoint's own input writes: its state is searched, not the row (an encrypted blob is
    // looked into once opened, below).
    let plain = aes::split_type(&row.type_name).1.is_none();
    let stored = match plain {
        true => crate::read::replay::stored_messages_location(&row.checkpoint),
        false => Location::Absent,
    };
    if is_delta(stored, &metadata) {
        return Ok(Searched::Replay);
    }
    // A plain blob with no byte match for the pattern holds no hit (with a pattern, a hit is
    // a match, whatever the conditions) and is not decoded; an encrypted blob's bytes say
    // nothing of its text: it is opened and searched.
    if plain && pattern.is_some_and(|p| !p.maybe_in(&row.checkpoint)) {
        return Ok(Searched::Hits(vec![]));
    }
    let (cp, messages) = crate::read::decode_shallow(keys, row)?;
    if crate::read::needs_replay(&cp, &messages) {
        return Ok(Searched::Replay);
    }
    let items = match pattern {
        Some(p) => matching_messages_of(&messages, p)?,
        None => messages_of(&messages)?,
    };
    let values = crate::read::state_values(&cp, &[]);
    search_state(&cp, &items, &values, pattern, conditions).map(Searched::Hits)
}

/// [`messages_of`] for a search: a message whose stored bytes hold no byte match for the
/// pattern holds no hit (the same rule as the checkpoint's own prefilter) and is left out
/// (`None`) without being decoded: `--history` then decodes only the messages that match,
/// not every message of every checkpoint.
fn matching_messages_of(
    messages: &StoredMessages,
    pattern: &Pattern,
) -> Result<Vec<Option<Message>>> {
    let StoredMessages::List(list) = messages else {
        return Ok(vec![]);
    };
    let bytes = list.bytes();
    list.spans()?
        .iter()
        .enumerate()
        .map(|(i, span)| match bytes.get(span.clone()) {
            Some(b) if !pattern.maybe_in(b) => Ok(None),
            _ => list.message(i, span).map(Some),
        })
        .collect()
}

/// The message views of a stored list (none when there is no list).
fn messages_of(messages: &StoredMessages) -> Result<Vec<Option<Message>>> {
    let StoredMessages::List(list) = messages else {
        return Ok(vec![]);
    };
    list.spans()?
        .iter()
        .enumerate()
        .map(|(i, span)| list.message(i, span).map(Some))
        .collect()
}

/// The hits of one state: `messages` (`None`: an item that is not a message) and the other
/// channels' `values` as `get_state` shows them.
fn search_state(
    cp: &LoadedCheckpoint,
    messages: &[Option<Message>],
    values: &[(&str, Option<&Value>)],
    pattern: Option<&Pattern>,
    conditions: &[MetaCondition],
) -> Result<Vec<Hit>> {
    // The thread was selected by --meta before any checkpoint was searched.
    let hit = |index, message_id, role: String, parts: (String, String, String)| Hit {
        thread_id: cp.row.thread_id.clone(),
        checkpoint_id: cp.row.checkpoint_id.clone(),
        index,
        message_id,
        role,
        before: parts.0,
        matched: parts.1,
        after: parts.2,
    };
    let Some(pattern) = pattern else {
        let what = conditions
            .iter()
            .map(|c| format!("{}={}", c.key, c.value))
            .collect::<Vec<_>>()
            .join(" ");
        return Ok(vec![hit(
            None,
            None,
            "thread".into(),
            (String::new(), what, String::new()),
        )]);
    };
    let mut hits = Vec::new();
    for (i, m) in messages.iter().enumerate() {
        let Some(m) = m else { continue };
        let text = m.searchable_text();
        if let Some(range) = pattern.find(&text) {
            let id = m.id().map(str::to_owned);
            hits.push(hit(
                Some(i),
                id,
                m.kind.type_str().into(),
                excerpt(&text, range),
            ));
        }
    }
    // String state channels (a summary, a user profile…).
    for (name, value) in values {
        if let Some(text) = value.and_then(Value::as_str) {
            if let Some(range) = pattern.find(text) {
                hits.push(hit(
                    None,
                    None,
                    format!("channel:{name}"),
                    excerpt(text, range),
                ));
            }
        }
    }
    Ok(hits)
}

/// The hits of checkpoint `id` of DeltaChannel thread `thread`, in its state as `get_state`
/// shows it (the messages and other DeltaChannels rebuilt, as `show` reads them).
fn search_delta_state(
    store: &dyn CheckpointStore,
    keys: &Keyring,
    thread: &str,
    id: &str,
    pattern: Option<&Pattern>,
    conditions: &[MetaCondition],
) -> Result<Vec<Hit>> {
    let (cp, messages, deltas) = crate::read::load_shallow(store, keys, thread, "", Some(id))?;
    let items = messages_of(&messages)?;
    let values = crate::read::state_values(&cp, &deltas);
    search_state(&cp, &items, &values, pattern, conditions)
}

/// The hits of every root checkpoint of DeltaChannel thread `thread`, by checkpoint id, in
/// each state as `get_state_history` shows it: the messages rebuilt in one pass
/// ([`crate::read::replay::fold_messages`], as `history` counts them); the other channels as
/// stored.
fn search_delta_history(
    store: &dyn CheckpointStore,
    keys: &Keyring,
    thread: &str,
    pattern: Option<&Pattern>,
    conditions: &[MetaCondition],
) -> Result<HashMap<String, Vec<Hit>>> {
    let rows = store
        .checkpoints(thread, "")?
        .into_iter()
        .map(|row| crate::read::decode_shallow(keys, row))
        .collect::<Result<Vec<_>>>()?;
    let mut found = HashMap::with_capacity(rows.len());
    let mut failed = None;
    let mut visit = |i: usize, value: Result<&crate::model::delta::Carried>| {
        let cp = &rows[i].0;
        let hits = value.and_then(|v| {
            let items: Vec<Option<Message>> = v.items().map(Message::from_value).collect();
            let values = crate::read::state_values(cp, &[]);
            search_state(cp, &items, &values, pattern, conditions)
        });
        match hits {
            Ok(h) => {
                found.insert(cp.row.checkpoint_id.clone(), h);
            }
            Err(e) => {
                failed.get_or_insert(e.context(format!("checkpoint {}", cp.row.checkpoint_id)));
            }
        }
    };
    if !crate::read::replay::fold_messages(store, keys, &rows, &mut visit)? {
        // Not a DeltaChannel thread after all: each stored state as it is.
        for (cp, messages) in &rows {
            let items = messages_of(messages)?;
            let values = crate::read::state_values(cp, &[]);
            let hits = search_state(cp, &items, &values, pattern, conditions)?;
            found.insert(cp.row.checkpoint_id.clone(), hits);
        }
    }
    match failed {
        Some(e) => Err(e),
        None => Ok(found),
    }
}
