//! `memctl threads list`: one row per thread, from SQL aggregates plus one blob per thread.

use std::io::Write;

use anyhow::{Context, Result};

use crate::cli::{Format, GlobalArgs, ThreadSort, ThreadsListArgs};
use crate::codec::aes::Keyring;
use crate::model::channels::is_delta;
use crate::model::checkpoint::MESSAGES;
use crate::output::listing::{Listing, Order};
use crate::output::{self, human};
use crate::read::replay::stored_messages_location;
use crate::tokens::approx;

/// One listed thread.
struct ThreadRow {
    thread_id: String,
    checkpoints: u64,
    namespaces: u64,
    messages: Option<usize>,
    tokens: Option<u64>,
    last_step: Option<i64>,
    /// The app's last activity ([`crate::ops::activity`]): what prune and gc go by.
    updated_at: Option<jiff::Timestamp>,
    /// When the latest checkpoint is memctl's edit: its time (`ts`).
    edited_at: Option<jiff::Timestamp>,
    bytes: u64,
}

/// The columns of the table.
const HEADERS: [&str; 8] = [
    "thread_id",
    "checkpoints",
    "messages",
    "tokens",
    "last_step",
    "updated_at",
    "age",
    "bytes",
];

/// What the listed threads showed on the way that is reported after the list.
#[derive(Default)]
struct Seen {
    /// Threads read.
    total: usize,
    /// Threads encrypted and read without a key.
    locked: usize,
    /// Threads whose latest state did not read (listed without it), with why.
    unreadable: Vec<(String, String)>,
}

/// Runs `threads list`: the threads are read a batch at a time in thread-id order and written
/// as they come (`--sort thread`, JSON) or once all are read (sorted, or a table), with
/// memory flat in the number of threads ([`crate::output::listing`]).
pub fn list(g: &GlobalArgs, args: &ThreadsListArgs, out: &mut dyn Write) -> Result<()> {
    let store = super::open_read_only(g)?;
    let keys = super::keys(g);
    let now = human::now(g.now.as_deref())?;
    let conditions = args
        .meta
        .iter()
        .map(|m| crate::ops::find::MetaCondition::parse(m))
        .collect::<Result<Vec<_>>>()?;
    let format = output::resolve_format(g.format);
    let order = match args.sort {
        ThreadSort::Thread => Order::AsRead,
        _ => Order::Descending,
    };
    let mut listing = Listing::new(out, format, order, args.limit);
    let mut seen = Seen::default();
    let readers = crate::read::Readers::new(&*store, args.jobs);
    let mut take = |summaries: Vec<crate::storage::ThreadSummary>| -> Result<bool> {
        let rows = rows_of(&readers, &keys, summaries, &mut seen)?;
        let selects = match conditions.is_empty() {
            true => Vec::new(),
            false => {
                let threads: Vec<&str> = rows.iter().map(|r| r.thread_id.as_str()).collect();
                crate::read::meta_select(&readers, &keys, &threads, &conditions)?
            }
        };
        let mut selects = selects.into_iter();
        for r in rows {
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
            if args
                .min_tokens
                .is_some_and(|min| r.tokens.is_none_or(|t| t < min))
            {
                continue;
            }
            let age = r.updated_at.map(|t| now.as_second() - t.as_second());
            let record = r.record(age);
            if !listing.push(
                sort_key(args.sort, &r),
                r.edited_at.is_some(),
                &record,
                || r.cells(age),
            )? {
                return Ok(false);
            }
        }
        Ok(listing.wants_more())
    };
    match newest_only(&*store, args)? {
        // `--sort updated --limit N`: only the threads that can be in the first N rows are
        // summed up and decoded; which those are, the checkpoint ids tell (the app's clock).
        Some(threads) => {
            take(store.summaries_of(&threads)?)?;
        }
        // Sizes and counts on a second connection, while the latest blob of each thread is
        // read and decoded here and on the other cores.
        None => crate::read::stream::threads(&*store, &mut take)?,
    }
    let written = listing.finish(&HEADERS, &[1, 2, 3, 4, 7], Some("no threads"))?;
    let edited = written.flagged;
    if edited > 0 && !g.quiet && format == Format::Table {
        eprintln!(
            "note: * {} edited by memctl since the app last wrote {}: AGE and UPDATED_AT are the app's last activity, which prune --idle, gc and --min-idle go by (memctl's edits keep the app's time)",
            match edited {
                1 => "1 thread was".to_owned(),
                n => format!("{n} threads were"),
            },
            if edited == 1 { "it" } else { "them" }
        );
    }
    if seen.locked > 0 && !g.quiet {
        let (what, their) = match seen.locked {
            1 => ("1 thread is".to_owned(), "its"),
            n => (format!("{n} threads are"), "their"),
        };
        eprintln!(
            "note: {what} encrypted with AES and {var} is not set: {their} messages and tokens are not shown (last step and time come from the plain metadata and checkpoint ids); set {var} to the app's key to see them",
            var = keys.var()
        );
    }
    super::report_unreadable(
        &seen.unreadable,
        seen.total,
        "are listed without their state",
    )
}

/// A row's place in the order `sort` asks for (larger first; `i128::MIN`: none, last).
fn sort_key(sort: ThreadSort, r: &ThreadRow) -> i128 {
    let none = i128::MIN;
    match sort {
        ThreadSort::Updated => r.updated_at.map_or(none, |t| t.as_nanosecond()),
        ThreadSort::Size => i128::from(r.bytes),
        ThreadSort::Messages => r.messages.map_or(none, |m| m as i128),
        ThreadSort::Checkpoints => i128::from(r.checkpoints),
        ThreadSort::Tokens => r.tokens.map_or(none, i128::from),
        ThreadSort::Thread => 0,
    }
}

/// The rows of one batch of threads (`summaries`, in thread-id order): each thread's latest
/// root checkpoint read on `readers` and decoded on all cores (a DeltaChannel thread's
/// messages rebuilt from its older rows). A thread whose latest checkpoint does not decode is
/// listed without its state and reported at the end (exit 3); it never hides the others.
fn rows_of(
    readers: &crate::read::Readers<'_>,
    keys: &Keyring,
    summaries: Vec<crate::storage::ThreadSummary>,
    seen: &mut Seen,
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
                bytes: t.bytes,
            }
        })
        .collect())
}

impl ThreadRow {
    /// The row in JSON (`age`: seconds since the app's last activity).
    fn record(&self, age: Option<i64>) -> ThreadRecord<'_> {
        ThreadRecord {
            thread_id: &self.thread_id,
            checkpoints: self.checkpoints,
            namespaces: self.namespaces,
            messages: self.messages,
            tokens: self.tokens,
            last_step: self.last_step,
            updated_at: self.updated_at.as_ref().map(human::utc),
            age_seconds: age,
            edited_by_memctl: self.edited_at.is_some(),
            edited_at: self.edited_at.as_ref().map(human::utc),
            bytes: self.bytes,
        }
    }

    /// The row's table cells ([`HEADERS`]).
    fn cells(&self, age: Option<i64>) -> Vec<String> {
        vec![
            human::id(&self.thread_id),
            self.checkpoints.to_string(),
            self.messages.map_or("-".into(), |m| m.to_string()),
            self.tokens.map_or("-".into(), |m| m.to_string()),
            self.last_step.map_or("-".into(), |s| s.to_string()),
            self.updated_at.as_ref().map_or("-".into(), human::utc),
            // `*`: the latest state is memctl's edit (see the note below the table).
            match (age, self.edited_at.is_some()) {
                (None, _) => "-".into(),
                (Some(a), false) => human::age(a),
                (Some(a), true) => format!("{}*", human::age(a)),
            },
            human::bytes(self.bytes),
        ]
    }
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
    args: &ThreadsListArgs,
) -> Result<Option<Vec<String>>> {
    match (args.sort, args.limit) {
        (ThreadSort::Updated, Some(n)) if args.meta.is_empty() && args.min_tokens.is_none() => {
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
                .and_then(human::parse_ts);
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
        updated_at: cp.ts().and_then(human::parse_ts),
        needs_replay: is_delta(location, &md),
        locked: false,
    })
}

/// One thread of `threads list` in JSON.
#[derive(serde::Serialize)]
struct ThreadRecord<'a> {
    thread_id: &'a str,
    checkpoints: u64,
    namespaces: u64,
    messages: Option<usize>,
    tokens: Option<u64>,
    last_step: Option<i64>,
    /// The app's last activity (what prune --idle and gc --min-idle go by).
    updated_at: Option<String>,
    age_seconds: Option<i64>,
    /// The latest state is an edit memctl made (trim, rm, summarize, forget).
    edited_by_memctl: bool,
    /// When memctl made that edit.
    edited_at: Option<String>,
    bytes: u64,
}
