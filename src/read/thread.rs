//! Which threads and checkpoints there are: a thread that must exist, a checkpoint id given
//! in full or by prefix (each refusal a [`Missing`], worded by `output::missing`, where the
//! stored ids are made terminal-safe), and the threads a metadata condition selects.

use anyhow::Result;

use crate::codec::aes::Keyring;
use crate::codec::json::to_json;
use crate::ops::find::MetaCondition;
use crate::storage::CheckpointStore;

use super::LoadedCheckpoint;

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

/// True when `--meta`'s conditions select the thread, for `find`, `forget` and `threads list` alike (see
/// [`crate::ops::forget::meta_selects`]): each condition holds in the metadata of any of its
/// checkpoints, in every namespace (LangGraph copies the app's `configurable` keys there; an
/// erasure must not miss a thread whose latest checkpoint lost the key), or in a channel of
/// its latest root state.
pub fn meta_selects_thread(
    store: &dyn CheckpointStore,
    keys: &Keyring,
    thread: &str,
    conditions: &[MetaCondition],
) -> Result<bool> {
    use crate::ops::forget::meta_selects;
    let mut metadata = Vec::new();
    for ns in store.namespaces(thread)? {
        for (_, m) in store.metadata(thread, &ns)? {
            if let Some(j) = m.and_then(|b| serde_json::from_slice(&b).ok()) {
                metadata.push(j);
            }
        }
    }
    let none = |_: &str| None;
    if meta_selects(conditions, &metadata, &none) {
        return Ok(true);
    }
    let Some(row) = store.checkpoint(thread, "", None)? else {
        return Ok(false);
    };
    let latest = LoadedCheckpoint::open(keys, row)?;
    let channel = |k: &str| latest.checkpoint.channel(k).map(to_json);
    Ok(meta_selects(conditions, &metadata, &channel))
}
