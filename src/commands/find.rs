//! `memctl find PATTERN`: which conversations mention something — message text (and tool-call
//! names and arguments, and string state channels such as a summary) across every thread, in
//! the latest state or the whole history; `--meta KEY=VALUE` for the threads of one user.

use std::collections::HashMap;
use std::io::Write;

use anyhow::{anyhow, Result};
use serde::Serialize;

use crate::cli::{FindArgs, Format, GlobalArgs};
use crate::codec::aes::{self, Keyring};
use crate::codec::Value;
use crate::model::channels::{is_delta, Location};
use crate::model::checkpoint::StoredMessages;
use crate::model::Message;
use crate::ops::find::{excerpt, MetaCondition, Pattern};
use crate::output::listing::{Listing, Order};
use crate::output::{self, human, table};
use crate::read::LoadedCheckpoint;
use crate::storage::{CheckpointRow, CheckpointStore};

/// One hit: a message (or a state channel) of a checkpoint that matches.
#[derive(Debug, Clone, Serialize)]
struct Hit {
    thread_id: String,
    checkpoint_id: String,
    /// The message's position in the checkpoint's list (`None`: a state channel, or a thread
    /// found by `--meta` alone).
    index: Option<usize>,
    message_id: Option<String>,
    /// The message's type (`human`, `ai`, `tool`…), or `channel:NAME`, or `thread`.
    role: String,
    /// Text around the match.
    before: String,
    /// The matched text.
    #[serde(rename = "match")]
    matched: String,
    after: String,
}

/// One hit in the LangGraph Store: an item whose value matches (the text around the match in
/// one of its strings), or with `--meta` alone a namespace that carries the value as a label.
/// In JSON beside the thread hits, with the same fields (`thread_id`, `checkpoint_id`,
/// `index`, `message_id` null; `role` `store`) and `namespace` (the labels) and `key` (null
/// for a namespace).
#[derive(Debug, Clone, Serialize)]
struct StoreHit {
    thread_id: Option<String>,
    checkpoint_id: Option<String>,
    index: Option<usize>,
    message_id: Option<String>,
    role: &'static str,
    before: String,
    #[serde(rename = "match")]
    matched: String,
    after: String,
    namespace: crate::ops::store::Labels,
    key: Option<String>,
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

/// Runs `find`.
pub fn run(g: &GlobalArgs, args: &FindArgs, out: &mut dyn Write) -> Result<()> {
    let pattern = args
        .pattern
        .as_deref()
        .map(|p| Pattern::new(p, args.regex, args.ignore_case))
        .transpose()?;
    let conditions = args
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
    let store = super::open_read_only(g).or_else(|e| {
        super::store::checkpoints_or_store_only(g, crate::storage::Access::ReadOnly, e)
    })?;
    let keys = super::keys(g);
    let format = output::resolve_format(g.format);
    let readers = crate::read::Readers::new(&*store, args.jobs);
    let mut found = Found::new(out, format, args.count);
    // (thread, why, the why is a missing or wrong key).
    let mut failed: Vec<(String, String, bool)> = Vec::new();
    let mut threads = 0;
    let mut search_threads = |latest: Vec<(String, String)>, found: &mut Found<'_>| {
        let batch = Batch {
            store: &*store,
            keys: &keys,
            readers: &readers,
            pattern: pattern.as_ref(),
            conditions: &conditions,
            history: args.history,
        };
        batch.search(latest, found, &mut failed)
    };
    match &args.thread {
        Some(only) => {
            let Some(id) = store.latest_checkpoint_id(only, "")? else {
                return Err(crate::read::unknown_thread(&*store, only));
            };
            threads = 1;
            search_threads(vec![(only.clone(), id)], &mut found)?;
        }
        // A batch of threads at a time, in thread-id order: the hits are written as they
        // come (JSON) or spilled (a table), never all held.
        None => crate::read::stream::latest_root_ids(&*store, &mut |latest| {
            threads += latest.len();
            search_threads(latest, &mut found)?;
            Ok(true)
        })?,
    }
    // The LangGraph Store, when the database has one (not with --thread: one thread only).
    let store_hits = match super::store::open_if_any(g, crate::storage::Access::ReadOnly)? {
        Some(items) if args.thread.is_none() => {
            search_store(&*items, pattern.as_ref(), &conditions)?
        }
        _ => vec![],
    };
    let hits = found.finish(&store_hits)?;
    not_searched(&failed, threads)?;
    if hits == 0 && store_hits.is_empty() {
        // Like grep: nothing matched is exit 1 (the empty result is the answer: no error
        // line); a table says it in a note on stderr, stdout stays empty.
        if !g.quiet
            && !args.count
            && crate::output::resolve_format(g.format) == crate::cli::Format::Table
        {
            eprintln!("memctl: no hits");
        }
        return Err(crate::exit::NoMatch.into());
    }
    Ok(())
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
        found: &mut Found<'_>,
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
                Ok(h) => found.add(h)?,
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
fn not_searched(failed: &[(String, String, bool)], total: usize) -> Result<()> {
    if failed.is_empty() {
        return Ok(());
    }
    let keyed: Vec<&(String, String, bool)> = failed.iter().filter(|f| f.2).collect();
    let mut parts = Vec::new();
    if let Some((_, why, _)) = keyed.first() {
        parts.push(format!(
            "{} encrypted and not searched without the key ({why})",
            crate::output::human::count(keyed.len() as u64, "thread")
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

/// The threads table's headers and its right-aligned column.
const HEADERS: [&str; 6] = ["thread_id", "checkpoint", "#", "message_id", "type", "text"];

/// find's output, written as the hits come (a batch of threads at a time, in thread-id
/// order): JSON as they come, a table's rows spilled until the last ([`Listing`]), `--count`'s
/// line or record of each thread once its last hit is in.
struct Found<'o> {
    format: Format,
    count: bool,
    /// Thread hits so far.
    hits: usize,
    /// Threads with a hit so far.
    threads: usize,
    /// `--count`: the thread being counted and its hits so far.
    counting: Option<(String, usize)>,
    sink: Sink<'o>,
}

/// Where [`Found`] writes.
enum Sink<'o> {
    /// `--count` as text: a line per thread.
    Lines(&'o mut dyn Write),
    /// Records (the hits, or `--count`'s per thread in JSON), or the hits' table.
    Listed(Listing<'o>),
}

/// A thread's count (`--count`, JSON).
#[derive(Serialize)]
struct Count<'a> {
    thread_id: &'a str,
    hits: usize,
}

/// A namespace's count: `namespace` instead of `thread_id`.
#[derive(Serialize)]
struct NsCount<'a> {
    namespace: &'a crate::ops::store::Labels,
    hits: usize,
}

impl<'o> Found<'o> {
    fn new(out: &'o mut dyn Write, format: Format, count: bool) -> Found<'o> {
        let sink = match (count, format) {
            (true, Format::Table) => Sink::Lines(out),
            _ => Sink::Listed(Listing::new(out, format, Order::AsRead, None)),
        };
        Found {
            format,
            count,
            hits: 0,
            threads: 0,
            counting: None,
            sink,
        }
    }

    /// Takes the hits of one checkpoint (after those of the checkpoints before it).
    fn add(&mut self, hits: Vec<Hit>) -> Result<()> {
        for h in hits {
            self.hits += 1;
            if self.count {
                match &mut self.counting {
                    Some((t, n)) if *t == h.thread_id => *n += 1,
                    _ => {
                        self.write_count()?;
                        self.counting = Some((h.thread_id, 1));
                        self.threads += 1;
                    }
                }
                continue;
            }
            if let Sink::Listed(listing) = &mut self.sink {
                listing.push(i128::MIN, false, &h, || thread_row(&h))?;
            }
        }
        Ok(())
    }

    /// Writes the count of the thread counted so far.
    fn write_count(&mut self) -> Result<()> {
        let Some((thread_id, hits)) = self.counting.take() else {
            return Ok(());
        };
        match &mut self.sink {
            Sink::Lines(out) => writeln!(out, "{}\t{hits}", human::id(&thread_id))?,
            Sink::Listed(listing) => {
                let record = Count {
                    thread_id: &thread_id,
                    hits,
                };
                listing.push(i128::MIN, false, &record, Vec::new)?;
            }
        }
        Ok(())
    }

    /// Writes the rest after the threads' hits: the Store's (after them in JSON, a table of
    /// their own), the table, `--count`'s summary. Returns the threads' hits.
    fn finish(mut self, store_hits: &[StoreHit]) -> Result<usize> {
        self.write_count()?;
        let hits = self.hits;
        if self.count {
            let mut per_ns: Vec<(&crate::ops::store::Labels, usize)> = Vec::new();
            for h in store_hits {
                match per_ns.last_mut() {
                    Some((ns, n)) if *ns == &h.namespace => *n += 1,
                    _ => per_ns.push((&h.namespace, 1)),
                }
            }
            match self.sink {
                Sink::Listed(mut listing) => {
                    for (namespace, hits) in per_ns {
                        listing.push(i128::MIN, false, &NsCount { namespace, hits }, Vec::new)?;
                    }
                    listing.finish(&[], &[], None)?;
                }
                Sink::Lines(out) => {
                    for (ns, n) in &per_ns {
                        writeln!(out, "store {}\t{n}", human::id(ns.joined()))?;
                    }
                    let mut summary = format!(
                        "{} in {}",
                        human::count((hits + store_hits.len()) as u64, "hit"),
                        human::count(self.threads as u64, "thread")
                    );
                    if !per_ns.is_empty() {
                        summary.push_str(&format!(
                            " and {} of the store",
                            human::count(per_ns.len() as u64, "namespace")
                        ));
                    }
                    writeln!(out, "{summary}")?;
                }
            }
            return Ok(hits);
        }
        let Sink::Listed(mut listing) = self.sink else {
            return Ok(hits);
        };
        if self.format != Format::Table {
            for h in store_hits {
                listing.push(i128::MIN, false, h, Vec::new)?;
            }
            listing.finish(&[], &[], None)?;
            return Ok(hits);
        }
        // The threads' hits first, then the store's.
        let out = match (hits, store_hits.is_empty()) {
            // Nothing on stdout (`| wc -l` counts 0): the caller's note says it on stderr.
            (0, true) => return Ok(hits),
            (0, false) => listing.into_writer(),
            _ => listing.finish_then(&HEADERS, &[2], None)?.1,
        };
        if store_hits.is_empty() {
            return Ok(hits);
        }
        let mut t = table::new_table(&["store namespace", "key", "text"]);
        for h in store_hits {
            let text = if h.key.is_none() {
                "(carries the value as a label)".to_owned()
            } else {
                format!(
                    "{}«{}»{}",
                    human::preview(&h.before, usize::MAX),
                    human::preview(&h.matched, usize::MAX),
                    human::preview(&h.after, usize::MAX)
                )
            };
            t.add_row(vec![
                human::id(h.namespace.joined()),
                h.key.as_deref().map_or("-".into(), human::id),
                text,
            ]);
        }
        writeln!(out, "{}", table::render(&t))?;
        Ok(hits)
    }
}

/// A thread hit's row of the table.
fn thread_row(h: &Hit) -> Vec<String> {
    vec![
        human::id(&h.thread_id),
        human::id(&h.checkpoint_id),
        h.index.map_or("-".into(), |i| i.to_string()),
        h.message_id.as_deref().map_or("-".into(), human::id),
        h.role.clone(),
        format!(
            "{}«{}»{}",
            human::preview(&h.before, usize::MAX),
            human::preview(&h.matched, usize::MAX),
            human::preview(&h.after, usize::MAX)
        ),
    ]
}
