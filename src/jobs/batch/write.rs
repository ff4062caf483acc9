//! Writing one planned edit: its append, or with `--purge` its scrub, the erasure of the
//! freed bytes and the search for what was removed.

use anyhow::Result;

use crate::codec::aes::{self, Keyring};
use crate::ops::edit::Planned;
use crate::ops::outcome::{Outcome, Status};
use crate::storage::{BlobKind, CheckpointStore, Erased, Leftover, UpdateItem};
use crate::text::human;

use super::Step;

/// Writes a planned edit (appends its update; with `--purge`, scrubs and vacuums too) and
/// returns its report. Inside a batch the append is a savepoint of the batch's transaction.
/// `keys` opens encrypted rows for the purge: each is decrypted, scrubbed and encrypted again
/// with a fresh nonce (rows it leaves unchanged keep their bytes).
pub fn write(store: &dyn CheckpointStore, keys: &Keyring, planned: Planned) -> Result<Outcome> {
    let mut outcome = planned.outcome;
    let thread = outcome.thread_id.clone();
    let Some(scrub) = planned.purge else {
        let Some(upd) = planned.update else {
            return Ok(outcome);
        };
        store.append_update(&thread, "", &upd.rows(), planned.expected_writes, None)?;
        outcome.status = planned.on_write;
        return Ok(outcome);
    };
    let rewrite = |kind: BlobKind, type_name: &str, bytes: &[u8]| -> Result<Option<Vec<u8>>> {
        let (inner, cipher) = aes::split_type(type_name);
        if inner != "msgpack" {
            return Ok(None);
        }
        if cipher.is_none() {
            return scrub.rewrite_blob(kind, bytes);
        }
        let opened = keys.open(type_name, bytes, "it")?;
        match scrub.rewrite_blob(kind, &opened.bytes)? {
            Some(scrubbed) => Ok(Some(keys.key("it")?.encrypt(&scrubbed))),
            None => Ok(None),
        }
    };
    let rows = match (&planned.update, &planned.scrub_at) {
        (Some(upd), _) => store.append_update(
            &thread,
            "",
            &upd.rows(),
            planned.expected_writes,
            Some(&rewrite),
        )?,
        (None, Some(at)) => store.rewrite_thread(&thread, at, planned.expected_writes, &rewrite)?,
        (None, None) => return Ok(outcome),
    };
    if planned.defer_checks {
        // forget: one vacuum and one verification after every thread.
        outcome.status = Status::Purged;
        outcome.notes.push(format!(
            "scrubbed {}",
            human::count(rows as u64, "stored row")
        ));
        return Ok(outcome);
    }
    let (mut leftovers, erased, skipped) = erase_and_search(
        store,
        || match store.forensics() {
            Some(f) => f.find_leftovers(&thread, &planned.verify),
            None => Err(store.lacks("find_leftovers")),
        },
        |found| found.iter().any(|l| !l.raw.is_empty()),
    )
    .map_err(crate::jobs::partial_if_busy)?;
    outcome.status = Status::Purged;
    // With a key, the decrypted values of encrypted rows are searched too (without one, the
    // thread had no encrypted rows: the scrub would have failed on them).
    let sealed = match keys.has_key() {
        true => Some(search_sealed(store, keys, &thread, &planned.verify)?),
        false => None,
    };
    outcome.notes.push(format!(
        "scrubbed {rows} older checkpoints and writes; {}; searched the file{} for the {} removed strings",
        human::erased(
            erased.pages_zeroed,
            erased.vacuumed,
            erased.pages_zeroed.is_none()
        ),
        if sealed.is_some() { " and the decrypted values of its encrypted rows" } else { "" },
        planned.verify.len()
    ));
    if let Some(why) = skipped {
        outcome.status = Status::PurgeIncomplete;
        outcome.notes.push(format!("{why:#}"));
    }
    if let Some(sealed) = sealed {
        merge_leftovers(&mut leftovers, &thread, &planned.verify, sealed.found);
        if !sealed.unread_here.is_empty() {
            outcome.status = Status::PurgeIncomplete;
            outcome.notes.push(format!(
                "{} does not decrypt {} of this thread, so they could not be searched: {}",
                keys.var(),
                human::count(sealed.unread_here.len() as u64, "encrypted row"),
                sealed.unread_here.join(", ")
            ));
        }
        if sealed.unread_elsewhere > 0 {
            outcome.notes.push(format!(
                "{} of other threads do not decrypt with {} and were not searched",
                human::count(sealed.unread_elsewhere, "encrypted row"),
                keys.var()
            ));
        }
    }
    for left in leftovers {
        let text = human::preview(&left.text, 24);
        if !left.in_thread.is_empty() || !left.raw.is_empty() {
            outcome.status = Status::PurgeIncomplete;
            let places = left.in_thread.iter().chain(&left.raw).cloned();
            outcome.notes.push(format!(
                "removed text {text} is still in {}",
                places.collect::<Vec<_>>().join(", ")
            ));
        } else {
            outcome
                .notes
                .push(elsewhere_note(&text, &left.other_threads));
        }
    }
    Ok(outcome)
}

/// The note for a removed text that other threads' rows hold too (their own conversations,
/// not part of the purge): how many rows the search named, the first of them, and where to
/// see every thread; the search names a few rows per text and stops (a common word would
/// cost a decode per row), so the count is a floor.
fn elsewhere_note(text: &str, places: &[String]) -> String {
    let first = places.first().map_or("", String::as_str);
    let more = match places.len() {
        0 | 1 => String::new(),
        n => format!(" and {} more", n - 1),
    };
    format!(
        "removed text {text} is also in other threads' rows (their own, not part of this purge): {first}{more} (the search names the first few rows); `memctl find` lists every thread that holds it"
    )
}

/// The plain appends of a batch (an update without `--purge`: what [`write`] does with
/// `append_update` alone) written together ([`CheckpointStore::append_updates`]): per item,
/// the outcome of its append, or `None` for an item that is not one (written by [`write`]).
pub(super) fn append_plain(
    store: &dyn CheckpointStore,
    items: &[Step],
) -> Vec<Option<Result<usize>>> {
    fn plain(s: &Step) -> Option<(&Planned, &crate::ops::update::Update)> {
        match s {
            Step::Write(p) if p.purge.is_none() => p.update.as_ref().map(|u| (&**p, u)),
            _ => None,
        }
    }
    let updates: Vec<UpdateItem<'_>> = items
        .iter()
        .filter_map(plain)
        .map(|(p, u)| UpdateItem {
            thread_id: &p.outcome.thread_id,
            ns: "",
            rows: u.rows(),
            expected_writes: p.expected_writes,
        })
        .collect();
    let mut results = store.append_updates(&updates).into_iter();
    items
        .iter()
        .map(|s| plain(s).and_then(|_| results.next()))
        .collect()
}

/// Erases the bytes a purge freed without locking a live app out
/// ([`crate::storage::Maintenance::erase_freed`]), then runs `search`. When `outside_rows` says the search
/// still found a removed text in the file's bytes but in no row (an old freed cell the app
/// left, which only a rebuild reaches), falls back to `VACUUM` and searches again. Returns
/// the last search, what was done, and why the fallback `VACUUM` was skipped (a
/// [`crate::storage::VacuumBusy`]: an app has a large file open, or keeps it busy). An error
/// of the first erase (a reader keeping the WAL) is returned as it is.
pub fn erase_and_search<T>(
    store: &dyn CheckpointStore,
    search: impl Fn() -> Result<T>,
    outside_rows: impl Fn(&T) -> bool,
) -> Result<(T, Erased, Option<anyhow::Error>)> {
    let Some(m) = store.maintenance() else {
        // A backend without maintenance has no freed space of its own to give back.
        return Ok((search()?, Erased::default(), None));
    };
    let mut erased = m.erase_freed()?;
    let found = search()?;
    if erased.vacuumed || !outside_rows(&found) {
        return Ok((found, erased, None));
    }
    match m.vacuum() {
        Ok(()) => {
            erased.vacuumed = true;
            Ok((search()?, erased, None))
        }
        Err(e) if e.is::<crate::storage::VacuumBusy>() => Ok((found, erased, Some(e))),
        Err(e) => Err(e),
    }
}

/// What [`search_sealed`] found.
#[derive(Default)]
pub struct SealedSearch {
    /// Per text, `(thread, place)` of up to five rows holding it.
    pub found: Vec<Vec<(String, String)>>,
    /// Encrypted rows of the purged thread that did not decrypt (named; the search is then
    /// not complete).
    pub unread_here: Vec<String>,
    /// Encrypted rows of other threads that did not decrypt.
    pub unread_elsewhere: u64,
}

/// Where each of `texts` is found in the decrypted values of the database's encrypted rows
/// (ciphertext never matches the plain search storage does), places named as storage names
/// them. Reads every row through the store.
pub fn search_sealed(
    store: &dyn CheckpointStore,
    keys: &Keyring,
    thread: &str,
    texts: &[String],
) -> Result<SealedSearch> {
    let finders: Vec<memchr::memmem::Finder<'_>> = texts
        .iter()
        .map(|t| memchr::memmem::Finder::new(t.as_bytes()))
        .collect();
    let mut out = SealedSearch {
        found: vec![Vec::new(); texts.len()],
        ..SealedSearch::default()
    };
    let mut threads = Vec::new();
    store.for_each_thread(&mut |t| {
        threads.push(t.thread_id);
        Ok(())
    })?;
    let quoted = |t: &str| format!("'{}'", t.replace('\'', "''"));
    let sealed = |type_name: &str| aes::split_type(type_name).1.is_some();
    let mut look = |t: &str, place: String, type_name: &str, bytes: &[u8]| match keys
        .open(type_name, bytes, &place)
    {
        Ok(opened) => {
            for (i, f) in finders.iter().enumerate() {
                if out.found[i].len() < 5 && f.find(&opened.bytes).is_some() {
                    out.found[i].push((t.to_owned(), place.clone()));
                }
            }
        }
        Err(_) if t == thread => out.unread_here.push(place),
        Err(_) => out.unread_elsewhere += 1,
    };
    for t in &threads {
        for ns in store.namespaces(t)? {
            for row in store.checkpoints(t, &ns)? {
                let id = &row.checkpoint_id;
                if sealed(&row.type_name) {
                    let place = format!("checkpoint {id} of thread {}", quoted(t));
                    look(t, place, &row.type_name, &row.checkpoint);
                }
                for w in store.writes(t, &ns, id)? {
                    if sealed(&w.type_name) {
                        let place = format!(
                            "a pending write to '{}' on checkpoint {id} of thread {}",
                            w.channel.replace('\'', "''"),
                            quoted(t)
                        );
                        look(t, place, &w.type_name, &w.value);
                    }
                }
            }
        }
    }
    Ok(out)
}

/// Adds what [`search_sealed`] found of `texts` to storage's leftovers of the purged
/// `thread`.
pub fn merge_leftovers(
    leftovers: &mut Vec<Leftover>,
    thread: &str,
    texts: &[String],
    sealed: Vec<Vec<(String, String)>>,
) {
    for (text, hits) in texts.iter().zip(sealed) {
        if hits.is_empty() {
            continue;
        }
        let i = match leftovers.iter().position(|l| &l.text == text) {
            Some(i) => i,
            None => {
                leftovers.push(Leftover {
                    text: text.clone(),
                    in_thread: vec![],
                    other_threads: vec![],
                    raw: vec![],
                });
                leftovers.len() - 1
            }
        };
        for (t, place) in hits {
            if t == thread {
                leftovers[i].in_thread.push(place);
            } else {
                leftovers[i].other_threads.push(place);
            }
        }
    }
}
