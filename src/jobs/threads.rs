//! `threads list`: one row per thread, from SQL aggregates plus one blob per thread. The rows
//! go to a [`Rows`] as they are read (the command line streams or sorts them, `browse`
//! collects them); what the run saw on the way comes back in the [`Report`].

use anyhow::{Context, Result};

use super::{Ctx, Sink};
use crate::codec::aes::Keyring;
use crate::model::channels::is_delta;
use crate::model::checkpoint::MESSAGES;
use crate::read::replay::stored_messages_location;
use crate::tokens::approx;

/// The order `threads list` lists in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Sort {
    /// Most recently updated first.
    #[default]
    Updated,
    /// Largest stored size first.
    Size,
    /// Most messages first.
    Messages,
    /// Most checkpoints first.
    Checkpoints,
    /// Most tokens first (approximate counter).
    Tokens,
    /// Thread-id order (the primary key's, bytewise): rows are given as they are read.
    Thread,
}

/// Which threads, in which order.
#[derive(Debug, Clone, Default)]
pub struct Request {
    /// The order.
    pub sort: Sort,
    /// At most this many rows (the first in that order).
    pub limit: Option<usize>,
    /// Only threads with at least this many tokens in their latest state.
    pub min_tokens: Option<u64>,
    /// Only threads whose metadata matches each `KEY=VALUE`.
    pub meta: Vec<String>,
    /// Threads decoded at once (`None`: one per core).
    pub jobs: Option<usize>,
}

/// One listed thread.
#[derive(Debug, Clone)]
pub struct ThreadRow {
    /// The thread id (raw).
    pub thread_id: String,
    /// Checkpoints, all namespaces.
    pub checkpoints: u64,
    /// Checkpoint namespaces.
    pub namespaces: u64,
    /// Messages of the latest state (`None`: none known).
    pub messages: Option<usize>,
    /// Approximate tokens of the latest state.
    pub tokens: Option<u64>,
    /// Step of the latest checkpoint.
    pub last_step: Option<i64>,
    /// The app's last activity ([`crate::ops::activity`]): what prune and gc go by.
    pub updated_at: Option<jiff::Timestamp>,
    /// When the latest checkpoint is memctl's edit: its time (`ts`).
    pub edited_at: Option<jiff::Timestamp>,
    /// Seconds since the app's last activity.
    pub age: Option<i64>,
    /// Stored bytes.
    pub bytes: u64,
}

impl ThreadRow {
    /// The row's place in the order `sort` asks for (larger first; `i128::MIN`: none, last).
    pub fn sort_key(&self, sort: Sort) -> i128 {
        let none = i128::MIN;
        match sort {
            Sort::Updated => self.updated_at.map_or(none, |t| t.as_nanosecond()),
            Sort::Size => i128::from(self.bytes),
            Sort::Messages => self.messages.map_or(none, |m| m as i128),
            Sort::Checkpoints => i128::from(self.checkpoints),
            Sort::Tokens => self.tokens.map_or(none, i128::from),
            Sort::Thread => 0,
        }
    }
}

/// Where the rows go, as they are read.
pub trait Rows {
    /// Takes one row; `false`: no more rows are wanted (the limit is reached).
    fn push(&mut self, row: ThreadRow) -> Result<bool>;

    /// Whether more rows are wanted.
    fn wants_more(&self) -> bool;
}

/// A [`Rows`] that keeps every row (`browse`, tests).
impl Rows for Vec<ThreadRow> {
    fn push(&mut self, row: ThreadRow) -> Result<bool> {
        Vec::push(self, row);
        Ok(true)
    }

    fn wants_more(&self) -> bool {
        true
    }
}

/// What the listed threads showed on the way, reported after the list.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// Threads read.
    pub total: usize,
    /// Threads encrypted and read without a key.
    pub locked: usize,
    /// The variable that holds the key (named in the note on locked threads).
    pub key_var: String,
    /// Threads whose latest state did not read (listed without it), with why.
    pub unreadable: Vec<(String, String)>,
}

/// Lists the threads `req` asks for into `rows`: read a batch at a time in thread-id order
/// (the memory flat in the number of threads). A thread whose state does not read is listed
/// without it and named in the report's `unreadable`.
pub fn run(req: &Request, ctx: &Ctx, _sink: &dyn Sink, rows: &mut dyn Rows) -> Result<Report> {
    let store = ctx.open_read_only()?;
    let keys = ctx.keys();
    let now = crate::text::human::now(ctx.now.as_deref())?;
    let conditions = req
        .meta
        .iter()
        .map(|m| crate::ops::find::MetaCondition::parse(m))
        .collect::<Result<Vec<_>>>()?;
    let mut seen = Report {
        key_var: keys.var().to_owned(),
        ..Report::default()
    };
    let readers = crate::read::Readers::new(&*store, req.jobs);
    let mut take = |summaries: Vec<crate::storage::ThreadSummary>| -> Result<bool> {
        let batch = rows_of(&readers, &keys, summaries, &mut seen)?;
        let selects = match conditions.is_empty() {
            true => Vec::new(),
            false => {
                let threads: Vec<&str> = batch.iter().map(|r| r.thread_id.as_str()).collect();
                crate::read::meta_select(&readers, &keys, &threads, &conditions)?
            }
        };
        let mut selects = selects.into_iter();
        for mut r in batch {
            if let Some(s) = selects.next() {
                match s {
                    Ok(true) => {}
                    Ok(false) => continue,
                    Err(e) => {
                        let why = format!("could not check --meta: {e:#}");
                        seen.unreadable.push((r.thread_id, why));
                        continue;
                    }
                }
            }
            if req
                .min_tokens
                .is_some_and(|min| r.tokens.is_none_or(|t| t < min))
            {
                continue;
            }
            r.age = r.updated_at.map(|t| now.as_second() - t.as_second());
            if !rows.push(r)? {
                return Ok(false);
            }
        }
        Ok(rows.wants_more())
    };
    match newest_only(&*store, req)? {
        // `--sort updated --limit N`: only the threads that can be in the first N rows are
        // summed up and decoded; which those are, the checkpoint ids tell (the app's clock).
        Some(threads) => {
            take(store.summaries_of(&threads)?)?;
        }
        // Sizes and counts on a second connection, while the latest blob of each thread is
        // read and decoded here and on the other cores.
        None => crate::read::stream::threads(&*store, &mut take)?,
    }
    Ok(seen)
}

/// The rows of one batch of threads (`summaries`, in thread-id order): each thread's latest
/// root checkpoint read on `readers` and decoded on all cores (a DeltaChannel thread's
/// messages rebuilt from its older rows). A thread whose latest checkpoint does not decode is
/// listed without its state and reported at the end (exit 3); it never hides the others.
fn rows_of(
    readers: &crate::read::Readers<'_>,
    keys: &Keyring,
    summaries: Vec<crate::storage::ThreadSummary>,
    seen: &mut Report,
) -> Result<Vec<ThreadRow>> {
    let ids: Vec<(String, String)> = summaries
        .iter()
        .filter_map(|t| Some((t.thread_id.clone(), t.latest_root_id.clone()?)))
        .collect();
    let store = readers.store();
    let facts = crate::read::map_latest(readers, &ids, |row| latest_facts(keys, row))?;
    let mut facts: std::collections::HashMap<String, LatestFacts> = ids
        .into_iter()
        .zip(facts)
        .map(|((thread, id), f)| {
            let f = f.and_then(|f| replay_if_needed(store, keys, &thread, &id, f));
            (thread, f)
        })
        .filter_map(|(thread, f)| match f {
            Ok(f) => Some((thread, f)),
            Err(e) => {
                seen.unreadable.push((thread, format!("{e:#}")));
                None
            }
        })
        .collect();
    // Encrypted threads read without a key (none set): listed with what needs no decryption.
    seen.locked += facts.values().filter(|f| f.locked).count();
    seen.total += summaries.len();
    Ok(summaries
        .into_iter()
        .map(|t| {
            let facts = match t.latest_root_id {
                Some(_) => facts.remove(&t.thread_id).unwrap_or_default(),
                None => LatestFacts::default(),
            };
            let edited = t
                .latest_root_id
                .as_deref()
                .is_some_and(crate::ids::edited_by_memctl);
            ThreadRow {
                updated_at: crate::ops::activity::last_app_activity(&t.latest_id, facts.updated_at),
                edited_at: if edited { facts.updated_at } else { None },
                thread_id: t.thread_id,
                checkpoints: t.checkpoints,
                namespaces: t.namespaces,
                messages: facts.messages,
                tokens: facts.tokens,
                last_step: facts.step,
                age: None,
                bytes: t.bytes,
            }
        })
        .collect())
}

/// What `threads list` shows of a thread's latest root checkpoint: its messages and tokens
/// (a DeltaChannel's messages rebuilt), and its time.
#[derive(Debug, Clone, Default)]
pub struct LatestState {
    /// Messages of the state (`None`: no message list, or encrypted without a key).
    pub messages: Option<usize>,
    /// Approximate tokens of those messages.
    pub tokens: Option<u64>,
    /// The checkpoint's `ts` (or the time in its id when it is encrypted without a key).
    pub ts: Option<jiff::Timestamp>,
}

/// The [`LatestState`] of each `(thread, latest root checkpoint id)`, read as `threads list`
/// reads it (the same functions): a thread that does not read gives its error, the others go
/// on; `Err` when the database cannot be read at all.
pub fn latest_states(
    store: &dyn crate::storage::CheckpointStore,
    keys: &Keyring,
    ids: &[(String, String)],
) -> Result<Vec<Result<LatestState>>> {
    let readers = crate::read::Readers::one(store);
    let facts = crate::read::map_latest(&readers, ids, |row| latest_facts(keys, row))?;
    Ok(ids
        .iter()
        .zip(facts)
        .map(|((thread, id), f)| {
            let f = f.and_then(|f| replay_if_needed(store, keys, thread, id, f))?;
            Ok(LatestState {
                messages: f.messages,
                tokens: f.tokens,
                ts: f.updated_at,
            })
        })
        .collect())
}

/// `facts`, with a DeltaChannel thread's messages rebuilt from its older rows.
fn replay_if_needed(
    store: &dyn crate::storage::CheckpointStore,
    keys: &Keyring,
    thread: &str,
    id: &str,
    facts: LatestFacts,
) -> Result<LatestFacts> {
    if facts.needs_replay {
        replayed_facts(store, keys, thread, id, facts)
    } else {
        Ok(facts)
    }
}

/// With `--sort updated --limit N` (and no filter that needs every thread's state): the threads
/// that can be among the first N rows, chosen from an index on the checkpoint ids when there
/// is one ([`crate::storage::CheckpointStore::newest_threads`]), else from the primary key
/// alone ([`crate::ops::activity::Newest`]); `None` when every thread must be read.
fn newest_only(
    store: &dyn crate::storage::CheckpointStore,
    args: &Request,
) -> Result<Option<Vec<String>>> {
    match (args.sort, args.limit) {
        (Sort::Updated, Some(n)) if args.meta.is_empty() && args.min_tokens.is_none() => {
            // An index on the checkpoint ids gives them from the newest rows (Postgres).
            if let Some(threads) = store.newest_threads(n)? {
                return Ok(Some(threads));
            }
            let mut newest = crate::ops::activity::Newest::new(n);
            let mut all_uuid6 = true;
            store.for_each_latest_id(&mut |thread, id| {
                all_uuid6 = newest.push(thread, id);
                all_uuid6
            })?;
            Ok(all_uuid6.then(|| newest.threads()))
        }
        _ => Ok(None),
    }
}

/// What `threads list` shows of a thread's latest checkpoint.
#[derive(Default)]
struct LatestFacts {
    messages: Option<usize>,
    tokens: Option<u64>,
    step: Option<i64>,
    updated_at: Option<jiff::Timestamp>,
    /// The messages are a DeltaChannel's (left out of the checkpoint, or a snapshot its own
    /// input writes may change): see [`replayed_facts`].
    needs_replay: bool,
    /// Encrypted, and no key was set: only the plain facts are known.
    locked: bool,
}

/// `facts` with the messages and tokens of the state (the DeltaChannel's messages rebuilt).
fn replayed_facts(
    store: &dyn crate::storage::CheckpointStore,
    keys: &Keyring,
    thread: &str,
    id: &str,
    facts: LatestFacts,
) -> Result<LatestFacts> {
    let (_, messages, _) = crate::read::load_shallow(store, keys, thread, "", Some(id))?;
    let list = messages.list().map(|l| l.value()).transpose()?;
    Ok(LatestFacts {
        messages: list
            .as_ref()
            .and_then(crate::codec::Value::as_array)
            .map(<[_]>::len),
        tokens: list.as_ref().and_then(approx::count_values),
        needs_replay: false,
        ..facts
    })
}

/// Reads the latest checkpoint's message count, approximate tokens, step and time, counting
/// in place (no JSON is built). An encrypted checkpoint is decrypted with `keys`; without a
/// key (none set) only what is stored plain is given: the step (metadata) and the time the
/// checkpoint id (a uuid6) was made.
fn latest_facts(keys: &Keyring, row: crate::storage::CheckpointRow) -> Result<LatestFacts> {
    if crate::codec::aes::split_type(&row.type_name).1.is_some() && keys.is_unset() {
        let md = crate::model::Metadata::parse(row.metadata.as_deref())?;
        return Ok(LatestFacts {
            step: md.step(),
            updated_at: crate::ids::id_time(&row.checkpoint_id),
            locked: true,
            ..LatestFacts::default()
        });
    }
    let (row, _) = crate::ops::edit::open_checkpoint(keys, row)?;
    let row = &row;
    if row.type_name == "msgpack" {
        // The fast path reads in place; anything unusual (corrupt, no message list) goes the
        // full way below, which explains errors properly.
        let root = crate::codec::lazy::root(&row.checkpoint).ok().filter(|r| {
            r.raw().is_ok_and(|raw| raw.len() == row.checkpoint.len())
                && matches!(r.value, crate::codec::lazy::Lazy::Map(_))
        });
        let counted = root.and(approx::count_checkpoint_blob(&row.checkpoint));
        if let (Some(root), Some((n, Some(tokens)))) = (root, counted) {
            let md = crate::model::Metadata::parse(row.metadata.as_deref())?;
            let ts = root
                .get("ts")
                .ok()
                .flatten()
                .and_then(|t| t.as_str())
                .and_then(|t| t.parse().ok());
            return Ok(LatestFacts {
                messages: Some(n),
                tokens: Some(tokens),
                step: md.step(),
                updated_at: ts,
                // A DeltaChannel's snapshot may still take the checkpoint's own input writes.
                needs_replay: is_delta(stored_messages_location(&row.checkpoint), &md),
                locked: false,
            });
        }
    }
    let cp =
        crate::model::Checkpoint::decode(&row.type_name, &row.checkpoint).with_context(|| {
            format!(
                "cannot decode checkpoint {} of thread '{}'",
                row.checkpoint_id, row.thread_id
            )
        })?;
    let md = crate::model::Metadata::parse(row.metadata.as_deref())?;
    let (location, list) = cp.stored_value(MESSAGES);
    Ok(LatestFacts {
        messages: list.and_then(crate::codec::Value::as_array).map(<[_]>::len),
        tokens: list.and_then(approx::count_values),
        step: md.step(),
        updated_at: cp.ts().and_then(|t| t.parse().ok()),
        needs_replay: is_delta(location, &md),
        locked: false,
    })
}
