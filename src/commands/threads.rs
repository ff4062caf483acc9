//! `memctl threads list`: one row per thread, from SQL aggregates plus one blob per thread.

use std::io::Write;

use anyhow::{Context, Result};

use crate::cli::{Format, GlobalArgs, ThreadSort, ThreadsListArgs};
use crate::codec::aes::Keyring;
use crate::model::channels::is_delta;
use crate::model::checkpoint::MESSAGES;
use crate::output::{self, human, table};
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

/// Runs `threads list`.
pub fn list(g: &GlobalArgs, args: &ThreadsListArgs, out: &mut dyn Write) -> Result<()> {
    let store = super::open_read_only(g)?;
    let keys = super::keys(g);
    let now = human::now(g.now.as_deref())?;
    let (ids, summaries, facts) = match newest_only(&*store, args)? {
        // `--sort updated --limit N`: only the threads that can be in the first N rows are
        // summed up and decoded; which those are, the checkpoint ids tell (the app's clock).
        Some(threads) => {
            let summaries = store.summaries_of(&threads)?;
            let ids: Vec<(String, String)> = summaries
                .iter()
                .filter_map(|t| Some((t.thread_id.clone(), t.latest_root_id.clone()?)))
                .collect();
            let facts = crate::read::map_latest(&*store, &ids, |row| latest_facts(&keys, row));
            (ids, summaries, facts)
        }
        None => {
            // Sizes and counts (one scan of each table) on a second connection, while the
            // latest blob of each thread is read and decoded here and on the other cores.
            let ids = store.latest_root_ids()?;
            let sizes_store = store.reopen_read_only()?;
            let (summaries, facts) = std::thread::scope(|s| {
                let sizes = s.spawn(move || -> Result<Vec<crate::storage::ThreadSummary>> {
                    let mut all = Vec::new();
                    sizes_store.for_each_thread(&mut |t| {
                        all.push(t);
                        Ok(())
                    })?;
                    Ok(all)
                });
                let facts = crate::read::map_latest(&*store, &ids, |row| latest_facts(&keys, row));
                (sizes.join(), facts)
            });
            let summaries = match summaries {
                Ok(s) => s?,
                Err(panic) => std::panic::resume_unwind(panic),
            };
            (ids, summaries, facts)
        }
    };
    // A thread whose latest checkpoint does not decode is listed without its state and
    // reported at the end (exit 3); it never hides the others.
    let mut unreadable: Vec<(String, String)> = Vec::new();
    let mut facts: std::collections::HashMap<String, LatestFacts> = ids
        .into_iter()
        .zip(facts?)
        // A DeltaChannel thread's messages are rebuilt from its older rows, read here.
        .map(|((thread, id), f)| {
            let f = f.and_then(|f| replay_if_needed(&*store, &keys, &thread, &id, f));
            (thread, f)
        })
        .filter_map(|(thread, f)| match f {
            Ok(f) => Some((thread, f)),
            Err(e) => {
                unreadable.push((thread, format!("{e:#}")));
                None
            }
        })
        .collect();
    // Encrypted threads read without a key (none set): listed with what needs no decryption.
    let locked = facts.values().filter(|f| f.locked).count();
    let mut rows = Vec::with_capacity(summaries.len());
    for t in summaries {
        let facts = match t.latest_root_id {
            Some(_) => facts.remove(&t.thread_id).unwrap_or_default(),
            None => LatestFacts::default(),
        };
        let edited = t
            .latest_root_id
            .as_deref()
            .is_some_and(crate::ops::activity::edited_by_memctl);
        rows.push(ThreadRow {
            updated_at: crate::ops::activity::last_app_activity(&t.latest_id, facts.updated_at),
            edited_at: if edited { facts.updated_at } else { None },
            thread_id: t.thread_id,
            checkpoints: t.checkpoints,
            namespaces: t.namespaces,
            messages: facts.messages,
            tokens: facts.tokens,
            last_step: facts.step,
            bytes: t.bytes,
        });
    }
    let total = rows.len();
    if !args.meta.is_empty() {
        let conditions = args
            .meta
            .iter()
            .map(|m| crate::ops::find::MetaCondition::parse(m))
            .collect::<Result<Vec<_>>>()?;
        let mut kept = Vec::with_capacity(rows.len());
        for r in rows {
            match crate::read::meta_selects_thread(&*store, &keys, &r.thread_id, &conditions) {
                Ok(true) => kept.push(r),
                Ok(false) => {}
                Err(e) => unreadable.push((r.thread_id, format!("could not check --meta: {e:#}"))),
            }
        }
        rows = kept;
    }
    if let Some(min) = args.min_tokens {
        rows.retain(|r| r.tokens.is_some_and(|t| t >= min));
    }
    match args.sort {
        ThreadSort::Updated => rows.sort_by_key(|r| std::cmp::Reverse(r.updated_at)),
        ThreadSort::Size => rows.sort_by_key(|r| std::cmp::Reverse(r.bytes)),
        ThreadSort::Messages => rows.sort_by_key(|r| std::cmp::Reverse(r.messages)),
        ThreadSort::Checkpoints => rows.sort_by_key(|r| std::cmp::Reverse(r.checkpoints)),
        ThreadSort::Tokens => rows.sort_by_key(|r| std::cmp::Reverse(r.tokens)),
    }
    if let Some(limit) = args.limit {
        rows.truncate(limit);
    }
    let age = |r: &ThreadRow| r.updated_at.map(|t| now.as_second() - t.as_second());
    match output::resolve_format(g.format) {
        Format::Table => {
            let mut t = table::new_table(&[
                "thread_id",
                "checkpoints",
                "messages",
                "tokens",
                "last_step",
                "updated_at",
                "age",
                "bytes",
            ]);
            table::align_right(&mut t, &[1, 2, 3, 4, 7]);
            for r in &rows {
                t.add_row(vec![
                    human::id(&r.thread_id),
                    r.checkpoints.to_string(),
                    r.messages.map_or("-".into(), |m| m.to_string()),
                    r.tokens.map_or("-".into(), |m| m.to_string()),
                    r.last_step.map_or("-".into(), |s| s.to_string()),
                    r.updated_at.as_ref().map_or("-".into(), human::utc),
                    // `*`: the latest state is memctl's edit (see the note below the table).
                    match (age(r), r.edited_at.is_some()) {
                        (None, _) => "-".into(),
                        (Some(a), false) => human::age(a),
                        (Some(a), true) => format!("{}*", human::age(a)),
                    },
                    human::bytes(r.bytes),
                ]);
            }
            if rows.is_empty() {
                writeln!(out, "no threads")?;
            } else {
                writeln!(out, "{}", table::render(&t))?;
            }
        }
        format => {
            let records: Vec<ThreadRecord<'_>> = rows
                .iter()
                .map(|r| ThreadRecord {
                    thread_id: &r.thread_id,
                    checkpoints: r.checkpoints,
                    namespaces: r.namespaces,
                    messages: r.messages,
                    tokens: r.tokens,
                    last_step: r.last_step,
                    updated_at: r.updated_at.as_ref().map(human::utc),
                    age_seconds: age(r),
                    edited_by_memctl: r.edited_at.is_some(),
                    edited_at: r.edited_at.as_ref().map(human::utc),
                    bytes: r.bytes,
                })
                .collect();
            output::write_records(out, format, &records)?;
        }
    }
    let edited = rows.iter().filter(|r| r.edited_at.is_some()).count();
    if edited > 0 && !g.quiet && output::resolve_format(g.format) == Format::Table {
        eprintln!(
            "note: * {} edited by memctl since the app last wrote {}: AGE and UPDATED_AT are the app's last activity, which prune --idle, gc and --min-idle go by (memctl's edits keep the app's time)",
            match edited {
                1 => "1 thread was".to_owned(),
                n => format!("{n} threads were"),
            },
            if edited == 1 { "it" } else { "them" }
        );
    }
    if locked > 0 && !g.quiet {
        let (what, their) = match locked {
            1 => ("1 thread is".to_owned(), "its"),
            n => (format!("{n} threads are"), "their"),
        };
        eprintln!(
            "note: {what} encrypted with AES and {var} is not set: {their} messages and tokens are not shown (last step and time come from the plain metadata and checkpoint ids); set {var} to the app's key to see them",
            var = keys.var()
        );
    }
    super::report_unreadable(&unreadable, total, "are listed without their state")
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
    let facts = crate::read::map_latest(store, ids, |row| latest_facts(keys, row))?;
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
/// that can be among the first N rows, chosen from the primary key alone
/// ([`crate::ops::activity::Newest`]); `None` when every thread must be read.
fn newest_only(
    store: &dyn crate::storage::CheckpointStore,
    args: &ThreadsListArgs,
) -> Result<Option<Vec<String>>> {
    match (args.sort, args.limit) {
        (ThreadSort::Updated, Some(n)) if args.meta.is_empty() && args.min_tokens.is_none() => {
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
            updated_at: crate::ops::update::id_time(&row.checkpoint_id),
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
