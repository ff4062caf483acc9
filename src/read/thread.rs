//! Which threads and checkpoints there are: a thread that must exist, a checkpoint id given
//! in full or by prefix (each refusal a [`Missing`], worded by `output::missing`, where the
//! stored ids are made terminal-safe), and the threads a metadata condition selects.

use std::collections::HashMap;

use anyhow::Result;
use serde_json::Value as Json;

use crate::codec::aes::Keyring;
use crate::codec::json::to_json;
use crate::ops::find::MetaCondition;
use crate::storage::CheckpointStore;

use super::{LoadedCheckpoint, Readers};

/// What the database does not have, as the read layer says it (the ids as stored; the
/// message is `output::missing`'s, one wording everywhere).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Missing {
    /// No such thread; `near` are the known ids that differ only by case or one character
    /// ("did you mean").
    Thread {
        /// The thread id given.
        thread: String,
        /// Known thread ids close to it.
        near: Vec<String>,
    },
    /// The thread has no checkpoints in the namespace.
    Namespace {
        /// The thread.
        thread: String,
        /// The namespace given.
        ns: String,
        /// The namespaces it has.
        namespaces: Vec<String>,
    },
    /// The thread has no checkpoints at all.
    NoCheckpoints {
        /// The thread.
        thread: String,
    },
    /// No checkpoint of the thread has the id, or an id that starts with it.
    Checkpoint {
        /// The thread.
        thread: String,
        /// The id (or prefix) given.
        given: String,
    },
    /// More than one checkpoint id starts with the prefix.
    Ambiguous {
        /// The thread.
        thread: String,
        /// The prefix given.
        given: String,
        /// The first ten ids that start with it.
        candidates: Vec<String>,
        /// How many ids start with it.
        count: usize,
    },
}

impl std::error::Error for Missing {}

/// The error for a thread id the database does not have (one wording everywhere).
pub fn no_thread(thread: &str) -> anyhow::Error {
    no_thread_among(thread, std::iter::empty())
}

/// [`no_thread`], naming the ids of `known` that differ from `thread` only by case or one
/// character ("did you mean").
pub fn no_thread_among<'a>(
    thread: &str,
    known: impl IntoIterator<Item = &'a str>,
) -> anyhow::Error {
    Missing::Thread {
        thread: thread.to_owned(),
        near: crate::ops::suggest::near(thread, known)
            .into_iter()
            .map(|t| t.to_owned())
            .collect(),
    }
    .into()
}

/// [`no_thread_among`] the threads of `store` (that have a root namespace).
pub fn unknown_thread(store: &dyn CheckpointStore, thread: &str) -> anyhow::Error {
    let known: Vec<String> = store
        .latest_root_ids()
        .map(|ids| ids.into_iter().map(|(t, _)| t).collect())
        .unwrap_or_default();
    no_thread_among(thread, known.iter().map(String::as_str))
}

/// Checks that a thread exists (and has the namespace), with an error that says what to do.
pub fn require_thread(store: &dyn CheckpointStore, thread: &str, ns: &str) -> Result<()> {
    if !store.thread_exists(thread)? {
        return Err(unknown_thread(store, thread));
    }
    let namespaces = store.namespaces(thread)?;
    if !namespaces.iter().any(|n| n == ns) {
        return Err(Missing::Namespace {
            thread: thread.to_owned(),
            ns: ns.to_owned(),
            namespaces,
        }
        .into());
    }
    Ok(())
}

/// A checkpoint id as given, or the one id of the thread and namespace that starts with it
/// (as git takes a short hash). An ambiguous prefix is an error that lists the candidates.
pub fn resolve_checkpoint_id(
    store: &dyn CheckpointStore,
    thread: &str,
    ns: &str,
    given: &str,
) -> Result<String> {
    if store.checkpoint(thread, ns, Some(given))?.is_some() {
        return Ok(given.to_owned());
    }
    let matches: Vec<String> = store
        .metadata(thread, ns)?
        .into_iter()
        .map(|(id, _)| id)
        .filter(|id| !given.is_empty() && id.starts_with(given))
        .collect();
    match matches.as_slice() {
        [one] => Ok(one.clone()),
        [] => Err(Missing::Checkpoint {
            thread: thread.to_owned(),
            given: given.to_owned(),
        }
        .into()),
        many => Err(Missing::Ambiguous {
            thread: thread.to_owned(),
            given: given.to_owned(),
            candidates: many.iter().take(10).cloned().collect(),
            count: many.len(),
        }
        .into()),
    }
}

/// Threads whose metadata [`meta_select`] reads in one call.
const METADATA_THREADS: usize = 64;

/// Which of `threads` `--meta`'s conditions select, for `find`, `forget`, `threads list` and
/// `copy` alike (see [`crate::ops::forget::meta_selects`]): each condition holds in the
/// metadata of any of a thread's checkpoints, in every namespace (LangGraph copies the app's
/// `configurable` keys there; an erasure must not miss a thread whose latest checkpoint lost
/// the key; metadata that is not JSON is passed over), or in a channel of its latest root
/// state. In the order asked, each thread its own outcome (a latest state that does not open,
/// such as one encrypted without its key, is that thread's error); the outer error is the
/// database's. Their metadata is read 64 threads per call
/// ([`CheckpointStore::metadata_of`]); the latest root checkpoints of the threads it leaves
/// undecided as [`super::map_latest`] reads rows (on the `readers`, decoded on all cores).
pub fn meta_select(
    readers: &Readers<'_>,
    keys: &Keyring,
    threads: &[&str],
    conditions: &[MetaCondition],
) -> Result<Vec<Result<bool>>> {
    use crate::ops::forget::{held_in_metadata, meta_selects_held};
    let none = |_: &str| None;
    let mut out: Vec<Result<bool>> = Vec::with_capacity(threads.len());
    // The threads the metadata leaves undecided: their latest root checkpoints, their
    // positions and which conditions their metadata holds (the parsed metadata is not kept).
    let mut undecided: Vec<(String, String)> = Vec::new();
    let mut at: Vec<usize> = Vec::new();
    let mut held: HashMap<&str, Vec<bool>> = HashMap::new();
    // A few threads' metadata at a time: a long thread has hundreds of checkpoints (forget
    // --meta at 10 GB held 145 MiB with 1,024 threads' read at once, 92 MiB with 64).
    for (c, chunk) in threads.chunks(METADATA_THREADS).enumerate() {
        let rows = readers.store().metadata_of(chunk)?;
        anyhow::ensure!(
            rows.len() == chunk.len(),
            "the database answered for {} threads of {}",
            rows.len(),
            chunk.len()
        );
        for (j, rows) in rows.into_iter().enumerate() {
            let i = c * METADATA_THREADS + j;
            let mut h = vec![false; conditions.len()];
            for r in &rows {
                let parsed = r
                    .metadata
                    .as_deref()
                    .and_then(|b| serde_json::from_slice::<Json>(b).ok());
                if let Some(m) = parsed {
                    held_in_metadata(conditions, &m, &mut h);
                }
            }
            let selected = meta_selects_held(conditions, &h, &none);
            // The first root row is the latest (the rows come newest first).
            let latest = rows.into_iter().find(|r| r.checkpoint_ns.is_empty());
            if let (false, Some(latest)) = (selected, latest) {
                undecided.push((threads[i].to_owned(), latest.checkpoint_id));
                at.push(i);
                held.insert(threads[i], h);
            }
            out.push(Ok(selected));
        }
    }
    let decided = super::readers::map_at(readers, &undecided, |(thread, _), row| {
        match row? {
            // Gone since its metadata was read: no latest state, as when there was none.
            None => Ok(false),
            Some(row) => {
                let latest = LoadedCheckpoint::open(keys, row)?;
                let channel = |k: &str| latest.checkpoint.channel(k).map(to_json);
                let held = held.get(thread.as_str()).map_or(&[][..], Vec::as_slice);
                Ok(meta_selects_held(conditions, held, &channel))
            }
        }
    })?;
    for (i, d) in at.into_iter().zip(decided) {
        out[i] = d;
    }
    Ok(out)
}
