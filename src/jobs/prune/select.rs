//! Which threads `prune` deletes, chosen in memory flat in the number of threads: the app's
//! last activity of every thread streams by from the primary key alone
//! ([`CheckpointStore::for_each_latest_id`]) and only the threads old enough are kept (their
//! ids); their aggregates are then read a chunk at a time ([`CheckpointStore::summaries_of`])
//! and only what the deletion and the report need is kept of each ([`Chosen`]).

use anyhow::Result;

use crate::codec::aes::{self, Keyring};
use crate::ops::activity::idle_seconds;
use crate::read::LoadedCheckpoint;
use crate::storage::{CheckpointStore, ThreadSummary};
use crate::text::human;

/// Threads whose aggregates are read in one call ([`CheckpointStore::summaries_of`]): on
/// Postgres, 1,000 made the server's estimate large enough to compile the query (JIT, 0.7 s
/// a call); 100 take 7 ms.
const SUMMARY_CHUNK: usize = 100;

/// At most this many latest checkpoints are read back in one call to check they decode...
const READ_CHUNK: usize = 200;

/// ...and at most about this many stored bytes (a thread's `bytes` bounds its latest
/// checkpoint's), so that a chunk of large threads stays small in memory.
const READ_CHUNK_BYTES: u64 = 16 << 20;

/// A thread prune chose to delete: what its deletion and its line of the report need.
pub(super) struct Chosen {
    /// The thread.
    pub thread_id: String,
    /// Its largest checkpoint id when it was chosen: the deletion leaves the thread alone when
    /// it has another by then.
    pub latest_id: String,
    /// Its checkpoints (all namespaces).
    pub checkpoints: u64,
    /// Its stored bytes.
    pub bytes: u64,
    /// Seconds since the app last wrote it.
    pub age: Option<i64>,
}

/// The threads prune selects, and the ones it leaves alone.
#[derive(Default)]
pub(super) struct Selection {
    /// The threads to delete, in thread-id order.
    pub selected: Vec<Chosen>,
    /// The threads left alone, and why.
    pub skipped: Vec<(String, String)>,
    /// Of those, the ones written within `--min-idle` (thread ids), said once in a table.
    pub recent: std::collections::HashSet<String>,
    /// The skipped threads an operator must act on (unreadable, or moved while memctl
    /// worked): thread, status, why.
    pub problems: Vec<(String, &'static str, String)>,
    /// Threads that could not be read.
    pub failed: usize,
}

/// What the filters ask for.
pub(super) struct Filters<'a> {
    /// The named threads (`--thread`; empty: every thread).
    pub threads: &'a [String],
    /// `--min-idle` as given (for the reason a thread is left alone).
    pub min_idle_text: &'a str,
    /// The time the ages are measured at.
    pub now: jiff::Timestamp,
    /// `--idle`, in seconds.
    pub idle: Option<i64>,
    /// `--min-idle`, in seconds.
    pub min_idle: i64,
}

impl Filters<'_> {
    /// The thread's age when the filters select it by its largest checkpoint id (`--thread`
    /// and `--idle` combine: a named thread is deleted only if it is also idle enough when
    /// `--idle` is given too); `None` when they do not.
    fn wanted(&self, thread: &str, latest_id: &str) -> Option<Option<i64>> {
        let named = self.threads.is_empty() || self.threads.iter().any(|t| t == thread);
        // The app's last activity (memctl's own edits keep their parent's time).
        let age = idle_seconds(latest_id, None, self.now);
        let idle_enough = match (self.idle, age) {
            (Some(limit), Some(a)) => a >= limit,
            (Some(_), None) => false,
            (None, _) => true,
        };
        (named && idle_enough).then_some(age)
    }
}

/// The threads the filters select, in thread-id order, less the ones written within
/// `--min-idle` and, among those found by age, the unreadable ones. A `--thread` that names
/// no thread is an error (before anything else is read).
pub(super) fn select(
    store: &dyn CheckpointStore,
    keys: &Keyring,
    f: &Filters<'_>,
) -> Result<Selection> {
    let candidates = candidates(store, f)?;
    let mut sel = Selection::default();
    for chunk in candidates.chunks(SUMMARY_CHUNK) {
        // Read again: a thread the app wrote since is judged by its new latest id.
        let summaries = store.summaries_of(chunk)?;
        let wanted: Vec<(&ThreadSummary, Option<i64>)> = summaries
            .iter()
            .filter_map(|t| f.wanted(&t.thread_id, &t.latest_id).map(|age| (t, age)))
            .collect();
        judge(store, keys, f, &wanted, &mut sel);
    }
    Ok(sel)
}

/// The ids of the threads that may be selected, sorted bytewise (the order the stores list
/// threads in): the named ones (`--thread`, each checked to exist), or every thread the
/// filters select by its largest checkpoint id, streamed from the primary key.
fn candidates(store: &dyn CheckpointStore, f: &Filters<'_>) -> Result<Vec<String>> {
    let named = f.threads;
    if !named.is_empty() {
        let found = store.summaries_of(named)?;
        if let Some(missing) = named
            .iter()
            .find(|t| !found.iter().any(|s| &s.thread_id == *t))
        {
            // Only now every thread id is needed: for "did you mean".
            let mut all = Vec::new();
            store.for_each_latest_id(&mut |thread, _| {
                all.push(thread.to_owned());
                true
            })?;
            return Err(crate::read::no_thread_among(
                missing,
                all.iter().map(String::as_str),
            ));
        }
        return Ok(found.into_iter().map(|s| s.thread_id).collect());
    }
    let mut ids = Vec::new();
    store.for_each_latest_id(&mut |thread, latest| {
        if f.wanted(thread, latest).is_some() {
            ids.push(thread.to_owned());
        }
        true
    })?;
    ids.sort_unstable();
    Ok(ids)
}

/// Sorts the `wanted` threads (in thread-id order) into selected and skipped: too recently
/// written (`--min-idle`), or, when found by age, latest state unreadable.
fn judge(
    store: &dyn CheckpointStore,
    keys: &Keyring,
    f: &Filters<'_>,
    wanted: &[(&ThreadSummary, Option<i64>)],
    sel: &mut Selection,
) {
    let mut recent = vec![false; wanted.len()];
    let mut to_read = Vec::new();
    for (i, (t, age)) in wanted.iter().enumerate() {
        recent[i] = age.is_some_and(|a| a < f.min_idle);
        // A thread found by age whose latest state does not decode is reported and left
        // alone: memctl does not "clean" what it cannot read. One named with --thread is
        // deleted as asked.
        if !recent[i] && !f.threads.contains(&t.thread_id) {
            to_read.push(*t);
        }
    }
    let mut readable = readable(store, keys, &to_read).into_iter();
    for (i, (t, age)) in wanted.iter().enumerate() {
        if recent[i] {
            sel.recent.insert(t.thread_id.clone());
            sel.skipped.push((
                t.thread_id.clone(),
                format!(
                    "written {} ago (--min-idle {})",
                    human::age(age.unwrap_or(0)),
                    f.min_idle_text
                ),
            ));
            continue;
        }
        if !f.threads.contains(&t.thread_id) {
            if let Some(Err(e)) = readable.next() {
                sel.problems.push((
                    t.thread_id.clone(),
                    "failed",
                    format!("{e:#}; left untouched"),
                ));
                sel.skipped.push((
                    t.thread_id.clone(),
                    format!("failed: {e:#}; left untouched"),
                ));
                sel.failed += 1;
                continue;
            }
        }
        sel.selected.push(Chosen {
            thread_id: t.thread_id.clone(),
            latest_id: t.latest_id.clone(),
            checkpoints: t.checkpoints,
            bytes: t.bytes,
            age: *age,
        });
    }
}

/// Whether each thread's latest root checkpoint (or latest of any namespace, for a thread
/// without a root one) decodes, in the order given: the root ones read back a few at a time
/// ([`CheckpointStore::checkpoints_at`]: one round trip each on a server), the others one by
/// one.
fn readable(
    store: &dyn CheckpointStore,
    keys: &Keyring,
    threads: &[&ThreadSummary],
) -> Vec<Result<()>> {
    let mut out = Vec::with_capacity(threads.len());
    let mut start = 0;
    while start < threads.len() {
        let mut end = start;
        let mut bytes = 0u64;
        while end < threads.len()
            && end - start < READ_CHUNK
            && (end == start || bytes.saturating_add(threads[end].bytes) <= READ_CHUNK_BYTES)
        {
            bytes = bytes.saturating_add(threads[end].bytes);
            end += 1;
        }
        out.extend(readable_chunk(store, keys, &threads[start..end]));
        start = end;
    }
    out
}

/// [`readable`] of a few threads.
fn readable_chunk(
    store: &dyn CheckpointStore,
    keys: &Keyring,
    threads: &[&ThreadSummary],
) -> Vec<Result<()>> {
    let at: Vec<(&str, &str, &str)> = threads
        .iter()
        .filter_map(|t| Some((t.thread_id.as_str(), "", t.latest_root_id.as_deref()?)))
        .collect();
    let Ok(rows) = store.checkpoints_at(&at) else {
        // The database's error: each thread read (and its error reported) on its own.
        return threads
            .iter()
            .map(|t| latest_is_readable(store, keys, &t.thread_id))
            .collect();
    };
    let mut rows = rows.into_iter();
    threads
        .iter()
        .map(|t| match t.latest_root_id {
            Some(_) => match rows.next() {
                Some(Ok(Some(row))) => decodes(keys, row),
                // Gone since (the deletion reports a thread that moved).
                Some(Ok(None)) | None => Ok(()),
                Some(Err(e)) => Err(e),
            },
            None => latest_is_readable(store, keys, &t.thread_id),
        })
        .collect()
}

/// Checks that a thread's latest root checkpoint (or latest of any namespace, for a thread
/// without a root one) decodes; an encrypted one only when a key is given (prune needs none).
fn latest_is_readable(store: &dyn CheckpointStore, keys: &Keyring, thread: &str) -> Result<()> {
    let row = match store.checkpoint(thread, "", None)? {
        Some(row) => row,
        None => {
            let ns = store.namespaces(thread)?;
            match ns.first() {
                Some(ns) => match store.checkpoint(thread, ns, None)? {
                    Some(row) => row,
                    None => return Ok(()),
                },
                None => return Ok(()),
            }
        }
    };
    decodes(keys, row)
}

/// Checks that a checkpoint decodes; an encrypted one only when a key is given.
fn decodes(keys: &Keyring, row: crate::storage::CheckpointRow) -> Result<()> {
    if aes::split_type(&row.type_name).1.is_some() && !keys.has_key() {
        return Ok(());
    }
    LoadedCheckpoint::open(keys, row).map(|_| ())
}
