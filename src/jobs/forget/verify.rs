//! After the writes: the freed space erased without locking an app out, and every byte
//! searched for what was erased.

use std::collections::HashSet;

use anyhow::Result;

use crate::codec::aes::Keyring;
use crate::jobs::batch;
use crate::jobs::Sink;
use crate::ops::find::Pattern;
use crate::ops::forget::{classify, digest, searchable, Hit, Reclaim, Verification};
use crate::storage::{CheckpointStore, Leftover};

use super::delete::Deletion;
use super::store::StoreCheck;
use super::Tally;

/// Reclaims without locking an app out (SQLite: free pages zeroed in short transactions,
/// WAL truncated; VACUUM only when a removed text is still in a freed part of a page), and
/// verifies: every byte (every row on a server) searched for what was erased. Fills in
/// `reclaim`; returns the verification and a vacuum postponed by a busy app.
#[allow(clippy::too_many_arguments)]
pub(super) fn reclaim_and_verify(
    store: &dyn CheckpointStore,
    keys: &Keyring,
    deletion: &mut Deletion,
    pattern: Option<(&Pattern, &str)>,
    items: Option<StoreCheck<'_>>,
    tally: &mut Tally,
    reclaim: &mut Reclaim,
    sink: &dyn Sink,
) -> Result<(Verification, Option<anyhow::Error>)> {
    // A deleted thread's id, like its other strings, must be in no byte outside the rows
    // (free space); a kept row that holds it as text holds its own conversation (a thread
    // named `human`, a word any chat may use), counted, not a leftover. Kept threads' ids are
    // no text of any row: the deleted ids within a kept one (the threads streamed as they are
    // now) are not searched for.
    let deleted: HashSet<&str> = deletion.ids.iter().map(String::as_str).collect();
    let mut within_kept: HashSet<&str> = HashSet::new();
    crate::read::stream::threads(store, &mut |batch| {
        for t in batch
            .iter()
            .filter(|t| !deleted.contains(t.thread_id.as_str()))
        {
            within_kept.extend(deleted.iter().filter(|d| t.thread_id.contains(**d)));
        }
        Ok(true)
    })?;
    let mut removed = std::mem::take(&mut tally.removed);
    removed.extend(
        deletion
            .ids
            .iter()
            .filter(|d| !within_kept.contains(d.as_str()))
            .cloned(),
    );
    // Moved, never copied: a forget of many threads erases tens of megabytes of text.
    removed.append(&mut deletion.strings);
    let must = std::mem::take(&mut tally.must);
    let removed: Vec<String> = removed.into_iter().filter(|r| !must.contains(r)).collect();
    let (mut all, short_a) = searchable(must);
    let must = all.len();
    let (mut removed, short_b) = searchable(removed);
    all.append(&mut removed);
    reclaim.bytes_before = file_bytes(store)?;
    let phase = sink.phase("forget", "zeroing free pages");
    let search = || {
        phase.set_message("verifying: searching what the database holds");
        verify(
            store,
            keys,
            (&all, must),
            short_a + short_b,
            pattern,
            items.as_ref(),
        )
    };
    // Worth a VACUUM: an erased string found in the file's bytes outside every row (a freed
    // part of a page). A raw match of the pattern itself counts only when no thread was left
    // holding matches (reported threads keep theirs).
    let pattern_sha = pattern.map(|(_, given)| digest(given));
    let none_reported = tally.reported.is_empty();
    let in_freed_space = |v: &Verification| {
        v.remaining.iter().any(|h| {
            !h.raw.is_empty() && (Some(&h.sha256) != pattern_sha.as_ref() || none_reported)
        })
    };
    let found = batch::write::erase_and_search(store, search, in_freed_space);
    phase.finish_and_clear();
    let (found, busy) = match found {
        Ok((found, erased, skipped)) => {
            reclaim.free_pages_zeroed = erased.pages_zeroed;
            reclaim.vacuumed = erased.vacuumed;
            (found, skipped)
        }
        // The WAL could not be truncated: still say what the bytes hold now.
        Err(e) if e.is::<crate::storage::VacuumBusy>() => (search()?, Some(e)),
        Err(e) => return Err(e),
    };
    reclaim.bytes_after = file_bytes(store)?;
    Ok((found, busy))
}

/// Searches the database for each of `all` (the strings that must be gone, then the other
/// removed ones: `all.0[..all.1]` and `all.0[all.1..]`; every byte of a SQLite file and
/// its `-wal`, every row on a server, and the decrypted values of encrypted rows when a key
/// is given) and, on a file, for the pattern itself (as given) in its raw bytes.
pub(super) fn verify(
    store: &dyn CheckpointStore,
    keys: &Keyring,
    (all, must): (&[String], usize),
    too_short: usize,
    pattern: Option<(&Pattern, &str)>,
    items: Option<&StoreCheck<'_>>,
) -> Result<Verification> {
    let (must, removed) = all.split_at(must);
    let mut leftovers = match store.forensics() {
        Some(f) => f.find_leftovers("", all)?,
        None => vec![],
    };
    if keys.has_key() {
        let sealed = batch::write::search_sealed(store, keys, "", all)?;
        batch::write::merge_leftovers(&mut leftovers, "", all, sealed.found);
    }
    // The store's rows: a text a kept item holds is in a row (its own data, or a leftover
    // when it must be gone); items the request still selects, and vectors of deleted items,
    // make the erasure incomplete.
    let mut store_hits = Vec::new();
    if let Some(check) = items {
        // As the search of the bytes above decided (asking again would walk the file again).
        let every_byte = !store.raw_bytes().is_some_and(|r| r.searched_free_space());
        let (held, still) = check.search(all)?;
        for (text, places) in all.iter().zip(held) {
            if places.is_empty() {
                continue;
            }
            match leftovers.iter_mut().find(|l| &l.text == text) {
                Some(l) => {
                    if every_byte && l.in_thread.is_empty() && l.other_threads.is_empty() {
                        // The file's bytes were searched whole: the store's row holds it.
                        l.raw.clear();
                    }
                    l.other_threads.extend(places);
                }
                None => leftovers.push(Leftover {
                    text: text.clone(),
                    in_thread: vec![],
                    other_threads: places,
                    raw: vec![],
                }),
            }
        }
        store_hits = still;
    }
    let mut searched = store.searched();
    if keys.has_key() {
        searched.push("the decrypted values of the encrypted rows".into());
    }
    if items.is_some() {
        searched
            .push("every item of the store, and its vectors' rows for the deleted items".into());
    }
    let mut v = classify(must, removed, &leftovers, searched, too_short);
    if !store_hits.is_empty() {
        v.remaining.extend(store_hits);
        v.clean = false;
    }
    if let Some((p, given)) = pattern {
        // Outside every row when memctl can tell (LangGraph's own structure may hold the
        // pattern's bytes: a pattern `human` is in every message's type tag); else every byte.
        let raw = match store.raw_bytes() {
            Some(r) => r.raw_places_matching(&mut |piece| p.maybe_in(piece))?,
            None => vec![],
        };
        if !raw.is_empty() {
            v.remaining.push(Hit {
                sha256: digest(given),
                rows: vec![],
                raw,
            });
            v.clean = false;
        }
    }
    Ok(v)
}

/// The database's size in bytes, as its [`crate::storage::Space`] measures it (0 for a
/// backend without one).
fn file_bytes(store: &dyn CheckpointStore) -> Result<u64> {
    Ok(match store.space() {
        Some(s) => s.file_stats()?.file_bytes,
        None => 0,
    })
}
